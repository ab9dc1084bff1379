package devlink

import (
	"bytes"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/tailpath/tailpath/devlink/internal/lex"

	"github.com/tailpath/tailpath/internal/safetext"
)

// PortFactKind says what a line of the ESP32 Tailscale port told us.
type PortFactKind uint8

// Facts from the ESP32 Tailscale port's log lines (../shared/design/facts.md,
// "The ESP32 Tailscale port's own log lines").
const (
	FactNone          PortFactKind = iota
	FactDiscoPing                  // ts_disco: Ping sent peer=<n> to <ip>:<port> txid=…
	FactDiscoPong                  // ts_disco: Pong recv from <ip>:<port> → peer <n> direct
	FactCallMeMaybe                // ts_disco: CallMeMaybe sent peer=<n> to derp=<region> with <k> eps
	FactDiscoPoolFull              // ts_disco: pending pool full, ping dropped
	FactHandshake                  // wireguard: HANDSHAKE_RESPONSE / good handshake from <hex>:<port>
	FactHomeDERP                   // ts_netmap: DERP home server: <host>:<port> (region <n>)
	// microlink (ESPHome's Tailscale component, tags ml_*):
	FactRelayStatus // ml_derp: DERP status: connected=<0|1> fd=<n> rx=<n> tx=<n> loops=<n> (also HEARTBEAT: … conn=<0|1> rx= tx=)
	FactRelayRetry  // ml_derp: DERP connect attempt <n> failed / retry <n>/3 / DERP down — retrying connect (backoff <n>s)
	FactRelaySilent // ml_derp: DERP RX silent for <n> s — relay presumed dead, reconnecting
	FactRelayUp     // ml_derp: DERP connected … (a connect that worked)
	// Either port, and WireGuard-ESP32 / esp_wireguard (tags wireguardif, esp_wireguard):
	FactDiscoDecryptFail // a DISCO packet that would not decrypt (a stale disco key)
	FactWGInitiation     // wireguardif: sending initiation packet (a handshake started)
	FactWGResponse       // wireguardif: sending handshake response packet (a peer's handshake answered)
	FactSelfIP           // the board's own tailnet IPv4: microlink `VPN IP: 100.64.0.9`, the port's `netmap: … self 100.64.0.9`
)

// PortFact is one parsed fact. Fields not relevant to Kind are zero.
type PortFact struct {
	Kind PortFactKind
	// Peer is the port's peer index (peer=<n>), -1 if not given.
	Peer int
	// Addr is the UDP endpoint pinged or ponged from, the direct handshake
	// source, or the source of a DISCO packet that would not decrypt.
	Addr netip.AddrPort
	// DERPRegion is the region for CallMeMaybe, a handshake that came through
	// DERP (source 127.3.3.40, port = region id), or the home DERP line.
	DERPRegion int
	// ViaDERP is true for a handshake whose source is the DERP pseudo-address.
	ViaDERP bool
	// Endpoints is CallMeMaybe's endpoint count.
	Endpoints int
	// Host is the home DERP server's host name.
	Host safetext.Text
	// HeapFree is a `heap_free=<n>` value in bytes found on the line, -1 if none.
	HeapFree int64
	// Connected is the relay state of a FactRelayStatus line: 1 up, 0 down.
	Connected int
	// RelayRx and RelayTx are the DERP frames received and sent since boot
	// (FactRelayStatus); non-zero counters with Connected 0 mean the relay
	// was up earlier in this boot and is down now.
	RelayRx, RelayTx int64
	// Attempt is a FactRelayRetry's attempt number (from 1), 0 if not printed.
	Attempt int
	// Silent is how long the relay was silent (FactRelaySilent), seconds.
	Silent int
	// Self is the board's own tailnet address (FactSelfIP).
	Self netip.Addr
}

// derpMagic is 127.3.3.40, the port's DERP pseudo-address.
var derpMagic = netip.AddrFrom4([4]byte{127, 3, 3, 40})

// ParsePortLine extracts a fact from one of the ESP32 Tailscale port's log
// lines (tags ts_disco, wireguard, ts_netmap, ts_derp, tailscale). ok is false
// when the line carries nothing known. A `heap_free=` value is reported on any
// line (Kind may then be FactNone with HeapFree ≥ 0).
func ParsePortLine(l *Line) (f PortFact, ok bool) {
	f = PortFact{Peer: -1, HeapFree: -1}
	if l.Level == 0 {
		return f, false
	}
	tag := l.Tag
	if len(tag) > 3 && tag[0] == 'm' && tag[1] == 'l' && tag[2] == '_' || string(tag) == "microlink" {
		return parseMicrolink(l, f)
	}
	m := l.Msg
	if i := bytes.Index(m, []byte("heap_free=")); i >= 0 {
		if n := lex.DecPrefix(m[i+10:]); n > 0 {
			f.HeapFree, _ = strconv.ParseInt(string(m[i+10:i+10+n]), 10, 64)
			ok = true
		}
	}
	switch string(l.Tag) {
	case "ts_disco":
		switch {
		case isDecryptFail(m):
			f.Kind = FactDiscoDecryptFail
			f.Addr = addrAfter(m, "from ")
		case bytes.HasPrefix(m, []byte("Ping sent")):
			f.Kind = FactDiscoPing
			f.Peer = intAfter(m, "peer=")
			f.Addr = addrAfter(m, " to ")
		case bytes.HasPrefix(m, []byte("Pong recv")):
			f.Kind = FactDiscoPong
			f.Addr = addrAfter(m, "from ")
			f.Peer = intAfter(m, "peer ")
		case bytes.HasPrefix(m, []byte("CallMeMaybe sent")):
			f.Kind = FactCallMeMaybe
			f.Peer = intAfter(m, "peer=")
			f.DERPRegion = intAfter(m, "derp=")
			f.Endpoints = intAfter(m, "with ")
		case containsFold(m, "pool full") || containsFold(m, "pool is full") || containsFold(m, "no free"):
			f.Kind = FactDiscoPoolFull
			f.Peer = intAfter(m, "peer=")
		}
	case "wireguardif", "esp_wireguard":
		switch {
		case bytes.Contains(m, []byte("sending initiation")):
			f.Kind = FactWGInitiation
		case bytes.Contains(m, []byte("sending handshake response")):
			f.Kind = FactWGResponse
		}
	case "wireguard":
		var rest []byte
		if i := bytes.Index(m, []byte("HANDSHAKE_RESPONSE: ")); i >= 0 {
			rest = m[i+len("HANDSHAKE_RESPONSE: "):]
		} else if i := bytes.Index(m, []byte("good handshake from ")); i >= 0 {
			rest = m[i+len("good handshake from "):]
		}
		if rest != nil {
			if ap, err := ParseReversedEndpoint(rest); err == nil {
				f.Kind = FactHandshake
				f.Peer = intAfter(m, "peer=")
				if ap.Addr() == derpMagic {
					f.ViaDERP = true
					f.DERPRegion = int(ap.Port())
				} else {
					f.Addr = ap
				}
			}
		}
	case "ts_netmap", "ts_derp", "tailscale":
		if i := bytes.Index(m, []byte(", self ")); i >= 0 && bytes.HasPrefix(m, []byte("netmap:")) {
			if ip, ok := ipv4At(m[i+len(", self "):]); ok {
				f.Kind, f.Self = FactSelfIP, ip
			}
		}
		if i := bytes.Index(m, []byte("DERP home server: ")); i >= 0 {
			hp := m[i+len("DERP home server: "):]
			if sp := bytes.IndexByte(hp, ' '); sp >= 0 {
				hp = hp[:sp]
			}
			if c := bytes.LastIndexByte(hp, ':'); c > 0 {
				hp = hp[:c]
			}
			f.Kind = FactHomeDERP
			f.Host = safetext.New(string(hp))
			f.DERPRegion = intAfter(m, "(region ")
		}
	}
	return f, ok || f.Kind != FactNone
}

// parseMicrolink reads microlink's lines (tags ml_derp, ml_disco,
// ml_coord, …; shapes from its ml_derp.c and microlink_disco.c).
func parseMicrolink(l *Line, f PortFact) (PortFact, bool) {
	m := l.Msg
	switch {
	case bytes.HasPrefix(m, []byte("DERP status: ")) || bytes.HasPrefix(m, []byte("HEARTBEAT: ")):
		c := intAfter(m, "connected=")
		if c < 0 {
			c = intAfter(m, "conn=")
		}
		if c < 0 {
			return f, false
		}
		f.Kind, f.Connected = FactRelayStatus, min(c, 1)
		f.RelayRx, f.RelayTx = int64After(m, " rx="), int64After(m, " tx=")
	case bytes.Contains(m, []byte("RX silent for ")):
		f.Kind, f.Silent = FactRelaySilent, intAfter(m, "silent for ")
	case bytes.HasPrefix(m, []byte("DERP")) && (bytes.Contains(m, []byte("retry")) || bytes.Contains(m, []byte("retrying")) ||
		bytes.Contains(m, []byte("attempt")) && bytes.Contains(m, []byte("failed"))):
		f.Kind = FactRelayRetry
		f.Attempt = max(intAfter(m, "attempt "), intAfter(m, "retry "), 0)
	case bytes.HasPrefix(m, []byte("DERP connected")) || bytes.Contains(m, []byte("DERP connection established")):
		f.Kind = FactRelayUp
	case isDecryptFail(m):
		f.Kind = FactDiscoDecryptFail
		f.Addr = addrAfter(m, "from ")
	case bytes.HasPrefix(m, []byte("VPN IP")):
		if c := bytes.IndexByte(m, ':'); c > 0 {
			if ip, ok := ipv4At(bytes.TrimLeft(m[c+1:], " ")); ok {
				f.Kind, f.Self = FactSelfIP, ip
			}
		}
	case bytes.Contains(m, []byte("DERP home server: ")):
		i := bytes.Index(m, []byte("DERP home server: "))
		hp := m[i+len("DERP home server: "):]
		if sp := bytes.IndexByte(hp, ' '); sp >= 0 {
			hp = hp[:sp]
		}
		if c := bytes.LastIndexByte(hp, ':'); c > 0 {
			hp = hp[:c]
		}
		f.Kind, f.Host, f.DERPRegion = FactHomeDERP, safetext.New(string(hp)), intAfter(m, "(region ")
	case bytes.Contains(m, []byte("DISCO PING to ")):
		f.Kind, f.Addr = FactDiscoPing, addrAfter(m, "PING to ")
	case bytes.Contains(m, []byte("PONG from ")):
		f.Kind, f.Addr = FactDiscoPong, addrAfter(m, "PONG from ")
	}
	return f, f.Kind != FactNone
}

// ipv4At parses the dotted IPv4 address at the start of b.
func ipv4At(b []byte) (netip.Addr, bool) {
	n := 0
	for n < len(b) && n < 15 && (isDigit(b[n]) || b[n] == '.') {
		n++
	}
	ip, err := netip.ParseAddr(string(b[:n]))
	if err != nil || !ip.Is4() {
		return netip.Addr{}, false
	}
	return ip, true
}

// isDecryptFail matches a DISCO packet that failed to decrypt ("decrypt
// failed", "decryption failed", "failed to decrypt").
func isDecryptFail(m []byte) bool {
	i := bytes.Index(m, []byte("ecrypt"))
	return i > 0 && (m[i-1] == 'd' || m[i-1] == 'D') && bytes.Contains(m, []byte("fail"))
}

// int64After returns the decimal number following key in m, or 0.
func int64After(m []byte, key string) int64 {
	i := bytes.Index(m, []byte(key))
	if i < 0 {
		return 0
	}
	r := m[i+len(key):]
	n := lex.DecPrefix(r)
	if n == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(string(r[:n]), 10, 64)
	return v
}

// ParseReversedEndpoint parses the port's `<8 hex>:<port>` endpoint form, in
// which the hex is the IPv4 address in reversed byte order: `04030201:41641`
// is 1.2.3.4:41641, `2803037f:7` is 127.3.3.40:7 (DERP region 7).
func ParseReversedEndpoint(b []byte) (netip.AddrPort, error) {
	if len(b) < 10 || b[8] != ':' {
		return netip.AddrPort{}, fmt.Errorf("endpoint %q: want 8 hex digits, ':' and a port", lex.Quote(b))
	}
	v, n := lex.HexPrefix(b[:8])
	if n != 8 {
		return netip.AddrPort{}, fmt.Errorf("endpoint %q: want 8 hex digits", lex.Quote(b))
	}
	pn := lex.DecPrefix(b[9:])
	if pn == 0 || pn > 5 {
		return netip.AddrPort{}, fmt.Errorf("endpoint %q: bad port", lex.Quote(b))
	}
	port, _ := strconv.Atoi(string(b[9 : 9+pn]))
	if port > 65535 {
		return netip.AddrPort{}, fmt.Errorf("endpoint %q: port out of range", lex.Quote(b))
	}
	a := netip.AddrFrom4([4]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// intAfter returns the decimal number following key in m, or -1.
func intAfter(m []byte, key string) int {
	i := bytes.Index(m, []byte(key))
	if i < 0 {
		return -1
	}
	r := m[i+len(key):]
	n := lex.DecPrefix(r)
	if n == 0 {
		return -1
	}
	v, _ := strconv.Atoi(string(r[:n]))
	return v
}

// addrAfter parses `a.b.c.d:port` following key in m.
func addrAfter(m []byte, key string) netip.AddrPort {
	i := bytes.Index(m, []byte(key))
	if i < 0 {
		return netip.AddrPort{}
	}
	r := m[i+len(key):]
	end := 0
	for end < len(r) && (r[end] == '.' || r[end] == ':' || r[end] == '[' || r[end] == ']' || lex.IsHex(r[end])) {
		end++
	}
	ap, err := netip.ParseAddrPort(string(r[:end]))
	if err != nil {
		return netip.AddrPort{}
	}
	return ap
}

func containsFold(m []byte, s string) bool {
	return bytes.Contains(bytes.ToLower(m), []byte(s))
}
