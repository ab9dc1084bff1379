package tune

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/sysctl"
)

// fieldNAS is where the field reports' fake roots live (shared test data,
// never copied into the repo); ownRoots are the repo's own.
const (
	fieldNAS = "../../../shared/testdata/field/nas"
	ownRoots = "../testdata/roots"
)

// copyRoot copies a fake root into a temporary directory (files 0644 or
// 0755 when executable, directories 0755: the shared copies are read-only).
func copyRoot(t *testing.T, src string) string {
	t.Helper()
	if _, err := os.Stat(src); err != nil {
		t.Skipf("skipping: fake root %s not available (%v); it comes with the shared test data", src, err)
	}
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		perm := fs.FileMode(0o644)
		if fi.Mode()&0o111 != 0 {
			perm = 0o755
		}
		return os.WriteFile(to, b, perm)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// tree records every directory and file under dir: path, mode and exact bytes.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = fi.Mode().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFieldRoots runs each fake NAS root through tune: the platform it is,
// where --persist writes, the BBR advice, the memory cap; then apply +
// persist + revert must leave the root byte-identical.
func TestFieldRoots(t *testing.T) {
	type fieldCase struct {
		root       string
		platform   sysctl.PlatformKind
		name       string
		method     sysctl.PersistMethod
		path       string // persisted file, relative to the root
		persisted  []string
		bbr        sysctl.BBRAvailability
		bbrSays    []string
		bbrNever   []string
		bw         float64
		rtt        time.Duration
		bbrFlag    bool
		check      func(t *testing.T, r Report)
		persistOut string
	}
	noCCChange := func(t *testing.T, r Report) {
		for _, c := range r.Rec.Changes {
			if c.Key == sysctl.KeyCongestionControl {
				t.Errorf("recommends %s although BBR cannot work here", c)
			}
		}
	}
	// dsm44 and dsm510 are what every DSM root on a 4.4 kernel (BBR
	// impossible) and on 5.10 without tcp_bbr (not built) must give.
	dsm44 := func(root, name string) fieldCase {
		return fieldCase{
			root: root, platform: sysctl.PlatformDSM, name: name,
			method: sysctl.PersistDSMScript, path: "usr/local/etc/rc.d/tailpath-sysctl.sh",
			persisted: []string{"#!/bin/sh\n", "case \"$1\" in\nstart)\n", "\tsysctl -w 'net.ipv4.tcp_wmem=4096 16384 16777216'\n", "\tsysctl -w net.core.rmem_max=16777216\n"},
			bbr:       sysctl.BBRImpossible, bbrSays: []string{"predates BBR", "Synology ships this model with a 4.4 kernel", "keep cubic, and raise the buffers where they are the limit"},
			bbrNever: []string{"install", "extra kernel modules"},
			bw:       1e9, rtt: 50 * time.Millisecond, bbrFlag: true, check: noCCChange,
			persistOut: "persisted on " + name + ": boot script ",
		}
	}
	dsm510 := func(root, name string) fieldCase {
		return fieldCase{
			root: root, platform: sysctl.PlatformDSM, name: name,
			method: sysctl.PersistDSMScript, path: "usr/local/etc/rc.d/tailpath-sysctl.sh",
			persisted: []string{"\tsysctl -w 'net.ipv4.tcp_rmem=4096 87380 16777216'\n"},
			bbr:       sysctl.BBRImpossible, bbrSays: []string{"no tcp_bbr module", "Synology builds this kernel without it and ships no package that adds it", "keep cubic, and raise the buffers where they are the limit"},
			bbrNever: []string{"install", "extra kernel modules"},
			bw:       1e9, rtt: 50 * time.Millisecond, bbrFlag: true,
			check: func(t *testing.T, r Report) {
				noCCChange(t, r)
				if r.Rec.TCPWmem.Max != 16<<20 || r.Rec.TCPRmem.Max != 16<<20 {
					t.Errorf("buffers not raised: rmem %v wmem %v", r.Rec.TCPRmem, r.Rec.TCPWmem)
				}
			},
			persistOut: "persisted on " + name,
		}
	}
	tests := []fieldCase{
		dsm44(fieldNAS+"/dsm-4.4", "Synology DSM 7.1.1-42962 Update 6"),
		dsm510(fieldNAS+"/dsm-5.10", "Synology DSM 7.2.1-69057 Update 5"),
		{
			root: fieldNAS + "/small-ram-4.4", platform: sysctl.PlatformUnknown, name: "unknown Linux",
			method: sysctl.PersistSteps,
			bbr:    sysctl.BBRImpossible, bbrSays: []string{"predates BBR"},
			bw: 1e9, rtt: 300 * time.Millisecond,
			check: func(t *testing.T, r Report) {
				// tcp_mem: pressure 7660 pages, max 11490 pages (about 45 MiB).
				const poolMax, poolPressure = 11490 * 4096, 7660 * 4096
				if r.Rec.BufferMax > poolMax || r.Rec.BufferMax > poolPressure/sysctl.DefaultBulkConns || r.Rec.BufferMax != 7<<20 {
					t.Errorf("buffer max %d, want 7 MiB: under tcp_mem pressure %d ÷ %d connections (tcp_mem max %d)", r.Rec.BufferMax, poolPressure, sysctl.DefaultBulkConns, poolMax)
				}
				for _, c := range r.Rec.Changes {
					if strings.HasPrefix(c.Key, "net.") && strings.Contains(c.New, "16777216") {
						t.Errorf("change %s exceeds the tcp_mem cap", c)
					}
				}
				var steps strings.Builder
				for _, s := range r.Rec.Steps {
					fmt.Fprintf(&steps, "%s: %s\n", s.Label, s.Text)
				}
				for _, want := range []string{"tcp_mem pressure (all TCP sockets): 7660 pages × 4 KiB = 29.9 MiB (max 11490 pages = 44.9 MiB)",
					"÷ 4 bulk connections: 7.5 MiB per socket", "buffer max, lowered to tcp_mem ÷ 4 bulk connections: 7 MiB"} {
					if !strings.Contains(steps.String(), want) {
						t.Errorf("arithmetic lacks %q:\n%s", want, steps.String())
					}
				}
				if !strings.Contains(strings.Join(r.Rec.Notes, "\n"), "RAM (496 MiB) is too small to raise tcp_mem") {
					t.Errorf("notes %q do not say RAM cannot lift the cap", r.Rec.Notes)
				}
			},
			persistOut: "NOT persisted on unknown Linux: tailpath does not know how this system applies sysctls at boot",
		},
		{
			root: fieldNAS + "/unraid-6.12", platform: sysctl.PlatformUnraid, name: "Unraid 6.12.10",
			method: sysctl.PersistUnraidGo, path: "boot/config/go",
			persisted: []string{"#!/bin/bash\n# BEGIN tailpath tune", "sysctl -w net.ipv4.tcp_congestion_control=bbr\n# END tailpath tune\n# Start the Management Utility\n/usr/local/sbin/emhttp\n"},
			bbr:       sysctl.BBRLoadable, bbrSays: []string{"tcp_bbr.ko.xz"},
			bw: 1e9, rtt: 50 * time.Millisecond, bbrFlag: true,
			persistOut: "persisted on Unraid 6.12.10: a marked block in ",
		},
		// The repo's own roots of the same kinds as the field's (DSM on 4.4
		// and 5.10, a small-RAM box, Unraid), so a clone with nothing
		// beside it tests every behaviour above.
		dsm44(ownRoots+"/dsm-7.1-4.4", "Synology DSM 7.1.1-42962 Update 9"),
		dsm510(ownRoots+"/dsm-7.2-5.10", "Synology DSM 7.2.2-72806 Update 3"),
		{
			root: ownRoots + "/small-ram-4.4", platform: sysctl.PlatformUnknown, name: "unknown Linux",
			method: sysctl.PersistSteps,
			bbr:    sysctl.BBRImpossible, bbrSays: []string{"predates BBR"},
			bw: 1e9, rtt: 300 * time.Millisecond,
			check: func(t *testing.T, r Report) {
				// tcp_mem: pressure 6034 pages, max 9048 pages (about 35 MiB).
				const poolMax, poolPressure = 9048 * 4096, 6034 * 4096
				if r.Rec.BufferMax > poolMax || r.Rec.BufferMax > poolPressure/sysctl.DefaultBulkConns || r.Rec.BufferMax != 5<<20 {
					t.Errorf("buffer max %d, want 5 MiB: under tcp_mem pressure %d ÷ %d connections (tcp_mem max %d)", r.Rec.BufferMax, poolPressure, sysctl.DefaultBulkConns, poolMax)
				}
				var steps strings.Builder
				for _, s := range r.Rec.Steps {
					fmt.Fprintf(&steps, "%s: %s\n", s.Label, s.Text)
				}
				for _, want := range []string{"tcp_mem pressure (all TCP sockets): 6034 pages × 4 KiB = 23.6 MiB (max 9048 pages = 35.3 MiB)",
					"÷ 4 bulk connections: 5.9 MiB per socket", "buffer max, lowered to tcp_mem ÷ 4 bulk connections: 5 MiB"} {
					if !strings.Contains(steps.String(), want) {
						t.Errorf("arithmetic lacks %q:\n%s", want, steps.String())
					}
				}
				if !strings.Contains(strings.Join(r.Rec.Notes, "\n"), "RAM (377.1 MiB) is too small to raise tcp_mem") {
					t.Errorf("notes %q do not say RAM cannot lift the cap", r.Rec.Notes)
				}
			},
			persistOut: "NOT persisted on unknown Linux: tailpath does not know how this system applies sysctls at boot",
		},
		{
			root: ownRoots + "/unraid-7.0", platform: sysctl.PlatformUnraid, name: "Unraid 7.0.1",
			method: sysctl.PersistUnraidGo, path: "boot/config/go",
			persisted: []string{"#!/bin/bash\n# BEGIN tailpath tune", "sysctl -w net.ipv4.tcp_congestion_control=bbr\n# END tailpath tune\n# Start the Management Utility\n/usr/local/sbin/emhttp &\n"},
			bbr:       sysctl.BBRLoadable, bbrSays: []string{"tcp_bbr.ko.xz"},
			bw: 1e9, rtt: 50 * time.Millisecond, bbrFlag: true,
			persistOut: "persisted on Unraid 7.0.1: a marked block in ",
		},
		{
			root: ownRoots + "/truenas-scale-24.10", platform: sysctl.PlatformTrueNAS, name: "TrueNAS SCALE 24.10.2.1",
			method: sysctl.PersistSteps,
			bbr:    sysctl.BBRLoadable, bbrSays: []string{"tcp_bbr.ko"},
			bw: 1e9, rtt: 50 * time.Millisecond,
			persistOut: "NOT persisted on TrueNAS SCALE 24.10.2.1: TrueNAS keeps sysctls in its configuration database and replaces files under /etc, and midclt is not available here. To keep these values after a reboot:\n" +
				"  1. In the TrueNAS web UI: System › Advanced Settings › Sysctl › Add",
		},
		{
			root: ownRoots + "/qnap-qts-5.1", platform: sysctl.PlatformQNAP, name: "QNAP QTS 5.1.7 (build 20240520)",
			method: sysctl.PersistSteps,
			bbr:    sysctl.BBRImpossible, bbrSays: []string{"QNAP ships none for this model and no package adds it"}, bbrNever: []string{"install"},
			bw: 1e9, rtt: 50 * time.Millisecond,
			persistOut: "autorun.sh",
		},
		{
			root: ownRoots + "/omv-7", platform: sysctl.PlatformOMV, name: "openmediavault on Debian GNU/Linux 12 (bookworm)",
			method: sysctl.PersistSysctlD, path: "etc/sysctl.d/99-tailpath.conf",
			persisted: []string{"# Written by tailpath tune", "net.ipv4.tcp_wmem = 4096 16384 16777216\n"},
			bbr:       sysctl.BBRLoadable,
			bw:        1e9, rtt: 50 * time.Millisecond,
			persistOut: "persisted on openmediavault on Debian GNU/Linux 12 (bookworm): ",
		},
		{
			root: ownRoots + "/openwrt-23.05", platform: sysctl.PlatformOpenWrt, name: "OpenWrt 23.05.3 r23809-234f1a2efa",
			method: sysctl.PersistSysctlD, path: "etc/sysctl.d/99-tailpath.conf",
			persisted: []string{"net.core.wmem_max = 7340032\n"},
			bbr:       sysctl.BBRImpossible, bbrSays: []string{"opkg install kmod-tcp-bbr"},
			bw: 1e9, rtt: 50 * time.Millisecond,
			check: func(t *testing.T, r Report) {
				if r.Rec.BufferMax != 7<<20 || !strings.Contains(r.Rec.Clamp, "tcp_mem ÷ 4 bulk connections") {
					t.Errorf("buffer max %d (%s), want 7 MiB from tcp_mem pressure 7500 pages ÷ 4", r.Rec.BufferMax, r.Rec.Clamp)
				}
			},
			persistOut: "note: sysupgrade keeps /etc/sysctl.d/99-tailpath.conf only when listed in /etc/sysupgrade.conf",
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(filepath.Dir(tt.root))+"/"+filepath.Base(tt.root), func(t *testing.T) {
			dir := copyRoot(t, tt.root)
			before := tree(t, dir)
			state := filepath.Join(t.TempDir(), "tune-state.json")
			in := Inputs{Host: sysctl.AtRoot(dir), Sandbox: true, Bandwidth: tt.bw, RTT: tt.rtt, BBR: tt.bbrFlag}
			ctx := context.Background()

			r, err := Gather(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Platform.Kind != tt.platform || r.Platform.Name != tt.name {
				t.Errorf("platform = %+v, want %s %q", r.Platform, tt.platform, tt.name)
			}
			if r.BBR.State != tt.bbr {
				t.Errorf("BBR %s (%s), want %s", r.BBR.State, r.BBR.Why, tt.bbr)
			}
			advice := r.BBR.Why + " / " + r.BBR.Missing
			for _, s := range tt.bbrSays {
				if !strings.Contains(advice, s) {
					t.Errorf("BBR advice %q lacks %q", advice, s)
				}
			}
			for _, s := range tt.bbrNever {
				if strings.Contains(advice, s) {
					t.Errorf("BBR advice %q says %q, which does not exist on %s", advice, s, tt.name)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
			var text bytes.Buffer
			r.WriteText(&text)
			if !strings.Contains(text.String(), tt.name) || !strings.Contains(text.String(), "--persist: ") {
				t.Errorf("header does not name the platform %q and where --persist writes:\n%s", tt.name, text.String())
			}

			var out bytes.Buffer
			if err := Run(ctx, in, Action{Apply: true, Persist: true, Yes: true, StatePath: state}, nil, &out); err != nil {
				t.Fatalf("apply --persist: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), tt.persistOut) {
				t.Errorf("apply output lacks %q:\n%s", tt.persistOut, out.String())
			}
			st, err := sysctl.LoadState(state)
			if err != nil {
				t.Fatal(err)
			}
			if tt.path != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.path))
				if err != nil {
					t.Fatalf("persisted file: %v", err)
				}
				for _, want := range tt.persisted {
					if !strings.Contains(string(b), want) {
						t.Errorf("%s lacks %q:\n%s", tt.path, want, b)
					}
				}
				if st.Persist == nil || st.Persist.Method != tt.method || st.Persist.Path != filepath.Join(dir, tt.path) {
					t.Errorf("state records persist %+v, want %s at %s", st.Persist, tt.method, tt.path)
				}
				if tt.method == sysctl.PersistDSMScript {
					if fi, _ := os.Stat(filepath.Join(dir, tt.path)); fi == nil || fi.Mode().Perm() != 0o755 {
						t.Errorf("DSM runs only executable scripts; mode %v", fi.Mode())
					}
				}
			} else if st.Persist != nil {
				t.Errorf("nothing may be written here, yet the state records %+v", st.Persist)
			}
			if tt.method == sysctl.PersistSteps {
				for _, cmd := range []string{"sysctl -w 'net.ipv4.tcp_wmem=", "midclt call -j tunable.create"} {
					if strings.Contains(out.String(), cmd) {
						goto stepsOK
					}
				}
				t.Errorf("steps give no command to run:\n%s", out.String())
			stepsOK:
			}

			out.Reset()
			if err := Run(ctx, in, Action{Revert: true, Yes: true, StatePath: state}, nil, &out); err != nil {
				t.Fatalf("revert: %v\n%s", err, out.String())
			}
			if tt.path != "" && !strings.Contains(out.String(), "removed what --persist wrote: ") {
				t.Errorf("revert does not say what it removed:\n%s", out.String())
			}
			if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
				t.Errorf("root after apply + persist + revert differs (-before +after):\n%s", diff)
			}
		})
	}
}
