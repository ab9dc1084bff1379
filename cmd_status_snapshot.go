package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/report"
	"github.com/tailpath/tailpath/internal/termcolor"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// snapshotFlags are tailpath status's snapshot flags.
type snapshotFlags struct {
	// save writes a snapshot of the evidence to this file ("-" stdout).
	save string
	// redact makes what is saved and printed safe to share (snapshot.Redact).
	redact bool
	// from diagnoses these inputs (saved snapshots or pasted tailscale
	// output; "-" stdin) instead of the local tailscaled.
	from []string
	// peers are snapshots saved on peers, whose own facts fill those
	// peers' side of the path.
	peers []string
	// reply writes a Markdown reply for the thread the --from input was
	// pasted from, redacted as --redact does (report.WriteReply).
	reply bool
}

// listFlag is a repeatable flag collecting its values.
type listFlag struct{ list *[]string }

func (l listFlag) String() string {
	if l.list == nil {
		return ""
	}
	return strings.Join(*l.list, ",")
}

func (l listFlag) Set(s string) error {
	*l.list = append(*l.list, s)
	return nil
}

func (s *snapshotFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.save, "save", "", `write a snapshot of all the evidence to FILE ("-" for stdout); diagnose it later with --from`)
	fs.BoolVar(&s.redact, "redact", false, "replace names, addresses, keys, ids and logins (keeping what the diagnosis needs) in what is saved and printed, so it can be shared")
	fs.Var(listFlag{&s.from}, "from", `diagnose FILE instead of the local tailscaled: a saved snapshot, or pasted "tailscale status", "netcheck", "ping" output and tailscaled log lines ("-" stdin; repeat, or list more files after the flags)`)
	fs.BoolVar(&s.reply, "reply", false, "with --from: write a Markdown reply to post in the thread the input came from (what it shows, what is still open, the commands to run and paste back), redacted as --redact does")
	fs.Var(listFlag{&s.peers}, "peer-snapshot", "a snapshot saved on a peer: its own NAT facts fill that peer's side of the path (repeatable)")
}

// check refuses flag combinations that cannot work.
func (s *snapshotFlags) check(asJSON bool) error {
	if s.save == "-" && asJSON {
		return cli.UsageErrorf("--save - writes the snapshot to stdout: --json has no room there (save to a file to get both)")
	}
	if s.reply && (asJSON || s.save != "") {
		return cli.UsageErrorf("--reply writes a Markdown reply: leave out --json and --save (run them separately)")
	}
	if s.reply && len(s.peers) > 0 {
		return cli.UsageErrorf("--reply is redacted as --redact is, which --peer-snapshot cannot be (each file's names are replaced on its own); leave out --peer-snapshot")
	}
	if s.redact && len(s.peers) > 0 {
		return cli.UsageErrorf("--redact with --peer-snapshot: each snapshot's names are replaced on its own, so they no longer match; redact the combined view's parts on each machine, or share unredacted files")
	}
	return nil
}

// saveLive builds the snapshot of a live status (gathered through its
// Recorder), redacts and saves it as the flags ask, and returns what to
// print: the redacted diagnosis with --redact, else ls. printed is true
// when the snapshot itself went to stdout (--save -), so nothing else is
// printed.
func (f *statusFlags) saveLive(ctx context.Context, st *app.StatusResult, ls *join.Snapshot, stdio cli.IO) (*join.Snapshot, bool, error) {
	tr, terr := app.TuningReport(ctx, f.socket)
	file := st.Recorder.File(ls, snapshot.Extras{All: f.all, PeerFacts: st.PeerFacts, APIStatus: st.APIStatus, Tuning: tr, TuningErr: terr})
	return app.SaveSnapshot(ctx, file, ls, f.snap.save, f.snap.redact, stdio.Stdout, stdio.Stderr)
}

// runFrom is status --from: diagnose saved or pasted evidence offline.
func (f *statusFlags) runFrom(ctx context.Context, args []string, stdio cli.IO) error {
	// More files may follow --from's, and flags may follow them.
	var files []string
	for len(args) > 0 {
		if a := args[0]; len(a) > 1 && a[0] == '-' && f.fs != nil {
			if err := f.fs.Parse(args); err != nil {
				return cli.UsageError{Err: err}
			}
			args = f.fs.Args()
			continue
		}
		files, args = append(files, args[0]), args[1:]
	}
	args = files
	switch {
	case f.port != "":
		return cli.UsageErrorf("--from diagnoses saved evidence: --port does not apply (a saved snapshot carries its board)")
	case f.netcheck:
		return cli.UsageErrorf("--from diagnoses saved evidence: --netcheck does not apply (a snapshot carries its own measurement)")
	case f.probe:
		return cli.UsageErrorf("--from diagnoses saved evidence: --probe does not apply (it pings live peers)")
	}
	if err := f.snap.check(f.json); err != nil {
		return err
	}
	if f.snap.reply {
		f.snap.redact = true
	}
	names := append(append([]string(nil), f.snap.from...), args...)
	file, ls, err := app.ReadFrom(ctx, names, stdio.Stdin, f.all)
	if err != nil {
		return err
	}
	if ls, err = app.ApplyPeerSnapshots(ctx, ls, f.snap.peers, stdio.Stderr); err != nil {
		return err
	}
	var printed bool
	if f.snap.redact && file.Redacted == nil {
		if file, err = snapshot.Redact(file); err != nil {
			return err
		}
		if ls, err = file.Diagnose(ctx); err != nil {
			return err
		}
	}
	if ls, printed, err = app.SaveSnapshot(ctx, file, ls, f.snap.save, f.snap.redact, stdio.Stdout, stdio.Stderr); err != nil || printed {
		return err
	}
	for _, w := range ls.Warnings {
		fmt.Fprintf(stdio.Stderr, "tailpath: warning: %s\n", w)
	}
	if f.snap.reply {
		return report.WriteReply(stdio.Stdout, ls)
	}
	info := report.NewSnapshotInfo(file, names)
	if f.json {
		out := report.Of(ls)
		out.Snapshot = info
		out.ToSettle = probes.StepsOf(ls.Snapshot, report.StepOptions(ls, true), 0)
		return report.Encode(stdio.Stdout, out)
	}
	if _, err := io.WriteString(stdio.Stdout, report.SnapshotHeader(info)); err != nil {
		return err
	}
	if err := report.WriteTable(stdio.Stdout, ls, termcolor.Width(stdio.Stdout)); err != nil {
		return err
	}
	return report.WriteSettle(stdio.Stdout, ls, report.StepOptions(ls, true))
}
