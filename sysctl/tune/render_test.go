package tune

import (
	"testing"
	"time"

	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// TestConnCellsSndbuf: a connection judged send-buffer limited by its full
// queue at tcp_wmem's max shows "full" under sndbuf-lim, not the counter's
// 0% that would contradict its verdict; one judged by the counter keeps it.
func TestConnCellsSndbuf(t *testing.T) {
	busy, limited := time.Second, time.Duration(0)
	info := &sockdiag.TCPInfo{BusyTime: &busy, SndbufLimited: &limited}
	for _, tt := range []struct {
		detail, want string
	}{
		{"send queue full (4 MiB queued of a 4 MiB buffer, tcp_wmem's max)", "full"},
		{"send-buffer limited 63% of busy time", "0%"},
	} {
		c := sockdiag.Conn{Info: info, Verdict: sockdiag.Verdict{Kind: sockdiag.VerdictSndbuf, Detail: tt.detail}}
		if got := ConnCells(c)[5].String(); got != tt.want {
			t.Errorf("%q: sndbuf-lim cell %q, want %q", tt.detail, got, tt.want)
		}
	}
}
