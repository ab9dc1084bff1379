package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/paste"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// This file is what status does with snapshots: save one (--save,
// --redact), read one (--from) and merge peers' own (--peer-snapshot).

// SaveSnapshot redacts file when redact is set and writes it to path (a
// file, "-" for stdout, "" nowhere), saying on stderr where it went and
// what --redact replaced. It returns what to print: the diagnosis of what
// was saved (the redacted one with redact), else ls, file's diagnosis.
// printed is true when the snapshot itself went to stdout, so nothing
// else is to be printed there.
func SaveSnapshot(ctx context.Context, file *snapshot.File, ls *join.Snapshot, path string, redact bool, stdout, stderr io.Writer) (*join.Snapshot, bool, error) {
	if redact && file.Redacted == nil {
		red, err := snapshot.Redact(file)
		if err != nil {
			return nil, false, err
		}
		file = red
		if ls, err = file.Diagnose(ctx); err != nil {
			return nil, false, err
		}
	}
	switch path {
	case "":
	case "-":
		if err := snapshot.Write(stdout, file); err != nil {
			return nil, false, err
		}
		return ls, true, nil
	default:
		if err := snapshot.WriteFile(path, file); err != nil {
			return nil, false, err
		}
		what := "snapshot"
		if file.Redacted != nil {
			what = "redacted snapshot"
		}
		fmt.Fprintf(stderr, "tailpath: saved a %s (taken %s) to %s; `tailpath status --from %s` diagnoses it\n",
			what, file.Taken.UTC().Format(time.RFC3339), path, path)
		if r := file.Redacted; r != nil {
			fmt.Fprintf(stderr, "tailpath: replaced: %s\ntailpath: left out: %s\n", strings.Join(r.Replaced, "; "), strings.Join(r.Removed, "; "))
		}
	}
	return ls, false, nil
}

// TuningReport is the host's tuning for a snapshot (Linux), or why there
// is none; it never takes more than 5 s.
// It asks the tailscaled at socket whether it runs in userspace networking,
// so the snapshot says that first too.
func TuningReport(ctx context.Context, socket string) (*tune.Report, string) {
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := tune.Gather(tctx, TuneDaemon(socket, tune.Inputs{}))
	if err != nil {
		if errors.Is(err, tune.ErrNotLinux) {
			return nil, "TCP tuning is Linux only"
		}
		return nil, err.Error()
	}
	return &r, ""
}

// ApplyPeerSnapshots reads each of names (--peer-snapshot: a snapshot
// saved on a peer, a file or a serve URL, or the peer's own pasted
// `tailscale status` with what else it printed) and merges its node's own facts
// into that peer of ls, saying so on stderr. Its errors are InputErrors.
func ApplyPeerSnapshots(ctx context.Context, ls *join.Snapshot, names []string, stderr io.Writer) (*join.Snapshot, error) {
	for _, name := range names {
		raw, err := paste.ReadInput(ctx, name, nil)
		if err != nil {
			return nil, InputError{fmt.Errorf("--peer-snapshot: %w", err)}
		}
		side, pf, err := paste.ReadPeer(ctx, raw, time.Now())
		if err != nil {
			return nil, InputError{fmt.Errorf("--peer-snapshot %s: %w (it must be a snapshot saved with `tailpath status --save` on the peer, or the peer's own `tailscale status` output, whose first line is that machine, with what else it printed)", name, err)}
		}
		next, peer, err := snapshot.ApplyPeer(ls, side)
		if err != nil {
			return nil, InputError{fmt.Errorf("--peer-snapshot %s: %w", name, err)}
		}
		fmt.Fprintf(stderr, "tailpath: %s's own side of the path from %s (taken %s)\n", peer, name, pf.Taken.UTC().Format(time.RFC3339))
		ls = next
	}
	return ls, nil
}

// ReadFrom reads the inputs names of status --from (saved snapshots or
// pasted tailscale output; "-" is stdin) as one snapshot file, all its
// peers kept with all, and diagnoses it. Its errors are InputErrors.
func ReadFrom(ctx context.Context, names []string, stdin io.Reader, all bool) (*snapshot.File, *join.Snapshot, error) {
	var raws []paste.Raw
	for _, name := range names {
		raw, err := paste.ReadInput(ctx, name, stdin)
		if err != nil {
			return nil, nil, InputError{fmt.Errorf("--from: %w", err)}
		}
		raws = append(raws, raw)
	}
	file, err := paste.Parse(raws, time.Now())
	if err != nil {
		return nil, nil, InputError{fmt.Errorf("--from: %w", err)}
	}
	file.All = file.All || all
	ls, err := file.Diagnose(ctx)
	if err != nil {
		return nil, nil, InputError{fmt.Errorf("--from: %w", err)}
	}
	return file, ls, nil
}
