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

	"github.com/tailpath/tailpath/internal/safetext"
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

// The frame kinds' structs below are the Go side's one table of wire
// fields: each field's `tp:"key"` tag names its wire key, the field order is
// the order writers use, and the Go type gives the wire type (uint32: u32,
// int32: i32, uint16: u16, time.Duration: u32 milliseconds, netip.Addr:
// dotted IPv4, safetext.Text: word, Path: addr, bool: 0/1, uint64 with
// `tp:"key,tenths"`: a decimal with one fraction digit, in tenths). Frame's
// fields tagged with a kind letter name the kinds. `go generate` turns the
// tags into fields_gen.go (key lists, field lookup); Parse, Append, Has and
// Keys follow from it. Adding a field is one tagged line here plus its row in
// docs/telemetry.md (docs/architecture.md, "A telemetry field").
//
// A word is the board's text, so its Go type is safetext.Text: Parse makes
// it with safetext.New (a word that parsed is printable ASCII, which
// cleaning leaves as it is), and a renderer shows it as it is.
//
//go:generate go run ./internal/fieldgen

// Status is an S frame. Fields absent from the frame are zero; use Frame.Has
// to tell absent from zero.
type Status struct {
	Reset           safetext.Text `tp:"rst"`  // reset reason word, esp_reset_reason() lower case without ESP_RST_ ("poweron", "brownout"...)
	RSSI            int32         `tp:"rssi"` // Wi-Fi RSSI, dBm; absent (0) while not associated
	WiFiDisconnects uint32        `tp:"wdis"` // station disconnects since boot
	HeapFree        uint32        `tp:"hif"`  // internal heap free, bytes
	HeapMinFree     uint32        `tp:"hmin"` // internal heap minimum free ever, bytes
	HeapLargest     uint32        `tp:"hlb"`  // largest free internal block, bytes
	PSRAMFree       uint32        `tp:"psf"`  // PSRAM free, bytes; absent when there is no PSRAM
	BadCalls        uint32        `tp:"bad"`  // hook calls the firmware rejected or truncated
}

// Net is an N frame.
type Net struct {
	IP             netip.Addr    `tp:"ip"`     // own tailnet IPv4; invalid when absent
	Host           safetext.Text `tp:"host"`   // host name, ≤ 63 bytes of [A-Za-z0-9._-]
	Endpoints      uint32        `tp:"eps"`    // UDP endpoints advertised to control
	HomeDERP       uint16        `tp:"derp"`   // home DERP region id; 0 when absent
	HomeDERPBy     safetext.Text `tp:"derpby"` // "latency", "lowest-id", "fixed", "none"
	HomeLatency    time.Duration `tp:"derpms"` // measured latency to the home region (ms resolution)
	Nearest        uint16        `tp:"near"`   // region with the lowest measured latency; 0 when absent
	NearestLatency time.Duration `tp:"nearms"` // its latency (ms resolution)
}

// Disco is a D frame. Counters are since boot.
type Disco struct {
	ProbesUsed       uint32 `tp:"pu"`    // pending DISCO probe table slots in use
	ProbesCap        uint32 `tp:"pcap"`  // table capacity
	ProbesDropped    uint32 `tp:"pdrop"` // probes dropped because the table was full
	ProbesReaped     uint32 `tp:"preap"` // probes freed by TTL expiry
	PingsSent        uint32 `tp:"ping"`
	PongsRecv        uint32 `tp:"pong"`
	CallMeMaybeIn    uint32 `tp:"cmmi"`
	CallMeMaybeOut   uint32 `tp:"cmmo"`
	H2Received       uint32 `tp:"h2rx"`  // control-stream HTTP/2 DATA bytes received (wraps at 2^32)
	H2WindowReturned uint32 `tp:"h2wu"`  // connection-level WINDOW_UPDATE credit returned, bytes (wraps)
	H2WindowOpen     uint32 `tp:"h2win"` // connection receive window still open, bytes
}

// Peer is a P frame.
type Peer struct {
	ID          uint32        `tp:"peer"` // the port's peer number
	IP          netip.Addr    `tp:"pip"`  // peer's tailnet IPv4; invalid when absent
	Path        Path          `tp:"path"` // current path
	Handshake   Path          `tp:"hs"`   // source of the last WireGuard handshake
	HandshakeAt time.Duration `tp:"hsup"` // uptime of that handshake (ms resolution)
	Latency     time.Duration `tp:"lat"`  // last DISCO round trip (ms resolution)
}

// Fetch is an F frame.
type Fetch struct {
	N           uint32        `tp:"n"`           // fetch number since boot
	Bytes       uint32        `tp:"bytes"`       // body bytes received
	Elapsed     time.Duration `tp:"ms"`          // request start to last byte (ms resolution)
	KiBpsTenths uint64        `tp:"kibs,tenths"` // throughput in tenths of KiB/s, as written ("187.0" → 1870)
	HTTPStatus  uint32        `tp:"status"`      // HTTP status; 0 when none arrived
	Err         safetext.Text `tp:"err"`         // failure word; "" on success
	Via         Path          `tp:"via"`         // path to the server's peer when it finished
}

// KiBps returns the throughput in KiB/s (1 KiB = 1024 bytes).
func (f Fetch) KiBps() float64 { return float64(f.KiBpsTenths) / 10 }

// Relay is an R frame: the board's connection to its DERP relay (its home
// region's DERP server), as the firmware's relay liveness (tp_relay.h)
// keeps it.
type Relay struct {
	Region    uint16        `tp:"rg"`    // the relay's region id; 0 when absent
	Connected bool          `tp:"conn"`  // the connection is up
	Attempts  uint32        `tp:"att"`   // connect attempts failed since it was last up
	Drops     uint32        `tp:"drop"`  // times it was lost since boot (errors, the receive watchdog)
	Err       safetext.Text `tp:"err"`   // last failure word ("timeout", "eof", "silent", …); "" absent
	RxAge     time.Duration `tp:"rxage"` // since the last frame from the relay (ms resolution); absent when none yet
}

// Frame is one decoded frame. Exactly one of Status, Net, Disco, Peer,
// Fetch, Relay is meaningful, chosen by Kind (the kind letter in its tag;
// the Kind constant is "Kind" + the field name).
type Frame struct {
	Kind Kind
	// Version is the protocol version the frame carried (1 or 2); Append
	// writes it, or Version when 0.
	Version int
	Seq     uint32        `tp:"seq"` // frame sequence number since boot
	Uptime  time.Duration `tp:"up"`  // uptime when written (ms resolution, wraps after 49.7 days)

	Status Status `tp:"S"`
	Net    Net    `tp:"N"`
	Disco  Disco  `tp:"D"`
	Peer   Peer   `tp:"P"`
	Fetch  Fetch  `tp:"F"`
	Relay  Relay  `tp:"R"`

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

// Keys returns the wire keys of kind k in the order writers use, or nil for
// an unknown kind.
func Keys(k Kind) []string { return append([]string(nil), kindKeys(k)...) }

// Kinds returns the frame kinds this package reads, in the order Frame
// declares them.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// Field is one field of a frame as text: its wire key (one of Keys) and
// value (what Append writes around the '='; printable ASCII without
// spaces, the board's text, so safetext.Text).
type Field struct {
	Key   string
	Value safetext.Text
}
