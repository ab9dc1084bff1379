package sysctl

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadAll reads every key, MemTotal and the BBR status from the
// real /proc (bbr listed: the short path).
func BenchmarkReadAll(b *testing.B) {
	var h Host
	if _, err := h.Read(); err != nil {
		b.Skipf("skipping: no readable /proc/sys here: %v", err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := h.Read(); err != nil {
			b.Fatal(err)
		}
		if _, err := h.BBR(); err != nil {
			b.Fatal(err)
		}
		h.MemTotal()
	}
}

// BenchmarkReadAllNoBBR is the slow path: bbr not listed, so the module
// tree and the real kernel's /proc/config.gz are searched too.
func BenchmarkReadAllNoBBR(b *testing.B) {
	h, dir := fakeHost(b, copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic"}), 4<<20)
	if cfg, err := os.ReadFile("/proc/config.gz"); err == nil {
		writeFile(b, filepath.Join(dir, "proc", "config.gz"), string(cfg))
	} else {
		writeConfigGz(b, filepath.Join(dir, "proc", "config.gz"), "CONFIG_TCP_CONG_CUBIC=y\n# CONFIG_TCP_CONG_BBR is not set\n")
	}
	for i := 0; i < b.N; i++ {
		if _, err := h.Read(); err != nil {
			b.Fatal(err)
		}
		st, err := h.BBR()
		if err != nil {
			b.Fatal(err)
		}
		if st.State == BBRAvailable {
			b.Fatal("bbr should not be listed here")
		}
		h.MemTotal()
	}
}

// BenchmarkPlatform detects the system from its identity files (the real
// machine: none of the NAS files exist, so every check runs), as each
// Tuning pane refresh does, with where --persist would write.
func BenchmarkPlatform(b *testing.B) {
	var h Host
	for i := 0; i < b.N; i++ {
		p := h.Platform()
		h.PersistWhere(p)
	}
}
