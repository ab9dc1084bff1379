// Package units is the one place tailpath words byte counts, byte rates,
// round trips and ages for people: the Peers and Detail panes, the Device
// pane and `tailpath status` all call it, so the same quantity reads the
// same everywhere. Forms are compact (no space before the unit) because
// they sit in table columns.
package units

import (
	"math"
	"strconv"
	"time"
)

// iec are the binary units Bytes climbs through.
var iec = [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}

// Bytes renders n bytes in binary (IEC) units with at most three
// significant digits: "0" (a zero needs no unit), "812B", "1.0KiB",
// "12.3KiB", "123KiB", "1.2MiB". Negative counts render as "0". At most 7
// cells below 1000 PiB.
func Bytes(n int64) string {
	if n <= 0 {
		return "0"
	}
	return scaled(float64(n))
}

// BytesPair renders two byte counts as "a/b" in one unit, the one Bytes
// would give the larger, so the pair reads at a glance: "1.0KiB/2.0KiB",
// not "1000B/2.0KiB"; "0" for a zero, "<0.1MiB" for a count too small to
// show in the unit.
func BytesPair(a, b int64) string {
	top := float64(max(a, b, 0))
	i := 0
	for top >= 1024 && i < len(iec)-1 {
		top /= 1024
		i++
	}
	one := func(n int64) string {
		if n <= 0 {
			return "0"
		}
		if i == 0 {
			return strconv.FormatInt(n, 10) + iec[0]
		}
		v := float64(n) / math.Pow(1024, float64(i))
		switch {
		case v < 0.05:
			return "<0.1" + iec[i]
		case v < 99.95:
			return strconv.FormatFloat(v, 'f', 1, 64) + iec[i]
		}
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + iec[i]
	}
	return one(a) + "/" + one(b)
}

// Rate renders a byte rate (bytes per second) as Bytes does, with "/s":
// "512B/s", "12.3KiB/s", "123KiB/s", "1.2MiB/s"; zero, negative, NaN and
// infinite rates are "-". At most 9 cells below 1000 PiB/s.
func Rate(bytesPerSec float64) string {
	if bytesPerSec <= 0 || math.IsNaN(bytesPerSec) || math.IsInf(bytesPerSec, 0) {
		return "-"
	}
	return scaled(bytesPerSec) + "/s"
}

// scaled is v bytes in the largest unit that keeps it at or above 1:
// whole bytes, then one decimal below 100 units, whole units above.
func scaled(v float64) string {
	i := 0
	for v >= 1024 && i < len(iec)-1 {
		v /= 1024
		i++
	}
	switch {
	case i == 0:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + iec[i]
	case v < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64) + iec[i]
	default:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + iec[i]
	}
}

// Latency renders a round trip: "-" for 0 or less (not measured), "0.4ms"
// and "3.2ms" below 10 ms, "42ms" up to 10 s, then "12s".
func Latency(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < 10*time.Second:
		return strconv.FormatInt(int64(math.Round(float64(d)/float64(time.Millisecond))), 10) + "ms"
	default:
		return strconv.FormatInt(int64(math.Round(d.Seconds())), 10) + "s"
	}
}

// Ago renders how long before now t was, in its largest whole unit: "12s
// ago", "3m ago", "2h ago" (up to 48 hours), "4d ago"; "just now" under a
// second (and for times after now); "never" for the zero time.
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
	}
}

// Count is n with the noun in the right number: Count(1, "device",
// "devices") is "1 device", Count(0, …) "0 devices".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
