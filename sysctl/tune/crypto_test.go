package tune

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/sysctl"
)

// TestMeasureCrypto: a short measurement seals and opens real packets on
// one goroutine and on GOMAXPROCS, and reports a ceiling for each (no
// assertion on how fast: the suite runs on busy machines).
func TestMeasureCrypto(t *testing.T) {
	m, err := MeasureCrypto(context.Background(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.OneCore <= 0 || m.AllCores <= 0 || m.Cores != runtime.GOMAXPROCS(0) || m.Packet != CryptoPacket || m.GOARCH != runtime.GOARCH || m.Took <= 0 || m.Fixed {
		t.Errorf("MeasureCrypto = %+v", m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasureCrypto(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

// BenchmarkSealOpen1280 is one 1,280-byte packet sealed and opened with
// ChaCha20-Poly1305 (x/crypto, as wireguard-go), the unit of the crypto
// ceiling: b.SetBytes counts the packet once per seal and once per open.
func BenchmarkSealOpen1280(b *testing.B) {
	s, err := newSealer()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * CryptoPacket)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.pair(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMeasureCrypto is the whole measurement tune runs once per
// invocation: its time is the budget, CryptoBudget, by design.
func BenchmarkMeasureCrypto(b *testing.B) {
	for b.Loop() {
		if _, err := MeasureCrypto(context.Background(), CryptoBudget); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCryptoEstimates: an estimate only where a published benchmark of the
// same board (or core) running the same code applies, and its figures.
func TestCryptoEstimates(t *testing.T) {
	pi3 := sysctl.CPU{Board: "Raspberry Pi 3 Model B Plus Rev 1.3", Core: "Cortex-A53", Cores: 4, KernelBits: 32, CPUBits: 64,
		Tailscaled: &sysctl.Binary{Path: "/usr/sbin/tailscaled", Bits: 32, Arch: "arm"}}
	tests := []struct {
		name    string
		cpu     sysctl.CPU
		version string
		lo, hi  float64 // MB/s per core; 0 for no estimate
		newer   float64
	}{
		{"Pi 3B+ 32-bit, tailscaled before 1.100", pi3, "1.58.2", 22, 22, 84.6},
		{"Pi 3B+ 32-bit, tailscaled 1.102", pi3, "1.102.5", 84.6, 84.6, 0},
		{"Pi 3B+ 32-bit, version unknown", pi3, "", 22, 84.6, 84.6},
		{"MIPS", sysctl.CPU{Model: "MIPS 74Kc V4.0", Cores: 1, Tailscaled: &sysctl.Binary{Bits: 32, Arch: "mipsle"}}, "1.80.3", 3, 9, 0},
		{"arm64 Cortex-A53", sysctl.CPU{Core: "Cortex-A53", Cores: 4, KernelBits: 64, Tailscaled: &sysctl.Binary{Bits: 64, Arch: "arm64"}}, "", 112.6, 112.6, 0},
		{"32-bit Arm on a board nobody benchmarked", sysctl.CPU{Board: "Some router", Core: "Cortex-A9", Cores: 2, KernelBits: 32, Tailscaled: &sysctl.Binary{Bits: 32, Arch: "arm"}}, "", 0, 0, 0},
		{"x86-64", sysctl.CPU{Model: "AMD EPYC", Cores: 2, KernelBits: 64, Tailscaled: &sysctl.Binary{Bits: 64, Arch: "amd64"}}, "", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := estimateFor(tt.cpu, tt.version)
			if tt.hi == 0 {
				if e != nil {
					t.Errorf("estimate %+v, want none", e)
				}
				return
			}
			if e == nil {
				t.Fatal("no estimate")
			}
			if e.PerCoreLow != mbps(tt.lo) || e.PerCoreHigh != mbps(tt.hi) || e.Newer != mbps(tt.newer) || e.Cores != max(tt.cpu.Cores, 1) || !strings.HasPrefix(e.Source, "https://github.com/tailscale/wireguard-go/pull/") {
				t.Errorf("estimate %+v, want %v to %v MB/s per core (newer %v)", e, tt.lo, tt.hi, tt.newer)
			}
		})
	}
}

// TestCryptoFactsHere: the measurement stands for this machine only when
// tailscaled here is built for what tailpath is; for a root it never does.
func TestCryptoFactsHere(t *testing.T) {
	m := &CryptoMeasure{GOARCH: runtime.GOARCH, Cores: 2, Packet: CryptoPacket, OneCore: 1e9, AllCores: 2e9}
	same := sysctl.CPU{Cores: 2, Tailscaled: &sysctl.Binary{Path: "/usr/sbin/tailscaled", Bits: 64, Arch: runtime.GOARCH}}
	other := sysctl.CPU{Cores: 2, Tailscaled: &sysctl.Binary{Path: "/usr/sbin/tailscaled", Bits: 32, Arch: "arm"}}
	if c := cryptoFacts(m, nil, &same, true, ""); !c.Here || len(c.Notes) != 0 {
		t.Errorf("same build: %+v, want Here without notes", c)
	}
	if c := cryptoFacts(m, nil, &other, true, ""); c.Here || len(c.Notes) == 0 || !strings.Contains(c.Notes[0], "tailscaled here (/usr/sbin/tailscaled) is built for arm") {
		t.Errorf("other build: %+v, want not Here and a note", c)
	}
	if c := cryptoFacts(m, nil, &same, false, ""); c.Here {
		t.Errorf("a root: %+v, want not Here", c)
	}
	if ceil, _ := (Crypto{Measured: m}).Ceiling(); ceil != 0 {
		t.Errorf("a measurement that is not here gives ceiling %v, want none", ceil)
	}
	if c := cryptoFacts(nil, errors.New("boom"), &same, true, ""); c.Err != "boom" || c.Here {
		t.Errorf("failed measurement: %+v", c)
	}
}

// TestCryptoFacts32BitArm: tailpath's 32-bit Arm build measures the
// generic code, which stands for a tailscaled older than 1.100 only; a
// newer or unknown one runs wireguard-go's assembly, and on a board with
// a published figure that estimate is used instead.
func TestCryptoFacts32BitArm(t *testing.T) {
	m := &CryptoMeasure{GOARCH: "arm", Cores: 4, Packet: CryptoPacket, OneCore: 150e6, AllCores: 600e6}
	pi3 := sysctl.CPU{Board: "Raspberry Pi 3 Model B Plus Rev 1.3", Core: "Cortex-A53", Cores: 4, KernelBits: 32, CPUBits: 64,
		Tailscaled: &sysctl.Binary{Path: "/usr/sbin/tailscaled", Bits: 32, Arch: "arm"}}
	if c := cryptoFacts(m, nil, &pi3, true, "1.58.2"); !c.Here || c.Estimate != nil {
		t.Errorf("tailscaled 1.58.2: %+v, want the measurement to stand", c)
	}
	c := cryptoFacts(m, nil, &pi3, true, "1.102.5")
	if c.Here || c.Estimate == nil || c.Estimate.PerCoreHigh != mbps(84.6) || len(c.Notes) == 0 {
		t.Errorf("tailscaled 1.102.5: %+v, want the assembly's estimate and a note", c)
	}
	if ceil, how := c.Ceiling(); ceil != 4*mbps(84.6) || !strings.HasPrefix(how, "estimated for") {
		t.Errorf("ceiling %v (%s)", ceil, how)
	}
}
