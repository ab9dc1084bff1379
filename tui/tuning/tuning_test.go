package tuning

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/sysctltest"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/sysctl/tune/tunetest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

var at = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// fixedCrypto stands in for the crypto measurement, so no golden depends
// on this machine's speed.
var fixedCrypto = tunetest.FixedCrypto(tune.CryptoMeasure{GOARCH: "amd64", Cores: 4, Packet: tune.CryptoPacket, OneCore: 2.4e9, AllCores: 8.8e9})

func ptr[T any](v T) *T { return &v }

// fixture is a sandbox with stock 6.1 values (sysctltest.SampleKeys), a fake
// tailscale0 and two tailnet connections, one send-buffer limited.
func fixture(t *testing.T, root bool) (testHost, sysctl.Host) {
	t.Helper()
	dir := t.TempDir()
	h, sample, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "none")))
	if err != nil || !sample {
		t.Fatalf("sandbox: %v %v", sample, err)
	}
	conn := func(remote string, rtt time.Duration, sndbuf time.Duration) sockdiag.Conn {
		info := &sockdiag.TCPInfo{Len: 232, RTT: &rtt, RTTVar: ptr(rtt / 10), SndCwnd: ptr(uint32(40)),
			Retrans: ptr(uint32(0)), TotalRetrans: ptr(uint32(2)), DeliveryRate: ptr(uint64(1_375_000)),
			BusyTime: ptr(time.Second), SndbufLimited: &sndbuf, RwndLimited: ptr(time.Duration(0)),
			BytesSent: ptr(uint64(50 << 20)), BytesRetrans: ptr(uint64(0))}
		return sockdiag.Conn{Remote: netip.MustParseAddrPort(remote), State: "ESTABLISHED", CC: "cubic", Info: info, Verdict: sockdiag.Classify(sockdiag.Conn{Info: info, CC: "cubic"}, sockdiag.Limits{})}
	}
	o := testHost{Control: tune.Control{
		Inputs: tune.Inputs{Host: h, Sandbox: true, Bandwidth: 400e6, RTT: 20 * time.Millisecond,
			BandwidthSource: "demo: the NAS case", RTTSource: "demo: the NAS case", Crypto: fixedCrypto,
			Conns: func(context.Context) ([]sockdiag.Conn, error) {
				return []sockdiag.Conn{conn("100.64.0.7:445", 22*time.Millisecond, 700*time.Millisecond), conn("100.64.0.9:22", 18*time.Millisecond, 0)}, nil
			},
			Link: func(string) (sockdiag.Link, error) {
				return sockdiag.Link{Name: "tailscale0", MTU: 1280, Qdisc: "fq_codel", Up: true, RxDropped: 3}, nil
			},
		},
		StatePath: filepath.Join(dir, "state.json")},
		root: root,
		Now:  func() time.Time { return at.Add(2 * time.Second) },
	}
	return o, h
}

// testHost is a test's host: the tune.Control the dashboard hands the
// pane as functions (internal/dashboard's TuningOptions), whether applying
// is allowed, and the pane's clock.
type testHost struct {
	tune.Control
	root bool
	Now  func() time.Time
}

// options hands the pane h's functions, as the dashboard does.
func (h testHost) options() Options {
	return Options{Read: h.Read, Apply: h.Apply, Revert: h.Revert, MayChange: func() bool { return h.root },
		Sandbox: h.Inputs.Sandbox, BBR: h.Inputs.BBR, StateFile: h.StateFile(), Now: h.Now}
}

func gather(t *testing.T, o testHost) ReportMsg {
	t.Helper()
	m := ReportMsg(o.Read(context.Background()))
	if m.Err != nil {
		t.Fatal(m.Err)
	}
	m.Report.Time = at
	return m
}

func mustContain(t *testing.T, v string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(v, w) {
			t.Errorf("view lacks %q:\n%s", w, v)
		}
	}
}

// run executes cmd (what Bubble Tea would do) and returns its message.
func run(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command returned")
	}
	return cmd()
}

func TestPaneShowsReport(t *testing.T) {
	o, _ := fixture(t, true)
	p := New(o.options())
	p.SetSize(150, 60)
	mustContain(t, tuitest.Unstyled(p.View()), "reading /proc/sys")
	p.Update(gather(t, o))
	v := tuitest.Unstyled(p.View())
	mustContain(t, v,
		"[sandbox: a copy, not this machine]",
		"[sandbox: a copy, not this machine]  read 2s ago", "Linux with systemd (/run/systemd/system), kernel 6.1.0-sample, 3.8 GiB RAM",
		"persist (tailpath tune --apply --persist): /etc/sysctl.d/99-tailpath.conf (systemd-sysctl applies",
		"BDP = bandwidth × RTT", "976.6 KiB", "buffer max, raised to --floor 16 MiB (the default)",
		"net.ipv4.tcp_wmem                   4096 16384 4194304   4096 16384 16777216",
		"net.ipv4.tcp_congestion_control     cubic                keep",
		"BBR available: bbr is in tcp_available_congestion_control",
		"tailscale0: up, mtu 1280, qdisc fq_codel, dropped rx 3 tx 0",
		"Tailnet TCP connections (2)",
		"send buffer limited: raise tcp_wmem max", "healthy",
	)
	if n := strings.Count(v, "\n") + 1; n != 60 {
		t.Errorf("view has %d lines, want 60", n)
	}
	// b adds bbr to the recommendation without any I/O.
	if cmd := p.Update(tea.KeyPressMsg{Code: 'b', Text: "b"}); cmd != nil {
		t.Error("toggling bbr returned a command")
	}
	mustContain(t, tuitest.Unstyled(p.View()), "net.ipv4.tcp_congestion_control     cubic                bbr", "bbr in the recommendation: on")
}

// TestPaneBBRInUse: when the host already runs bbr the pane says so and b
// is not offered (there is nothing to switch on).
func TestPaneBBRInUse(t *testing.T) {
	o, h := fixture(t, true)
	if err := h.WriteRaw(sysctl.KeyCongestionControl, "bbr"); err != nil {
		t.Fatal(err)
	}
	p := New(o.options())
	p.SetSize(150, 60)
	p.Update(gather(t, o))
	mustContain(t, tuitest.Unstyled(p.View()), "congestion control: bbr already in use; default qdisc fq_codel")
	if strings.Contains(tuitest.Unstyled(p.View()), "bbr in the recommendation") {
		t.Errorf("offers to toggle bbr while it is in use:\n%s", tuitest.Unstyled(p.View()))
	}
	if p.KeyMap().(keyMap).BBR.Enabled() {
		t.Error("b is enabled while bbr is already in use")
	}
	before := tuitest.Unstyled(p.View())
	p.Update(tea.KeyPressMsg{Code: 'b', Text: "b"})
	if diff := cmp.Diff(before, tuitest.Unstyled(p.View())); diff != "" {
		t.Errorf("b changed the view while bbr is in use (-want +got):\n%s", diff)
	}
}

func TestPaneApplyRevert(t *testing.T) {
	o, h := fixture(t, true)
	before, _ := h.Read()
	p := New(o.options())
	p.SetSize(150, 60)
	p.Update(gather(t, o))

	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if !p.Capturing() {
		t.Fatal("dialog not open after a")
	}
	mustContain(t, tuitest.Unstyled(p.View()), "Apply 4 change(s)?", "net.ipv4.tcp_wmem: 4096 16384 4194304 → 4096 16384 16777216",
		"sandbox: writes go to the copy", "y: write it")
	// Other keys, global ones included, are swallowed while capturing.
	if cmd := p.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd != nil || !p.Capturing() {
		t.Fatal("q closed the dialog or did something")
	}
	cmd := p.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if p.Capturing() {
		t.Fatal("dialog still open after y")
	}
	if now, _ := h.Read(); now.Raw[sysctl.KeyTCPWmem] != before.Raw[sysctl.KeyTCPWmem] {
		t.Fatal("Update wrote to the sandbox itself; writes belong in the command")
	}
	applied := run(t, cmd).(AppliedMsg)
	if applied.Err != nil || len(applied.Result.Written) != 4 {
		t.Fatalf("apply: %+v", applied)
	}
	if now, _ := h.Read(); now.TCPWmem.Max != 16<<20 {
		t.Fatalf("tcp_wmem after apply %v", now.TCPWmem)
	}
	refresh := run(t, p.Update(applied)).(ReportMsg)
	refresh.Report.Time = at.Add(time.Second)
	p.Update(refresh)
	// The fixture's connection still reads send-buffer limited (it is
	// fixed), now at a buffer as large as the target asks for: nothing
	// left to change, and the pane says why the limit stays.
	mustContain(t, tuitest.Unstyled(p.View()), "applied 4 key(s); r reverts them", "revert: 4 key(s) recorded, r reverts; in ",
		"note: 1 connection(s) stalled on a send buffer already at 16 MiB")
	if len(p.adv.Rec.Changes) != 0 {
		t.Errorf("changes after applying: %v", p.adv.Rec.Changes)
	}
}

func TestPaneRevertAndCancel(t *testing.T) {
	o, h := fixture(t, true)
	before, _ := h.Read()
	p := New(o.options())
	p.SetSize(150, 60)
	p.Update(gather(t, o))
	// n cancels without writing.
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEscape}); cmd != nil || p.Capturing() {
		t.Fatal("esc did not cancel")
	}
	mustContain(t, tuitest.Unstyled(p.View()), "cancelled: nothing written")
	// Apply, then revert through the dialog.
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	p.Update(run(t, p.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})))
	rep := gather(t, o)
	rep.Report.Time = at.Add(time.Second)
	p.Update(rep)
	p.Update(tea.KeyPressMsg{Code: 'r', Text: "r"})
	mustContain(t, tuitest.Unstyled(p.View()), "Revert 4 key(s)", "net.ipv4.tcp_rmem: 4096 131072 16777216 → 4096 131072 6291456")
	reverted := run(t, p.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})).(AppliedMsg)
	if reverted.Err != nil {
		t.Fatal(reverted.Err)
	}
	after, _ := h.Read()
	for k, v := range before.Raw {
		if after.Raw[k] != v {
			t.Errorf("%s = %q after revert, want %q", k, after.Raw[k], v)
		}
	}
	p.Update(reverted)
	mustContain(t, tuitest.Unstyled(p.View()), "reverted 4 key(s)")
}

func TestPaneNotRoot(t *testing.T) {
	o, h := fixture(t, false)
	before, _ := h.Read()
	p := New(o.options())
	p.SetSize(150, 40)
	p.Update(gather(t, o))
	if cmd := p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"}); cmd != nil || p.Capturing() {
		t.Fatal("apply went ahead without root")
	}
	mustContain(t, tuitest.Unstyled(p.View()), "needs root: run sudo tailpath tune --apply")
	if after, _ := h.Read(); after.Raw[sysctl.KeyTCPWmem] != before.Raw[sysctl.KeyTCPWmem] {
		t.Fatal("written without root")
	}
}

// TestPaneNotRootBBR: with b on, the sudo hint carries --bbr so the command
// writes what the pane showed.
func TestPaneNotRootBBR(t *testing.T) {
	o, _ := fixture(t, false)
	p := New(o.options())
	p.SetSize(150, 40)
	p.Update(gather(t, o))
	p.Update(tea.KeyPressMsg{Code: 'b', Text: "b"})
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	mustContain(t, tuitest.Unstyled(p.View()), "needs root: run sudo tailpath tune --apply --bbr (")
}

func TestPaneErrorAndStale(t *testing.T) {
	o, _ := fixture(t, true)
	p := New(o.options())
	p.SetSize(120, 20)
	p.Update(ReportMsg{Err: sysctl.ErrNoProc})
	mustContain(t, tuitest.Unstyled(p.View()), "tuning source: /proc/sys not found")
	fresh := gather(t, o)
	p.Update(fresh)
	stale := gather(t, o)
	stale.Report.Time = at.Add(-time.Minute)
	stale.Report.BBR.Kernel = "stale"
	p.Update(stale)
	if strings.Contains(tuitest.Unstyled(p.View()), "stale") {
		t.Error("an older report replaced a newer one")
	}
}

func TestSandbox(t *testing.T) {
	c, _, err := tunetest.Sandbox(t.TempDir(), tune.Inputs{Bandwidth: 1e9, RTT: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	o := testHost{Control: c, root: c.MayChange()}
	o.Inputs.Conns = func(context.Context) ([]sockdiag.Conn, error) { return nil, nil }
	o.Inputs.Link = func(string) (sockdiag.Link, error) { return sockdiag.Link{}, sockdiag.ErrNoLink }
	m := ReportMsg(o.Read(context.Background()))
	if m.Err != nil || !m.Report.Sandbox || !strings.HasPrefix(o.StatePath, filepath.Dir(filepath.Dir(o.Inputs.Host.Proc))) {
		t.Fatalf("sandbox gather: %+v %v (state %s)", m.Report.Sandbox, m.Err, o.StatePath)
	}
	// The demo passes no flags: its inputs are labelled as its own, not as --bandwidth/--rtt.
	tg := m.Report.Rec.Target
	if diff := cmp.Diff([]string{tunetest.DemoSource, tunetest.DemoSource}, []string{tg.BandwidthSource, tg.RTTSource}); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	p := New(o.options())
	p.SetSize(100, 30)
	p.Update(m)
	mustContain(t, tuitest.Unstyled(p.View()), "1 Gbit/s = 119.2 MiB/s (demo setting)", "50ms (demo setting)")
	if strings.Contains(tuitest.Unstyled(p.View()), "--rtt") || strings.Contains(tuitest.Unstyled(p.View()), "--bandwidth") {
		t.Errorf("demo view names flags nobody passed:\n%s", tuitest.Unstyled(p.View()))
	}
}

func TestTuningGolden(t *testing.T) {
	o, _ := fixture(t, true)
	p := New(o.options())
	tm := teatest.NewTestModel(t, tuitest.Host{Pane: p}, teatest.WithInitialTermSize(120, 40))
	tm.Send(gather(t, o))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(tuitest.Host)
	teatest.RequireEqualOutput(t, []byte(tuitest.Unstyled(final.View().Content)))
}

func TestTuningDialogGolden(t *testing.T) {
	o, _ := fixture(t, true)
	o.StatePath = "/var/lib/tailpath/tune-state.json" // shown, never written: nothing is confirmed
	p := New(o.options())
	tm := teatest.NewTestModel(t, tuitest.Host{Pane: p}, teatest.WithInitialTermSize(100, 20))
	tm.Send(gather(t, o))
	tm.Send(tea.KeyPressMsg{Code: 'a', Text: "a"})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(tuitest.Host)
	out := tuitest.Unstyled(final.View().Content)
	if !strings.Contains(out, "Apply 4 change(s)?") {
		t.Fatalf("dialog not shown:\n%s", out)
	}
	teatest.RequireEqualOutput(t, []byte(out))
}

// TestDialogFitsNarrowPane: at 80 columns the confirm box keeps both borders
// (the long state-file path wraps inside it instead of being cut off).
func TestDialogFitsNarrowPane(t *testing.T) {
	o, _ := fixture(t, true)
	o.StatePath = filepath.Join(t.TempDir(), strings.Repeat("long-directory-name/", 4), "tune-state.json")
	p := New(o.options())
	p.SetSize(80, 24)
	p.Update(gather(t, o))
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if !p.Capturing() {
		t.Fatal("dialog not open after a")
	}
	for i, l := range strings.Split(tuitest.Unstyled(p.View()), "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d wide: %q", i, w, l)
		}
		if strings.HasPrefix(l, "│") && !strings.HasSuffix(strings.TrimRight(l, " "), "│") {
			t.Errorf("line %d lost its right border: %q", i, l)
		}
	}
	// The path is on one line, shortened from the left at a separator,
	// never broken mid-word across lines.
	mustContain(t, tuitest.Unstyled(p.View()), "…/long-directory-name/long-directory-name/tune-state.json", "y: write it")
	if strings.Contains(tuitest.Unstyled(p.View()), "tune-\n") || strings.Contains(tuitest.Unstyled(p.View()), "tune- ") {
		t.Errorf("state path broken across lines:\n%s", tuitest.Unstyled(p.View()))
	}
}

func TestShortenPath(t *testing.T) {
	tests := []struct {
		path  string
		width int
		want  string
	}{
		{"/var/lib/tailpath/tune-state.json", 40, "/var/lib/tailpath/tune-state.json"},
		{"/var/lib/tailpath/tune-state.json", 33, "/var/lib/tailpath/tune-state.json"},
		{"/var/lib/tailpath/tune-state.json", 32, "…/lib/tailpath/tune-state.json"},
		{"/var/lib/tailpath/tune-state.json", 20, "…/tune-state.json"},
		{"/var/lib/tailpath/tune-state.json", 10, "…tate.json"},
		{`C:\Users\me\AppData\tailpath\tune-state.json`, 30, `…\tailpath\tune-state.json`},
		{"/a/b", 1, "…"},
		{"/a/b", 0, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s@%d", tt.path, tt.width), func(t *testing.T) {
			got := shortenPath(tt.path, tt.width)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("shortenPath (-want +got):\n%s", diff)
			}
			if w := ansi.StringWidth(got); w > max(tt.width, 0) {
				t.Errorf("%q is %d wide, over %d", got, w, tt.width)
			}
		})
	}
}

// TestPaneSourceTextClean: escape sequences in what the tuning source
// reports (a connection dump's or an interface's error, a corrupt state
// file, a failed gathering, a failed apply) never reach the screen; their
// words do. The pane cleans nothing itself: sysctl/tune hands it
// safetext.Text.
func TestPaneSourceTextClean(t *testing.T) {
	const osc, clear, blink = "\x1b]0;pwned\x07", "\x1b[2J", "\x1b[5m"
	o, _ := fixture(t, true)
	o.Inputs.Conns = func(context.Context) ([]sockdiag.Conn, error) {
		return nil, errors.New("sock_diag: " + osc + "dump failed" + clear)
	}
	o.Inputs.Link = func(string) (sockdiag.Link, error) {
		return sockdiag.Link{}, errors.New("tailscale0: " + blink + "no such device")
	}
	if err := os.WriteFile(o.StatePath, []byte(osc+"{"), 0o600); err != nil {
		t.Fatal(err)
	}
	clean := func(what, raw string, wants ...string) {
		t.Helper()
		for _, bad := range []string{"\x07", "\x1b]", clear, blink, "pwned"} {
			if strings.Contains(raw, bad) {
				t.Errorf("%s: the view carries %q from the source:\n%q", what, bad, raw)
			}
		}
		mustContain(t, tuitest.Unstyled(raw), wants...)
	}
	p := New(o.options())
	p.SetSize(200, 80)
	m := ReportMsg(o.Read(context.Background()))
	if m.Err != nil || m.StateErr == nil {
		t.Fatalf("reading: err %v, state err %v; want a report and a corrupt state file", m.Err, m.StateErr)
	}
	p.Update(m)
	clean("report", p.View(), "tailnet TCP connections: sock_diag: dump failed", "tailscale0: no such device", "revert state: ")
	p.Update(AppliedMsg{Err: errors.New("write /proc/sys/net/core/wmem_max: " + osc + "permission denied")})
	clean("apply", p.View(), "not applied, nothing written: write /proc/sys/net/core/wmem_max: permission denied")
	p.Update(ReportMsg{Err: errors.New("/proc/sys: " + clear + "gone")})
	clean("failed reading", p.View(), "tuning source: /proc/sys: gone")
}

// TestHelpRevert: r shows in the short help whenever a state file exists;
// when nothing is recorded only the full help says why r does nothing.
func TestHelpRevert(t *testing.T) {
	o, _ := fixture(t, true)
	base := gather(t, o)
	withState, corrupt := base, base
	withState.State = &sysctl.State{}
	corrupt.StateErr = errors.New("corrupt")
	tests := []struct {
		name              string
		msg               ReportMsg
		short, full       []string // wanted
		notShort, notFull []string // unwanted
	}{
		{"nothing recorded", base, []string{"a apply"}, []string{"revert: nothing recorded yet"}, []string{"revert"}, nil},
		{"state file", withState, []string{"r revert"}, []string{"revert"}, nil, []string{"nothing recorded", "unreadable"}},
		{"corrupt state", corrupt, []string{"a apply"}, []string{"revert: state file unreadable"}, []string{"revert"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(o.options())
			p.SetSize(150, 60)
			p.Update(tt.msg)
			h := help.New()
			h.SetWidth(200)
			km := p.KeyMap()
			short, full := tuitest.Unstyled(h.ShortHelpView(km.ShortHelp())), tuitest.Unstyled(h.FullHelpView(km.FullHelp()))
			mustContain(t, short, tt.short...)
			mustContain(t, full, tt.full...)
			for _, a := range tt.notShort {
				if strings.Contains(short, a) {
					t.Errorf("short help has %q: %s", a, short)
				}
			}
			for _, a := range tt.notFull {
				if strings.Contains(full, a) {
					t.Errorf("full help has %q:\n%s", a, full)
				}
			}
		})
	}
}

// TestSeedNASPane: the demo's Tuning tab is the seed NAS: DSM on 4.4 with
// no BBR, an upload that is buffer limited beside a connection with MTU
// trouble; applying in its sandbox turns the upload into the one recorded
// with the raised tcp_wmem.
func TestSeedNASPane(t *testing.T) {
	o, err := seedNAS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o.Now = func() time.Time { return at }
	p := New(o.options())
	p.SetSize(160, 80)
	p.Update(gather(t, o))
	v := tuitest.Unstyled(p.View())
	mustContain(t, v, "[sandbox: a copy, not this machine]", "Synology DSM 7.1.1-42962 Update 6 (/etc.defaults/VERSION), kernel 4.4.302+",
		"persist (tailpath tune --apply --persist): boot script /usr/local/etc/rc.d/tailpath-sysctl.sh",
		"BBR impossible: kernel 4.4.302+ predates BBR", "no package adds it",
		"tailscale0: up, mtu 1280", "9.4 Mbit/s", "send buffer limited: raise tcp_wmem max", "MTU trouble: full-size segments get no ACK",
		"verdict: 1 buffer limited (applying raises tcp_wmem max); 1 with MTU trouble (buffers will not help: tcp_mtu_probing=1",
		"net.ipv4.tcp_mtu_probing            0                   1")
	// BBR is impossible on 4.4: b offers nothing and changes nothing.
	p.Update(tea.KeyPressMsg{Code: 'b', Text: "b"})
	if v := tuitest.Unstyled(p.View()); p.bbr || !strings.Contains(v, "bbr in the recommendation: not possible here") || strings.Contains(v, "b toggle bbr") {
		t.Errorf("b on a kernel without BBR: bbr %v, view:\n%s", p.bbr, v)
	}
	// Scrolled down to the table at 80x24, as one is before applying.
	p.SetSize(80, 24)
	p.View()
	for range 40 {
		p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	applied := run(t, p.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})).(AppliedMsg)
	if applied.Err != nil {
		t.Fatal(applied.Err)
	}
	refresh := run(t, p.Update(applied)).(ReportMsg)
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "applied ") {
		t.Errorf("after apply the outcome is out of view:\n%s", v)
	}
	p.SetSize(160, 80)
	refresh.Report.Time = at.Add(time.Second)
	p.Update(refresh)
	v = tuitest.Unstyled(p.View())
	mustContain(t, v, "applied 5 key(s)", "192.8 Mbit/s", "tcp_mtu_probing is on")
	if strings.Contains(v, "set net.ipv4.tcp_mtu_probing=1") || strings.Contains(v, "tcp_mtu_probing=1 lets TCP") {
		t.Errorf("after applying tcp_mtu_probing=1 the advice still asks for it:\n%s", v)
	}
	if strings.Contains(v, "send buffer limited: raise") || strings.Contains(v, "9.4 Mbit/s") {
		t.Errorf("after applying the upload is still the buffer-limited one:\n%s", v)
	}
}

// seedNAS is the demo's Tuning pane's options: the seed NAS in dir.
func seedNAS(dir string) (testHost, error) {
	c, err := tune.SeedNASControl(dir)
	return testHost{Control: c, root: c.MayChange()}, err
}

// TestSnapshotReportSaysWhen: a snapshot's report says when it was read,
// not "read 0s ago" by the snapshot's stopped clock (a 15-minute-old file
// read as fresh); a and r say it is read-only.
func TestSnapshotReportSaysWhen(t *testing.T) {
	o, _ := fixture(t, true)
	m := gather(t, o)
	p := New(Options{Snapshot: "taken 2026-11-30 06:00:00Z", Now: func() time.Time { return m.Report.Time }})
	p.SetSize(150, 40)
	p.Update(m)
	v := tuitest.Unstyled(p.View())
	if strings.Contains(v, " ago") || !strings.Contains(v, "read "+m.Report.Time.UTC().Format("2006-01-02 15:04:05Z")) {
		t.Errorf("the snapshot's report says its age, or not its time:\n%s", v)
	}
	for _, k := range []rune{'a', 'r'} {
		p.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
		if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "read-only: this is the snapshot's report") {
			t.Errorf("%c on a snapshot said nothing:\n%s", k, v)
		}
	}
}
