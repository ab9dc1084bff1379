package paste

import (
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

func TestNormLine(t *testing.T) {
	tests := []struct {
		in, want string
		fence    bool
	}{
		{"active; relay \u201ctor\u201d, tx 1 rx 2", `active; relay "tor", tx 1 rx 2`, false},
		{"100.64.0.1\u00a0\u00a0laptop\talice@   linux  -", "100.64.0.1 laptop alice@ linux -", false},
		{"> > pong from nas (100.64.0.2) via DERP(nyc) in 30ms", "pong from nas (100.64.0.2) via DERP(nyc) in 30ms", false},
		{"`tailscale status`", "tailscale status", false},
		{"```text", "", true},
		{"\x1b[0;32mI (123) tag: x\x1b[0m", "I (123) tag: x", false},
		{"zero\u200bwidth \u2014 dash\u2026", "zerowidth - dash...", false},
	}
	for _, tt := range tests {
		got, fence := normLine(tt.in)
		if got != tt.want || fence != tt.fence {
			t.Errorf("normLine(%q) = %q, %v; want %q, %v", tt.in, got, fence, tt.want, tt.fence)
		}
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in           string
		ok           bool
		tool         string
		sub, target  string
		wantFlagsHas string
	}{
		{"$ tailscale status", true, "tailscale", "status", "", ""},
		{"# tailscale ping nas", true, "tailscale", "ping", "nas", ""},
		{"% tailscale ping -c 3 old-phone", true, "tailscale", "ping", "old-phone", "c"},
		{"~/src % time tailscale ping --tsmp nas", true, "tailscale", "ping", "nas", "tsmp"},
		{"alice@mbp ~ % sudo tailscale ping --c=5 pi", true, "tailscale", "ping", "pi", "c=5"},
		{"PS C:\\Users\\alice> tailscale.exe ping nas", true, "tailscale", "ping", "nas", ""},
		{"C:\\>tailscale status", true, "tailscale", "status", "", ""},
		{"user@host:~$ tailscale netcheck --every=1m", true, "tailscale", "netcheck", "", "every=1m"},
		{"[root@nas ~]# /usr/sbin/tailscale status --json | jq .", true, "tailscale", "status", "", "json"},
		{"tailscale ping MACHINE-2", true, "tailscale", "ping", "MACHINE-2", ""},
		{"$ sudo journalctl -u tailscaled -f", true, "journalctl", "tailscaled", "", "u"},
		{"cat the logs please", false, "", "", "", ""},
		{"I ran tailscale status", false, "", "", "", ""},
		{"100.64.0.2 nas alice@ linux -", false, "", "", "", ""},
	}
	for _, tt := range tests {
		c, ok := parseCommand(tt.in)
		if ok != tt.ok {
			t.Errorf("parseCommand(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		sub, target, flags := c.sub()
		if c.tool != tt.tool || sub != tt.sub || target != tt.target {
			t.Errorf("parseCommand(%q) = %s %q %q, want %s %q %q", tt.in, c.tool, sub, target, tt.tool, tt.sub, tt.target)
		}
		if tt.wantFlagsHas != "" && !strings.Contains(strings.Join(flags, " "), tt.wantFlagsHas) {
			t.Errorf("parseCommand(%q) flags %v lack %q", tt.in, flags, tt.wantFlagsHas)
		}
	}
	for _, p := range []string{"$", "PS C:\\Users\\alice>", "alice@mbp ~ %", "user@host:~$"} {
		if !isBarePrompt(p) {
			t.Errorf("isBarePrompt(%q) = false", p)
		}
	}
	if isBarePrompt("$ tailscale status") {
		t.Error("a prompt with a command is not bare")
	}
}

func TestPlaceholders(t *testing.T) {
	for _, s := range []string{"x.y.z.w", "100.xxx.xxx.xxx", "TAILNET.IP.MACHINE.2", "203.0.xx.xx", "<ip>", "[redacted]", "REDACTED", "***", "(hidden)"} {
		a, ok := parseAddrOrPlaceholder(s)
		if !ok || a.IsValid() {
			t.Errorf("parseAddrOrPlaceholder(%q) = %v, %v; want an unknown address", s, a, ok)
		}
	}
	for _, s := range []string{"203.0.xx.xx:56028", "<server-public-ip>:<port>", "x.y.z.w:41641", "[redacted]"} {
		ap, ok := parseAddrPortOrPlaceholder(s)
		if !ok || ap.IsValid() {
			t.Errorf("parseAddrPortOrPlaceholder(%q) = %v, %v; want an unknown address", s, ap, ok)
		}
	}
	if a, ok := parseAddrOrPlaceholder("100.64.0.2"); !ok || a != netip.MustParseAddr("100.64.0.2") {
		t.Errorf("a real address: %v %v", a, ok)
	}
	for _, s := range []string{"nas", "laptop", "1.2", "idle"} {
		if _, ok := parseAddrOrPlaceholder(s); ok {
			t.Errorf("%q read as an address", s)
		}
	}
	for _, s := range []string{"MACHINE-2", "nyc", "New York City"} {
		if knownName(s) != s {
			t.Errorf("knownName(%q) = %q: a name, not a placeholder", s, knownName(s))
		}
	}
	for _, s := range []string{"[redacted]", "<hostname>", "REDACTED", "***"} {
		if knownName(s) != "" {
			t.Errorf("knownName(%q) = %q: a placeholder is never a name", s, knownName(s))
		}
	}
}

func TestParseStatusCol(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want statusCol
	}{
		{"-", true, statusCol{dash: true}},
		{"offline", true, statusCol{offline: true}},
		{"offline, last seen 3h ago", true, statusCol{offline: true, lastSeen: 3 * time.Hour}},
		{"idle, tx 1 rx 2", true, statusCol{idle: true, traffic: true, tx: 1, rx: 2}},
		{"idle; offers exit node; offline", true, statusCol{idle: true, exitNodeOption: true, offline: true}},
		{`active; relay "nyc"`, true, statusCol{active: true, relay: "nyc"}},
		{`active; relay "[redacted]", tx 1 rx 0`, true, statusCol{active: true, relayRedacted: true, traffic: true, tx: 1}},
		{"active; relay nyc", true, statusCol{active: true, relay: "nyc"}},
		{"active; direct 203.0.113.5:41641", true, statusCol{active: true, direct: true, curAddr: "203.0.113.5:41641"}},
		{"active; direct x.y.z.w:41641", true, statusCol{active: true, direct: true, curAddr: "(redacted)"}},
		{"active; peer-relay 198.51.100.77:7777:vni:12", true, statusCol{active: true, peerRelay: "198.51.100.77:7777:vni:12"}},
		{"active; , tx 4096 rx 0", true, statusCol{active: true, traffic: true, tx: 4096}},
		{`active; exit node; relay "fra"; offline, last seen 5m ago, tx 1 rx 2`, true, statusCol{active: true, exitNode: true, relay: "fra", offline: true, lastSeen: 5 * time.Minute, traffic: true, tx: 1, rx: 2}},
		{"active; relay \"nyc\", tx 1", false, statusCol{}},
		{"offline and sad", false, statusCol{}},
		{"idle because", false, statusCol{}},
		{"active; sideways 1.2.3.4", false, statusCol{}},
	}
	for _, tt := range tests {
		got, ok := parseStatusCol(tt.in)
		if ok != tt.ok {
			t.Errorf("parseStatusCol(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if ok && !cmp.Equal(got, tt.want, cmp.AllowUnexported(statusCol{})) {
			t.Errorf("parseStatusCol(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	// The first line is us only without a connection state or traffic.
	for s, self := range map[string]bool{"-": true, "offline": true, "idle, tx 1 rx 2": false, `active; relay "nyc"`: false, "offline, last seen 1m ago": false} {
		c, _ := parseStatusCol(s)
		if c.isSelf() != self {
			t.Errorf("%q isSelf = %v, want %v", s, c.isSelf(), self)
		}
	}
}

func TestSplitLog(t *testing.T) {
	now := pasteNow
	want := time.Date(2026, 11, 30, 11, 58, 1, 0, time.UTC)
	msg := "magicsock: home is now derp-1 (nyc)"
	tests := []struct {
		line   string
		at     time.Time
		daemon bool
	}{
		{"Nov 30 11:58:01 host tailscaled[812]: " + msg, want, true},
		{"2026-11-30T11:58:01+0000 host tailscaled[812]: " + msg, want, true},
		{"tailscaled[812]: " + msg, time.Time{}, true},
		{"2026/11/30 11:58:01 " + msg, want, false},
		{"2026-11-30T11:58:01.5Z 2026/11/30 11:58:01 " + msg, want, false},
		{"tailscale-1  | 2026/11/30 11:58:01 " + msg, want, true},
		{"2026-11-30T06:58:01.000-05:00: " + msg, want, false},
		{"2026-11-30 06:58:01 -0500 -0500: " + msg, want, false},
		{"2026-11-30 11:58:01 +0000 UTC m=+12.5: " + msg, want, false},
		{"2026-11-30T11:58:01Z " + msg, want, false},
	}
	for _, tt := range tests {
		p := newPaste(now)
		lp := p.splitLog(tt.line)
		if lp.msg != msg || !lp.at.Equal(tt.at) || lp.daemon != tt.daemon || !lp.wrapped {
			t.Errorf("splitLog(%q) = %+v; want msg %q at %v daemon %v", tt.line, lp, msg, tt.at, tt.daemon)
		}
	}
}

func TestDecodeText(t *testing.T) {
	s := "100.64.0.1  laptop  alice@  windows  -\r\n"
	le := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		le = append(le, byte(u), byte(u>>8))
	}
	if got := string(decodeText(le)); got != s {
		t.Errorf("UTF-16LE with a BOM: %q", got)
	}
	noBOM := le[2:]
	if got := string(decodeText(noBOM)); got != s {
		t.Errorf("UTF-16LE without a BOM: %q", got)
	}
	if got := string(decodeText([]byte(s))); got != s {
		t.Errorf("UTF-8 changed: %q", got)
	}
	if looksBinary([]byte(s)) || !looksBinary([]byte("\x7fELF\x00\x01")) {
		t.Error("looksBinary")
	}
}

// TestUnwrap: a line a forum re-wrapped at 80 columns is read whole; a
// complete line followed by a sentence is not joined.
func TestUnwrap(t *testing.T) {
	in := "100.64.0.1  laptop                      alice@  linux  -\n" +
		"100.64.0.2  nas-in-the-basement-closet  alice@  linux  active; relay \"nyc\", tx\n" +
		"1234567890 rx 9876543210\n" +
		"Nov 30 11:58:01 host tailscaled[812]: netcheck: [v1] report: udp=true v6=false\n" +
		"v6os=true mapvarydest=true portmap= derp=1 derpdist=1v4:12ms\n" +
		"100.64.0.3  pi  alice@  linux  active; relay \"nyc\", tx 1 rx 2\n" +
		"Any ideas why?\n" +
		"2026/11/30 11:58:01 magicsock: home is now derp-1 (nyc)\n" +
		"and then it moved again\n"
	f, err := Parse([]Raw{{Name: "w", Data: []byte(in)}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	var ignored []int
	for _, ig := range f.Ignored {
		ignored = append(ignored, ig.Line)
	}
	if !cmp.Equal(ignored, []int{7, 9}) {
		t.Errorf("ignored lines %v, want only the sentences (7, 9)", ignored)
	}
	nas := f.Status.Peer[placeholderKey("ip:100.64.0.2")]
	if nas == nil || nas.RxBytes != 9876543210 {
		t.Errorf("nas %+v: the wrapped line's rest was not joined", nas)
	}
	if f.Self == nil || f.Self.NAT == nil || f.Self.NAT.MappingVariesByDestIP == nil || !*f.Self.NAT.MappingVariesByDestIP || len(f.Self.NAT.DERPLatency) != 1 {
		t.Errorf("self facts %+v: the wrapped report's rest was not read", f.Self)
	}
}

// TestLazyREsCompile compiles every pattern the readers compile on first
// use (lazyRE), so that a bad one fails here rather than on the paste
// that first reaches it.
func TestLazyREsCompile(t *testing.T) {
	if len(lazyREs) < 60 {
		t.Errorf("%d lazily compiled patterns, want the readers' 60 and more", len(lazyREs))
	}
	for _, expr := range lazyREs {
		if _, err := regexp.Compile(expr); err != nil {
			t.Errorf("%q: %v", expr, err)
		}
	}
}
