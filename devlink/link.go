package devlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"go.bug.st/serial"

	"github.com/tailpath/tailpath/internal/safetext"
)

// LinkStatus is a change of the serial link's state.
type LinkStatus struct {
	Up   bool
	Port safetext.Text // the device path opened (or last opened)
	At   time.Time     // when the change was seen
	// Err is why the link went down or a reopen failed; nil when Up.
	// Its message names the port and carries the system's words: show
	// ErrText.
	Err error
	// Reset is true when this Up follows a deliberate hard reset (--reset
	// or RequestReset).
	Reset bool
	// ResetErr is why a requested reset could not be done (a port without
	// modem lines); the link itself stays up. Show ResetErrText.
	ResetErr error
	// Replay is true when the lines come from a recorded capture
	// (Source.Replay), not a serial port; Port is then "replay".
	Replay bool
}

// ErrText is Err's message cleaned for a screen; "" when Err is nil.
func (s LinkStatus) ErrText() safetext.Text { return safetext.Of(s.Err) }

// ResetErrText is ResetErr's message cleaned for a screen; "" when
// ResetErr is nil.
func (s LinkStatus) ResetErrText() safetext.Text { return safetext.Of(s.ResetErr) }

// Link reads a board's serial console and keeps it open across unplugs.
//
// It opens the port without resetting the board (DTR and RTS held low, see
// the design notes' facts, ../shared/design/facts.md, "Serial and USB"; on
// a pseudo-terminal, which has no modem lines, it opens
// again without touching them). When the port disappears it reports the link
// down, flushes the unfinished line and keeps trying to reopen the same path,
// never resetting the board. Lines are split with a Splitter; an unfinished
// line is flushed after Idle without new bytes, so a prompt without "\n"
// still shows.
type Link struct {
	// Port is a device path (/dev/ttyACM0, COM3) or "auto" (see FindBoard).
	Port string
	// Baud is the line speed in bit/s; 0 means 115200. The USB-Serial/JTAG
	// port ignores it.
	Baud int
	// Reset asks for one deliberate hard reset (EN pulsed through RTS, the
	// esptool sequence) after the first open.
	Reset bool
	// Idle is how long an unfinished line waits before it is flushed; 0 means 200 ms.
	Idle time.Duration
	// Retry is the reopen interval after the port disappeared; 0 means 500 ms.
	Retry time.Duration

	// open and list are serial.Open and ListPorts; tests replace them.
	open func(path string, mode *serial.Mode) (serial.Port, error)
	list func() ([]PortInfo, error)

	resetOnce sync.Once
	resetReq  chan struct{} // RequestReset → read loop, one pending at most

	// The interactive console (Send): the open port, nil while the link
	// is down, and what waits to be written.
	sendMu  sync.Mutex
	port    serial.Port
	pending []byte
}

// MaxPendingSend bounds what Send keeps while the port is down; older
// bytes are dropped first.
const MaxPendingSend = 64 << 10

// Send writes p to the board's console (the keys of an interactive
// console). While the port is down, or when a write fails, the bytes are
// kept, in order, and written as soon as the port is open again (at most
// MaxPendingSend bytes; the oldest go first). It returns ErrSendDropped
// when bytes had to be dropped. Safe to call from any goroutine.
func (k *Link) Send(p []byte) error {
	k.sendMu.Lock()
	defer k.sendMu.Unlock()
	k.pending = append(k.pending, p...)
	var err error
	if over := len(k.pending) - MaxPendingSend; over > 0 {
		k.pending = append(k.pending[:0], k.pending[over:]...)
		err = ErrSendDropped
	}
	k.flushLocked()
	return err
}

// ErrSendDropped: Send dropped bytes because the port stayed down too long.
var ErrSendDropped = errors.New("serial port down: oldest typed bytes dropped")

// flushLocked writes what is pending to the open port, keeping what was
// not written.
func (k *Link) flushLocked() {
	for k.port != nil && len(k.pending) > 0 {
		n, err := k.port.Write(k.pending)
		k.pending = k.pending[:copy(k.pending, k.pending[n:])]
		if err != nil || n == 0 {
			return
		}
	}
}

// attach makes port the one Send writes to, and sends what waited.
func (k *Link) attach(port serial.Port) {
	k.sendMu.Lock()
	defer k.sendMu.Unlock()
	k.port = port
	k.flushLocked()
}

// detach stops Send writing to the port about to close.
func (k *Link) detach() {
	k.sendMu.Lock()
	defer k.sendMu.Unlock()
	k.port = nil
}

// RequestReset asks a running Link for one deliberate hard reset of the
// board (the TUI's reset key). It never blocks: the reset happens on Run's
// goroutine between two reads, and its outcome arrives through onStatus as
// LinkStatus{Up: true, Reset: true} or with ResetErr set. It reports false
// when a reset is already pending.
func (k *Link) RequestReset() bool {
	k.resetOnce.Do(func() { k.resetReq = make(chan struct{}, 1) })
	select {
	case k.resetReq <- struct{}{}:
		return true
	default:
		return false
	}
}

func (k *Link) defaults() {
	if k.Baud == 0 {
		k.Baud = 115200
	}
	if k.Idle == 0 {
		k.Idle = 200 * time.Millisecond
	}
	if k.Retry == 0 {
		k.Retry = 500 * time.Millisecond
	}
	if k.open == nil {
		k.open = serial.Open
	}
	if k.list == nil {
		k.list = ListPorts
	}
}

// Run reads until ctx is done, calling onLine for every line (the *Line is
// reused; Clone to keep it) and onStatus for every link change, both from
// Run's goroutine. It returns nil when ctx is done, or an error when the
// port cannot be opened the first time (busy, permission denied, no board),
// worded for a person: errors.Is(err, ErrPermission), ErrBusy, ErrNoBoard.
func (k *Link) Run(ctx context.Context, onLine func(*Line), onStatus func(LinkStatus)) error {
	k.defaults()
	path := k.Port
	if path == "" || path == "auto" {
		p, err := FindBoard(k.list)
		if err != nil {
			return err
		}
		path = p
	}
	var sp Splitter
	first := true
	var downReported bool
	for ctx.Err() == nil {
		port, err := k.openNoReset(path)
		if err != nil {
			if first {
				return err
			}
			if k.Port == "" || k.Port == "auto" {
				// The board may come back under another name (ttyACM0 → ttyACM1).
				if p, ferr := FindBoard(k.list); ferr == nil {
					path = p
				}
			}
			if !downReported {
				onStatus(LinkStatus{Up: false, Port: safetext.New(path), At: time.Now(), Err: err})
				downReported = true
			}
			select {
			case <-ctx.Done():
			case <-time.After(k.Retry):
			}
			continue
		}
		didReset := false
		if first && k.Reset {
			if err := HardReset(port, path, k.list); err != nil {
				port.Close()
				return err
			}
			didReset = true
		}
		first, downReported = false, false
		onStatus(LinkStatus{Up: true, Port: safetext.New(path), At: time.Now(), Reset: didReset})
		k.attach(port)
		err = k.read(ctx, port, path, &sp, onLine, onStatus)
		k.detach()
		port.Close()
		sp.Flush(onLine)
		if ctx.Err() != nil {
			break
		}
		onStatus(LinkStatus{Up: false, Port: safetext.New(path), At: time.Now(), Err: err})
		downReported = true
		select {
		case <-ctx.Done():
		case <-time.After(k.Retry):
		}
	}
	sp.Flush(onLine)
	return nil
}

// read pumps one open port until it fails or ctx is done.
func (k *Link) read(ctx context.Context, port serial.Port, path string, sp *Splitter, onLine func(*Line), onStatus func(LinkStatus)) error {
	k.resetOnce.Do(func() { k.resetReq = make(chan struct{}, 1) })
	tick := k.Idle / 2
	if tick > 100*time.Millisecond {
		tick = 100 * time.Millisecond
	}
	if err := port.SetReadTimeout(tick); err != nil {
		return err
	}
	buf := make([]byte, 16<<10)
	last := time.Now()
	for ctx.Err() == nil {
		n, err := port.Read(buf)
		if n > 0 {
			sp.Feed(buf[:n], onLine)
			last = time.Now()
		}
		if err != nil {
			return err
		}
		if n == 0 && sp.Pending() > 0 && time.Since(last) >= k.Idle {
			sp.Flush(onLine)
		}
		select {
		case <-k.resetReq:
			// Whatever the board printed before the reset is a line of its
			// own: the ROM banner starts afresh.
			sp.Flush(onLine)
			if err := HardReset(port, path, k.list); err != nil {
				onStatus(LinkStatus{Up: true, Port: safetext.New(path), At: time.Now(), ResetErr: err})
			} else {
				onStatus(LinkStatus{Up: true, Port: safetext.New(path), At: time.Now(), Reset: true})
			}
		default:
		}
	}
	return nil
}

// Errors Run and Open can return; test with errors.Is.
var (
	ErrBusy       = errors.New("serial port busy")
	ErrPermission = errors.New("serial port permission denied")
	ErrNoBoard    = errors.New("no ESP32 board found")
	ErrNotFound   = errors.New("serial port not found")
)

// noReset holds DTR and RTS low at open so the board is not reset.
var noReset = serial.ModemOutputBits{DTR: false, RTS: false}

// openNoReset opens path with DTR/RTS low, falling back to leaving the modem
// lines alone when the device has none (a pty: "inappropriate ioctl").
func (k *Link) openNoReset(path string) (serial.Port, error) {
	bits := noReset
	mode := &serial.Mode{BaudRate: k.Baud, InitialStatusBits: &bits}
	p, err := k.open(path, mode)
	if err != nil && isNoModemLines(err) {
		mode = &serial.Mode{BaudRate: k.Baud}
		p, err = k.open(path, mode)
	}
	if err != nil {
		return nil, explainOpen(path, err)
	}
	return p, nil
}

func isNoModemLines(err error) bool {
	s := err.Error()
	return strings.Contains(s, "inappropriate ioctl") || strings.Contains(s, "modem bits")
}

// explainOpen turns a serial.Open error into one that says what to do.
func explainOpen(path string, err error) error {
	var pe interface{ Code() serial.PortErrorCode } // *serial.PortError
	if errors.As(err, &pe) {
		switch pe.Code() {
		case serial.PortBusy:
			return fmt.Errorf("%w: %s is open in another program (idf.py monitor, screen, minicom?); close it and retry", ErrBusy, path)
		case serial.PermissionDenied:
			return fmt.Errorf("%w: %s: join the dialout group (uucp on Arch): sudo usermod -aG dialout $USER, then log out and in", ErrPermission, path)
		case serial.PortNotFound:
			return fmt.Errorf("%w: %s%s", ErrNotFound, path, notFoundHint)
		}
	}
	if errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "no such file") {
		return fmt.Errorf("%w: %s: %v%s", ErrNotFound, path, err, notFoundHint)
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// notFoundHint ends an ErrNotFound error with what to try.
const notFoundHint = "; check the board is plugged in with a data cable, or pass --port auto to find it"

// boardIDs ranks USB VID:PID pairs: the ESP32-S3's own USB-Serial/JTAG first,
// then the common USB-UART bridges.
var boardIDs = []struct{ vid, pid, what string }{
	{"303a", "1001", "ESP32-S3 USB-Serial/JTAG"},
	{"10c4", "ea60", "CP210x USB-UART"},
	{"1a86", "7523", "CH340 USB-UART"},
	{"1a86", "55d4", "CH9102 USB-UART"},
	{"0403", "6001", "FTDI USB-UART"},
}

// FindBoard picks the serial port of an ESP32 board from list (nil means
// enumerator.GetDetailedPortsList): the first ESP32-S3 USB-Serial/JTAG port,
// else the first known USB-UART bridge. With none it returns an ErrNoBoard
// error that lists the ports it did see.
func FindBoard(list func() ([]PortInfo, error)) (string, error) {
	if list == nil {
		list = ListPorts
	}
	ports, err := list()
	if err != nil {
		return "", fmt.Errorf("%w: listing serial ports: %v; pass --port PATH", ErrNoBoard, err)
	}
	ports = append([]PortInfo(nil), ports...)
	sort.SliceStable(ports, func(i, j int) bool { return ports[i].Name < ports[j].Name })
	for _, id := range boardIDs {
		for _, p := range ports {
			if p.IsUSB && strings.EqualFold(p.VID, id.vid) && strings.EqualFold(p.PID, id.pid) {
				return p.Name, nil
			}
		}
	}
	if len(ports) == 0 {
		return "", fmt.Errorf("%w: no serial ports at all; is the board plugged in with a data cable? Pass --port PATH to choose one", ErrNoBoard)
	}
	var seen []string
	for _, p := range ports {
		if p.IsUSB {
			seen = append(seen, fmt.Sprintf("%s (USB %s:%s)", p.Name, strings.ToLower(p.VID), strings.ToLower(p.PID)))
		} else {
			seen = append(seen, p.Name)
		}
	}
	return "", fmt.Errorf("%w among %s; pass --port PATH to choose one", ErrNoBoard, strings.Join(seen, ", "))
}

// HardReset resets the board the way esptool's hard reset does: EN is pulled
// low through RTS (with DTR high-impedance low so GPIO0 stays high and the app
// boots), held, then released. The USB-Serial/JTAG port needs longer holds.
// list identifies the port's USB id (nil: enumerate).
func HardReset(port serial.Port, path string, list func() ([]PortInfo, error)) error {
	hold := 100 * time.Millisecond
	if list != nil {
		if ports, err := list(); err == nil {
			for _, p := range ports {
				if p.Name == path && strings.EqualFold(p.VID, "303a") {
					hold = 200 * time.Millisecond
				}
			}
		}
	}
	steps := []func() error{
		func() error { return port.SetDTR(false) },
		func() error { return port.SetRTS(true) }, // EN low
		func() error { time.Sleep(hold); return nil },
		func() error { return port.SetRTS(false) }, // EN high: boot the app
		func() error { return port.SetDTR(false) }, // Windows applies RTS on the next DTR write
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("reset %s: the port has no modem lines (%v); press the board's RST button instead", path, err)
		}
	}
	return nil
}

// Pump reads r (stdin, a file, a replayed capture) until EOF, an error or ctx
// is done, feeding s and calling onLine for every line. An unfinished line is
// flushed after idle without new bytes (0 means 200 ms) and at the end. It
// returns nil at EOF or when ctx is done, else the read error.
func Pump(ctx context.Context, r io.Reader, idle time.Duration, onLine func(*Line)) error {
	if idle == 0 {
		idle = 200 * time.Millisecond
	}
	var s Splitter
	type chunk struct {
		b   []byte
		err error
	}
	data := make(chan chunk)
	ack := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				select {
				case data <- chunk{b: buf[:n]}:
				case <-done:
					return
				}
				select {
				case <-ack:
				case <-done:
					return
				}
			}
			if err != nil {
				select {
				case data <- chunk{err: err}:
				case <-done:
				}
				return
			}
		}
	}()
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Flush(onLine)
			return nil
		case <-timer.C:
			s.Flush(onLine)
		case c := <-data:
			if c.err != nil {
				s.Flush(onLine)
				if c.err == io.EOF {
					return nil
				}
				return c.err
			}
			s.Feed(c.b, onLine)
			ack <- struct{}{}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(idle)
		}
	}
}
