package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink"
)

// TestOpenFirmware: --elf takes app.elf[,bootloader.elf] in either
// order, as tail does, and the Source it feeds decodes Log V2 binary frames
// into the same text ESP-IDF monitor prints: our own capture
// (devlink/testdata/binlog) always, monitor's when the shared folder is
// present.
func TestOpenFirmware(t *testing.T) {
	own := filepath.Join("..", "..", "devlink", "testdata", "binlog")
	for _, set := range []struct {
		name string
		get  func(t *testing.T) (app, boot, capture, want string)
	}{
		{"own", func(*testing.T) (string, string, string, string) {
			return filepath.Join(own, "app.elf"), filepath.Join(own, "bootloader.elf"), filepath.Join(own, "capture.bin"), filepath.Join(own, "capture.txt")
		}},
		{"esp-idf-monitor", func(t *testing.T) (string, string, string, string) {
			dir := monitorVectors(t)
			return filepath.Join(dir, "log.elf"), filepath.Join(dir, "bootloader.elf"), filepath.Join(dir, "binlog"), filepath.Join(dir, "binlog_out.txt")
		}},
	} {
		t.Run(set.name, func(t *testing.T) {
			app, boot, capturePath, wantPath := set.get(t)
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range []string{app + "," + boot, boot + "," + app, " " + app + " , " + boot + " "} {
				t.Run(spec, func(t *testing.T) {
					fw, err := OpenFirmware(spec)
					if err != nil {
						t.Fatal(err)
					}
					if fw.App != app || fw.Symbols == nil || fw.BinLog == nil {
						t.Fatalf("OpenFirmware(%q) = app %q, symbols %v, binlog %v", spec, fw.App, fw.Symbols != nil, fw.BinLog != nil)
					}
					capture, err := os.Open(capturePath)
					if err != nil {
						t.Fatal(err)
					}
					defer capture.Close()
					src := &devlink.Source{Replay: capture, Symbols: fw.Symbols, BinLog: fw.BinLog, Every: 5 * time.Millisecond}
					var got []string
					var st devlink.State
					for ev := range src.Run(context.Background()) {
						for _, l := range ev.Lines {
							got = append(got, string(l.Text))
						}
						st = ev.State
					}
					if st.BinaryLogFrames != 0 {
						t.Errorf("%d binary frames left undecoded", st.BinaryLogFrames)
					}
					wantLines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(want), "\r\n", "\n"), "\n"), "\n")
					if diff := cmp.Diff(wantLines, got); diff != "" {
						t.Errorf("decoded lines (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}
