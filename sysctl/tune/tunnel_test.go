package tune

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/sysctl"
)

const userspaceRoot = ownRoots + "/dsm-7.2-userspace"

// TestUserspaceNAS: the DSM 7.2 root whose Tailscale package runs
// tailscaled in userspace networking (its start script, no /dev/net/tun,
// no tailscale0) gets that verdict first, with DSM's fix, and no buffer
// change at 1 Gbit/s × 2 ms; each piece of evidence changed alone changes
// the verdict the way tailscaled would behave.
func TestUserspaceNAS(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(t *testing.T, root string)
		tun      func(context.Context) (bool, error) // LocalAPI's answer; nil: not asked
		mode     TunnelMode
		evidence string // substring of the evidence
	}{
		{name: "package start script, no /dev/net/tun", mode: TunnelUserspace,
			evidence: "DSM 7 without /dev/net/tun: the Tailscale package's start script (/var/packages/Tailscale/scripts/start-stop-status) then starts tailscaled with --tun=userspace-networking"},
		{name: "after configure-host: /dev/net/tun and tailscale0", mode: TunnelKernel, evidence: "tailscale0 exists, a kernel TUN (mtu 1280)",
			edit: func(t *testing.T, root string) {
				write(t, filepath.Join(root, "dev", "net", "tun"), "")
				write(t, filepath.Join(root, "sys", "class", "net", "tailscale0", "mtu"), "1280\n")
				write(t, filepath.Join(root, "sys", "class", "net", "tailscale0", "operstate"), "unknown\n")
			}},
		{name: "/dev/net/tun but no tailscale0: not known", mode: TunnelUnknown, evidence: "/dev/net/tun exists, so the package's start script does not force userspace networking",
			edit: func(t *testing.T, root string) { write(t, filepath.Join(root, "dev", "net", "tun"), "") }},
		{name: "no package script: not known", mode: TunnelUnknown, evidence: "is not there: the package is not installed",
			edit: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "var", "packages")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "LocalAPI says TUN: it wins", mode: TunnelKernel, evidence: "tailscaled (/tmp/ts.sock) reports Status.TUN true",
			tun: func(context.Context) (bool, error) { return true, nil }},
		{name: "LocalAPI says userspace", mode: TunnelUserspace, evidence: "tailscaled (/tmp/ts.sock) reports Status.TUN false: it runs with --tun=userspace-networking",
			tun: func(context.Context) (bool, error) { return false, nil }},
		{name: "LocalAPI silent: the files decide", mode: TunnelUserspace, evidence: "tailscaled (/tmp/ts.sock) did not answer: connection refused",
			tun: func(context.Context) (bool, error) { return false, errors.New("connection refused") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyRoot(t, userspaceRoot)
			if tt.edit != nil {
				tt.edit(t, root)
			}
			in := Inputs{Host: sysctl.AtRoot(root), Sandbox: true, Bandwidth: 1e9, RTT: 2 * time.Millisecond, DaemonTUN: tt.tun, Daemon: "/tmp/ts.sock"}
			r, err := Gather(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Tunnel.Mode != tt.mode || !strings.Contains(strings.Join(r.Tunnel.Evidence, "\n"), tt.evidence) {
				t.Fatalf("tunnel %s %q; want %s with %q", r.Tunnel.Mode, r.Tunnel.Evidence, tt.mode, tt.evidence)
			}
			if len(r.Rec.Changes) > 0 || r.Rec.BuffersLimit {
				t.Errorf("changes %v (limit %q) at 1 Gbit/s × 2 ms, want none", r.Rec.Changes, r.Rec.LimitWhy)
			}
			var b bytes.Buffer
			r.WriteText(&b)
			lines := strings.Split(b.String(), "\n")
			if tt.mode == TunnelUserspace {
				want := []string{
					"Userspace networking: tailnet TCP runs in tailscaled's own stack; kernel buffers and congestion control do not apply to it",
					"  evidence: " + r.Tunnel.Evidence[0],
				}
				if diff := cmp.Diff(want, lines[1:3]); diff != "" {
					t.Errorf("the report does not say it first (-want +got):\n%s", diff)
				}
				for _, s := range []string{"kernel tuning here applies only to traffic outside the tailnet",
					"1. In DSM: Control Panel › Task Scheduler › Create › Triggered Task › User-defined script; user root, event Boot-up, script: /var/packages/Tailscale/target/bin/tailscale configure-host",
					"sudo synosystemctl restart pkgctl-Tailscale.service",
					"buffers are not the limit (need 488.3 KiB, have 4 MiB); tailnet TCP is tailscaled's own here"} {
					if !strings.Contains(b.String(), s) {
						t.Errorf("report lacks %q:\n%s", s, b.String())
					}
				}
			} else if strings.Contains(b.String(), "Userspace networking") {
				t.Errorf("report says userspace networking:\n%s", b.String())
			}
		})
	}
}

// TestUserspaceChangesAreNotTheFix: in userspace networking, a target the
// buffers do not meet still lists the changes, but as changes for traffic
// outside the tailnet.
func TestUserspaceChangesAreNotTheFix(t *testing.T) {
	root := copyRoot(t, userspaceRoot)
	r, err := Gather(context.Background(), Inputs{Host: sysctl.AtRoot(root), Sandbox: true, Bandwidth: 1e9, RTT: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	r.WriteText(&b)
	if !strings.Contains(b.String(), "\nChanges, for traffic outside the tailnet only (4):\n") || strings.Contains(b.String(), "\nChanges (") {
		t.Errorf("changes presented as the fix:\n%s", b.String())
	}
}

// TestFieldRootsNotTheLimit: on every NAS root, 1 Gbit/s × 2 ms needs
// 488 KiB of buffer, far below the 4-6 MiB maxima they ship: no buffer key
// changes, and the report says so with both numbers.
func TestFieldRootsNotTheLimit(t *testing.T) {
	for _, root := range []string{fieldNAS + "/dsm-4.4", fieldNAS + "/dsm-5.10", fieldNAS + "/small-ram-4.4", fieldNAS + "/unraid-6.12",
		ownRoots + "/truenas-scale-24.10", ownRoots + "/qnap-qts-5.1", ownRoots + "/omv-7", ownRoots + "/openwrt-23.05", userspaceRoot} {
		t.Run(filepath.Base(root), func(t *testing.T) {
			dir := copyRoot(t, root)
			r, err := Gather(context.Background(), Inputs{Host: sysctl.AtRoot(dir), Sandbox: true, Bandwidth: 1e9, RTT: 2 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Rec.Changes {
				t.Errorf("change %s", c)
			}
			var b bytes.Buffer
			r.WriteText(&b)
			if !strings.Contains(b.String(), "\nbuffers are not the limit (need 488.3 KiB, have 4 MiB); ") || !strings.Contains(b.String(), "\nNo changes needed.\n") {
				t.Errorf("report:\n%s", b.String())
			}
		})
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
