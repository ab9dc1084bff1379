package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/buildinfo"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/probes/localapi"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuning"
)

// saveTimeout bounds one snapshot from the dashboard (a gather, and the
// tuning report).
const saveTimeout = 15 * time.Second

// save takes a snapshot of the live dashboard, carrying ls's history
// (rates, ping runs, path changes) and board, and writes it to
// SaveDir/tailpath-snapshot-<time>.json (the user's state directory when
// SaveDir is empty, UserSaveDir); SavedMsg carries the absolute path. It
// runs in a tea.Cmd.
// facts and st are the control API's facts the dashboard uses (its
// Refresher's Latest) and their state; nil when the API is not asked.
func (d *Dashboard) save(ctx context.Context, ls *link.Snapshot, facts *probes.APIFacts, st *probes.APIStatus) tui.SavedMsg {
	ctx, cancel := context.WithTimeout(ctx, saveTimeout)
	defer cancel()
	opts := snapshot.Options{Gather: localapi.GatherOptions{All: d.All, PeerFacts: facts, APIStatus: st, Host: hostnet.Read}, Linked: ls}
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
		return tui.SavedMsg{Err: safetext.Of(localapi.ConnectError(err, d.Socket))}
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
// messages that fill it, in order (its linked snapshot, then its tuning
// report): what runReplay runs, for tests that render it.
func (d *Dashboard) ReplayModel(ctx context.Context) (tea.Model, []tea.Msg, error) {
	ls, err := d.Replay.Diagnose(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("dashboard: the snapshot: %w", err)
	}
	panes, msgs := d.replayPanes()
	model := tui.New(d.replayOptions(panes))
	return model, append([]tea.Msg{ls}, msgs...), nil
}

// runReplay runs the dashboard over d.Replay: one linked snapshot, sent
// once, and no pings or saving.
func (d *Dashboard) runReplay(ctx, parent context.Context, input tea.ProgramOption, stdout io.Writer) error {
	model, msgs, err := d.ReplayModel(ctx)
	if err != nil {
		return err
	}
	p := newProgram(ctx, model, input, stdout)
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

// replayPanes are the panes a replayed snapshot shows besides Peers and
// Detail, and the messages that fill them: its tuning report, read-only,
// in the Tuning pane when it holds one. (The board's evidence is in its
// peer's verdict; the Device and Log panes need the board's own stream,
// which a snapshot does not keep.)
func (d *Dashboard) replayPanes() ([]common.Pane, []tea.Msg) {
	f := d.Replay
	if f.Tuning == nil && f.TuningErr == "" {
		return nil, nil
	}
	var m tuning.ReportMsg
	if f.Tuning != nil {
		m.Report = *f.Tuning
	}
	if f.TuningErr != "" {
		m.Err = errors.New(f.TuningErr)
	}
	pane := tuning.New(tuning.Options{Snapshot: safetext.New("taken " + f.Taken.UTC().Format("2006-01-02 15:04:05Z")), Now: d.replayClock()})
	return []common.Pane{pane}, []tea.Msg{m}
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
	return tui.Options{Title: d.Title, Panes: panes, Version: buildinfo.Own().Version, Notice: ReplayNotice(d.Replay), Now: d.replayClock(),
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

// SnapshotFile is `tailpath serve`'s /snapshot.json: a fresh capture of
// this node in the format of `tailpath status --save` (probes/snapshot,
// readable by `status --from` and `--peer-snapshot` on another machine),
// carrying in.Latest's history, board and path changes and WhoIs answers
// (snapshot.Options.ReuseWhoIs: no WhoIs per peer), the control API's
// facts of this node's netmap peers when s.PeerSide is set (never of the
// devices its ACLs hide from it), and in.Tuning; then scrubbed
// (snapshot.Scrub: no keys, no log ids, nothing renamed). Errors are
// Capture's, with the socket named (localapi.ConnectError).
func (s *Serve) SnapshotFile(ctx context.Context, in SnapshotInput) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, saveTimeout)
	defer cancel()
	opts := snapshot.Options{Gather: localapi.GatherOptions{All: s.All, Host: hostnet.Read}, Linked: in.Latest, Tuning: in.Tuning, ReuseWhoIs: true}
	if in.Latest != nil {
		opts.Prev = in.Latest.Snapshot
		if len(in.Latency) > 0 {
			// serve's pings go in as the previous snapshot's, which the
			// gather carries on (copies: the latest is shared).
			prev := *opts.Prev
			prev.Peers = slices.Clone(prev.Peers)
			for i := range prev.Peers {
				if d, ok := in.Latency[prev.Peers[i].ID]; ok {
					prev.Peers[i].Latency = d
				}
			}
			opts.Prev = &prev
		}
	}
	if in.TuningErr != nil {
		opts.TuningErr = in.TuningErr.Error()
	}
	if r := s.PeerSide; r != nil {
		facts, st := r.Latest()
		opts.Gather.PeerFacts, opts.Gather.APIStatus = facts, &st
	}
	f, _, err := snapshot.Capture(ctx, s.Client, opts)
	if err != nil {
		return nil, localapi.ConnectError(err, s.Socket)
	}
	if api := f.ControlAPI; api != nil && api.Facts != nil && f.Status != nil {
		var ids []string
		var addrs []netip.Addr
		for _, ps := range f.Status.Peer {
			if ps != nil {
				ids = append(ids, string(ps.ID))
				addrs = append(addrs, ps.TailscaleIPs...)
			}
		}
		c := *api
		c.Facts = api.Facts.Only(ids, addrs)
		f.ControlAPI = &c
	}
	if f, err = snapshot.Scrub(f); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := snapshot.Write(&b, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
