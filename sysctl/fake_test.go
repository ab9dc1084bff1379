package sysctl

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// modernKeys is a Debian-like 6.x host with bbr available.
var modernKeys = map[string]string{
	"net.ipv4.tcp_rmem":                         "4096\t131072\t6291456",
	"net.ipv4.tcp_wmem":                         "4096\t16384\t4194304",
	"net.core.rmem_max":                         "212992",
	"net.core.wmem_max":                         "212992",
	"net.ipv4.tcp_congestion_control":           "cubic",
	"net.ipv4.tcp_available_congestion_control": "reno cubic bbr",
	"net.core.default_qdisc":                    "fq_codel",
	"net.ipv4.tcp_mtu_probing":                  "0",
	"net.ipv4.tcp_slow_start_after_idle":        "1",
	"net.ipv4.tcp_notsent_lowat":                "4294967295",
	"kernel.osrelease":                          "6.1.0-13-amd64",
}

// synologyKeys is a Synology DSM 7 box on a 4.4 kernel: no BBR, small buffers.
var synologyKeys = map[string]string{
	"net.ipv4.tcp_rmem":                         "4096\t87380\t6291456",
	"net.ipv4.tcp_wmem":                         "4096\t16384\t4194304",
	"net.core.rmem_max":                         "212992",
	"net.core.wmem_max":                         "212992",
	"net.ipv4.tcp_congestion_control":           "cubic",
	"net.ipv4.tcp_available_congestion_control": "cubic reno",
	"net.core.default_qdisc":                    "pfifo_fast",
	"net.ipv4.tcp_mtu_probing":                  "0",
	"net.ipv4.tcp_slow_start_after_idle":        "1",
	"net.ipv4.tcp_notsent_lowat":                "-1",
	"kernel.osrelease":                          "4.4.302+",
}

// fakeHost builds dir/proc/sys from keys (values get the kernel's trailing
// newline), a meminfo with memKB, and returns a Host rooted at dir.
func fakeHost(t testing.TB, keys map[string]string, memKB int64) (Host, string) {
	t.Helper()
	dir := t.TempDir()
	h := AtRoot(dir)
	for k, v := range keys {
		p := filepath.Join(h.SysRoot(), strings.ReplaceAll(k, ".", "/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if memKB > 0 {
		mi := "MemTotal:       " + itoa64(memKB) + " kB\nMemFree:         1000 kB\n"
		if err := os.WriteFile(filepath.Join(h.Proc, "meminfo"), []byte(mi), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h, dir
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func copyKeys(m map[string]string, edits map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range edits {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeConfigGz(t testing.TB, p, content string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(content))
	zw.Close()
	writeFile(t, p, buf.String())
}
