package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/buildinfo"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuning"
)

// save takes a snapshot of the live dashboard, carrying ls's history
// (rates, ping runs, path changes) and board, and writes it to
// SaveDir/tailpath-snapshot-<time>.json (the user's state directory when
// SaveDir is empty, UserSaveDir); SavedMsg carries the absolute path. It
// runs in a tea.Cmd.
// facts and st are the control API's facts the dashboard uses (its
// Refresher's Latest) and their state; nil when the API is not asked.
func (d *Dashboard) save(ctx context.Context, ls *join.Snapshot, facts *probes.APIFacts, st *probes.APIStatus) tui.SavedMsg {
	ctx, cancel := context.WithTimeout(ctx, app.SaveTimeout)
	defer cancel()
	opts := snapshot.Options{Gather: tailscaled.GatherOptions{All: d.All, PeerFacts: facts, APIStatus: st, Host: hostnet.Start}, Joined: ls}
	if ls != nil {
		opts.Prev = ls.Snapshot
	}
	if d.Tuning != nil {
		if r, err := tune.Gather(ctx, d.Tuning.Inputs); err == nil {
			opts.Tuning = &r
		} else {
			opts.TuningErr = err.Error()
		}
	}
	f, _, err := snapshot.Capture(ctx, d.Client, opts)
	if err != nil {
		return tui.SavedMsg{Err: safetext.Of(tailscaled.ConnectError(err, d.Socket))}
	}
	dir, err := d.saveDir()
	if err != nil {
		return tui.SavedMsg{Err: safetext.Format("snapshot: %v", err)}
	}
	path := filepath.Join(dir, "tailpath-snapshot-"+f.Taken.UTC().Format("20060102-150405")+".json")
	if err := snapshot.WriteFile(path, f); err != nil {
		return tui.SavedMsg{Err: safetext.Of(err)}
	}
	return tui.SavedMsg{Path: safetext.New(path)}
}

// ReplayModel is the dashboard's root model over d.Replay and the
// messages that fill it, in order (its joined snapshot, then its tuning
// report): what runReplay runs, for tests that render it.
func (d *Dashboard) ReplayModel(ctx context.Context) (tea.Model, []tea.Msg, error) {
	ls, err := d.Replay.Diagnose(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("dashboard: the snapshot: %w", err)
	}
	model := tui.New(d.replayOptions(d.panes()))
	return model, append([]tea.Msg{ls}, d.replayMsgs()...), nil
}

// runReplay runs the dashboard over d.Replay: one joined snapshot, sent
// once, and no pings or saving.
func (d *Dashboard) runReplay(ctx, parent context.Context, input tea.ProgramOption, stdout io.Writer) error {
	model, msgs, err := d.ReplayModel(ctx)
	if err != nil {
		return err
	}
	p := newProgram(ctx, model, input, stdout, os.Environ())
	go func() {
		for _, m := range msgs {
			p.Send(m)
		}
	}()
	_, err = p.Run()
	if err != nil && parent.Err() == nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// replayMsgs are the messages that fill a replayed snapshot's panes
// besides Peers and Detail: its tuning report, when it holds one. (The
// board's evidence is in its peer's verdict; the Device and Log panes need
// the board's own stream, which a snapshot does not keep.)
func (d *Dashboard) replayMsgs() []tea.Msg {
	f := d.Replay
	if f.Tuning == nil && f.TuningErr == "" {
		return nil
	}
	var m tuning.ReportMsg
	if f.Tuning != nil {
		m.Report = *f.Tuning
	}
	if f.TuningErr != "" {
		m.Err = errors.New(f.TuningErr)
	}
	return []tea.Msg{m}
}

// replayClock is the replayed dashboard's clock: stopped at the time the
// snapshot was taken, so every age ("handshake 6s ago") counts from when
// the evidence was taken, not from when it is read.
func (d *Dashboard) replayClock() func() time.Time {
	taken := d.Replay.Taken
	return func() time.Time { return taken }
}

// replayOptions are the dashboard's options over d.Replay: panes after
// Peers and Detail, the notice, the snapshot's clock, and what S says.
func (d *Dashboard) replayOptions(panes []common.Pane) tui.Options {
	return tui.Options{Title: d.Title, Panes: panes, Tabs: Tabs(), Version: buildinfo.Own().Version, Notice: ReplayNotice(d.Replay), Now: d.replayClock(),
		NoSave: "nothing to save: this is a saved snapshot already (status --from FILE --save OUT --redact makes a shareable copy)"}
}

// ReplayNotice is the line a replayed snapshot is shown under.
func ReplayNotice(f *snapshot.File) safetext.Text {
	s := "snapshot taken " + f.Taken.UTC().Format("2006-01-02 15:04:05Z")
	if f.Origin == snapshot.OriginPasted {
		s += " (pasted input)"
	}
	if f.Redacted != nil {
		s += ", redacted"
	}
	return safetext.New(s + " · ages as of then · read-only: no pings, nothing live")
}

// saveDir is d.SaveDir, or this user's UserSaveDir, created (0700: the
// snapshots name the tailnet's peers and addresses).
func (d *Dashboard) saveDir() (string, error) {
	dir := d.SaveDir
	if dir == "" {
		home, _ := os.UserHomeDir()
		var err error
		if dir, err = app.UserSaveDir(os.Getenv, runtime.GOOS, home); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}
