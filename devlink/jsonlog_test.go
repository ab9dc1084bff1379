package devlink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailpath/tailpath/devlink/crash"
)

// jsonObjects runs text through a JSONLog and returns the objects written.
func jsonObjects(t *testing.T, text string, sym *crash.Symbolizer) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	j := &JSONLog{W: &buf, Sym: sym}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var sp Splitter
	emit := func(l *Line) { j.Line(l, at) }
	sp.Feed([]byte(text), emit)
	sp.Flush(emit)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func byType(objs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if o["type"] == typ {
			out = append(out, o)
		}
	}
	return out
}

// TestJSONLogESPHomePanic: the field report's kind of crash as tail
// --json writes it: one line object per line (the wrapped ESP-IDF lines
// with level and tag, the time-only lines empty), and one panic object
// with the registers, though the copy ends mid-dump. Our own input
// always, the field's when the shared folder is present.
func TestJSONLogESPHomePanic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  func(t *testing.T) []byte
		first  map[string]any
		pc, ra string
		sp     string
	}{
		{"own", func(t *testing.T) []byte { return ownFieldFile(t, "esphome-c3-glued-cut.log") },
			map[string]any{"type": "line", "time": "2026-12-01T10:00:00Z", "kind": "log", "level": "I", "tag": "wifi_init",
				"text": "rx ba win: 6", "line": "[21:37:05][D][esp-idf:000]: I (712) wifi_init: rx ba win: 6",
				"wrap": "esphome-time+esphome", "host_time": "21:37:05", "uptime_ms": float64(712)},
			"0x40001c52", "0x4201a3f4", "0x3fc9e2a0"},
		{"field", func(t *testing.T) []byte { return fieldFile(t, "esphome-c3-panic-glued.log") },
			map[string]any{"type": "line", "time": "2026-12-01T10:00:00Z", "kind": "log", "level": "I", "tag": "wifi_init",
				"text": "tcp rx win: 5744", "line": "[14:04:29][D][esp-idf:000]: I (645) wifi_init: tcp rx win: 5744",
				"wrap": "esphome-time+esphome", "host_time": "14:04:29", "uptime_ms": float64(645)},
			"0x40001be4", "0x42075ee2", "0x3fca11b0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := jsonObjects(t, string(tc.input(t)), nil)
			lines := byType(objs, "line")
			if len(lines) != 19 {
				t.Errorf("%d line objects, want 19", len(lines))
			}
			if diff := cmp.Diff(tc.first, lines[0]); diff != "" {
				t.Errorf("first line (-want +got):\n%s", diff)
			}
			if e := lines[1]; e["text"] != "" || e["kind"] != "plain" || e["wrap"] != "esphome-time" {
				t.Errorf("time-only line: %v", e)
			}
			if g := lines[8]; g["kind"] != "panic" || g["tag"] != "phy_init" || !strings.HasPrefix(g["text"].(string), "Guru Meditation Error") {
				t.Errorf("glued line: %v", g)
			}
			panics := byType(objs, "panic")
			if len(panics) != 1 {
				t.Fatalf("%d panic objects, want 1", len(panics))
			}
			p := panics[0]
			for k, v := range map[string]any{"kind": "panic", "reason": "Illegal instruction on core 0", "core": float64(0),
				"arch": "riscv", "pc": tc.pc, "pc_in_rom": true, "ended": false} {
				if !cmp.Equal(p[k], v) {
					t.Errorf("panic %s = %v, want %v", k, p[k], v)
				}
			}
			regs := p["registers"].(map[string]any)
			if regs["RA"] != tc.ra || regs["SP"] != tc.sp || regs["MEPC"] != tc.pc || len(regs) != 32 {
				t.Errorf("registers %v", regs)
			}
			if order := p["register_order"].([]any); order[0] != "MEPC" || order[31] != "T6" {
				t.Errorf("register order %v", order)
			}
		})
	}
}

// TestJSONLogEvents: boot, telemetry, port and panic events, each once.
func TestJSONLogEvents(t *testing.T) {
	text := "ESP-ROM:esp32s3-20210327\r\n" +
		"rst:0xc (RTC_SW_CPU_RST),boot:0x2b (SPI_FAST_FLASH_BOOT)\r\n" +
		"@TP1 S seq=41 up=34012 rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *6656D985\r\n" +
		"@TP1 S seq=41 up=34012 rst=poweron *00000000\r\n" +
		"W (53640000) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446\r\n" +
		"I (34012) ts_disco: Pong recv from 203.0.113.7:41641 → peer 2 direct\r\n" +
		"abort() was called at PC 0x40081a2b on core 0\r\n" +
		"Backtrace: 0x40081a2b:0x3ffb5a10 0x400d1000:0x3ffb5a30\r\n" +
		"Rebooting...\r\n" +
		"\x1b[5n"
	objs := jsonObjects(t, text, nil)
	var types []string
	for _, o := range objs {
		if o["type"] != "line" {
			types = append(types, o["type"].(string))
		}
	}
	if diff := cmp.Diff([]string{"boot", "telemetry", "telemetry", "port", "port", "panic"}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	boot := byType(objs, "boot")[0]
	if boot["chip"] != "esp32s3" || boot["reset_code"] != float64(12) || boot["reset_name"] != "RTC_SW_CPU_RST" || boot["boot"] != float64(1) {
		t.Errorf("boot %v", boot)
	}
	tel := byType(objs, "telemetry")
	if f := tel[0]["fields"].(map[string]any); tel[0]["frame"] != "S" || f["hif"] != "131072" || f["seq"] != "41" || tel[0]["up_ms"] != float64(34012) {
		t.Errorf("telemetry %v", tel[0])
	}
	if tel[1]["error"] == nil || tel[1]["fields"] != nil {
		t.Errorf("corrupt frame %v, want an error", tel[1])
	}
	ports := byType(objs, "port")
	if p := ports[0]; p["fact"] != "relay-status" || p["connected"] != false || p["relay_was_up"] != true || p["relay_rx"] != float64(74096) || p["tag"] != "ml_derp" {
		t.Errorf("relay port event %v", p)
	}
	if p := ports[1]; p["fact"] != "disco-pong" || p["peer"] != float64(2) || p["addr"] != "203.0.113.7:41641" {
		t.Errorf("pong port event %v", p)
	}
	pan := byType(objs, "panic")[0]
	if pan["kind"] != "abort" || pan["pc"] != "0x40081a2b" || pan["ended"] != true || len(pan["backtrace"].([]any)) != 2 {
		t.Errorf("panic %v", pan)
	}
	last := objs[len(objs)-1]
	if last["type"] != "line" || last["kind"] != "status-query" || last["text"] != "" {
		t.Errorf("status query object %v", last)
	}
}

// TestJSONLogSanitises: device text never carries escape sequences into
// the JSON.
func TestJSONLogSanitises(t *testing.T) {
	objs := jsonObjects(t, "\x1b[0;31mE (1) t\x1b]0;x\x07ag: m\x1b[2Jsg\x1b[0m\r\n", nil)
	b, _ := json.Marshal(objs)
	if bytes.Contains(b, []byte(`\u001b`)) || bytes.Contains(b, []byte(`\u0007`)) {
		t.Errorf("escape in JSON: %s", b)
	}
}

// TestJSONLogFieldsDocumented: every JSON field name is in docs/device.md.
func TestJSONLogFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "device.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{JSONLine{}, JSONBoot{}, JSONPanic{}, JSONTelemetry{}, JSONPort{}, JSONLink{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			k, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if !bytes.Contains(doc, []byte("`"+k+"`")) {
				t.Errorf("%s field %q is not in docs/device.md", rt.Name(), k)
			}
		}
	}
}
