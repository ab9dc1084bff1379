package devlink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"
	"go.bug.st/serial"
)

// modemRecorder wraps serial.Open and records every open mode and every
// modem-line call, to prove the board is never pulsed.
type modemRecorder struct {
	mu    sync.Mutex
	modes []string // "DTR=false RTS=false" or "untouched", per open attempt
	calls []string // SetDTR/SetRTS calls
}

func (r *modemRecorder) open(path string, mode *serial.Mode) (serial.Port, error) {
	r.mu.Lock()
	if mode.InitialStatusBits == nil {
		r.modes = append(r.modes, "untouched")
	} else {
		r.modes = append(r.modes, fmt.Sprintf("DTR=%v RTS=%v", mode.InitialStatusBits.DTR, mode.InitialStatusBits.RTS))
	}
	r.mu.Unlock()
	p, err := serial.Open(path, mode)
	if err != nil {
		return nil, err
	}
	return &recordedPort{Port: p, r: r}, nil
}

type recordedPort struct {
	serial.Port
	r *modemRecorder
}

func (p *recordedPort) SetDTR(v bool) error {
	p.r.mu.Lock()
	p.r.calls = append(p.r.calls, fmt.Sprintf("SetDTR(%v)", v))
	p.r.mu.Unlock()
	return p.Port.SetDTR(v)
}

func (p *recordedPort) SetRTS(v bool) error {
	p.r.mu.Lock()
	p.r.calls = append(p.r.calls, fmt.Sprintf("SetRTS(%v)", v))
	p.r.mu.Unlock()
	return p.Port.SetRTS(v)
}

// TestLinkSurvivesUnplug streams lines through a real pseudo-terminal, closes
// it mid-line (an unplug), brings a new one up at the same path and streams
// more: every complete line arrives once and in order, the cut line's bytes
// are kept, the save file holds every byte, and no open or call ever raised
// DTR or RTS.
func TestLinkSurvivesUnplug(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("pseudo-terminals are a Unix test fixture")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ttyBOARD")
	master1, tty1, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := os.Symlink(tty1.Name(), path); err != nil {
		t.Fatal(err)
	}

	save, err := os.Create(filepath.Join(dir, "save.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer save.Close()

	rec := &modemRecorder{}
	k := &Link{Port: path, Retry: 30 * time.Millisecond, Idle: 200 * time.Millisecond, open: rec.open}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type got struct {
		raw     string
		partial bool
	}
	lines := make(chan got, 1000)
	status := make(chan LinkStatus, 10)
	done := make(chan error, 1)
	go func() {
		done <- k.Run(ctx, func(l *Line) {
			save.Write(l.Raw)
			lines <- got{string(l.Raw), l.Partial}
		}, func(s LinkStatus) { status <- s })
	}()
	waitStatus := func(up bool) LinkStatus {
		t.Helper()
		select {
		case s := <-status:
			if s.Up != up {
				t.Fatalf("link status %+v, want up=%v", s, up)
			}
			return s
		case <-time.After(time.Minute):
			t.Fatalf("no link status up=%v within 5s", up)
		}
		return LinkStatus{}
	}
	collect := func(n int) []got {
		t.Helper()
		var out []got
		for len(out) < n {
			select {
			case g := <-lines:
				out = append(out, g)
			case <-time.After(time.Minute):
				t.Fatalf("got %d of %d lines: %+v", len(out), n, out)
			}
		}
		return out
	}

	waitStatus(true)
	var sent strings.Builder
	var want []got
	for i := range 60 {
		s := fmt.Sprintf("I (%d) app: line %03d before unplug\r\n", i*10, i)
		sent.WriteString(s)
		want = append(want, got{raw: s})
		if _, err := master1.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	first := collect(60)
	// Half a line, then the cable goes.
	cut := "I (700) app: cut mid-li"
	master1.Write([]byte(cut))
	sent.WriteString(cut)
	time.Sleep(50 * time.Millisecond) // read, but not yet idle-flushed
	master1.Close()
	tty1.Close()
	down := waitStatus(false)
	if down.Err == nil {
		t.Errorf("link down without a reason")
	}
	partial := collect(1)
	want = append(want, got{raw: cut, partial: true})

	// The board comes back at the same path (a new pty behind the symlink).
	master2, tty2, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master2.Close()
	defer tty2.Close()
	tmp := path + ".new"
	if err := os.Symlink(tty2.Name(), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitStatus(true)
	for i := range 40 {
		s := fmt.Sprintf("I (%d) app: line %03d after replug\r\n", i*10, i)
		sent.WriteString(s)
		want = append(want, got{raw: s})
		master2.Write([]byte(s))
	}
	second := collect(40)

	all := append(append(first, partial...), second...)
	if diff := cmp.Diff(want, all, cmp.AllowUnexported(got{})); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	select {
	case extra := <-lines:
		t.Errorf("unexpected extra line %q", extra.raw)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	saved, _ := os.ReadFile(save.Name())
	if string(saved) != sent.String() {
		t.Errorf("save file holds %d bytes, want all %d sent", len(saved), sent.Len())
	}

	// Never pulsed: every open asked for DTR and RTS low or left them alone,
	// and nothing raised them afterwards.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	t.Logf("open modes: %q", rec.modes)
	for _, m := range rec.modes {
		if m != "DTR=false RTS=false" && m != "untouched" {
			t.Errorf("port opened with %s", m)
		}
	}
	if len(rec.modes) == 0 || rec.modes[0] != "DTR=false RTS=false" {
		t.Errorf("first open mode = %q, want DTR=false RTS=false", rec.modes)
	}
	if len(rec.calls) != 0 {
		t.Errorf("modem lines touched after open: %q", rec.calls)
	}
}

func TestLinkIdleFlushesPartialLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("pseudo-terminals are a Unix test fixture")
	}
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	k := &Link{Port: tty.Name(), Idle: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan string, 10)
	up := make(chan bool, 10)
	go k.Run(ctx, func(l *Line) { lines <- string(l.Raw) }, func(s LinkStatus) { up <- s.Up })
	<-up
	master.Write([]byte("esp32> "))
	select {
	case l := <-lines:
		if l != "esp32> " {
			t.Errorf("flushed %q", l)
		}
	case <-time.After(time.Minute):
		t.Fatal("partial line not flushed after the idle gap")
	}
}

func TestFindBoard(t *testing.T) {
	ports := []PortInfo{
		{Name: "/dev/ttyS0"},
		{Name: "/dev/ttyUSB0", IsUSB: true, VID: "10c4", PID: "ea60"},
		{Name: "/dev/ttyACM1", IsUSB: true, VID: "303a", PID: "1001"},
	}
	list := func(p []PortInfo) func() ([]PortInfo, error) {
		return func() ([]PortInfo, error) { return p, nil }
	}
	if got, err := FindBoard(list(ports)); err != nil || got != "/dev/ttyACM1" {
		t.Errorf("FindBoard = %q, %v; want the ESP32-S3's own USB port first", got, err)
	}
	if got, err := FindBoard(list(ports[:2])); err != nil || got != "/dev/ttyUSB0" {
		t.Errorf("FindBoard = %q, %v; want the CP210x bridge", got, err)
	}
	_, err := FindBoard(list([]PortInfo{{Name: "/dev/ttyS0"}, {Name: "/dev/ttyUSB3", IsUSB: true, VID: "067b", PID: "2303"}}))
	if !errors.Is(err, ErrNoBoard) || !strings.Contains(err.Error(), "/dev/ttyUSB3 (USB 067b:2303)") {
		t.Errorf("FindBoard error = %v; want ErrNoBoard listing what was found", err)
	}
}

func TestOpenErrorsSayWhatToDo(t *testing.T) {
	k := &Link{Port: "/dev/ttyACM0"}
	for _, tc := range []struct {
		code serial.PortErrorCode
		is   error
		say  string
	}{
		{serial.PermissionDenied, ErrPermission, "sudo usermod -aG dialout $USER"},
		{serial.PortBusy, ErrBusy, "another program"},
		{serial.PortNotFound, ErrNotFound, "plugged in"},
	} {
		k.open = func(string, *serial.Mode) (serial.Port, error) { return nil, &portErr{tc.code} }
		k.defaults()
		err := k.Run(context.Background(), func(*Line) {}, func(LinkStatus) {})
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("error = %v; want %v mentioning %q", err, tc.is, tc.say)
		}
	}
}

// portErr stands in for *serial.PortError (whose fields are unexported):
// explainOpen looks for the Code method.
type portErr struct{ code serial.PortErrorCode }

func (e *portErr) Error() string              { return "port error" }
func (e *portErr) Code() serial.PortErrorCode { return e.code }

// fakePort records modem-line calls; every other method is unused.
type fakePort struct {
	serial.Port
	calls []string
}

func (p *fakePort) SetDTR(v bool) error {
	p.calls = append(p.calls, fmt.Sprintf("DTR=%v", v))
	return nil
}
func (p *fakePort) SetRTS(v bool) error {
	p.calls = append(p.calls, fmt.Sprintf("RTS=%v", v))
	return nil
}

// TestHardResetSequence checks --reset pulls EN low through RTS and releases
// it with DTR (GPIO0) never raised, so the app boots rather than the ROM
// download mode.
func TestHardResetSequence(t *testing.T) {
	p := &fakePort{}
	start := time.Now()
	if err := HardReset(p, "/dev/ttyACM0", func() ([]PortInfo, error) {
		return []PortInfo{{Name: "/dev/ttyACM0", IsUSB: true, VID: "303a", PID: "1001"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"DTR=false", "RTS=true", "RTS=false", "DTR=false"}, p.calls); diff != "" {
		t.Errorf("modem calls (-want +got):\n%s", diff)
	}
	if held := time.Since(start); held < 200*time.Millisecond {
		t.Errorf("EN held low %v; the USB-Serial/JTAG port needs ≥ 200 ms", held)
	}
}

// modemOKPort reads and writes a real pty but accepts modem-line calls (a
// pty has no modem lines), recording them: the stand-in for a USB port.
type modemOKPort struct {
	serial.Port
	mu    sync.Mutex
	calls []string
}

func (p *modemOKPort) SetDTR(v bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf("DTR=%v", v))
	return nil
}

func (p *modemOKPort) SetRTS(v bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf("RTS=%v", v))
	return nil
}

// TestRequestReset: the TUI's reset key asks a running link for one hard
// reset. It is done between reads with the esptool sequence, reported as
// LinkStatus{Reset: true}, and reading goes on; on a port without modem
// lines (a plain pty) it is reported as ResetErr and the link stays up.
func TestRequestReset(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("pseudo-terminals are a Unix test fixture")
	}
	for _, tc := range []struct {
		name    string
		modemOK bool
	}{{"usb port", true}, {"pty without modem lines", false}} {
		t.Run(tc.name, func(t *testing.T) {
			master, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminals here: %v", err)
			}
			defer master.Close()
			defer tty.Close()
			var port *modemOKPort
			k := &Link{Port: tty.Name(), Idle: 50 * time.Millisecond}
			if tc.modemOK {
				k.open = func(path string, mode *serial.Mode) (serial.Port, error) {
					p, err := serial.Open(path, &serial.Mode{BaudRate: mode.BaudRate})
					if err != nil {
						return nil, err
					}
					port = &modemOKPort{Port: p}
					return port, nil
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			lines := make(chan string, 10)
			status := make(chan LinkStatus, 10)
			go k.Run(ctx, func(l *Line) { lines <- string(l.Text) }, func(s LinkStatus) { status <- s })
			if s := <-status; !s.Up || s.Reset {
				t.Fatalf("first status %+v, want up without reset", s)
			}
			if !k.RequestReset() {
				t.Fatal("RequestReset refused with nothing pending")
			}
			var s LinkStatus
			select {
			case s = <-status:
			case <-time.After(time.Minute):
				t.Fatal("no status after RequestReset")
			}
			if !s.Up {
				t.Errorf("link reported down after a reset request: %+v", s)
			}
			if tc.modemOK {
				if !s.Reset || s.ResetErr != nil {
					t.Errorf("status %+v, want Reset without error", s)
				}
				port.mu.Lock()
				calls := append([]string(nil), port.calls...)
				port.mu.Unlock()
				if diff := cmp.Diff([]string{"DTR=false", "RTS=true", "RTS=false", "DTR=false"}, calls); diff != "" {
					t.Errorf("modem calls (-want +got):\n%s", diff)
				}
			} else if s.Reset || s.ResetErr == nil || !strings.Contains(s.ResetErr.Error(), "RST button") {
				t.Errorf("status %+v, want ResetErr naming the RST button", s)
			}
			// Reading goes on after the reset.
			master.Write([]byte("ESP-ROM:esp32s3-20210327\r\n"))
			select {
			case l := <-lines:
				if l != "ESP-ROM:esp32s3-20210327" {
					t.Errorf("line after reset %q", l)
				}
			case <-time.After(time.Minute):
				t.Fatal("no line after the reset")
			}
		})
	}
}
