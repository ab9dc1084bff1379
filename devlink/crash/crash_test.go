package crash

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseReset(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Reset
	}{
		{"rst:0x15 (USB_UART_CHIP_RESET),boot:0x28 (SPI_FAST_FLASH_BOOT)", Reset{Code: 0x15, Name: "USB_UART_CHIP_RESET", Reason: "USB-UART reset (the host toggled DTR/RTS)", BootMode: 0x28}},
		{"rst:0xc (RTC_SW_CPU_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)", Reset{Code: 0xc, Name: "RTC_SW_CPU_RST", Reason: "software CPU reset (panic or esp_restart)", BootMode: 0x8}},
		{"rst:0xf (BROWN_OUT_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)", Reset{Code: 0xf, Name: "BROWN_OUT_RST", Reason: "brownout: supply voltage dropped", BootMode: 0x8}},
		{"xx rst:0x1 (POWERON),boot:0x2b (SPI_FAST_FLASH_BOOT)", Reset{Code: 1, Name: "POWERON", Reason: "power-on reset", BootMode: 0x2b}},
		{"rst:0x99", Reset{Code: 0x99, Reason: "unknown reset 0x99", BootMode: -1}},
	} {
		got, err := ParseReset([]byte(tc.in))
		if err != nil {
			t.Errorf("ParseReset(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseReset(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	if _, err := ParseReset([]byte("rst:0xzz")); err == nil {
		t.Error("ParseReset accepted a non-hex code")
	}
}

func TestParseBacktrace(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Backtrace
		wantErr bool
	}{
		{"Backtrace: 0x400d6b5b:0x3fc9bd60 0x400d6c27:0x3fc9bd90 0x40380b51:0x3fc9bdc0", Backtrace{Frames: []Frame{{0x400d6b5b, 0x3fc9bd60}, {0x400d6c27, 0x3fc9bd90}, {0x40380b51, 0x3fc9bdc0}}}, false},
		{"Backtrace: 0x40081a2b:0x3ffb5a10 0x400d2b0c:0x3ffb5a30 |<-CORRUPTED", Backtrace{Frames: []Frame{{0x40081a2b, 0x3ffb5a10}, {0x400d2b0c, 0x3ffb5a30}}, Corrupted: true}, false},
		{"Backtrace:0x40081a2b:0x3ffb5a10 |<-CONTINUES", Backtrace{Frames: []Frame{{0x40081a2b, 0x3ffb5a10}}, Continues: true}, false},
		{"Backtrace: 0x4008:zz", Backtrace{}, true},
	} {
		got, err := ParseBacktrace([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseBacktrace(%q) err = %v, wantErr %v", tc.in, err, tc.wantErr)
		}
		if tc.wantErr {
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseBacktrace(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestCrashLines(t *testing.T) {
	p, err := ParsePanic([]byte("Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled."))
	if diff := cmp.Diff(Panic{Core: 0, Reason: "LoadProhibited"}, p); err != nil || diff != "" {
		t.Errorf("ParsePanic (-want +got): %v\n%s", err, diff)
	}
	p, _ = ParsePanic([]byte("Guru Meditation Error: Core  1 panic'ed (Interrupt wdt timeout on CPU1). "))
	if diff := cmp.Diff(Panic{Core: 1, Reason: "Interrupt wdt timeout on CPU1"}, p); diff != "" {
		t.Errorf("ParsePanic wdt (-want +got):\n%s", diff)
	}
	pc, core, err := ParseAbortPC([]byte("abort() was called at PC 0x40081a2b on core 1"))
	if err != nil || pc != 0x40081a2b || core != 1 {
		t.Errorf("ParseAbortPC = %#x, %d, %v", pc, core, err)
	}
	if pc, ok := ParseRegisterPC([]byte("PC      : 0x400d6b5e  PS      : 0x00060b30")); !ok || pc != 0x400d6b5e {
		t.Errorf("ParseRegisterPC = %#x, %v", pc, ok)
	}
	if sha, ok := ParseELFSHA([]byte("ELF file SHA256: 0F1E2D3C4B5A6978")); !ok || sha != "0f1e2d3c4b5a6978" {
		t.Errorf("ParseELFSHA = %q, %v", sha, ok)
	}
	if task, ok := ParseStackOverflow([]byte("***ERROR*** A stack overflow in task wifi has been detected.")); !ok || task != "wifi" {
		t.Errorf("ParseStackOverflow = %q, %v", task, ok)
	}
}
