// Package telemetry parses the text frames that tailpath's bundled CoreS3
// firmware (firmware/components/tailpath_telemetry) prints on the board's
// console beside its ESP-IDF log lines. The wire format is docs/telemetry.md:
//
//	@TP1 S seq=41 up=34012 rst=poweron rssi=-61 ... bad=0 *6656D985
//
// Parse checks the version marker and the CRC-32 and decodes the fields it
// knows into typed values, ignoring fields it doesn't. It never panics; a bad
// frame returns a *ParseError wrapping one of the Err* sentinels, and
// IsCorrupt tells damaged frames from lines that are simply not frames.
package telemetry

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Version is the protocol version this package writes (the n in "@TPn").
// It reads MinVersion to Version.
//
// Version 2 added the R frame (the board's DERP relay connection). The
// marker changed with it so that an older tailpath, which would skip R as
// an unknown kind and show a board whose relay is down as healthy, says
// "newer firmware" (ErrVersion) instead. Version 1 frames (older firmware)
// are still read.
const Version = 2

// MinVersion is the oldest protocol version this package reads.
const MinVersion = 1

// MaxFrameLen is the longest frame in bytes, from '@' to the last checksum
// digit, without the line ending (so a CRLF-terminated line is ≤ 256 bytes).
const MaxFrameLen = 254

// Marker starts every frame, before the version digits.
const Marker = "@TP"

// Kind is a frame kind letter.
type Kind byte

// Frame kinds of protocol version 1.
const (
	KindStatus Kind = 'S' // system: reset reason, Wi-Fi, heap
	KindNet    Kind = 'N' // own tailnet address, host name, endpoints, home DERP
	KindDisco  Kind = 'D' // DISCO probe table and counters, control-stream HTTP/2 flow control
	KindPeer   Kind = 'P' // one peer: path, handshake source, latency
	KindFetch  Kind = 'F' // one HTTP fetch result
	KindRelay  Kind = 'R' // the DERP relay connection (version 2)
)

// String returns the kind letter.
func (k Kind) String() string { return string(rune(k)) }

// Sentinel errors, wrapped by *ParseError; test with errors.Is.
var (
	// ErrNotFrame: the line does not start with "@TP" (an ordinary log line). Not corruption.
	ErrNotFrame = errors.New("not a telemetry frame")
	// ErrVersion: the frame is "@TPn" with n other than Version (newer firmware). Not corruption.
	ErrVersion = errors.New("unsupported telemetry version")
	// ErrUnknownKind: checksum is good but the kind letter is not known. Not corruption.
	ErrUnknownKind = errors.New("unknown frame kind")
	// ErrTooLong: the frame is longer than MaxFrameLen.
	ErrTooLong = errors.New("frame too long")
	// ErrSyntax: the frame's shape is wrong (no " *" + 8 hex digits at the end, bad field shape).
	ErrSyntax = errors.New("malformed frame")
	// ErrChecksum: the CRC-32 does not match the body.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrMissing: a required field (seq, up) is absent.
	ErrMissing = errors.New("required field missing")
	// ErrField: a known field's value does not parse or is out of range.
	ErrField = errors.New("bad field value")
)

// ParseError describes why a line was not accepted as a frame.
type ParseError struct {
	Err    error  // one of the Err* sentinels
	Key    string // field concerned, "" if none
	Detail string // human detail, may be ""
}

func (e *ParseError) Error() string {
	s := "telemetry frame: " + e.Err.Error()
	if e.Key != "" {
		s += " " + e.Key
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel.
func (e *ParseError) Unwrap() error { return e.Err }

// IsCorrupt reports whether err means a damaged frame (too long, malformed,
// checksum mismatch, missing or bad field) as opposed to a line that is not a
// frame, a newer version, or an unknown kind. Callers count corrupt frames.
func IsCorrupt(err error) bool {
	return errors.Is(err, ErrTooLong) || errors.Is(err, ErrSyntax) || errors.Is(err, ErrChecksum) ||
		errors.Is(err, ErrMissing) || errors.Is(err, ErrField)
}

// PathKind says how a peer is reached.
type PathKind uint8

const (
	PathNone   PathKind = iota // no path ("none"), or absent
	PathDirect                 // direct UDP to Addr
	PathDERP                   // relayed through DERP region Region
)

// Path is a peer path or handshake source as written on the wire:
// "203.0.113.7:41641" (direct), "derp:7" (relayed), "none".
type Path struct {
	Kind   PathKind
	Addr   netip.AddrPort // PathDirect only
	Region uint16         // PathDERP only: DERP region id
}

// String returns the wire form.
func (p Path) String() string {
	switch p.Kind {
	case PathDirect:
		return p.Addr.String()
	case PathDERP:
		return fmt.Sprintf("derp:%d", p.Region)
	}
	return "none"
}

// Status is an S frame. Fields absent from the frame are zero; use Frame.Has
// to tell absent from zero.
type Status struct {
	Reset           string // reset reason word, esp_reset_reason() lower case without ESP_RST_ ("poweron", "brownout"...)
	RSSI            int32  // Wi-Fi RSSI, dBm; absent (0) while not associated
	WiFiDisconnects uint32 // station disconnects since boot
	HeapFree        uint32 // internal heap free, bytes
	HeapMinFree     uint32 // internal heap minimum free ever, bytes
	HeapLargest     uint32 // largest free internal block, bytes
	PSRAMFree       uint32 // PSRAM free, bytes; absent when there is no PSRAM
	BadCalls        uint32 // hook calls the firmware rejected or truncated
}

// Net is an N frame.
type Net struct {
	IP             netip.Addr    // own tailnet IPv4; invalid when absent
	Host           string        // host name, ≤ 63 bytes of [A-Za-z0-9._-]
	Endpoints      uint32        // UDP endpoints advertised to control
	HomeDERP       uint16        // home DERP region id; 0 when absent
	HomeDERPBy     string        // "latency", "lowest-id", "fixed", "none"
	HomeLatency    time.Duration // measured latency to the home region (ms resolution)
	Nearest        uint16        // region with the lowest measured latency; 0 when absent
	NearestLatency time.Duration // its latency (ms resolution)
}

// Disco is a D frame. Counters are since boot.
type Disco struct {
	ProbesUsed       uint32 // pending DISCO probe table slots in use
	ProbesCap        uint32 // table capacity
	ProbesDropped    uint32 // probes dropped because the table was full
	ProbesReaped     uint32 // probes freed by TTL expiry
	PingsSent        uint32
	PongsRecv        uint32
	CallMeMaybeIn    uint32
	CallMeMaybeOut   uint32
	H2Received       uint32 // control-stream HTTP/2 DATA bytes received (wraps at 2^32)
	H2WindowReturned uint32 // connection-level WINDOW_UPDATE credit returned, bytes (wraps)
	H2WindowOpen     uint32 // connection receive window still open, bytes
}

// Peer is a P frame.
type Peer struct {
	ID          uint32        // the port's peer number
	IP          netip.Addr    // peer's tailnet IPv4; invalid when absent
	Path        Path          // current path
	Handshake   Path          // source of the last WireGuard handshake
	HandshakeAt time.Duration // uptime of that handshake (ms resolution)
	Latency     time.Duration // last DISCO round trip (ms resolution)
}

// Fetch is an F frame.
type Fetch struct {
	N           uint32        // fetch number since boot
	Bytes       uint32        // body bytes received
	Elapsed     time.Duration // request start to last byte (ms resolution)
	KiBpsTenths uint64        // throughput in tenths of KiB/s, as written ("187.0" → 1870)
	HTTPStatus  uint32        // HTTP status; 0 when none arrived
	Err         string        // failure word; "" on success
	Via         Path          // path to the server's peer when it finished
}

// KiBps returns the throughput in KiB/s (1 KiB = 1024 bytes).
func (f Fetch) KiBps() float64 { return float64(f.KiBpsTenths) / 10 }

// Relay is an R frame: the board's connection to its DERP relay (its home
// region's DERP server), as the firmware's relay liveness (tp_relay.h)
// keeps it.
type Relay struct {
	Region    uint16        // the relay's region id; 0 when absent
	Connected bool          // the connection is up
	Attempts  uint32        // connect attempts failed since it was last up
	Drops     uint32        // times it was lost since boot (errors, the receive watchdog)
	Err       string        // last failure word ("timeout", "eof", "silent", …); "" absent
	RxAge     time.Duration // since the last frame from the relay (ms resolution); absent when none yet
}

// Frame is one decoded frame. Exactly one of Status, Net, Disco, Peer,
// Fetch, Relay is meaningful, chosen by Kind.
type Frame struct {
	Kind Kind
	// Version is the protocol version the frame carried (1 or 2); Append
	// writes it, or Version when 0.
	Version int
	Seq     uint32        // frame sequence number since boot
	Uptime  time.Duration // uptime when written (ms resolution, wraps after 49.7 days)

	Status Status
	Net    Net
	Disco  Disco
	Peer   Peer
	Fetch  Fetch
	Relay  Relay

	present uint32 // bit i set: keys(Kind)[i] was in the frame
}

// Has reports whether the frame carried the field with wire key key
// ("rssi", "derpms"...).
func (f *Frame) Has(key string) bool {
	for i, k := range kindKeys(f.Kind) {
		if k == key {
			return f.present&(1<<i) != 0
		}
	}
	return false
}

// SetHas marks the field key as present (true) or absent (false), for
// building frames to Append. Unknown keys are ignored.
func (f *Frame) SetHas(key string, on bool) {
	for i, k := range kindKeys(f.Kind) {
		if k == key {
			if on {
				f.present |= 1 << i
			} else {
				f.present &^= 1 << i
			}
		}
	}
}

// Canonical key order per kind; bit positions in Frame.present.
var (
	keysStatus = []string{"seq", "up", "rst", "rssi", "wdis", "hif", "hmin", "hlb", "psf", "bad"}
	keysNet    = []string{"seq", "up", "ip", "host", "eps", "derp", "derpby", "derpms", "near", "nearms"}
	keysDisco  = []string{"seq", "up", "pu", "pcap", "pdrop", "preap", "ping", "pong", "cmmi", "cmmo", "h2rx", "h2wu", "h2win"}
	keysPeer   = []string{"seq", "up", "peer", "pip", "path", "hs", "hsup", "lat"}
	keysFetch  = []string{"seq", "up", "n", "bytes", "ms", "kibs", "status", "err", "via"}
	keysRelay  = []string{"seq", "up", "rg", "conn", "att", "drop", "err", "rxage"}
)

// Keys returns the wire keys of kind k in the order writers use, or nil for
// an unknown kind.
func Keys(k Kind) []string { return append([]string(nil), kindKeys(k)...) }

func kindKeys(k Kind) []string {
	switch k {
	case KindStatus:
		return keysStatus
	case KindNet:
		return keysNet
	case KindDisco:
		return keysDisco
	case KindPeer:
		return keysPeer
	case KindFetch:
		return keysFetch
	case KindRelay:
		return keysRelay
	}
	return nil
}
