package devlink

import (
	"testing"
)

// TestMonitorVectors are ESP-IDF monitor's output conventions worked out
// from its serial_handler.py (print_colored, the status query, the
// unfinished-line rules) for inputs its own vectors do not cover. Each
// chunk is fed in turn; "|" after a chunk means an idle flush (the line
// was left unfinished long enough to print).
func TestMonitorVectors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter string
		chunks []string
		want   string
	}{
		{"uncoloured I W E get monitor's colours, D V stay plain", "",
			[]string{"I (1) a: x\r\nW (2) a: y\nE (3) a: z\r\nD (4) a: d\nV (5) a: v\n"},
			"\x1b[0;32mI (1) a: x\x1b[0m\r\n\x1b[0;33mW (2) a: y\x1b[0m\n\x1b[1;31mE (3) a: z\x1b[0m\r\nD (4) a: d\nV (5) a: v\n"},
		{"every time form the regex allows", "",
			[]string{"I (10:12:51.035) a: clock\nW (24-06-19 10:12:51.035) a: date\nE (1718795571035) a: unix\n"},
			"\x1b[0;32mI (10:12:51.035) a: clock\x1b[0m\n\x1b[0;33mW (24-06-19 10:12:51.035) a: date\x1b[0m\n\x1b[1;31mE (1718795571035) a: unix\x1b[0m\n"},
		{"lines with their own colour or another escape first are left alone", "",
			[]string{"\x1b[0;31mE (1) a: own\x1b[0m\n\x1b[2KI (2) a: erased\n\x1b[1;32mI (3) a: bold\n"},
			"\x1b[0;31mE (1) a: own\x1b[0m\n\x1b[2KI (2) a: erased\n\x1b[1;32mI (3) a: bold\n"},
		{"no timestamp, wrappers and prose get no colour", "",
			[]string{"E tag: dram\n[14:04:29][E][wifi:1]: wrapped\nI think (so): yes\nI () a: empty\n"},
			"E tag: dram\n[14:04:29][E][wifi:1]: wrapped\nI think (so): yes\nI () a: empty\n"},
		{"an unfinished line is coloured now and reset when its end arrives", "",
			[]string{"W (7) app: wait", "|", "ing done\r\nI (8) app: next\n"},
			"\x1b[0;33mW (7) app: waiting done\x1b[0m\r\n\x1b[0;32mI (8) app: next\x1b[0m\n"},
		{"the rest of an unfinished line prints whatever the filter", "app:W",
			[]string{"W (7) app: wait", "|", "ing done\nW (9) other: hidden\n"},
			"\x1b[0;33mW (7) app: waiting done\x1b[0m\n"},
		{"an unfinished line the filter hides stays hidden, and so does its rest", "app:W",
			[]string{"I (7) app: wait", "|", "ing done\nplain\n"},
			""},
		{"status query alone, waiting for its answer", "*:N",
			[]string{"\x1b[5", "n", "|"},
			"\x1b[5n"},
		{"status query, then a prompt and a line typed back", "",
			[]string{"\x1b[5nesp32> ", "|", "help\r\n"},
			"\x1b[5nesp32> help\r\n"},
		{"status query mid-line is just bytes", "",
			[]string{"x\x1b[5ny\n"},
			"x\x1b[5ny\n"},
		{"only monitor's colour form makes a log line for the filter", "a:E",
			[]string{"\x1b[1;31mE (1) a: bold\n\x1b[0;31mE (2) a: plain red\n\x1b[31mE (3) a: short form\n\x1b[0mE (4) a: reset first\n"},
			"\x1b[1;31mE (1) a: bold\n\x1b[0;31mE (2) a: plain red\n"},
		{"status query, the rest of its line judged by the filter", "mesh:E",
			[]string{"\x1b[5nI (5) light: on\nE (6) mesh: err\n"},
			"\x1b[5n\x1b[1;31mE (6) mesh: err\x1b[0m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFilter(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			m := Monitor{Filter: f}
			var out []byte
			emit := func(l *Line) {
				if m.Shows(l) {
					out = m.Append(out, l)
				}
			}
			var sp Splitter
			for _, c := range tc.chunks {
				if c == "|" {
					sp.Flush(emit)
					continue
				}
				sp.Feed([]byte(c), emit)
			}
			sp.Flush(emit)
			if string(out) != tc.want {
				t.Errorf("got  %q\nwant %q", out, tc.want)
			}
			// --disable-auto-color prints the bytes of the lines shown.
			m2 := Monitor{Filter: f, NoAutoColor: true}
			var raw, shown []byte
			var sp2 Splitter
			for _, c := range tc.chunks {
				if c == "|" {
					continue
				}
				sp2.Feed([]byte(c), func(l *Line) {
					shown = append(shown, l.Raw...)
					if m2.Shows(l) {
						raw = m2.Append(raw, l)
					}
				})
			}
			sp2.Flush(func(l *Line) {
				shown = append(shown, l.Raw...)
				if m2.Shows(l) {
					raw = m2.Append(raw, l)
				}
			})
			if tc.filter == "" && string(raw) != string(shown) {
				t.Errorf("NoAutoColor changed the bytes: %q, want %q", raw, shown)
			}
		})
	}
}

// TestPalette holds the one palette to monitor's codes.
func TestPalette(t *testing.T) {
	for l, want := range map[Level]string{LevelError: "\x1b[1;31m", LevelWarn: "\x1b[0;33m", LevelInfo: "\x1b[0;32m", LevelDebug: "", LevelVerbose: "", LevelNone: ""} {
		if got := LevelColor(l); got != want {
			t.Errorf("LevelColor(%v) = %q, want %q", l, got, want)
		}
	}
	var l Line
	ParseLine([]byte("I (1) x: yGuru Meditation Error: Core  0 panic'ed (Breakpoint)."), &l)
	if LineColor(&l) != ColorError {
		t.Errorf("a crash line glued into an I line is coloured %q", LineColor(&l))
	}
}
