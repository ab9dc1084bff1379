package paste

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

var cmpOpts = []cmp.Option{cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{}), cmpopts.EquateEmpty()}

// roundTrip writes f as a snapshot file and reads it back.
func roundTrip(t *testing.T, f *snapshot.File) *snapshot.File {
	t.Helper()
	var buf bytes.Buffer
	if err := snapshot.Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.Decode(buf.Bytes())
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, buf.String())
	}
	return back
}

// pathsOf is every peer's name and path, for a failure message.
func pathsOf(ls *join.Snapshot) string {
	var b strings.Builder
	for _, p := range ls.Peers {
		fmt.Fprintf(&b, "%s=%s ", p.Name, p.Path.Text)
	}
	return b.String()
}
