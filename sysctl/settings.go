package sysctl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
)

// The keys tailpath reads. The first three are per network namespace since
// Linux 4.15; the net.core ones are global.
const (
	KeyTCPRmem            = "net.ipv4.tcp_rmem"
	KeyTCPWmem            = "net.ipv4.tcp_wmem"
	KeyRmemMax            = "net.core.rmem_max"
	KeyWmemMax            = "net.core.wmem_max"
	KeyCongestionControl  = "net.ipv4.tcp_congestion_control"
	KeyAvailableCC        = "net.ipv4.tcp_available_congestion_control"
	KeyDefaultQdisc       = "net.core.default_qdisc"
	KeyMTUProbing         = "net.ipv4.tcp_mtu_probing"
	KeySlowStartAfterIdle = "net.ipv4.tcp_slow_start_after_idle"
	KeyNotsentLowat       = "net.ipv4.tcp_notsent_lowat"
	KeyTCPMem             = "net.ipv4.tcp_mem"
	KeyOSRelease          = "kernel.osrelease"
)

// Keys lists every key Read fills, in display order.
var Keys = []string{
	KeyTCPRmem, KeyTCPWmem, KeyRmemMax, KeyWmemMax,
	KeyCongestionControl, KeyAvailableCC, KeyDefaultQdisc,
	KeyMTUProbing, KeySlowStartAfterIdle, KeyNotsentLowat, KeyTCPMem,
}

// Triple is a tcp_rmem/tcp_wmem value: per-socket buffer sizes in bytes.
// Min is guaranteed under memory pressure, Default is the initial size,
// Max is the ceiling autotuning may grow to.
type Triple struct {
	Min     int64 `json:"min"`
	Default int64 `json:"default"`
	Max     int64 `json:"max"`
}

// String renders the triple the way sysctl.conf and /proc/sys accept it:
// "4096 131072 50000000".
func (t Triple) String() string { return fmt.Sprintf("%d %d %d", t.Min, t.Default, t.Max) }

// Validate checks 0 < Min ≤ Default ≤ Max. Errors wrap ErrInvalid.
func (t Triple) Validate() error {
	if t.Min <= 0 || t.Default <= 0 || t.Max <= 0 {
		return fmt.Errorf("%w: buffer sizes must be positive byte counts, got %q", ErrInvalid, t.String())
	}
	if !(t.Min <= t.Default && t.Default <= t.Max) {
		return fmt.Errorf("%w: want min ≤ default ≤ max, got %q", ErrInvalid, t.String())
	}
	if t.Max > maxBufferBytes {
		return fmt.Errorf("%w: max %d exceeds the kernel's limit %d (INT_MAX)", ErrInvalid, t.Max, int64(maxBufferBytes))
	}
	return nil
}

// maxBufferBytes is INT_MAX: the kernel stores socket buffer sizes in an int.
const maxBufferBytes = 1<<31 - 1

// ParseTriple parses "4096 131072 50000000" (any whitespace) and validates
// it. Errors wrap ErrInvalid.
func ParseTriple(s string) (Triple, error) {
	t, err := parseKernelTriple(s)
	if err != nil {
		return Triple{}, err
	}
	if err := t.Validate(); err != nil {
		return Triple{}, err
	}
	return t, nil
}

// parseInt parses a single-integer sysctl. Errors wrap ErrInvalid.
func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a whole number", ErrInvalid, strings.TrimSpace(s))
	}
	return n, nil
}

// Settings is one reading of the tuning keys. A key the kernel lacks is
// absent from Raw and listed in Missing with its error; its typed field is
// the zero value.
type Settings struct {
	TCPRmem Triple `json:"tcp_rmem"`
	TCPWmem Triple `json:"tcp_wmem"`
	// RmemMax and WmemMax cap SO_RCVBUF/SO_SNDBUF set by applications, bytes.
	RmemMax int64 `json:"rmem_max"`
	WmemMax int64 `json:"wmem_max"`
	// CongestionControl is the default algorithm for new sockets ("cubic", "bbr").
	CongestionControl string `json:"congestion_control"`
	// AvailableCC lists algorithms usable now (built in or loaded).
	AvailableCC []string `json:"available_congestion_control"`
	// DefaultQdisc is the qdisc new interfaces get ("fq", "fq_codel", "pfifo_fast").
	DefaultQdisc string `json:"default_qdisc"`
	// MTUProbing: 0 off, 1 on after an ICMP black hole is detected, 2 always.
	MTUProbing int64 `json:"tcp_mtu_probing"`
	// SlowStartAfterIdle: 1 (default) restarts slow start after an idle period.
	SlowStartAfterIdle int64 `json:"tcp_slow_start_after_idle"`
	// NotsentLowat is the unsent-bytes threshold for writability, bytes
	// (4294967295 means unlimited).
	NotsentLowat int64 `json:"tcp_notsent_lowat"`
	// TCPMem is net.ipv4.tcp_mem in pages: low, pressure, max for all TCP
	// sockets together (read only; tailpath never writes it).
	TCPMem Triple `json:"tcp_mem"`
	// Raw holds each key's value as read, whitespace-normalised.
	Raw map[string]string `json:"raw"`
	// Missing maps keys that could not be read to why (ErrNoKey usually).
	Missing map[string]string `json:"missing,omitempty"`
}

// Read reads every key in Keys. It fails only when nothing can be read
// (ErrNoProc) or a value the kernel printed does not parse (ErrInvalid);
// individual missing keys are recorded in Settings.Missing.
func (h Host) Read() (Settings, error) {
	r, err := h.openSys()
	if err != nil {
		return Settings{}, err
	}
	defer r.Close()
	s := Settings{Raw: map[string]string{}}
	for _, k := range Keys {
		p, _ := keyPath(k)
		v, err := readIn(r, k, p)
		if err != nil {
			if s.Missing == nil {
				s.Missing = map[string]string{}
			}
			// ErrNoKey on an older kernel, or permission/I/O trouble:
			// reported per key so the rest still shows.
			s.Missing[k] = safetext.Clean(err.Error())
			continue
		}
		v = Normalize(v)
		s.Raw[k] = v
		if err := s.set(k, v); err != nil {
			return s, fmt.Errorf("sysctl %s: %w", k, err)
		}
	}
	return s, nil
}

func (s *Settings) set(k, v string) error {
	var err error
	switch k {
	case KeyTCPRmem:
		s.TCPRmem, err = parseKernelTriple(v)
	case KeyTCPWmem:
		s.TCPWmem, err = parseKernelTriple(v)
	case KeyRmemMax:
		s.RmemMax, err = parseInt(v)
	case KeyWmemMax:
		s.WmemMax, err = parseInt(v)
	case KeyCongestionControl:
		s.CongestionControl = v
	case KeyAvailableCC:
		s.AvailableCC = strings.Fields(v)
	case KeyDefaultQdisc:
		s.DefaultQdisc = v
	case KeyMTUProbing:
		s.MTUProbing, err = parseInt(v)
	case KeySlowStartAfterIdle:
		s.SlowStartAfterIdle, err = parseInt(v)
	case KeyNotsentLowat:
		s.NotsentLowat, err = parseInt(v)
	case KeyTCPMem:
		s.TCPMem, err = parseKernelTriple(v)
	}
	return err
}

// parseKernelTriple parses a triple the kernel printed; unlike ParseTriple it
// does not insist on min ≤ default ≤ max, because a misconfigured host must
// still be readable (the recommendation then fixes it).
func parseKernelTriple(s string) (Triple, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return Triple{}, fmt.Errorf("%w: want three byte counts \"min default max\", got %q", ErrInvalid, s)
	}
	var v [3]int64
	for i, x := range f {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return Triple{}, fmt.Errorf("%w: %q in %q is not a whole number of bytes", ErrInvalid, x, s)
		}
		v[i] = n
	}
	return Triple{v[0], v[1], v[2]}, nil
}

// HasCC reports whether name is in the available congestion control list.
func (s Settings) HasCC(name string) bool {
	for _, c := range s.AvailableCC {
		if c == name {
			return true
		}
	}
	return false
}
