package paste

import (
	"regexp"
	"strings"
	"testing"
)

// spliceCase is a real line (with the lines it needs around it: a
// netcheck item needs its "Report:") and the kind it must be read as.
type spliceCase struct {
	before []string // lines before it, unchanged
	line   string
	kind   string
	log    bool // a tailscaled log line: wrappers apply
}

// spliceCases are lines of every recognised kind, from the corpus.
var spliceCases = []spliceCase{
	{line: "100.64.0.2  nas  alice@  linux  active; relay \"nyc\", tx 52000 rx 31000", kind: KindStatusText},
	{line: "100.64.0.3  pi   alice@  linux  active; direct 203.0.113.40:41641, tx 904112 rx 1203344", kind: KindStatusText},
	{line: "100.64.0.5  old-phone  bob@  android  offline, last seen 3h ago", kind: KindStatusText},
	{line: "100.101.102.4   old-phone            bob@         android offline", kind: KindStatusText},
	{line: "100.70.0.2  camera  dave@  linux  active; peer-relay 198.51.100.77:7777:vni:12, tx 40960 rx 812000", kind: KindStatusText},
	{line: "pong from nas (100.64.0.2) via DERP(nyc) in 30ms", kind: KindPing},
	{line: "pong from nas (100.64.0.2) via 203.0.113.7:41641 in 9ms", kind: KindPing},
	{line: "pong from nas (100.64.0.2, 46723) via TSMP in 14ms", kind: KindPing},
	{line: "pong from camera (100.70.0.2) via peer-relay(198.51.100.77:7777:vni:12) in 22ms", kind: KindPing},
	{line: `ping "100.64.0.2" timed out`, kind: KindPing},
	{before: []string{"Report:"}, line: "* UDP: true", kind: KindNetcheckText},
	{before: []string{"Report:", "\t* UDP: true"}, line: "* IPv4: yes, 198.51.100.10:41641", kind: KindNetcheckText},
	{before: []string{"Report:", "\t* DERP latency:"}, line: "- nyc: 12.3ms (New York City)", kind: KindNetcheckText},
	{line: "netcheck: [v1] report: udp=true v6=false v6os=true mapvarydest=false portmap= v4a=198.51.100.10:41641 derp=1 derpdist=1v4:12ms", kind: KindLog, log: true},
	{line: "netcheck: [v1] report: udp=false v4=false icmpv4=false v6=false v6os=true mapvarydest= hair= portmap= derp=0", kind: KindLog, log: true},
	{line: "magicsock: endpoints changed: 198.51.100.10:41641 (stun), 192.168.1.20:41641 (local)", kind: KindLog, log: true},
	{line: "magicsock: home is now derp-1 (nyc)", kind: KindLog, log: true},
	{line: "magicsock: disco: node [IiIiI] d:0123456789abcdef now using 203.0.113.5:41641 mtu=1360 tx=a1b2c3d4e5f6", kind: KindLog, log: true},
	{line: "magicsock: derp-4 does not know about peer [QqQqQ], removing route", kind: KindLog, log: true},
	{line: `control: NetInfo: NetInfo{varies=false ipv6=false ipv6os=true udp=true icmpv4=false derp=#2 portmap=active-UM link="" firewallmode="nft-default"}`, kind: KindLog, log: true},
	{line: `control: NetInfo: NetInfo{varies=true hairpin= ipv6=false ipv6os=true udp=true icmpv4=false derp=#1 portmap=active-UM link="" firew>`, kind: KindLog, log: true},
	{line: "netcheck: netcheck: UDP is blocked, trying HTTPS", kind: KindLog, log: true},
	{line: `Received error: PollNetMap: Post "https://controlplane.tailscale.com/machine/map": unexpected EOF`, kind: KindLog, log: true},
	{line: `logtail: upload: log upload of 5421 bytes compressed failed: Post "https://log.tailscale.com/c/x": remote error: tls: bad record MAC`, kind: KindLog, log: true},
	{line: "LinkChange: major, rebinding. New state: interfaces.State{defaultRoute=wlan0 ifs={wlan0:[192.168.7.20/24 llu6]} v4=true v6=false}", kind: KindLog, log: true},
	{line: "magicsock: [0xc000123450] derp.Recv(derp-1): derphttp.Client.Recv connect to region 1 (nyc): dial tcp 192.0.2.1:443: i/o timeout", kind: KindLog, log: true},
	{line: "derphttp: CONNECT dial to derp1.tailscale.com:443: 403 Forbidden", kind: KindLog, log: true},
	{line: "portmapper: UPnP discovery response from 192.168.1.2, but gateway IP is 192.168.1.1", kind: KindLog, log: true},
	{line: "health(warnable=magicsock-receive-func-error): error: The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues.", kind: KindLog, log: true},
	{line: `health("overall"): error: not in map poll`, kind: KindLog, log: true},
}

// logWrappers put a log message in the wrappers tailscaled's lines are
// pasted in (paste_log.go).
var logWrappers = []func(string) string{
	func(m string) string { return m },
	func(m string) string { return "Nov 30 11:58:01 host tailscaled[812]: " + m },
	func(m string) string { return "Oct  8 07:56:48.123456 * tailscaled[1160]: " + m },
	func(m string) string { return "2026-11-30T11:58:01+0000 host tailscaled[812]: " + m },
	func(m string) string { return "tailscaled[812]: " + m },
	func(m string) string { return "2026/11/30 11:58:01 " + m },
	func(m string) string { return "2026/11/30 11:58:01.123456 [v1] " + m },
	func(m string) string { return "2026-11-30T11:58:01.123456789Z 2026/11/30 11:58:01 " + m },
	func(m string) string { return "tailscale-1  | 2026/11/30 11:58:01 " + m },
	func(m string) string { return "2026-11-30T06:58:01.123-05:00: " + m },
	func(m string) string { return "2021-03-22 12:08:59.712038879 -0400 -0400: " + m },
	func(m string) string { return "2026-11-30 11:58:01.000000001 +0000 UTC: " + m },
	func(m string) string { return "2026-11-30T11:58:01Z " + m },
	func(m string) string { return "2026/11/30 11:58:01 app: net.tailnet.net.wgengine: " + m },
}

// placeholders stand for a redacted address.
var placeholders = []string{"x.y.z.w", "100.xxx.xxx.xxx", "TAILNET.IP.MACHINE.2", "[redacted]", "<ip>", "REDACTED", "***", "203.0.xx.xx"}

// prompts are shell prompts put before the line, running a command.
var prompts = []string{"$ ", "# ", "% ", "> ", "~/src % ", "alice@mbp ~ % ", "PS C:\\Users\\alice> ", "user@host:~$ ", "[root@nas ~]# ", "C:\\>"}

var (
	quoteRE  = regexp.MustCompile(`"([^"]*)"`)
	addrInRE = regexp.MustCompile(`\b(?:198\.51\.100|203\.0\.113|192\.0\.2|100\.64\.0|100\.70\.0|100\.101\.102)\.\d+\b`)
)

// splice applies the choices to c and returns the input and the line
// number c.line ends up on.
func splice(c spliceCase, wrapper, placeholder, prompt, mangle uint8) (string, int) {
	line := c.line
	if placeholder%3 != 0 {
		ph := placeholders[int(placeholder)%len(placeholders)]
		if m := addrInRE.FindStringIndex(line); m != nil {
			line = line[:m[0]] + ph + line[m[1]:]
		}
	}
	if c.log {
		line = logWrappers[int(wrapper)%len(logWrappers)](line)
	}
	switch mangle % 6 {
	case 1: // typographic quotes
		line = quoteRE.ReplaceAllString(line, "\u201c$1\u201d")
	case 2: // non-breaking spaces
		line = strings.Replace(line, " ", "\u00a0", 2)
	case 3: // tabs where the CLI printed spaces
		line = strings.Replace(line, "  ", "\t", -1)
	case 4: // a Markdown quote
		line = "> " + line
	case 5: // inline code
		line = "`" + line + "`"
	}
	var lines []string
	if prompt%4 != 0 {
		p := prompts[int(prompt)%len(prompts)]
		cmd := []string{"tailscale status", "time tailscale ping nas", "sudo journalctl -u tailscaled", "tailscale netcheck"}[int(prompt/4)%4]
		lines = append(lines, "some words first", p+cmd)
	}
	lines = append(lines, c.before...)
	no := len(lines) + 1
	lines = append(lines, line)
	if prompt%5 == 1 {
		lines = append(lines, "real\t0m1.043s", "user\t0m0.011s", "sys\t0m0.008s")
	}
	return strings.Join(lines, "\n") + "\n", no
}

// FuzzSplice: prompts, placeholders, log wrappers and forum mangling
// spliced into real lines never stop a recognisable line from being
// recognised, as the kind it is.
func FuzzSplice(f *testing.F) {
	for i := range spliceCases {
		f.Add(uint8(i), uint8(i), uint8(i), uint8(i), uint8(i))
		f.Add(uint8(i), uint8(i*7+3), uint8(i*5+1), uint8(i*3+2), uint8(i+4))
	}
	f.Fuzz(func(t *testing.T, which, wrapper, placeholder, prompt, mangle uint8) {
		c := spliceCases[int(which)%len(spliceCases)]
		in, no := splice(c, wrapper, placeholder, prompt, mangle)
		file, err := Parse([]Raw{{Name: "spliced", Data: []byte(in)}}, pasteNow)
		if err != nil {
			t.Fatalf("%v\ninput:\n%s", err, in)
		}
		for _, got := range file.Inputs {
			if got.Name == "spliced" && got.First <= no && no <= got.Last {
				if got.Kind != c.kind {
					t.Fatalf("line %d read as %s, want %s\ninput:\n%s", no, got.Kind, c.kind, in)
				}
				return
			}
		}
		t.Fatalf("line %d not recognised (inputs %+v, ignored %+v)\ninput:\n%s", no, file.Inputs, file.Ignored, in)
	})
}

// TestSpliceEveryChoice runs every case with every wrapper, placeholder,
// prompt and mangling at least once (FuzzSplice's seeds are a sample).
func TestSpliceEveryChoice(t *testing.T) {
	for i, c := range spliceCases {
		for k := 0; k < 60; k++ {
			w, ph, pr, m := uint8(k), uint8(k*7), uint8(k*3+1), uint8(k)
			in, no := splice(c, w, ph, pr, m)
			file, err := Parse([]Raw{{Name: "spliced", Data: []byte(in)}}, pasteNow)
			if err != nil {
				t.Errorf("case %d/%d: %v\n%s", i, k, err, in)
				continue
			}
			ok := false
			for _, got := range file.Inputs {
				if got.Name == "spliced" && got.First <= no && no <= got.Last && got.Kind == c.kind {
					ok = true
				}
			}
			if !ok {
				t.Errorf("case %d/%d: line %d not read as %s (inputs %+v)\n%s", i, k, no, c.kind, file.Inputs, in)
			}
		}
	}
}
