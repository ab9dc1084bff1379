package tailscaled

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tailpath/tailpath/probes/lab"
)

func TestMain(m *testing.M) {
	// The lab's DERP-only node re-executes this test binary.
	lab.MaybeRunNode()
	os.Exit(m.Run())
}

// TestHandDecodersReadTheLab: the Status and the IPN bus's first message
// of a tailnet of real Tailscale code (probes/lab: testcontrol, DERP and
// tsnet nodes) are read by hand, not left to reflection, and to the
// values the reflective decoders read.
func TestHandDecodersReadTheLab(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the lab tailnet under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{LogFile: filepath.Join(t.TempDir(), "lab.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := NewClient(l.ObserverSocket())

	res, err := localGetOK(ctx, c, "/localapi/v0/status")
	if err != nil {
		t.Fatal(err)
	}
	st, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDecodeStatus(t, st); err != nil {
		t.Errorf("the lab's Status is not read by hand: %v", err)
	}
	got, _ := decodeStatus(bytes.NewReader(st))
	if got == nil || len(got.Peer) != len(l.Peers()) || got.Self == nil {
		t.Errorf("the lab's Status read by hand: %+v, want %d peers and self", got, len(l.Peers()))
	}

	mask, _ := netmapMask.MarshalText()
	res, err = localGet(ctx, c, "/localapi/v0/watch-ipn-bus?mask="+string(mask))
	if err != nil {
		t.Fatal(err)
	}
	first, err := jsontext.NewDecoder(res.Body, liteDecode).ReadValue()
	if err != nil {
		t.Fatal(err)
	}
	first = bytes.Clone(first)
	res.Body.Close()
	if err := checkDecodeBusFirst(t, first); err != nil {
		t.Errorf("the lab's first bus message is not read by hand: %v", err)
	}
	lite, _ := decodeBusFirst(handDecoder{jsontext.NewDecoder(bytes.NewReader(first), jsontext.AllowDuplicateNames(true))})
	if nm := lite.NetMap; nm == nil || len(nm.Peers) != len(l.Peers()) || nm.DERPMap == nil || nm.SelfNode.netInfo() == nil {
		t.Errorf("the lab's netmap read by hand: %+v, want %d peers, the DERP map and our NetInfo", nm, len(l.Peers()))
	}
}
