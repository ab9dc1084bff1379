package devlink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/safetext"
)

// JSONLog writes a board's console as JSON Lines (tail --json): one object
// per console line ("type": "line") and one per event it carries: "boot"
// (a reset line, with the reset reason), "panic" (a crash report, once it
// ends: registers and decoded frames), "telemetry" (a tailpath telemetry
// frame), "port" (a fact from a Tailscale port's log line) and "link" (the
// serial link going up or down). Field names are stable; docs/device.md
// lists them. Every string is sanitised (no escape sequences or control
// characters); the line's bytes as received are in "raw" only when Raw is
// set. It keeps its own State; it is not safe for concurrent use.
type JSONLog struct {
	W io.Writer
	// Sym decodes PCs (with --elf); nil to skip.
	Sym *crash.Symbolizer
	// Raw adds each line's received bytes (sanitised) as "raw".
	Raw bool

	st      *State
	enc     *json.Encoder
	written *Crash // the last crash report written
	err     error
}

// JSONLine is a "line" object.
type JSONLine struct {
	Type string    `json:"type"` // "line"
	Time time.Time `json:"time"` // host time the line arrived
	// Kind is Kind.String(): "log", "plain", "panic", "registers", …
	Kind  string        `json:"kind"`
	Level string        `json:"level,omitempty"` // E W I D V
	Tag   safetext.Text `json:"tag,omitempty"`
	// Text is the message of a log line, else the line without its
	// wrappers and without a stale prefix cut off by a reset or crash.
	Text safetext.Text `json:"text"`
	// Line is the whole line as shown, wrappers included.
	Line safetext.Text `json:"line"`
	// Wrap names the wrappers stripped ("esphome-time+esphome", "arduino", …).
	Wrap string `json:"wrap,omitempty"`
	// HostTime is a wrapper's host time text ("14:04:29").
	HostTime safetext.Text `json:"host_time,omitempty"`
	// UptimeMS is the board's uptime for an ESP-IDF `(90000)` timestamp
	// (or an Arduino one), milliseconds; DeviceTime is any other form's
	// text ("10:12:51.035", "24-06-19 10:12:51.035", Unix milliseconds).
	UptimeMS   *int64        `json:"uptime_ms,omitempty"`
	DeviceTime safetext.Text `json:"device_time,omitempty"`
	// Partial: the line was flushed without its line ending.
	Partial bool `json:"partial,omitempty"`
	// Decoded is the addr2line-style decoding of the PCs the line carries.
	Decoded []safetext.Text `json:"decoded,omitempty"`
	Raw     safetext.Text   `json:"raw,omitempty"`
}

// JSONBoot is a "boot" object: the ROM's reset line.
type JSONBoot struct {
	Type        string        `json:"type"` // "boot"
	Time        time.Time     `json:"time"`
	Boot        int           `json:"boot"`         // boots seen so far, this one included
	Chip        string        `json:"chip"`         // from the ROM banner ("esp32c3"); "" unknown
	ResetCode   int           `json:"reset_code"`   // 0x15 → 21
	ResetName   safetext.Text `json:"reset_name"`   // as printed ("USB_UART_CHIP_RESET")
	ResetReason string        `json:"reset_reason"` // in words (ESP32-S3 codes)
	BootMode    int           `json:"boot_mode"`    // strapping value after boot:, -1 absent
}

// JSONPanic is a "panic" object: one crash report, written when it ends
// (`Rebooting...`, `CPU halted.`, the next boot, or the end of input).
type JSONPanic struct {
	Type   string        `json:"type"` // "panic"
	Time   time.Time     `json:"time"` // host time of its first line
	Kind   string        `json:"kind"` // "panic", "abort", "stack-overflow", "assert", "corrupt-heap", "brownout", "backtrace", "log" (task watchdog)
	Reason safetext.Text `json:"reason"`
	Core   int           `json:"core"` // -1 unknown
	Arch   string        `json:"arch,omitempty"`
	Chip   string        `json:"chip,omitempty"`
	// PC is the faulting PC (PC or MEPC register, or abort's), as 0x%08x;
	// PCInROM says it lies in the chip's ROM (no app ELF can decode it).
	PC      string `json:"pc,omitempty"`
	PCInROM bool   `json:"pc_in_rom,omitempty"`
	// Registers maps each dumped register to 0x%08x; RegisterOrder keeps
	// the order printed.
	Registers     map[string]string `json:"registers,omitempty"`
	RegisterOrder []string          `json:"register_order,omitempty"`
	// Backtrace is the `Backtrace:` line's frames as "0xPC:0xSP".
	Backtrace []string `json:"backtrace,omitempty"`
	Corrupted bool     `json:"backtrace_corrupted,omitempty"`
	// StackFrames are return addresses recovered from a RISC-V stack
	// dump (needs the ELF); StackWords is how many words it held.
	StackFrames []string        `json:"stack_frames,omitempty"`
	StackWords  int             `json:"stack_words,omitempty"`
	Decoded     []safetext.Text `json:"decoded,omitempty"`
	ELFSHA      safetext.Text   `json:"elf_sha256,omitempty"`
	// Ended is false for a report cut short (no `Rebooting...`).
	Ended bool            `json:"ended"`
	Lines []safetext.Text `json:"lines"`
}

// JSONTelemetry is a "telemetry" object: one frame.
type JSONTelemetry struct {
	Type  string    `json:"type"` // "telemetry"
	Time  time.Time `json:"time"`
	Frame string    `json:"frame,omitempty"` // kind letter: S N D P F R
	Seq   uint32    `json:"seq,omitempty"`
	UpMS  int64     `json:"up_ms,omitempty"`
	// Fields are the frame's fields as on the wire (docs/telemetry.md),
	// seq and up included.
	Fields map[string]safetext.Text `json:"fields,omitempty"`
	// Error says why the frame was not accepted (corrupt, newer version…).
	Error safetext.Text `json:"error,omitempty"`
}

// JSONPort is a "port" object: what a Tailscale port's log line said.
type JSONPort struct {
	Type string    `json:"type"` // "port"
	Time time.Time `json:"time"`
	// Fact: "disco-ping", "disco-pong", "call-me-maybe", "disco-pool-full",
	// "handshake", "home-derp", "relay-status", "relay-retry",
	// "relay-silent", "relay-up", "disco-decrypt-fail", "wg-initiation",
	// "wg-response", "self-ip", or "heap" for a heap_free value alone.
	Fact       string        `json:"fact"`
	Tag        safetext.Text `json:"tag"`
	Peer       *int          `json:"peer,omitempty"`
	Addr       string        `json:"addr,omitempty"`
	DERPRegion int           `json:"derp_region,omitempty"`
	ViaDERP    bool          `json:"via_derp,omitempty"`
	Endpoints  int           `json:"endpoints,omitempty"`
	Host       safetext.Text `json:"host,omitempty"`
	HeapFree   *int64        `json:"heap_free,omitempty"`
	Connected  *bool         `json:"connected,omitempty"`
	RelayRx    int64         `json:"relay_rx,omitempty"`
	RelayTx    int64         `json:"relay_tx,omitempty"`
	// RelayWasUp: microlink's counters say the relay was up earlier this boot.
	RelayWasUp bool `json:"relay_was_up,omitempty"`
	Attempt    int  `json:"attempt,omitempty"`
	SilentS    int  `json:"silent_s,omitempty"`
	// Self is the board's own tailnet address ("self-ip").
	Self string `json:"self,omitempty"`
}

// JSONLink is a "link" object.
type JSONLink struct {
	Type  string        `json:"type"` // "link"
	Time  time.Time     `json:"time"`
	Up    bool          `json:"up"`
	Port  safetext.Text `json:"port"`
	Error safetext.Text `json:"error,omitempty"`
	Reset bool          `json:"reset,omitempty"`
}

var factNames = [...]string{"heap", "disco-ping", "disco-pong", "call-me-maybe", "disco-pool-full", "handshake",
	"home-derp", "relay-status", "relay-retry", "relay-silent", "relay-up", "disco-decrypt-fail", "wg-initiation", "wg-response", "self-ip"}

// String names the fact as tail --json does.
func (k PortFactKind) String() string {
	if int(k) < len(factNames) {
		return factNames[k]
	}
	return "unknown"
}

func (j *JSONLog) put(v any) {
	if j.err != nil {
		return
	}
	if j.enc == nil {
		j.enc = json.NewEncoder(j.W)
		j.enc.SetEscapeHTML(false)
	}
	j.err = j.enc.Encode(v)
}

// Line writes l and the events it carries; now is its arrival time.
func (j *JSONLog) Line(l *Line, now time.Time) {
	if j.st == nil {
		j.st = NewState()
	}
	prevCrash := j.st.LastCrash
	j.st.ApplyLine(l, now, j.Sym)
	if l.Kind == KindBinary {
		return
	}
	if c := j.st.LastCrash; c != prevCrash && prevCrash != nil && prevCrash != j.written {
		j.crash(prevCrash) // a new report began before the last one ended
	}
	jl := JSONLine{Type: "line", Time: now.UTC(), Kind: l.Kind.String(), Text: cleanText(l.Body()),
		Line: l.DisplayText(), Wrap: l.Wrap.String(), Partial: l.Partial}
	if l.Kind == KindStatusQuery {
		jl.Text, jl.Line = "", ""
	} else if l.Cut > 0 {
		jl.Text = cleanText(l.Unwrapped())
	}
	if l.Level != 0 {
		jl.Level, jl.Tag = l.Level.String(), cleanText(l.Tag)
	}
	if len(l.HostTime) > 0 {
		jl.HostTime = cleanText(l.HostTime)
	}
	switch l.TimeForm {
	case TimeUptime:
		ms := l.Uptime.Milliseconds()
		jl.UptimeMS = &ms
	case TimeNone:
	default:
		jl.DeviceTime = cleanText(l.TimeText)
	}
	if j.Sym != nil {
		jl.Decoded = safetext.All(DecodeLine(j.Sym, l))
	}
	if j.Raw {
		jl.Raw = safetext.New(string(l.Raw))
	}
	j.put(jl)

	switch l.Kind {
	case KindReset:
		r := j.st.LastReset
		j.put(JSONBoot{Type: "boot", Time: now.UTC(), Boot: j.st.Boots, Chip: j.st.Chip, ResetCode: r.Code,
			ResetName: r.Name, ResetReason: r.Reason, BootMode: r.BootMode})
	case KindTelemetry:
		j.telemetry(l, now)
	case KindLog:
		if f, ok := ParsePortLine(l); ok {
			j.port(l, f, now)
		}
	}
	if c := j.st.LastCrash; c != nil && c != j.written && !j.st.inCrash {
		j.crash(c)
	}
}

// Link writes a link change.
func (j *JSONLog) Link(s LinkStatus) {
	o := JSONLink{Type: "link", Time: s.At.UTC(), Up: s.Up, Port: s.Port, Reset: s.Reset, Error: s.ErrText()}
	j.put(o)
}

// Close writes a crash report still open (cut short by the end of input).
func (j *JSONLog) Close() error {
	if j.st != nil {
		if c := j.st.LastCrash; c != nil && c != j.written {
			j.crash(c)
		}
	}
	return j.err
}

func (j *JSONLog) crash(c *Crash) {
	j.written = c
	o := JSONPanic{Type: "panic", Time: c.At.UTC(), Kind: c.Kind.String(), Reason: c.Reason, Core: c.Core,
		Arch: c.Arch, Chip: j.st.Chip, Decoded: c.Decoded, ELFSHA: c.ELFSHA, Ended: c.Ended, Lines: c.Lines,
		StackWords: len(c.Stack), Corrupted: c.Backtrace.Corrupted}
	if o.Lines == nil {
		o.Lines = []safetext.Text{}
	}
	if c.PC != 0 {
		o.PC, o.PCInROM = fmt.Sprintf("0x%08x", c.PC), crash.InROM(j.st.Chip, c.PC)
	}
	if len(c.Registers) > 0 {
		o.Registers = make(map[string]string, len(c.Registers))
		for _, r := range c.Registers {
			name := safetext.Clean(r.Name)
			if _, dup := o.Registers[name]; !dup {
				o.RegisterOrder = append(o.RegisterOrder, name)
			}
			o.Registers[name] = fmt.Sprintf("0x%08x", r.Value)
		}
	}
	for _, f := range c.Backtrace.Frames {
		o.Backtrace = append(o.Backtrace, fmt.Sprintf("0x%08x:0x%08x", f.PC, f.SP))
	}
	for _, w := range c.StackFrames {
		o.StackFrames = append(o.StackFrames, fmt.Sprintf("0x%08x", w))
	}
	j.put(o)
}

func (j *JSONLog) telemetry(l *Line, now time.Time) {
	o := JSONTelemetry{Type: "telemetry", Time: now.UTC()}
	text := l.Unwrapped()
	if i := telemetry.Index(text); i >= 0 {
		text = text[i:]
	}
	f, err := telemetry.Parse(text)
	if err != nil {
		o.Error = safetext.Of(err)
		j.put(o)
		return
	}
	o.Frame, o.Seq, o.UpMS = f.Kind.String(), f.Seq, f.Uptime.Milliseconds()
	o.Fields = map[string]safetext.Text{}
	// The fields as on the wire: between the kind and the checksum.
	body := text[:bytes.LastIndex(text, []byte(" *"))]
	for i, tok := range bytes.Fields(body) {
		if i < 2 {
			continue // marker, kind
		}
		if k, v, ok := bytes.Cut(tok, []byte("=")); ok {
			o.Fields[string(k)] = safetext.New(string(v))
		}
	}
	j.put(o)
}

func (j *JSONLog) port(l *Line, f PortFact, now time.Time) {
	o := JSONPort{Type: "port", Time: now.UTC(), Fact: f.Kind.String(), Tag: cleanText(l.Tag),
		DERPRegion: max(f.DERPRegion, 0), ViaDERP: f.ViaDERP, Endpoints: max(f.Endpoints, 0),
		Host: f.Host, RelayRx: f.RelayRx, RelayTx: f.RelayTx, Attempt: f.Attempt, SilentS: max(f.Silent, 0)}
	if f.Peer >= 0 {
		p := f.Peer
		o.Peer = &p
	}
	if f.Addr.IsValid() {
		o.Addr = f.Addr.String()
	}
	if f.Self.IsValid() {
		o.Self = f.Self.String()
	}
	if f.HeapFree >= 0 {
		h := f.HeapFree
		o.HeapFree = &h
	}
	if f.Kind == FactRelayStatus {
		c := f.Connected == 1
		o.Connected = &c
		o.RelayWasUp = !c && (f.RelayRx > 0 || f.RelayTx > 0)
	}
	j.put(o)
}
