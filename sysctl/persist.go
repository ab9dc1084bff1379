package sysctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// PersistMethod says how --persist keeps the values across a reboot.
type PersistMethod string

const (
	// PersistSysctlD writes <SysctlDir>/99-tailpath.conf, which
	// systemd-sysctl (or OpenWrt's sysctl service) applies at boot.
	PersistSysctlD PersistMethod = "sysctl.d"
	// PersistDSMScript writes /usr/local/etc/rc.d/tailpath-sysctl.sh, which
	// Synology DSM runs with "start" at boot and keeps across updates.
	PersistDSMScript PersistMethod = "dsm-rc.d"
	// PersistUnraidGo inserts a marked block into /boot/config/go, which
	// Unraid runs at boot from the flash drive.
	PersistUnraidGo PersistMethod = "unraid-go"
	// PersistMidclt creates TrueNAS tunables through `midclt call -j
	// tunable.create`, stored in TrueNAS's configuration database.
	PersistMidclt PersistMethod = "truenas-midclt"
	// PersistSteps writes nothing: the plan's Steps say what to do by hand.
	PersistSteps PersistMethod = "steps"
)

// Names and markers of what --persist writes. Every artefact carries a
// marker, and --revert removes only what still carries it.
const (
	// PersistFile is the file name written in the sysctl.d directory.
	PersistFile = "99-tailpath.conf"
	// DSMScript is the boot script written in /usr/local/etc/rc.d on DSM.
	DSMScript = "tailpath-sysctl.sh"
	// Marker is the comment that marks a file tailpath wrote.
	Marker = "Written by tailpath tune"
	// TunableComment is the comment of every TrueNAS tunable tailpath creates.
	TunableComment = "tailpath tune"
	blockBegin     = "# BEGIN tailpath tune: `tailpath tune --revert` removes this block"
	blockEnd       = "# END tailpath tune"
	dsmScriptDir   = "/usr/local/etc/rc.d"
	unraidGo       = "/boot/config/go"
)

// ErrNotPersisted is wrapped when --persist could not keep the values: the
// values are applied but will not survive a reboot.
var ErrNotPersisted = errors.New("not persisted")

// PersistPlan says where and how --persist keeps values on this platform,
// before anything is written.
type PersistPlan struct {
	Platform Platform      `json:"platform"`
	Method   PersistMethod `json:"method"`
	// Path is the file written or edited, under the host's root; empty for
	// PersistMidclt and PersistSteps.
	Path string `json:"path,omitempty"`
	// Text is the file (sysctl.d, DSM script) or block (Unraid) to write.
	Text string `json:"text,omitempty"`
	// Where says in words where the values go and what applies them at boot.
	Where string `json:"where"`
	// Why says why nothing is written, for PersistSteps.
	Why string `json:"why,omitempty"`
	// Steps are what a person does by hand, for PersistSteps.
	Steps []string `json:"steps,omitempty"`
	// Note is extra advice that still applies after writing (OpenWrt's sysupgrade).
	Note string `json:"note,omitempty"`
	// Changes are the key = value pairs persisted.
	Changes []Change `json:"changes"`
	// midclt is the TrueNAS client to run for PersistMidclt.
	midclt string
}

// Persisted records what ApplyPersist wrote, so Revert removes exactly that.
type Persisted struct {
	Method PersistMethod `json:"method"`
	// Path is the file written or edited (absolute).
	Path string `json:"path,omitempty"`
	// Block is the exact text inserted into Path (PersistUnraidGo).
	Block string `json:"block,omitempty"`
	// Tunables are the ids of the TrueNAS tunables created (PersistMidclt).
	Tunables []int64 `json:"tunables,omitempty"`
	// Midclt was the TrueNAS client used, as older versions recorded it.
	// It is read and ignored: revert runs the host's own midclt
	// (Host.midcltPath), never a program a state file names.
	Midclt string `json:"midclt,omitempty"`
	// CreatedDirs are directories created for Path, deepest first; revert
	// removes them when they are empty.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

// PersistWhere describes, in one line, where --persist would keep values
// on p (for the report, before anything is applied).
func (h Host) PersistWhere(p Platform) string {
	plan := h.PlanPersist(p, nil, nil)
	if plan.Method == PersistSteps {
		return "nothing written: " + plan.Why + "; --persist prints the steps"
	}
	return plan.Where
}

// PlanPersist decides where changes go on platform p. It does no writing;
// header lines become comments in what is written.
func (h Host) PlanPersist(p Platform, changes []Change, header []string) PersistPlan {
	plan := PersistPlan{Platform: p, Changes: changes}
	var comments strings.Builder
	for _, l := range header {
		comments.WriteString("# " + strings.ReplaceAll(l, "\n", " ") + "\n")
	}
	cmds := sysctlCommands(changes)
	switch p.Kind {
	case PlatformDSM:
		plan.Method, plan.Path = PersistDSMScript, h.At(dsmScriptDir+"/"+DSMScript)
		plan.Where = "boot script " + h.onSystem(plan.Path) + " (DSM runs it with start at boot and keeps it across updates)"
		var b strings.Builder
		b.WriteString("#!/bin/sh\n# " + Marker + "; `tailpath tune --revert` removes this file.\n")
		b.WriteString(comments.String())
		b.WriteString("# DSM runs executable *.sh scripts in " + dsmScriptDir + " with \"start\" at boot.\n")
		b.WriteString("case \"$1\" in\nstart)\n")
		for _, c := range cmds {
			b.WriteString("\t" + c + "\n")
		}
		b.WriteString("\t;;\nesac\nexit 0\n")
		plan.Text = b.String()
	case PlatformUnraid:
		plan.Method, plan.Path = PersistUnraidGo, h.At(unraidGo)
		plan.Where = "a marked block in " + h.onSystem(plan.Path) + " (Unraid runs it at boot from the flash drive; the root filesystem is in RAM)"
		var b strings.Builder
		b.WriteString(blockBegin + "\n")
		b.WriteString(comments.String())
		for _, c := range cmds {
			b.WriteString(c + "\n")
		}
		b.WriteString(blockEnd + "\n")
		plan.Text = b.String()
	case PlatformTrueNAS:
		plan.midclt = h.midcltPath()
		if plan.midclt != "" {
			plan.Method = PersistMidclt
			plan.Where = fmt.Sprintf("TrueNAS tunables (System › Advanced Settings › Sysctl), comment %q, through %s", TunableComment, plan.midclt)
			break
		}
		plan.Method = PersistSteps
		plan.Why = "TrueNAS keeps sysctls in its configuration database and replaces files under /etc, and midclt is not available here"
		plan.Steps = append([]string{
			"In the TrueNAS web UI: System › Advanced Settings › Sysctl › Add, once per line below (Variable, Value, Description \"" + TunableComment + "\", Enabled).",
			"Or as root in the TrueNAS shell, one command per key:",
		}, midcltCreateCommands(changes)...)
	case PlatformQNAP:
		plan.Method = PersistSteps
		plan.Why = "QNAP runs no boot script tailpath may write without the autorun.sh option"
		plan.Steps = append([]string{
			"Control Panel › System › Hardware › General: tick \"Run user defined processes during startup\" (QTS 4.3.3 or later).",
			"Add these lines to autorun.sh on the boot device's configuration partition (QNAP's guide \"Running Your Own Application at Startup\" says how to mount it):",
		}, cmds...)
		plan.Steps = append(plan.Steps, "Reboot, then check with: tailpath tune")
	case PlatformOMV, PlatformOpenWrt, PlatformSystemd:
		plan.Method, plan.Path = PersistSysctlD, filepath.Join(h.sysctlDir(), PersistFile)
		switch p.Kind {
		case PlatformOpenWrt:
			plan.Where = h.onSystem(plan.Path) + " (OpenWrt's sysctl service applies /etc/sysctl.d at boot)"
			plan.Note = "sysupgrade keeps " + "/etc/sysctl.d/" + PersistFile + " only when listed in /etc/sysupgrade.conf: add that line there to keep it across upgrades"
		case PlatformOMV:
			plan.Where = h.onSystem(plan.Path) + " (systemd-sysctl applies /etc/sysctl.d at boot; openmediavault leaves files it did not write alone)"
		default:
			plan.Where = h.onSystem(plan.Path) + " (systemd-sysctl applies /etc/sysctl.d at boot; later names win, so 99- comes last)"
		}
		var b strings.Builder
		b.WriteString("# " + Marker + "; `tailpath tune --revert` removes this file.\n")
		b.WriteString(comments.String())
		for _, c := range changes {
			fmt.Fprintf(&b, "%s = %s\n", c.Key, Normalize(c.New))
		}
		plan.Text = b.String()
	case PlatformUniFi:
		plan.byHand("UniFi OS firmware updates replace the root filesystem (/etc included); only /data survives, and tailpath writes no boot hook there",
			"Keep these commands in a script under /data (it survives firmware updates) and run it as root at every boot, e.g. from a systemd unit (UniFi OS 2 and later run systemd; a firmware update removes units in /etc/systemd/system, so reinstall it after one):",
			cmds, "Reboot, then check with: tailpath tune")
	case PlatformEdgeOS:
		plan.byHand("EdgeOS keeps only /config across firmware upgrades, and tailpath writes no boot script there",
			"Put these commands in an executable script in /config/scripts/post-config.d/ (EdgeOS runs them after every boot and keeps /config across upgrades), then chmod 755 it:",
			cmds, "Reboot, then check with: tailpath tune")
	case PlatformHAOS:
		plan.byHand("Home Assistant OS is an appliance with a read-only root filesystem and no boot script for the host's sysctls",
			"These commands last until the next reboot (as root on the host, e.g. in the SSH console with host access):",
			cmds, "Home Assistant OS offers no supported place to keep them; a value that matters must come from an OS release")
	default:
		plan.byHand("tailpath does not know how this system applies sysctls at boot (no systemd, and not a NAS system it recognises)",
			"Run these commands as root at every boot, from whatever your system runs then (an init script, /etc/rc.local, or a line per key in /etc/sysctl.conf if your system reads it at boot):",
			cmds, "Reboot, then check with: tailpath tune")
	}
	return plan
}

// byHand makes plan a PersistSteps plan: why nothing is written, the
// steps' introduction, the commands, and the last step.
func (plan *PersistPlan) byHand(why, intro string, cmds []string, last string) {
	plan.Method, plan.Why = PersistSteps, why
	plan.Steps = append(append([]string{intro}, cmds...), last)
}

// onSystem shows a path under the host's root as the system sees it
// ("/etc/sysctl.d/99-tailpath.conf" for <root>/etc/sysctl.d/…).
func (h Host) onSystem(p string) string {
	rel, err := filepath.Rel(h.root(), p)
	if err != nil || !filepath.IsLocal(rel) {
		return p
	}
	return "/" + filepath.ToSlash(rel)
}

// sysctlCommands renders each change as `sysctl -w 'key=value'`.
func sysctlCommands(changes []Change) []string {
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		out = append(out, "sysctl -w "+shellQuote(c.Key+"="+Normalize(c.New)))
	}
	return out
}

// tunableCreateArg is the JSON argument of tunable.create for one change.
func tunableCreateArg(c Change) string {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Var     string `json:"var"`
		Value   string `json:"value"`
		Comment string `json:"comment"`
		Enabled bool   `json:"enabled"`
	}{"SYSCTL", c.Key, Normalize(c.New), TunableComment, true})
	return string(b)
}

func midcltCreateCommands(changes []Change) []string {
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		out = append(out, "midclt call -j tunable.create "+shellQuote(tunableCreateArg(c)))
	}
	return out
}

// MidcltPaths are where TrueNAS SCALE installs its middleware client;
// tailpath runs midclt from these only (not from PATH, and never from a
// state file).
var MidcltPaths = []string{"/usr/bin/midclt", "/usr/local/bin/midclt"}

// midcltPath returns the TrueNAS client to run: Host.Midclt (set by the
// program, never read from a file), else on the real machine the first
// of MidcltPaths that exists and that only root can change
// (CheckTrusted), else "".
func (h Host) midcltPath() string {
	if h.Midclt != "" {
		return h.Midclt
	}
	if h.root() != "/" {
		return ""
	}
	for _, p := range MidcltPaths {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if CheckTrusted(p) != nil {
			continue
		}
		return p
	}
	return ""
}

// ApplyPersist writes what plan says and returns the record Revert needs.
// prev is what an earlier --persist wrote (nil if nothing): it is replaced,
// never left beside the new one. Writes are atomic (temporary file, fsync,
// rename); on TrueNAS a failed tunable.create deletes the tunables already
// created. For PersistSteps nothing is written and the error wraps
// ErrNotPersisted. Errors leave nothing new behind.
func (h Host) ApplyPersist(ctx context.Context, plan PersistPlan, prev *Persisted) (Persisted, error) {
	if err := Validate(plan.Changes, nil); err != nil {
		return Persisted{}, fmt.Errorf("nothing persisted: %w", err)
	}
	rec := Persisted{Method: plan.Method, Path: plan.Path}
	if prev != nil && (prev.Method != plan.Method || prev.Path != plan.Path) {
		// The platform changed under an old record: remove the old artefact.
		if err := h.RemovePersisted(ctx, *prev); err != nil {
			return Persisted{}, fmt.Errorf("nothing persisted: removing what an earlier --persist wrote: %w", err)
		}
		prev = nil
	}
	switch plan.Method {
	case PersistSysctlD, PersistDSMScript:
		perm := fs.FileMode(0o644)
		if plan.Method == PersistDSMScript {
			perm = 0o755
		}
		created, err := mkdirRecord(filepath.Dir(plan.Path))
		if err != nil {
			return Persisted{}, fmt.Errorf("nothing persisted: %w", err)
		}
		if prev != nil {
			created = prev.CreatedDirs
		} else if err := refuseForeign(plan.Path); err != nil {
			removeDirs(created)
			return Persisted{}, err
		}
		rec.CreatedDirs = created
		if err := WriteFileAtomic(plan.Path, []byte(plan.Text), perm); err != nil {
			removeDirs(created)
			return Persisted{}, fmt.Errorf("nothing persisted: %w", err)
		}
		return rec, nil
	case PersistUnraidGo:
		cur, err := os.ReadFile(plan.Path)
		if err != nil {
			return Persisted{}, fmt.Errorf("nothing persisted: %w (is the Unraid flash drive mounted at /boot?)", err)
		}
		orig := string(cur)
		if prev != nil {
			orig, _ = removeBlock(orig, prev.Block)
		}
		next, inserted := insertBlock(orig, plan.Text)
		if err := rewriteFile(plan.Path, []byte(next)); err != nil {
			return Persisted{}, fmt.Errorf("nothing persisted: %w", err)
		}
		rec.Block = inserted
		return rec, nil
	case PersistMidclt:
		if prev != nil {
			if err := h.RemovePersisted(ctx, *prev); err != nil {
				return Persisted{}, fmt.Errorf("nothing persisted: removing the tunables an earlier --persist created: %w", err)
			}
		}
		for _, c := range plan.Changes {
			out, err := runMidclt(ctx, plan.midclt, "call", "-j", "-jp", "description", "tunable.create", tunableCreateArg(c))
			var id int64
			if err == nil {
				id, err = ParseTunableCreated(out, c.Key)
			}
			if err != nil {
				undo := deleteTunables(ctx, plan.midclt, rec.Tunables)
				msg := fmt.Sprintf("nothing persisted: creating the TrueNAS tunable %s failed: %v", c.Key, err)
				if undo != nil {
					msg += fmt.Sprintf("; removing the %d tunable(s) already created also failed (%v): delete those with comment %q in System › Advanced Settings › Sysctl", len(rec.Tunables), undo, TunableComment)
				}
				return Persisted{}, fmt.Errorf("%s: %w", msg, ErrNotPersisted)
			}
			rec.Tunables = append(rec.Tunables, id)
		}
		return rec, nil
	}
	return Persisted{}, fmt.Errorf("%w: %s", ErrNotPersisted, plan.Why)
}

// refuseForeign fails when path exists without tailpath's marker: it is
// someone else's file and must not be replaced.
func refuseForeign(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("nothing persisted: %w", err)
	}
	if !bytes.Contains(b, []byte(Marker)) {
		return fmt.Errorf("nothing persisted: %s exists and was not written by tailpath; move it away or merge the values by hand: %w", path, ErrNotPersisted)
	}
	return nil
}

// RemovePersisted undoes what ApplyPersist recorded: it removes a file only
// while it still carries tailpath's marker, only the exact block from
// Unraid's go file, and only TrueNAS tunables whose comment is still
// TunableComment (through h's midclt: rec.Midclt is ignored); then the
// directories it created, when empty. A file already gone is not an
// error.
func (h Host) RemovePersisted(ctx context.Context, rec Persisted) error {
	switch rec.Method {
	case PersistSysctlD, PersistDSMScript:
		b, err := os.ReadFile(rec.Path)
		if errors.Is(err, fs.ErrNotExist) {
			removeDirs(rec.CreatedDirs)
			return nil
		}
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte(Marker)) {
			return fmt.Errorf("%s no longer carries tailpath's marker (%q), so it was left in place: check it and delete it by hand", rec.Path, Marker)
		}
		if err := os.Remove(rec.Path); err != nil {
			return fmt.Errorf("removing %s: %w (delete it by hand)", rec.Path, err)
		}
		removeDirs(rec.CreatedDirs)
		return nil
	case PersistUnraidGo:
		b, err := os.ReadFile(rec.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		next, found := removeBlock(string(b), rec.Block)
		if !found {
			return nil
		}
		if err := rewriteFile(rec.Path, []byte(next)); err != nil {
			return fmt.Errorf("removing tailpath's block from %s: %w (delete the lines from %q to %q by hand)", rec.Path, err, blockBegin, blockEnd)
		}
		return nil
	case PersistMidclt:
		midclt := h.midcltPath()
		if midclt == "" {
			return fmt.Errorf("midclt is not available to delete TrueNAS tunables %v: delete those with comment %q in System › Advanced Settings › Sysctl", rec.Tunables, TunableComment)
		}
		var ours []int64
		for _, id := range rec.Tunables {
			out, err := runMidclt(ctx, midclt, "call", "tunable.query", fmt.Sprintf(`[["id","=",%d]]`, id))
			if err != nil {
				return fmt.Errorf("looking up TrueNAS tunable %d: %w", id, err)
			}
			ts, err := ParseTunables(out)
			if err != nil {
				return fmt.Errorf("looking up TrueNAS tunable %d: %w", id, err)
			}
			if len(ts) == 1 && ts[0].Comment == TunableComment {
				ours = append(ours, id)
			}
		}
		if err := deleteTunables(ctx, midclt, ours); err != nil {
			return fmt.Errorf("deleting TrueNAS tunables %v: %w (delete them in System › Advanced Settings › Sysctl)", ours, err)
		}
		return nil
	case PersistSteps, "":
		return nil
	}
	return fmt.Errorf("unknown persist method %q", rec.Method)
}

// insertBlock puts block after a leading #! line (or at the top) and
// returns the new text and the exact bytes inserted.
func insertBlock(orig, block string) (next, inserted string) {
	if strings.HasPrefix(orig, "#!") {
		if i := strings.IndexByte(orig, '\n'); i >= 0 {
			return orig[:i+1] + block + orig[i+1:], block
		}
		return orig + "\n" + block, "\n" + block
	}
	return block + orig, block
}

// removeBlock removes the exact inserted text when present, else the lines
// from blockBegin through blockEnd (edited in between). found is false when
// neither is there.
func removeBlock(text, inserted string) (string, bool) {
	if inserted != "" {
		if i := strings.Index(text, inserted); i >= 0 {
			return text[:i] + text[i+len(inserted):], true
		}
	}
	i := strings.Index(text, blockBegin)
	if i < 0 || (i > 0 && text[i-1] != '\n') {
		return text, false
	}
	rest := text[i:]
	j := strings.Index(rest, "\n"+blockEnd)
	if j < 0 {
		return text, false
	}
	end := i + j + 1 + len(blockEnd)
	if end < len(text) && text[end] == '\n' {
		end++
	}
	return text[:i] + text[end:], true
}

// rewriteFile replaces path atomically keeping its permission bits (the
// chmod is best effort: Unraid's /boot is FAT, which has none).
func rewriteFile(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return writeAtomic(path, data, fi.Mode().Perm(), false)
}

// mkdirRecord creates dir and its missing parents (0755) and returns the
// ones it created, deepest first.
func mkdirRecord(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	return missing, nil
}

// removeDirs removes each directory when empty, deepest first.
func removeDirs(dirs []string) {
	for _, d := range dirs {
		os.Remove(d)
	}
}

// midcltTimeout bounds one midclt call (tunable.create is a middleware job).
const midcltTimeout = 60 * time.Second

// runMidclt runs midclt with args and returns its stdout. A non-zero exit
// becomes an error carrying midclt's stderr (cleaned, cut to 300 bytes).
func runMidclt(ctx context.Context, midclt string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, midcltTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, midclt, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(safetext.Clean(strings.ReplaceAll(stderr.String(), "\n", " ")))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		if msg == "" {
			return nil, fmt.Errorf("%s %s: %w", filepath.Base(midclt), strings.Join(args[:min(len(args), 4)], " "), err)
		}
		return nil, fmt.Errorf("%s %s: %w: %s", filepath.Base(midclt), strings.Join(args[:min(len(args), 4)], " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// deleteTunables deletes TrueNAS tunables by id, last first.
func deleteTunables(ctx context.Context, midclt string, ids []int64) error {
	var errs []error
	for i := len(ids) - 1; i >= 0; i-- {
		if _, err := runMidclt(ctx, midclt, "call", "-j", "-jp", "description", "tunable.delete", strconv.FormatInt(ids[i], 10)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Tunable is one TrueNAS tunable as tunable.create and tunable.query return it.
type Tunable struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"`
	Var     string `json:"var"`
	Value   string `json:"value"`
	Comment string `json:"comment"`
	Enabled bool   `json:"enabled"`
}

// lastJSONLine returns the last line of out that starts like JSON: midclt
// prints the result as one line of JSON on stdout, and nothing else there
// unless something went wrong ("Failed to login: …" with exit code 0).
func lastJSONLine(out []byte, open byte) ([]byte, error) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) > 0 && l[0] == open {
			return l, nil
		}
	}
	s := strings.TrimSpace(safetext.Clean(string(out)))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return nil, fmt.Errorf("midclt printed no JSON result: %q", s)
}

// ParseTunableCreated reads the tunable that `midclt call -j tunable.create`
// printed and returns its id, checking it is the tunable for key. Errors
// say what midclt printed instead.
func ParseTunableCreated(out []byte, key string) (int64, error) {
	l, err := lastJSONLine(out, '{')
	if err != nil {
		return 0, err
	}
	var t Tunable
	if err := json.Unmarshal(l, &t); err != nil {
		return 0, fmt.Errorf("midclt result is not a tunable: %v", err)
	}
	if t.ID <= 0 || t.Var != key {
		return 0, fmt.Errorf("midclt returned tunable id %d for %q, want a positive id for %s", t.ID, cleanField(t.Var), key)
	}
	return t.ID, nil
}

// ParseTunables reads the list `midclt call tunable.query` printed.
func ParseTunables(out []byte) ([]Tunable, error) {
	l, err := lastJSONLine(out, '[')
	if err != nil {
		return nil, err
	}
	var ts []Tunable
	if err := json.Unmarshal(l, &ts); err != nil {
		return nil, fmt.Errorf("midclt result is not a list of tunables: %v", err)
	}
	return ts, nil
}
