package tune

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/tailpath/tailpath/sysctl"
)

// The crypto ceiling: how fast this CPU seals and opens WireGuard packets
// with ChaCha20-Poly1305, the AEAD wireguard-go uses for every data
// packet (golang.org/x/crypto/chacha20poly1305; Tailscale's wireguard-go
// since v1.100 uses its own 32-bit Arm assembly on GOARCH=arm,
// device/aead_arm.go). Buffers cannot make a tunnel faster than its CPU
// can encrypt.

// Measurement constants.
const (
	// CryptoPacket is the plaintext size measured: Tailscale's default TUN
	// MTU (net/tstun.DefaultTUNMTU), a full tailnet packet.
	CryptoPacket = 1280
	// CryptoBudget is how long MeasureCrypto runs: half on one core, half
	// on all of them.
	CryptoBudget = time.Second
)

// CryptoMeasure is one measurement of this machine's ChaCha20-Poly1305
// speed, by this tailpath build.
type CryptoMeasure struct {
	// GOARCH is the architecture tailpath was built for: the code that
	// ran (assembly on amd64 with AVX2, arm64, ppc64le, s390x; generic Go
	// elsewhere, 32-bit Arm and MIPS included).
	GOARCH string `json:"goarch"`
	// Cores is how many goroutines ran at once for AllCores (GOMAXPROCS).
	Cores int `json:"cores"`
	// Packet is the plaintext size, bytes.
	Packet int `json:"packet_bytes"`
	// OneCore and AllCores are the ceilings in bits per second of
	// plaintext: packets sealed or opened per second × Packet × 8, each
	// packet sealed and then opened (a seal and an open cost the same:
	// the same keystream and MAC over the same bytes), on one goroutine
	// and on Cores goroutines.
	OneCore  float64 `json:"one_core_bps"`
	AllCores float64 `json:"all_cores_bps"`
	// Took is how long the measurement ran.
	Took time.Duration `json:"took_ns"`
	// Fixed marks a measurement a test or a caller gave instead of one
	// made here (for deterministic output).
	Fixed bool `json:"fixed,omitempty"`
}

// MeasureCrypto seals and opens CryptoPacket-byte packets with
// ChaCha20-Poly1305 for budget/2 on one goroutine, then budget/2 on
// GOMAXPROCS goroutines, and returns the ceilings. Every open is checked,
// so nothing can be optimised away. Errors: ctx's, or an AEAD that fails
// to open what it sealed (a broken build).
func MeasureCrypto(ctx context.Context, budget time.Duration) (CryptoMeasure, error) {
	if budget <= 0 {
		budget = CryptoBudget
	}
	start := time.Now()
	m := CryptoMeasure{GOARCH: runtime.GOARCH, Cores: runtime.GOMAXPROCS(0), Packet: CryptoPacket}
	one, err := sealOpenRate(ctx, 1, budget/2)
	if err != nil {
		return m, err
	}
	all, err := sealOpenRate(ctx, m.Cores, budget/2)
	if err != nil {
		return m, err
	}
	m.OneCore, m.AllCores = one, all
	m.Took = time.Since(start)
	return m, nil
}

// sealOpenRate runs n goroutines sealing and opening packets for d and
// returns the ceiling in bits/s (see CryptoMeasure.OneCore).
func sealOpenRate(ctx context.Context, n int, d time.Duration) (float64, error) {
	var pairs atomic.Int64
	var failed atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sealOpenLoop(ctx, deadline, &pairs); err != nil {
				failed.Store(err)
			}
		}()
	}
	begin := time.Now()
	wg.Wait()
	took := time.Since(begin)
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if took <= 0 {
		return 0, errors.New("crypto measurement: no time elapsed")
	}
	ops := 2 * float64(pairs.Load())
	return ops / took.Seconds() * CryptoPacket * 8, nil
}

// sealOpenLoop seals a packet and opens it again until the deadline,
// checking the clock every 32 packets, adding the pairs done to pairs.
func sealOpenLoop(ctx context.Context, deadline time.Time, pairs *atomic.Int64) error {
	s, err := newSealer()
	if err != nil {
		return err
	}
	for {
		for range 32 {
			if err := s.pair(); err != nil {
				return err
			}
		}
		pairs.Add(32)
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return nil
		}
	}
}

// sealer seals CryptoPacket-byte packets under one key, as a WireGuard
// peer's send side does, and opens them again.
type sealer struct {
	aead                  cipher.AEAD
	plain, sealed, opened []byte
	// nonce is WireGuard's: 4 zero bytes and a little-endian 64-bit
	// counter (device/send.go); the header it authenticates is not
	// additional data, so neither is anything here.
	nonce   []byte
	counter uint64
}

func newSealer() (*sealer, error) {
	key := make([]byte, chacha20poly1305.KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		return nil, err
	}
	s := &sealer{aead: aead, plain: make([]byte, CryptoPacket), nonce: make([]byte, chacha20poly1305.NonceSize)}
	rand.Read(s.plain)
	s.sealed = make([]byte, 0, CryptoPacket+aead.Overhead())
	s.opened = make([]byte, 0, CryptoPacket)
	return s, nil
}

// pair seals the next packet and opens it, checking that what came out is
// what went in.
func (s *sealer) pair() error {
	s.counter++
	for i := range 8 {
		s.nonce[4+i] = byte(s.counter >> (8 * i))
	}
	s.sealed = s.aead.Seal(s.sealed[:0], s.nonce, s.plain, nil)
	var err error
	s.opened, err = s.aead.Open(s.opened[:0], s.nonce, s.sealed, nil)
	if err != nil || len(s.opened) != len(s.plain) || s.opened[0] != s.plain[0] || s.opened[len(s.opened)-1] != s.plain[len(s.plain)-1] {
		return fmt.Errorf("crypto measurement: ChaCha20-Poly1305 failed to open what it sealed (%v)", err)
	}
	return nil
}

// measureOnce is this process's one measurement: tune runs it once per
// invocation; the Tuning pane and serve, which gather again and again,
// keep it for the process's lifetime.
var measureOnce struct {
	sync.Mutex
	done bool
	m    CryptoMeasure
	err  error
}

// MeasureCryptoOnce is MeasureCrypto(ctx, CryptoBudget) the first time it
// succeeds in this process, and that result after. progress, when not
// nil, is told before a measurement starts.
func MeasureCryptoOnce(ctx context.Context, progress func(string)) (CryptoMeasure, error) {
	measureOnce.Lock()
	defer measureOnce.Unlock()
	if measureOnce.done {
		return measureOnce.m, measureOnce.err
	}
	if progress != nil {
		progress(fmt.Sprintf("measuring this CPU's ChaCha20-Poly1305 speed (about %v)…", CryptoBudget))
	}
	m, err := MeasureCrypto(ctx, CryptoBudget)
	if err != nil && ctx.Err() != nil {
		return m, err // cancelled: try again next time
	}
	measureOnce.done, measureOnce.m, measureOnce.err = true, m, err
	return m, err
}

// Crypto is the crypto ceiling a report judges by: what was measured here,
// and an estimate for the CPU the report is about when the measurement
// does not stand for it (a --root copy of another machine, or a
// tailscaled built for another word size than tailpath).
type Crypto struct {
	// Measured is this machine's measurement; nil when it failed (Err).
	Measured *CryptoMeasure `json:"measured,omitempty"`
	Err      string         `json:"error,omitempty"`
	// Here is true when the measurement is of the machine the report is
	// about, by code of the same kind tailscaled runs there.
	Here bool `json:"here"`
	// Estimate is the ceiling estimated for the report's CPU from a
	// published benchmark; nil when none applies.
	Estimate *CryptoEstimate `json:"estimate,omitempty"`
	// Notes say why the measurement does not stand for tailscaled, or
	// what else about the CPU matters.
	Notes []string `json:"notes,omitempty"`
}

// CryptoEstimate is a ceiling estimated, not measured: a published
// benchmark of the same processor (or class) running the same code.
type CryptoEstimate struct {
	// For names what it is for ("a Raspberry Pi 3 Model B+ (Cortex-A53,
	// 1.4 GHz), tailscaled built for 32-bit Arm").
	For string `json:"for"`
	// PerCoreLow and PerCoreHigh bound the ceiling of one core, bits/s
	// (equal when one figure applies).
	PerCoreLow  float64 `json:"per_core_low_bps"`
	PerCoreHigh float64 `json:"per_core_high_bps"`
	// Cores is how many cores the estimate is multiplied by (wireguard-go
	// encrypts on one goroutine per CPU: device.NewDevice starts
	// runtime.NumCPU() RoutineEncryption workers).
	Cores int `json:"cores"`
	// Why says which code runs and where the figures come from.
	Why string `json:"why"`
	// Source is the benchmark's address.
	Source string `json:"source"`
	// Better is what a 64-bit build does on the same CPU, bits/s per
	// core; 0 when no figure is published or it is already 64-bit.
	Better float64 `json:"better_per_core_bps,omitempty"`
	// Newer is what a newer tailscaled does on the same CPU (Tailscale
	// 1.100's 32-bit Arm assembly), bits/s per core, when the one here is
	// older or its version unknown; 0 otherwise.
	Newer float64 `json:"newer_per_core_bps,omitempty"`
}

// Ceiling is the ceiling the verdict uses, bits/s, and how it is worded:
// the estimate's upper bound over all cores where one applies (the best
// this CPU could do), else the measurement over all cores; 0 when neither
// is known.
func (c Crypto) Ceiling() (float64, string) {
	if e := c.Estimate; e != nil {
		cores := max(e.Cores, 1)
		return e.PerCoreHigh * float64(cores), "estimated for " + e.For
	}
	if m := c.Measured; m != nil && c.Here {
		return m.AllCores, fmt.Sprintf("measured here on %d core(s)", m.Cores)
	}
	return 0, ""
}

// cryptoFacts judges the measurement against the CPU the report is about.
// cpu is the report's CPU (nil when unknown), here whether the report is
// about this machine, version tailscaled's version where known.
func cryptoFacts(m *CryptoMeasure, merr error, cpu *sysctl.CPU, here bool, version string) Crypto {
	c := Crypto{Measured: m}
	if merr != nil {
		c.Err = merr.Error()
	}
	c.Here = here && m != nil
	if cpu == nil {
		return c
	}
	bin := ""
	if cpu.Tailscaled != nil {
		bin = cpu.Tailscaled.Arch
	}
	if here && m != nil && bin != "" && bin != m.GOARCH {
		c.Here = false
		c.Notes = append(c.Notes, fmt.Sprintf("measured with tailpath's %s build; tailscaled here (%s) is built for %s, which runs other code", m.GOARCH, cpu.Tailscaled.Path, bin))
	}
	if here && m != nil && m.GOARCH == "arm" && (bin == "" || bin == "arm") {
		// tailpath's 32-bit Arm build runs x/crypto's generic code; a
		// tailscaled of 1.100 or later runs wireguard-go's assembly, so
		// the measurement stands for it only when it is older.
		if after, known := versionAtLeast(version, 1, 100); !known || after {
			c.Here = false
			c.Notes = append(c.Notes, "tailpath's 32-bit Arm build measured x/crypto's generic Go code; tailscaled 1.100 and later use wireguard-go's 32-bit Arm assembly, up to about 4× faster (tailscale/wireguard-go#58)")
		}
	}
	if e := estimateFor(*cpu, version); e != nil && (!here || !c.Here) {
		c.Estimate = e
	}
	return c
}

// cryptoRow is a published benchmark of wireguard-go's AEAD on one
// processor: MB/s of Seal at 1420 bytes on one core, per code path.
type cryptoRow struct {
	board   string // the prefix of /proc/cpuinfo's Model ("Raspberry Pi 3 Model B Plus")
	core    string // the core (CPU.Core)
	name    string // how the estimate names it
	generic float64
	asm     float64 // wireguard-go's 32-bit Arm assembly (Tailscale ≥ 1.100)
	arm64   float64 // a 64-bit build on the same board; 0 when it has no AArch64
}

// raspberryPi are the figures of tailscale/wireguard-go#58 (tsasm/arm's
// README: "AEAD Seal at 1420 B, 3 s benchtime", MB/s, median of three).
var raspberryPi = []cryptoRow{
	{"Raspberry Pi 3 Model B Plus", "Cortex-A53", "a Raspberry Pi 3 Model B+ (Cortex-A53, 1.4 GHz)", 22, 84.6, 112.6},
	{"Raspberry Pi 4 Model B", "Cortex-A72", "a Raspberry Pi 4 Model B (Cortex-A72, 1.5 GHz)", 50, 132.3, 159.4},
	{"Raspberry Pi 2 Model B Rev 1.2", "Cortex-A53", "a Raspberry Pi 2 Model B v1.2 (Cortex-A53, 900 MHz)", 14.1, 54.3, 72.4},
	{"Raspberry Pi 2 Model B Rev 1.1", "Cortex-A7", "a Raspberry Pi 2 Model B v1.1 (Cortex-A7, 900 MHz)", 10.8, 30.7, 0},
}

const (
	srcArmAsm = "https://github.com/tailscale/wireguard-go/pull/58"
	srcMIPS   = "https://github.com/tailscale/wireguard-go/pull/64"
	// mipsLow, mipsHigh: "falls back to a slow pure-Go path -- ~3-9 MB/s
	// depending on chip" (tailscale/wireguard-go#64, still open: no
	// release has MIPS assembly).
	mipsLow, mipsHigh = 3.0, 9.0
)

// mbps turns MB/s (10⁶ bytes) into bits/s.
func mbps(mb float64) float64 { return mb * 1e6 * 8 }

// estimateFor estimates the ceiling of tailscaled on cpu from a published
// benchmark where one applies: a Raspberry Pi of wireguard-go#58's table
// running a 32-bit Arm tailscaled (or a 32-bit kernel, whose userland is
// 32-bit too), or any MIPS (wireguard-go#64). nil otherwise: the
// measurement, or nothing, stands.
func estimateFor(cpu sysctl.CPU, version string) *CryptoEstimate {
	cores := max(cpu.Cores, 1)
	fam := cpu.Family()
	binArch := ""
	if cpu.Tailscaled != nil {
		binArch = cpu.Tailscaled.Arch
	}
	switch {
	case fam == "mips" || fam == "mips64" || binArch == "mips" || binArch == "mipsle" || binArch == "mips64" || binArch == "mips64le":
		return &CryptoEstimate{
			For:        cpu.Name() + ", tailscaled for MIPS",
			PerCoreLow: mbps(mipsLow), PerCoreHigh: mbps(mipsHigh), Cores: cores,
			Why:    "x/crypto has no ChaCha20-Poly1305 assembly for any MIPS GOARCH, and no Tailscale release adds one (tailscale/wireguard-go#64 is open), so generic Go encrypts every packet: about 3-9 MB/s per core depending on the chip",
			Source: srcMIPS,
		}
	}
	arm32 := binArch == "arm" || binArch == "" && cpu.KernelBits == 32 && fam == "arm"
	arm64 := binArch == "arm64" || binArch == "" && fam == "arm64"
	if arm64 && cpu.Core != "" {
		// A 64-bit build: wireguard-go#58's "arm64 native" column, by core
		// (the board's clock may differ from the Pi's).
		for _, row := range raspberryPi {
			if row.core != cpu.Core || row.arm64 == 0 {
				continue
			}
			return &CryptoEstimate{
				For:        "a " + row.core + ", tailscaled built for arm64",
				PerCoreLow: mbps(row.arm64), PerCoreHigh: mbps(row.arm64), Cores: cores,
				Why:    fmt.Sprintf("x/crypto's arm64 ChaCha20 assembly with generic Poly1305: %.1f MB/s per core on %s; this board's clock may differ", row.arm64, row.name),
				Source: srcArmAsm,
			}
		}
		return nil
	}
	if !arm32 {
		return nil
	}
	for _, row := range raspberryPi {
		if len(cpu.Board) < len(row.board) || cpu.Board[:len(row.board)] != row.board || cpu.Core != "" && cpu.Core != row.core {
			continue
		}
		e := &CryptoEstimate{For: row.name + ", tailscaled built for 32-bit Arm", Cores: cores, Source: srcArmAsm, Better: mbps(row.arm64)}
		switch after, known := versionAtLeast(version, 1, 100); {
		case known && after:
			e.PerCoreLow, e.PerCoreHigh = mbps(row.asm), mbps(row.asm)
			e.Why = fmt.Sprintf("tailscaled %s uses wireguard-go's 32-bit Arm assembly: %.1f MB/s per core", version, row.asm)
		case known:
			e.PerCoreLow, e.PerCoreHigh, e.Newer = mbps(row.generic), mbps(row.generic), mbps(row.asm)
			e.Why = fmt.Sprintf("tailscaled %s predates wireguard-go's 32-bit Arm assembly (1.100), so x/crypto's generic Go encrypts: %.1f MB/s per core", version, row.generic)
		default:
			e.PerCoreLow, e.PerCoreHigh, e.Newer = mbps(row.generic), mbps(row.asm), mbps(row.asm)
			e.Why = fmt.Sprintf("%.1f MB/s per core with x/crypto's generic Go (tailscaled before 1.100), %.1f MB/s with wireguard-go's 32-bit Arm assembly (1.100 and later); tailscaled's version is not known here", row.generic, row.asm)
		}
		if row.arm64 > 0 {
			e.Why += fmt.Sprintf("; a 64-bit build on the same board does %.1f MB/s", row.arm64)
		}
		return e
	}
	return nil
}

// versionAtLeast reports whether a Tailscale version ("1.58.2",
// "1.102.5-t…", "1.73.101") is at least major.minor; known is false when
// it does not parse.
func versionAtLeast(v string, major, minor int) (after, known bool) {
	ma, mi, ok := sysctl.ParseKernelVersion(v) // the same N.N prefix
	if !ok {
		return false, false
	}
	return ma > major || ma == major && mi >= minor, true
}

// cpuFacts reads the CPU, tailscaled's version and the crypto ceiling
// into r: the measurement is this machine's (in.Crypto, else once per
// process), judged against the CPU the report is about.
func (r *Report) cpuFacts(ctx context.Context, in Inputs, dp *DaemonPrefs) {
	if c, err := in.Host.CPU(); err == nil {
		r.CPU = &c
	} else {
		r.CPUErr = err.Error()
	}
	switch {
	case dp != nil && dp.Version != "":
		r.Tailscale, r.TailscaleFrom = cleanVersion(dp.Version), "tailscaled (LocalAPI Status.Version)"
	case in.Sandbox:
		r.Tailscale, r.TailscaleFrom = rootTailscaleVersion(in.Host)
	}
	measure := in.Crypto
	if measure == nil {
		measure = func(ctx context.Context) (CryptoMeasure, error) { return MeasureCryptoOnce(ctx, in.Progress) }
	}
	m, err := measure(ctx)
	var mp *CryptoMeasure
	if err == nil {
		mp = &m
	}
	c := cryptoFacts(mp, err, r.CPU, !in.Sandbox, r.Tailscale)
	r.Crypto = &c
}
