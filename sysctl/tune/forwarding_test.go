package tune

import (
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/sysctl"
)

// stateFile builds a tailscaled state file as ipn/store.FileStore writes
// it: a JSON object of base64 values.
func stateFile(t testing.TB, kv map[string]string) []byte {
	t.Helper()
	m := map[string]string{}
	for k, v := range kv {
		m[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadStatePrefs(t *testing.T) {
	exit := `{"AdvertiseRoutes":["0.0.0.0/0","::/0","192.168.1.0/24"],"Config":{"PrivateNodeKey":"privkey:never-read"}}`
	tests := []struct {
		name string
		file []byte
		want []netip.Prefix
		err  bool
	}{
		{"current profile", stateFile(t, map[string]string{"_current-profile": "profile-ab12", "profile-ab12": exit, "profile-other": `{"AdvertiseRoutes":["10.0.0.0/8"]}`}),
			[]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"), netip.MustParsePrefix("192.168.1.0/24")}, false},
		{"before profiles", stateFile(t, map[string]string{"_daemon": `{"AdvertiseRoutes":["10.0.0.0/8"]}`}), []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, false},
		{"no routes", stateFile(t, map[string]string{"_current-profile": "profile-1", "profile-1": `{"WantRunning":true}`}), nil, false},
		{"profile missing", stateFile(t, map[string]string{"_current-profile": "profile-1"}), nil, true},
		{"not a state file", []byte("hello"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadStatePrefs(tt.file)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("routes (-want +got):\n%s", diff)
			}
		})
	}
	var f Forwarding
	f.setRoutes([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"), netip.MustParsePrefix("192.168.1.7/24")})
	if !f.ExitNode || len(f.Routes) != 1 || f.Routes[0].String() != "192.168.1.0/24" || f.Role() != "an exit node and a subnet router for 192.168.1.0/24" {
		t.Errorf("setRoutes: %+v, role %q", f, f.Role())
	}
	f = Forwarding{}
	f.setRoutes([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")})
	if f.ExitNode || f.Forwards() {
		t.Errorf("0.0.0.0/0 alone (no ::/0) is no exit node: %+v", f)
	}
}

func FuzzReadStatePrefs(f *testing.F) {
	f.Add(stateFile(f, map[string]string{"_current-profile": "profile-ab12", "profile-ab12": `{"AdvertiseRoutes":["0.0.0.0/0"]}`}))
	f.Add([]byte(`{"_daemon":"e30="}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		routes, err := ReadStatePrefs(b)
		for _, r := range routes {
			if err != nil || !r.IsValid() {
				t.Fatalf("route %v with err %v", r, err)
			}
		}
	})
}

// TestRootTailscaleVersion: the version each system's package database
// records, as tailscale's package left it there.
func TestRootTailscaleVersion(t *testing.T) {
	tests := []struct{ file, body, want string }{
		{"var/lib/dpkg/status", "Package: tailscale-archive-keyring\nVersion: 1.35.181\n\nPackage: tailscale\nStatus: install ok installed\nVersion: 1.58.2\n\n", "1.58.2"},
		{"usr/lib/opkg/status", "Package: kmod-tun\nVersion: 6.6.110-r1\n\nPackage: tailscale\nVersion: 1.80.3-r1\n", "1.80.3-r1"},
		{"lib/apk/db/installed", "P:tailscale\nV:1.90.9-r1\nA:aarch64_cortex-a53\n", "1.90.9-r1"},
		{"var/packages/Tailscale/INFO", "package=\"Tailscale\"\nversion=\"1.58.2-700058002\"\n", "1.58.2-700058002"},
		{"var/lib/dpkg/status", "Package: tailscale\nVersion: 1.58.2\x1b[2J\n", "1.58.22J"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		p := filepath.Join(dir, tt.file)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(tt.body), 0o644)
		if got, from := rootTailscaleVersion(sysctl.AtRoot(dir)); got != tt.want || from != "/"+tt.file {
			t.Errorf("%s: %q from %q, want %q", tt.file, got, from, tt.want)
		}
	}
}
