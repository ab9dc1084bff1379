package logpane

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// TestByteCap feeds the pane 2,000 lines of 64 KiB (128 MiB, tagged
// ESP-IDF lines as a board printing without newlines would split them):
// it keeps at most MaxBytes of them, the heap stays near that, not at the
// 20,000 lines' 1.3 GB, and the status line says lines were dropped.
func TestByteCap(t *testing.T) {
	const lineLen, lines, perEvent = 64 << 10, 2000, 50
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := New(common.DefaultStyles(), 20000)
	p.SetSize(80, 24)
	for i := 0; i < lines/perEvent; i++ {
		var b strings.Builder
		for j := 0; j < perEvent; j++ {
			fmt.Fprintf(&b, "I (%d) flood: ", i*perEvent+j)
			b.WriteString(strings.Repeat(string(rune('a'+j%26)), lineLen-20))
			b.WriteString("\n")
		}
		p.Update(event(b.String()))
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := 0
	for i := range p.entries {
		kept += len(p.entries[i].text)
	}
	if kept > MaxBytes || p.bytes > MaxBytes {
		t.Errorf("kept %d bytes of text (accounted %d), want at most %d", kept, p.bytes, MaxBytes)
	}
	if n := len(p.entries); n < MaxBytes/lineLen*9/10 || n >= lines {
		t.Errorf("kept %d lines of %d, want about %d", n, lines, MaxBytes/lineLen)
	}
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap in use grew by %d MiB keeping %d lines (%d MiB of text)", grown>>20, len(p.entries), kept>>20)
	if grown > 2*MaxBytes {
		t.Errorf("heap grew by %d MiB for a %d MiB cap", grown>>20, MaxBytes>>20)
	}
	status := tuitest.Unstyled(p.View())[strings.LastIndex(tuitest.Unstyled(p.View()), "\n")+1:]
	if want := fmt.Sprintf("%d older dropped (32 MiB kept)", lines-len(p.entries)); !strings.Contains(status, "older dropped") {
		t.Errorf("status line %q does not say %q", status, want)
	}
}
