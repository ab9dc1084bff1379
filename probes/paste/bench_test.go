package paste

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/probes/probestest"
)

// BenchmarkParseThread measures reading the pasted forum thread
// (status, netcheck and ping text) into a snapshot.
func BenchmarkParseThread(b *testing.B) {
	raws := readPaste(b, "thread.txt")
	b.SetBytes(int64(len(raws[0].Data)))
	for b.Loop() {
		if _, err := Parse(raws, pasteNow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseJournal measures reading a long tailscaled journal (a
// bug report's worth: 20,000 lines of the corpus's log lines in their
// wrappers, most of them lines nothing reads) into a snapshot.
func BenchmarkParseJournal(b *testing.B) {
	var lines []string
	for _, name := range []string{"log-journal.txt", "log-docker.txt", "log-windows.txt", "log-control-mtu.txt", "log-linkchange.txt", "log-disco.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			lines = append(lines, strings.TrimSuffix(l, "\r"))
		}
	}
	var buf bytes.Buffer
	for i := 0; buf.Len() < 2<<20; i++ {
		buf.WriteString(lines[i%len(lines)])
		buf.WriteByte('\n')
	}
	raws := []Raw{{Name: "journal.txt", Data: buf.Bytes()}}
	b.SetBytes(int64(buf.Len()))
	// MB/s of CPU too: the process's CPU time (the collector's included),
	// steadier than wall time on a shared machine.
	cpu0 := probestest.CPUTime()
	for b.Loop() {
		if _, err := Parse(raws, pasteNow); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := probestest.CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(buf.Len())*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}
