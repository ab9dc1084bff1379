package units

import (
	"fmt"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0"}, {-5, "0"}, {812, "812B"}, {1024, "1.0KiB"}, {1260, "1.2KiB"},
		{52019, "50.8KiB"}, {210_000, "205KiB"}, {4_300_000, "4.1MiB"}, {3 << 40, "3.0TiB"},
		{1<<63 - 1, "8192PiB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.in); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "-"}, {-1, "-"}, {512, "512B/s"}, {1023.6, "1024B/s"}, {1260, "1.2KiB/s"},
		{12_595, "12.3KiB/s"}, {210_000, "205KiB/s"}, {4_300_000, "4.1MiB/s"}, {3 << 40, "3.0TiB/s"},
	}
	for _, tt := range tests {
		got := Rate(tt.in)
		if got != tt.want {
			t.Errorf("Rate(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > 9 {
			t.Errorf("Rate(%v) is %d wide", tt.in, len(got))
		}
	}
}

func TestLatency(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "-"}, {-time.Second, "-"}, {400 * time.Microsecond, "0.4ms"}, {3 * time.Millisecond, "3.0ms"},
		{42 * time.Millisecond, "42ms"}, {1500 * time.Millisecond, "1500ms"}, {12 * time.Second, "12s"},
	}
	for _, tt := range tests {
		if got := Latency(tt.in); got != tt.want {
			t.Errorf("Latency(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{-time.Minute, "just now"}, {0, "just now"}, {999 * time.Millisecond, "just now"},
		{12 * time.Second, "12s ago"}, {90 * time.Second, "1m ago"}, {3 * time.Hour, "3h ago"},
		{47 * time.Hour, "47h ago"}, {50 * time.Hour, "2d ago"},
	}
	for _, tt := range tests {
		if got := Ago(now, now.Add(-tt.ago)); got != tt.want {
			t.Errorf("Ago(-%v) = %q, want %q", tt.ago, got, tt.want)
		}
	}
	if got := Ago(now, time.Time{}); got != "never" {
		t.Errorf("Ago(zero) = %q, want never", got)
	}
}

func ExampleRate() {
	fmt.Println(Rate(12_595), Rate(640), Rate(4_300_000))
	// Output: 12.3KiB/s 640B/s 4.1MiB/s
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 peers", 1: "1 peer", 2: "2 peers", 1000: "1000 peers"} {
		if got := Count(n, "peer", "peers"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestBytesPair: a pair of counts reads in one unit, the larger's.
func TestBytesPair(t *testing.T) {
	for _, tt := range []struct {
		a, b int64
		want string
	}{
		{1000, 2048, "1.0KiB/2.0KiB"}, // was 1000B/2.0KiB
		{52019, 31000, "50.8KiB/30.3KiB"},
		{0, 0, "0/0"}, {0, 812, "0/812B"}, {812, 5, "812B/5B"},
		{512, 4_300_000, "<0.1MiB/4.1MiB"},
		{210_000, 4_300_000, "0.2MiB/4.1MiB"},
		{755_000, 26_100_000, "0.7MiB/24.9MiB"},
		{200 << 20, 3 << 20, "200MiB/3.0MiB"},
	} {
		if got := BytesPair(tt.a, tt.b); got != tt.want {
			t.Errorf("BytesPair(%d, %d) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}
