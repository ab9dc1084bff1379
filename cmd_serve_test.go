package main

import (
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/cli"
)

func TestServeListenFlag(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" accepted, else in the error
	}{
		{"127.0.0.1:9473", ""},
		{"[::1]:9473", ""},
		{"localhost:0", ""},
		{"100.64.0.5:9473", ""},
		{"0.0.0.0:9473", ""},
		{"[::]:9473", ""},
		{":9473", "every interface"},
		{"nas.example.com:9473", "not an IP address"},
		{"127.0.0.1", "want IP:port"},
		{"127.0.0.1:", "no port"},
		{"127.0.0.1:99999", `port "99999" is not a number from 0 to 65535`},
		{"127.0.0.1:http", `port "http" is not a number`},
		{"127.0.0.1:-1", `port "-1" is not a number`},
		{"127.0.0.1:65535", ""},
	} {
		err := checkListen(tc.addr)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkListen(%q) = %v, want accepted", tc.addr, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkListen(%q) = %v, want an error saying %q", tc.addr, err, tc.want)
		}
	}
	// A port out of range is the user's input (exit 2), not a failure to
	// listen (exit 1).
	if code, _, stderr := runTailpath(t, "serve", "--listen", "127.0.0.1:99999"); code != cli.ExitUsage {
		t.Errorf("serve --listen 127.0.0.1:99999: exit %d, want 2; stderr:\n%s", code, stderr)
	}
	code, _, stderr := runTailpath(t, "serve", "--listen", ":9473")
	if first, _, _ := strings.Cut(stderr, "\n"); code != cli.ExitUsage || !strings.HasPrefix(first, `tailpath: serve: --listen ":9473" listens on every interface`) {
		t.Errorf("serve --listen :9473: exit %d, stderr:\n%s", code, stderr)
	}
	for _, args := range [][]string{{"--max-peers", "0"}, {"--interval", "0s"}, {"--ping-every", "-1s"}, {"--ping-every", "10s"}} {
		if code, _, stderr := runTailpath(t, append([]string{"serve"}, args...)...); code != cli.ExitUsage {
			t.Errorf("serve %v: exit %d, want 2; stderr:\n%s", args, code, stderr)
		}
	}
	if _, _, stderr := runTailpath(t, "serve", "--ping-every", "44s"); !strings.Contains(stderr, "keeps a peer active for 45 s") {
		t.Errorf("serve --ping-every 44s does not say why it is refused:\n%s", stderr)
	}
}

// TestDemoServeFlags: demo --serve takes serve's address rules and goes
// alone; the errors come before the lab starts.
func TestDemoServeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "--serve", ":9473"},
		{"demo", "--serve", "127.0.0.1:0", "--status"},
		{"demo", "--serve", "127.0.0.1:0", "--lab-only"},
	} {
		code, _, stderr := runTailpath(t, args...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != cli.ExitUsage || !strings.HasPrefix(first, "tailpath: demo: --serve") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}
