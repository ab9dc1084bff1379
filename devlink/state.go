package devlink

import (
	"bytes"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/safetext"
)

// Sample is one value of a history, with the host time it was seen.
type Sample struct {
	At    time.Time
	Value int64
}

// Ring is a fixed-capacity history of samples; the oldest is overwritten.
// The zero value holds nothing; use NewRing.
type Ring struct {
	buf  []Sample
	next int
	n    int
}

// NewRing returns a ring holding the last n samples (n ≥ 1).
func NewRing(n int) Ring { return Ring{buf: make([]Sample, max(n, 1))} }

// Add appends a sample, dropping the oldest when full.
func (r *Ring) Add(at time.Time, v int64) {
	if len(r.buf) == 0 {
		*r = NewRing(DefaultHistory)
	}
	r.buf[r.next] = Sample{At: at, Value: v}
	r.next = (r.next + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
	}
}

// Len is the number of samples held.
func (r *Ring) Len() int { return r.n }

// Samples returns the samples, oldest first (a copy).
func (r *Ring) Samples() []Sample {
	out := make([]Sample, 0, r.n)
	start := (r.next - r.n + len(r.buf)) % max(len(r.buf), 1)
	for i := range r.n {
		out = append(out, r.buf[(start+i)%len(r.buf)])
	}
	return out
}

// Last returns the newest sample and whether there is one.
func (r *Ring) Last() (Sample, bool) {
	if r.n == 0 {
		return Sample{}, false
	}
	return r.buf[(r.next-1+len(r.buf))%len(r.buf)], true
}

// Since returns the samples taken at or after t, oldest first (a copy).
func (r *Ring) Since(t time.Time) []Sample {
	all := r.Samples()
	i := len(all)
	for i > 0 && !all[i-1].At.Before(t) {
		i--
	}
	return all[i:]
}

// DropSince drops the samples taken at or after t (the newest ones).
func (r *Ring) DropSince(t time.Time) {
	for r.n > 0 {
		if last, _ := r.Last(); last.At.Before(t) {
			return
		}
		r.next = (r.next - 1 + len(r.buf)) % len(r.buf)
		r.n--
	}
}

func (r Ring) clone() Ring {
	r.buf = append([]Sample(nil), r.buf...)
	return r
}

// DefaultHistory is how many samples each history keeps (10 minutes of 5 s telemetry).
const DefaultHistory = 120

// Crash is the last panic, abort, assert, stack overflow, heap corruption,
// brownout or task watchdog report, with what followed it.
type Crash struct {
	At   time.Time // host time of the first line
	Kind Kind      // KindPanic, KindAbort, …; KindLog for a task watchdog report
	// Reason is a short description: "LoadProhibited on core 0",
	// "abort() at 0x40081a2b", "stack overflow in task wifi", "task watchdog".
	Reason safetext.Text
	// Lines are the report's lines as received, capped at 64.
	Lines []safetext.Text
	// PC is the faulting PC from the register dump or abort line; 0 if unknown.
	PC        uint32
	Backtrace crash.Backtrace
	// Decoded is the addr2line-style decoding of PC and the backtrace, when
	// an ELF was given (names from the ELF's DWARF).
	Decoded []safetext.Text
	// ELFSHA is the board's `ELF file SHA256:` prefix printed with the report.
	ELFSHA safetext.Text
	// Core is the CPU core that panicked; -1 when not printed.
	Core int
	// Arch is "xtensa" (ESP32, S2, S3) or "riscv" (C2, C3, C5, C6, H2, P4),
	// told by the register dump's names; "" before a dump.
	Arch string
	// Registers is the register dump in the order printed (RISC-V: MEPC,
	// RA, SP, GP, …, MCAUSE, MTVAL; Xtensa: PC, PS, A0, …, EXCVADDR).
	// A dump cut short keeps the rows that arrived.
	Registers []crash.Register
	// StackAddr and Stack are a RISC-V panic's `Stack memory:` dump: the
	// address of its first row and its words (at most MaxStackWords).
	StackAddr uint32
	Stack     []uint32
	// StackFrames are the words of the stack dump that the ELF says are
	// return addresses (they follow a call instruction), innermost first:
	// the backtrace recovered by scanning the stack, as ESP-IDF monitor
	// recovers one with gdb. Only with an ELF; it may hold stale frames.
	StackFrames []uint32
	// Ended is true once the report's end (`Rebooting...`, `CPU halted.`)
	// arrived; false for a report cut short.
	Ended bool
}

// MaxStackWords bounds Crash.Stack.
const MaxStackWords = 1024

// PeerState is what the board says about one peer.
type PeerState struct {
	ID int        // the port's peer number
	IP netip.Addr // tailnet address; invalid when unknown
	// Path is the current path (telemetry P frames).
	Path telemetry.Path
	// Handshake is the source of the last WireGuard handshake: a direct
	// endpoint or a DERP region (telemetry, or the port's wireguard lines).
	Handshake telemetry.Path
	// HandshakeAt is the host time of that handshake: from a P frame, the
	// frame's arrival minus (up - hsup); from a wireguard log line, its
	// arrival. Zero when unknown (a P frame with hs but no hsup).
	HandshakeAt time.Time
	// Latency is the last DISCO round trip; 0 when unknown.
	Latency time.Duration
	// LastPong is the endpoint of the last DISCO pong; invalid when none.
	LastPong   netip.AddrPort
	LastPongAt time.Time
	// Extra are the fields of the peer's last P frame that State has no
	// named field for (see State.Extra).
	Extra []telemetry.Field
}

// State is the device model the Device pane and tail show: one value fed by
// console lines (ApplyLine), telemetry frames (ApplyFrame) and link changes
// (ApplyLink). "0 means unknown" for counters the board has not reported.
//
// A new boot (a ROM banner, or a `rst:` line without one) clears what the
// board reports per boot: home DERP and nearest region, the DISCO probe
// table and pool-full count, the HTTP/2 window, heap and PSRAM values,
// Wi-Fi counts and RSSI, endpoints, the board's ELF SHA, and each peer's
// path, handshake, latency and pong (the peer's number and address stay).
// What spans boots stays: Boots, LastReset, LastCrash, Crashes, Brownouts,
// TaskWatchdogHits, identity (TailnetIP, Hostname), the histories, Fetches
// (each marked with its boot) and the line/frame counters.
// Text from the board (its names, words, crash lines, errors) is
// safetext.Text, cleaned where ApplyLine and ApplyFrame read it, so the
// Device pane shows it as it is.
// State is not safe for concurrent use; Source hands out copies.
type State struct {
	Link LinkStatus
	// Boots counts boots seen: ROM banners, and `rst:` lines that came
	// without one (a banner lost to a cut line). LastReset is the latest
	// `rst:` line.
	Boots     int
	LastReset crash.Reset
	// ResetWord is the firmware's esp_reset_reason() word ("poweron",
	// "panic") for the current boot; "" until its S frame.
	ResetWord safetext.Text
	LastCrash *Crash
	Crashes   int
	// Chip is the chip the ROM banner named ("esp32s3", "esp32c3"); ""
	// before a banner.
	Chip      string
	Brownouts int

	// Home DERP as the board chose it and the nearest it measured.
	HomeDERP       int
	HomeDERPHost   safetext.Text // from the port's "DERP home server:" line
	HomeDERPBy     safetext.Text // "latency", "lowest-id", "fixed", "none", "" unknown
	HomeLatency    time.Duration
	NearestDERP    int
	NearestLatency time.Duration

	// DISCO probe table: slots used of capacity, drops (table full), reaps.
	ProbesUsed, ProbesCap, ProbesDropped, ProbesReaped int64
	// H2Known is true once a D frame carried the control stream's HTTP/2
	// flow control: H2Received DATA bytes received, H2WindowReturned
	// connection-level WINDOW_UPDATE credit returned (both wrap at 2^32),
	// H2WindowOpen receive window still open, all in bytes (D frame
	// h2rx/h2wu/h2win).
	H2Known                                    bool
	H2Received, H2WindowReturned, H2WindowOpen int64
	// PoolFullLines counts the port's "pool full" log lines this boot.
	PoolFullLines int
	ProbeHistory  Ring // ProbesUsed over time

	// Heap in bytes: internal free, minimum ever, largest block, PSRAM free.
	// With telemetry, HeapFree and HeapHistory are its internal free heap
	// (S frames' hif) and HeapMin the lowest it has been since boot (hmin);
	// a board without telemetry fills HeapFree and HeapHistory from the
	// port's heap_free= lines (a different measure, never mixed in once a
	// frame reported the heap this boot).
	HeapFree, HeapMin, HeapLargest, PSRAMFree                 int64
	HeapHistory, HeapMinHistory, LargestHistory, PSRAMHistory Ring
	// BootAt is the host time the current boot was seen to start (its ROM
	// banner or rst: line); zero before one. History samples from BootAt on
	// are this boot's.
	BootAt time.Time

	// WiFiDisconnects is the firmware's count (telemetry wdis);
	// WiFiDropLines counts the Wi-Fi driver's `wifi:state: run -> init`
	// lines, for boards without telemetry.
	WiFiDisconnects int64
	WiFiDropLines   int64
	RSSI            int32 // dBm; 0 unknown
	// WiFiKnown: the board spoke of its Wi-Fi this boot (a telemetry
	// wdis or rssi, a `wifi:` driver line); a board on LTE or Ethernet
	// never does, and its counts mean nothing.
	WiFiKnown bool

	// Fetches are the last HTTP fetch results, newest last (at most 32),
	// across boots; each carries the boot it ran in (fetch numbers restart
	// at 1 every boot).
	Fetches []Fetch

	TailnetIP netip.Addr
	Hostname  safetext.Text
	Endpoints int64 // UDP endpoints advertised; -1 unknown

	Peers map[int]*PeerState

	// Relay is the board's connection to its home DERP relay, from its
	// Tailscale port's lines (microlink) or telemetry R frames.
	Relay Relay
	// Extra holds, per frame kind, the fields of the kind's latest frame
	// this boot that State has no named field for: a field added to the
	// telemetry table (devlink/telemetry) and not yet given one here. The
	// Device pane lists them as they are, so a new field shows end to end
	// without code here. P and F frames keep theirs in PeerState.Extra and
	// Fetch.Extra. The slices are never changed in place.
	Extra map[telemetry.Kind][]telemetry.Field
	// DiscoDecryptFails counts DISCO packets the board could not decrypt
	// this boot (its copy of a peer's disco key may be stale).
	DiscoDecryptFails int64
	// DecryptFailures are the latest of them, newest first (at most
	// len): when each line was read and the source address it named
	// (zero when it named none). Repeated recent ones from one address
	// mean a stale key; one now and then after a restart is normal.
	DecryptFailures [8]DecryptFailure
	// WGInitiations and WGResponses count WireGuard handshakes the board
	// started and answered this boot (esp_wireguard's wireguardif lines).
	WGInitiations, WGResponses int64

	// BoardELFSHA is the latest `ELF file SHA256:` prefix the board printed
	// (app banner or crash trailer), lower-case hex; "" before one.
	BoardELFSHA safetext.Text
	// ELFMismatch is true when an ELF was given (--elf) and BoardELFSHA is
	// not its SHA-256: decoded backtraces may be wrong.
	ELFMismatch bool

	// Counters of what arrived.
	Lines            int64
	LastLineAt       time.Time
	Frames           int64 // telemetry frames accepted
	CorruptFrames    int64
	BinaryLogFrames  int64 // Log V2 binary frames (binary logging is on)
	TaskWatchdogHits int
	// LastFrameAt is the host time the newest telemetry frame arrived;
	// zero before one (the board's telemetry age is now minus this).
	LastFrameAt time.Time

	inCrash bool
	// heapFromFrames: an S frame reported the heap this boot, so the
	// port's heap_free= lines no longer feed HeapFree/HeapHistory.
	heapFromFrames bool
	// regPending is the register name the previous line, a register dump
	// row, ended with when a serial monitor wrapped its value onto the
	// next line (DanglingRegister); "" otherwise.
	regPending string
	// romOpen is true between a ROM banner and its `rst:` line, so that
	// line does not count a second boot.
	romOpen bool
}

// Relay is the board's DERP relay connection (not the home region choice:
// State.HomeDERP). Known is false until a line or frame reported it.
type Relay struct {
	Known bool
	// Connected is the last report: true while the relay connection is up.
	Connected bool
	// WasUp is true when the relay was up earlier in this boot: a line or
	// frame said so, or microlink's rx/tx counters are non-zero while it
	// says connected=0.
	WasUp bool
	// DownSince is the host time the relay was first reported down after
	// being up (or first reported at all); zero while up.
	DownSince time.Time
	// Attempts is the reconnect attempts since it was last up: telemetry's
	// att, or microlink's retry lines counted.
	Attempts int64
	// LastErr is the last connect error word (telemetry err).
	LastErr safetext.Text
	// RxAge is the time since the last frame from the relay, as the board
	// measured it (telemetry rxage); -1 unknown.
	RxAge time.Duration
	// RxFrames and TxFrames are microlink's DERP frame counters (rx=, tx=).
	RxFrames, TxFrames int64
	// Silences counts the receive watchdog firing (the relay went quiet
	// while connected) this boot, from microlink's lines; Drops counts the
	// connections lost this boot, from telemetry (drop).
	Silences int
	Drops    int64
	// At is the host time of the last report.
	At time.Time
	// Source says where it came from: "telemetry" or "microlink".
	Source string
}

// DownFor is how long the relay has been down at now, 0 when it is up or
// unknown.
func (r Relay) DownFor(now time.Time) time.Duration {
	if !r.Known || r.Connected || r.DownSince.IsZero() {
		return 0
	}
	return now.Sub(r.DownSince)
}

// setRelay records a relay report at now.
func (s *State) setRelay(up bool, now time.Time, source string) {
	r := &s.Relay
	if up {
		r.WasUp, r.DownSince, r.Attempts = true, time.Time{}, 0
	} else if r.DownSince.IsZero() || (r.Known && r.Connected) {
		r.DownSince = now
	}
	r.Known, r.Connected, r.At, r.Source = true, up, now, source
}

// Fetch is one HTTP fetch result (telemetry F frame) with the boot it ran in.
type Fetch struct {
	telemetry.Fetch
	// Boot is State.Boots when the frame arrived: 1 for the first boot
	// seen, 0 when the capture began mid-boot (no ROM banner yet).
	Boot int
	// Extra are the frame's fields State has no named field for (see
	// State.Extra).
	Extra []telemetry.Field
}

// NewState returns an empty model with histories of DefaultHistory samples.
func NewState() *State {
	return &State{
		Endpoints:    -1,
		Relay:        Relay{RxAge: -1},
		Peers:        map[int]*PeerState{},
		ProbeHistory: NewRing(DefaultHistory), HeapHistory: NewRing(DefaultHistory),
		HeapMinHistory: NewRing(DefaultHistory), LargestHistory: NewRing(DefaultHistory),
		PSRAMHistory: NewRing(DefaultHistory),
	}
}

// Clone returns a deep copy safe to hand to another goroutine.
func (s *State) Clone() State {
	c := *s
	if s.LastCrash != nil {
		cr := *s.LastCrash
		cr.Lines = append([]safetext.Text(nil), cr.Lines...)
		cr.Decoded = append([]safetext.Text(nil), cr.Decoded...)
		cr.Backtrace.Frames = append([]crash.Frame(nil), cr.Backtrace.Frames...)
		cr.Registers = append([]crash.Register(nil), cr.Registers...)
		cr.Stack = append([]uint32(nil), cr.Stack...)
		cr.StackFrames = append([]uint32(nil), cr.StackFrames...)
		c.LastCrash = &cr
	}
	c.ProbeHistory = s.ProbeHistory.clone()
	c.HeapHistory = s.HeapHistory.clone()
	c.HeapMinHistory = s.HeapMinHistory.clone()
	c.LargestHistory = s.LargestHistory.clone()
	c.PSRAMHistory = s.PSRAMHistory.clone()
	c.Fetches = append([]Fetch(nil), s.Fetches...)
	c.Extra = maps.Clone(s.Extra)
	c.Peers = make(map[int]*PeerState, len(s.Peers))
	for k, v := range s.Peers {
		p := *v
		c.Peers[k] = &p
	}
	return c
}

// PeerIDs returns the known peer numbers in order.
func (s *State) PeerIDs() []int {
	ids := make([]int, 0, len(s.Peers))
	for id := range s.Peers {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// ProbeTableFull reports whether the DISCO probe table is full (the
// device-probe-table-full reason) as far as the board has said.
func (s *State) ProbeTableFull() bool {
	return s.ProbesCap > 0 && s.ProbesUsed >= s.ProbesCap
}

// ApplyLink records a link change.
func (s *State) ApplyLink(st LinkStatus) { s.Link = st }

func (s *State) peer(id int) *PeerState {
	p := s.Peers[id]
	if p == nil {
		p = &PeerState{ID: id}
		s.Peers[id] = p
	}
	return p
}

// ApplyLine folds one console line into the model. sym may be nil; with it,
// crash PCs are decoded. now is the host time the line arrived.
//
// Long on purpose: a switch with one short case per kind of console line.
func (s *State) ApplyLine(l *Line, now time.Time, sym *crash.Symbolizer) {
	s.Lines++
	s.LastLineAt = now
	body := l.Body()
	pending := s.regPending
	s.regPending = ""
	switch l.Kind {
	case KindBinary:
		s.BinaryLogFrames++
		return
	case KindStatusQuery:
		return
	case KindTelemetry:
		s.applyTelemetryText(l.Text, now)
		return
	case KindROM:
		s.newBoot()
		s.BootAt = now
		s.romOpen = true
		if chip := crash.ParseChip(body); chip != "" {
			s.Chip = chip
		}
	case KindReset:
		if !s.romOpen {
			s.newBoot()
			s.BootAt = now
		}
		s.romOpen = false
		if r, err := crash.ParseReset(body); err == nil {
			s.LastReset = r
		}
	case KindPanic:
		p, _ := crash.ParsePanic(body)
		reason := p.Reason
		if p.Core >= 0 {
			reason += " on core " + strconv.Itoa(p.Core)
		}
		s.startCrash(l, now, reason)
		s.LastCrash.Core = p.Core
	case KindAbort:
		pc, _, _ := crash.ParseAbortPC(body)
		s.startCrash(l, now, "abort() at 0x"+hex32(pc))
		s.LastCrash.PC = pc
		s.decode(sym, uint64(pc))
	case KindAssert:
		s.startCrash(l, now, clip(string(body), 120))
	case KindStackOverflow:
		task, _ := crash.ParseStackOverflow(body)
		s.startCrash(l, now, "stack overflow in task "+task)
	case KindCorruptHeap:
		s.startCrash(l, now, "heap corruption")
	case KindBrownout:
		s.Brownouts++
		s.startCrash(l, now, "brownout")
	case KindRegisters:
		if s.inCrash {
			s.addCrashLine(l)
			c := s.LastCrash
			n := len(c.Registers)
			rest := body
			if v, k, ok := crash.RegisterContinuation(body); ok && pending != "" && len(c.Registers) < 64 {
				c.Registers = append(c.Registers, crash.Register{Name: pending, Value: v})
				rest = body[k:]
			}
			if len(c.Registers) < 64 {
				c.Registers = crash.ParseRegisters(rest, c.Registers)
				s.regPending = crash.DanglingRegister(rest)
			}
			for _, r := range c.Registers[n:] {
				switch r.Name {
				case "MEPC", "MCAUSE", "MTVAL":
					c.Arch = "riscv"
				case "PS", "EXCCAUSE", "EXCVADDR", "A0":
					if c.Arch == "" {
						c.Arch = "xtensa"
					}
				}
			}
			if pc, ok := crash.ParseRegisterPC(body); ok && c.PC == 0 {
				c.PC = pc
				s.decode(sym, uint64(pc))
			}
			if ra, ok := crash.ParseRegisterRA(body); ok {
				s.decode(sym, uint64(ra))
			}
		}
		return
	case KindStackDump:
		if s.inCrash {
			s.addCrashLine(l)
			c := s.LastCrash
			n := len(c.Stack)
			addr, words, ok := crash.ParseStackRow(body, c.Stack)
			if !ok {
				return
			}
			if n == 0 {
				c.StackAddr = addr
			}
			c.Stack = words[:min(len(words), MaxStackWords)]
			if sym != nil {
				for _, w := range c.Stack[min(n, len(c.Stack)):] {
					if sym.IsReturnAddress(uint64(w)) {
						c.StackFrames = append(c.StackFrames, w)
						s.decode(sym, uint64(w))
					}
				}
			}
		}
		return
	case KindBacktrace:
		if !s.inCrash {
			s.startCrash(l, now, "backtrace")
		} else {
			s.addCrashLine(l)
		}
		if bt, err := crash.ParseBacktrace(body); err == nil {
			s.LastCrash.Backtrace = bt
			for _, f := range bt.Frames {
				s.decode(sym, uint64(f.PC))
			}
		}
		return
	case KindELFSHA:
		sha, ok := crash.ParseELFSHA(body)
		if !ok {
			return
		}
		s.BoardELFSHA = safetext.New(sha)
		s.ELFMismatch = sym != nil && !sym.MatchesBoard(sha)
		if s.inCrash {
			s.LastCrash.ELFSHA = s.BoardELFSHA
			s.addCrashLine(l)
		}
		return
	case KindRebooting:
		if s.inCrash {
			s.addCrashLine(l)
			s.LastCrash.Ended = true
			s.inCrash = false
		}
		return
	case KindLog:
		s.romOpen = false // the app is running: a later `rst:` is a new boot
		if string(l.Tag) == "wifi" || (len(l.Tag) == 0 && bytes.HasPrefix(l.Msg, []byte("wifi:"))) {
			s.WiFiKnown = true // ESP-IDF's Wi-Fi driver logs "wifi:…", untagged
		}
		if len(l.Tag) == 0 && bytes.HasPrefix(l.Msg, []byte("wifi:state: run -> init")) {
			s.WiFiDropLines++
			return
		}
		if string(l.Tag) == "task_wdt" {
			if bytes.Contains(l.Msg, []byte("Task watchdog got triggered")) {
				s.TaskWatchdogHits++
				s.startCrash(l, now, "task watchdog")
				s.LastCrash.Kind = KindLog
			} else if s.inCrash {
				s.addCrashLine(l)
			}
			return
		}
		s.applyPortLine(l, now)
	default:
		if s.inCrash && len(l.Unwrapped()) > 0 {
			s.addCrashLine(l)
		}
	}
}

// newBoot starts a boot: it counts it and clears the per-boot values (see
// State).
func (s *State) newBoot() {
	s.Boots++
	s.inCrash = false
	s.ResetWord = ""
	s.HomeDERP, s.HomeDERPHost, s.HomeDERPBy, s.HomeLatency = 0, "", "", 0
	s.NearestDERP, s.NearestLatency = 0, 0
	s.ProbesUsed, s.ProbesCap, s.ProbesDropped, s.ProbesReaped = 0, 0, 0, 0
	s.H2Known, s.H2Received, s.H2WindowReturned, s.H2WindowOpen = false, 0, 0, 0
	s.PoolFullLines = 0
	s.HeapFree, s.HeapMin, s.HeapLargest, s.PSRAMFree = 0, 0, 0, 0
	s.heapFromFrames = false
	s.WiFiDisconnects, s.WiFiDropLines, s.RSSI, s.WiFiKnown = 0, 0, 0, false
	s.Endpoints = -1
	s.BoardELFSHA, s.ELFMismatch = "", false
	s.Relay = Relay{RxAge: -1}
	s.DiscoDecryptFails, s.WGInitiations, s.WGResponses = 0, 0, 0
	s.Extra = nil
	s.DecryptFailures = [8]DecryptFailure{}
	for id, p := range s.Peers {
		s.Peers[id] = &PeerState{ID: p.ID, IP: p.IP}
	}
}

// DecryptFailure is one DISCO packet the board could not decrypt.
type DecryptFailure struct {
	At   time.Time      // when the line was read
	From netip.AddrPort // the source the line named; zero if none
}

func (s *State) startCrash(l *Line, now time.Time, reason string) {
	s.Crashes++
	s.inCrash = true
	s.LastCrash = &Crash{At: now, Kind: l.Kind, Reason: safetext.New(reason), Core: -1}
	s.addCrashLine(l)
}

func (s *State) addCrashLine(l *Line) {
	if len(s.LastCrash.Lines) < 64 {
		s.LastCrash.Lines = append(s.LastCrash.Lines, cleanText(l.Unwrapped()))
	}
}

func (s *State) decode(sym *crash.Symbolizer, pc uint64) {
	if sym == nil || s.LastCrash == nil || pc == 0 {
		return
	}
	for _, d := range sym.AppendDecoded(nil, pc) {
		s.LastCrash.Decoded = append(s.LastCrash.Decoded, safetext.New(d)) // names from the ELF's DWARF
	}
}

// applyPortLine folds the ESP32 Tailscale port's log lines in.
func (s *State) applyPortLine(l *Line, now time.Time) {
	f, ok := ParsePortLine(l)
	if !ok {
		return
	}
	if f.HeapFree >= 0 && !s.heapFromFrames {
		s.HeapFree = f.HeapFree
		s.HeapHistory.Add(now, f.HeapFree)
	}
	switch f.Kind {
	case FactDiscoPong:
		if f.Peer >= 0 {
			p := s.peer(f.Peer)
			p.LastPong, p.LastPongAt = f.Addr, now
			// Boards without telemetry: a pong marked "direct" means the
			// port now sends to that endpoint.
			if p.Path.Kind == telemetry.PathNone && f.Addr.IsValid() && bytes.HasSuffix(l.Msg, []byte("direct")) {
				p.Path = telemetry.Path{Kind: telemetry.PathDirect, Addr: f.Addr}
			}
		}
	case FactDiscoPoolFull:
		s.PoolFullLines++
	case FactHandshake:
		if f.Peer >= 0 {
			p := s.peer(f.Peer)
			p.Handshake, p.HandshakeAt = handshakePath(f), now
		} else if len(s.Peers) == 1 {
			for _, p := range s.Peers {
				p.Handshake, p.HandshakeAt = handshakePath(f), now
			}
		}
	case FactHomeDERP:
		s.HomeDERP, s.HomeDERPHost = f.DERPRegion, f.Host
	case FactRelayStatus:
		s.setRelay(f.Connected == 1, now, "microlink")
		s.Relay.RxFrames, s.Relay.TxFrames = f.RelayRx, f.RelayTx
		if f.RelayRx > 0 || f.RelayTx > 0 {
			s.Relay.WasUp = true
		}
	case FactRelayUp:
		s.setRelay(true, now, "microlink")
	case FactRelayRetry:
		if s.Relay.Connected {
			s.setRelay(false, now, "microlink")
		}
		s.Relay.Known = true
		s.Relay.Attempts++
	case FactRelaySilent:
		s.Relay.Silences++
		s.setRelay(false, now, "microlink")
	case FactDiscoDecryptFail:
		s.DiscoDecryptFails++
		copy(s.DecryptFailures[1:], s.DecryptFailures[:len(s.DecryptFailures)-1])
		s.DecryptFailures[0] = DecryptFailure{At: now, From: f.Addr}
	case FactWGInitiation:
		s.WGInitiations++
	case FactWGResponse:
		s.WGResponses++
	case FactSelfIP:
		// Boards without telemetry name themselves this way, which links
		// the board to its row in Peers.
		s.TailnetIP = f.Self
	case FactDiscoPing, FactCallMeMaybe:
	}
}

func handshakePath(f PortFact) telemetry.Path {
	if f.ViaDERP {
		return telemetry.Path{Kind: telemetry.PathDERP, Region: uint16(f.DERPRegion)}
	}
	return telemetry.Path{Kind: telemetry.PathDirect, Addr: f.Addr}
}

func (s *State) applyTelemetryText(text []byte, now time.Time) {
	i := telemetry.Index(text)
	if i < 0 {
		return
	}
	fr, err := telemetry.Parse(text[i:])
	if err != nil {
		if telemetry.IsCorrupt(err) {
			s.CorruptFrames++
		}
		return
	}
	s.ApplyFrame(&fr, now)
}

// named lists, per frame kind, the wire keys ApplyFrame folds into State's
// named fields or leaves out on purpose (seq, up, and counters nothing shows
// yet: bad, ping, pong, cmmi, cmmo). Every other field of the telemetry
// table is kept as text in Extra (State, PeerState, Fetch), so a field added
// to the table reaches the Device pane without code here; give it a named
// field (and list it here) when something should reason about it.
var named = map[telemetry.Kind]string{
	telemetry.KindStatus: "seq up rst rssi wdis hif hmin hlb psf bad",
	telemetry.KindNet:    "seq up ip host eps derp derpby derpms near nearms",
	telemetry.KindDisco:  "seq up pu pcap pdrop preap ping pong cmmi cmmo h2rx h2wu h2win",
	telemetry.KindPeer:   "seq up peer pip path hs hsup lat",
	telemetry.KindFetch:  "seq up n bytes ms kibs status err via",
	telemetry.KindRelay:  "seq up rg conn att drop err rxage",
}

// unnamed is, per kind, the table's keys that named leaves out (none
// today); ApplyFrame keeps those as Extra.
var unnamed = unnamedKeys(named)

func unnamedKeys(named map[telemetry.Kind]string) map[telemetry.Kind][]string {
	out := map[telemetry.Kind][]string{}
	for _, k := range telemetry.Kinds() {
		have := strings.Fields(named[k])
		for _, key := range telemetry.Keys(k) {
			if key != "seq" && key != "up" && !slices.Contains(have, key) {
				out[k] = append(out[k], key)
			}
		}
	}
	return out
}

// extraOf returns the fields of f among keys that f carries, as text; nil
// when none.
func extraOf(f *telemetry.Frame, keys []string) []telemetry.Field {
	var out []telemetry.Field
	for _, k := range keys {
		if v, ok := f.Value(k); ok {
			out = append(out, telemetry.Field{Key: k, Value: v})
		}
	}
	return out
}

// ApplyFrame folds one telemetry frame in (fields the frame lacks are left
// as they were).
//
// Long on purpose: a switch with one short case per telemetry frame kind.
func (s *State) ApplyFrame(f *telemetry.Frame, now time.Time) {
	s.Frames++
	s.LastFrameAt = now
	extra := extraOf(f, unnamed[f.Kind])
	switch f.Kind {
	case telemetry.KindPeer:
		s.peer(int(f.Peer.ID)).Extra = extra
	case telemetry.KindFetch: // with its Fetch below
	default:
		if extra == nil {
			delete(s.Extra, f.Kind)
		} else {
			if s.Extra == nil {
				s.Extra = map[telemetry.Kind][]telemetry.Field{}
			}
			s.Extra[f.Kind] = extra
		}
	}
	switch f.Kind {
	case telemetry.KindStatus:
		st := f.Status
		if f.Has("rst") {
			s.ResetWord = st.Reset
		}
		if f.Has("rssi") {
			s.RSSI, s.WiFiKnown = st.RSSI, true
		}
		if f.Has("wdis") {
			s.WiFiDisconnects, s.WiFiKnown = int64(st.WiFiDisconnects), true
		}
		if f.Has("hif") {
			if !s.heapFromFrames {
				// From now on this boot's heap is the frames' measure:
				// drop the port lines' samples of this boot.
				s.HeapHistory.DropSince(s.BootAt)
				s.heapFromFrames = true
			}
			s.HeapFree = int64(st.HeapFree)
			s.HeapHistory.Add(now, s.HeapFree)
		}
		if f.Has("hmin") {
			s.HeapMin = int64(st.HeapMinFree)
			s.HeapMinHistory.Add(now, s.HeapMin)
		}
		if f.Has("hlb") {
			s.HeapLargest = int64(st.HeapLargest)
			s.LargestHistory.Add(now, s.HeapLargest)
		}
		if f.Has("psf") {
			s.PSRAMFree = int64(st.PSRAMFree)
			s.PSRAMHistory.Add(now, s.PSRAMFree)
		}
	case telemetry.KindNet:
		n := f.Net
		if f.Has("ip") {
			s.TailnetIP = n.IP
		}
		if f.Has("host") {
			s.Hostname = n.Host
		}
		if f.Has("eps") {
			s.Endpoints = int64(n.Endpoints)
		}
		if f.Has("derp") {
			s.HomeDERP = int(n.HomeDERP)
		}
		if f.Has("derpby") {
			s.HomeDERPBy = n.HomeDERPBy
		}
		if f.Has("derpms") {
			s.HomeLatency = n.HomeLatency
		}
		if f.Has("near") {
			s.NearestDERP = int(n.Nearest)
		}
		if f.Has("nearms") {
			s.NearestLatency = n.NearestLatency
		}
	case telemetry.KindDisco:
		d := f.Disco
		if f.Has("pu") {
			s.ProbesUsed = int64(d.ProbesUsed)
			s.ProbeHistory.Add(now, s.ProbesUsed)
		}
		if f.Has("pcap") {
			s.ProbesCap = int64(d.ProbesCap)
		}
		if f.Has("pdrop") {
			s.ProbesDropped = int64(d.ProbesDropped)
		}
		if f.Has("preap") {
			s.ProbesReaped = int64(d.ProbesReaped)
		}
		if f.Has("h2rx") {
			s.H2Known, s.H2Received = true, int64(d.H2Received)
		}
		if f.Has("h2wu") {
			s.H2Known, s.H2WindowReturned = true, int64(d.H2WindowReturned)
		}
		if f.Has("h2win") {
			s.H2Known, s.H2WindowOpen = true, int64(d.H2WindowOpen)
		}
	case telemetry.KindPeer:
		pf := f.Peer
		p := s.peer(int(pf.ID))
		if f.Has("pip") {
			p.IP = pf.IP
		}
		if f.Has("path") {
			p.Path = pf.Path
		}
		if f.Has("hs") {
			// P frames repeat the last handshake every period, so its time
			// comes from the frame: it happened (up - hsup) before now.
			p.Handshake = pf.Handshake
			p.HandshakeAt = time.Time{}
			if f.Has("hsup") && f.Has("up") {
				p.HandshakeAt = now.Add(-uptimeSince(pf.HandshakeAt, f.Uptime))
			}
		}
		if f.Has("lat") {
			p.Latency = pf.Latency
		}
	case telemetry.KindRelay:
		r := f.Relay
		s.setRelay(r.Connected, now, "telemetry")
		s.Relay.Attempts = int64(r.Attempts)
		s.Relay.Drops = int64(r.Drops)
		if r.Drops > 0 {
			s.Relay.WasUp = true
		}
		s.Relay.LastErr = r.Err
		s.Relay.RxAge = -1
		if f.Has("rxage") {
			s.Relay.RxAge = r.RxAge
		}
	case telemetry.KindFetch:
		s.Fetches = append(s.Fetches, Fetch{Fetch: f.Fetch, Boot: s.Boots, Extra: extra})
		if len(s.Fetches) > 32 {
			s.Fetches = append(s.Fetches[:0:0], s.Fetches[len(s.Fetches)-32:]...)
		}
	}
}

// uptimeSince is how long before uptime now the uptime then was, both
// from the board's 32-bit millisecond clock (so across its 49.7-day wrap).
func uptimeSince(then, now time.Duration) time.Duration {
	return time.Duration(uint32(now.Milliseconds())-uint32(then.Milliseconds())) * time.Millisecond
}

// NearestIsHome reports whether the home DERP is the nearest region the
// board measured; ok is false when either is unknown.
func (s *State) NearestIsHome() (same, ok bool) {
	if s.HomeDERP == 0 || s.NearestDERP == 0 {
		return false, false
	}
	return s.HomeDERP == s.NearestDERP, true
}

// cleanText makes device bytes safe to show (internal/safetext).
func cleanText(b []byte) safetext.Text { return safetext.New(string(b)) }

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
