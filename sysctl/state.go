package sysctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StateVersion is the state file format version.
const StateVersion = 1

// State records what tailpath changed so `tailpath tune --revert` can put it
// back: for each key, the value before tailpath first changed it (Old) and
// what tailpath last set (New).
type State struct {
	Version int       `json:"version"`
	Saved   time.Time `json:"saved"`
	// Keys are in the order they were first applied.
	Keys []Change `json:"keys"`
	// Persisted is the sysctl.d file an older tailpath wrote; empty if none.
	// Kept so --revert still removes it; new records use Persist.
	Persisted string `json:"persisted,omitempty"`
	// Persist is what --persist wrote (boot script, go-file block, sysctl.d
	// file or TrueNAS tunables); nil if nothing.
	Persist *Persisted `json:"persist,omitempty"`
}

// RootStatePath is where root keeps the revert state.
const RootStatePath = "/var/lib/tailpath/tune-state.json"

// DefaultStatePath is RootStatePath for root, whatever the environment
// says: XDG_STATE_HOME survives `sudo -E`, `su` without `-` and sudo's
// env_keep, so it may name a directory another user controls. For anyone
// else it is $XDG_STATE_HOME/tailpath/tune-state.json when that is set
// (absolute), else RootStatePath.
func DefaultStatePath() string {
	if geteuid() != 0 {
		if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "tailpath", "tune-state.json")
		}
	}
	return RootStatePath
}

// StatePath is where h keeps the revert state: DefaultStatePath() on the
// real host, and var/lib/tailpath/tune-state.json under Root for a host
// rooted elsewhere (a sandbox copy), so applying to a copy never writes
// the machine's own state file.
func (h Host) StatePath() string {
	if h.Root != "" && filepath.Clean(h.Root) != "/" {
		return filepath.Join(h.Root, "var", "lib", "tailpath", "tune-state.json")
	}
	return DefaultStatePath()
}

// LoadState reads a state file. A missing file returns an error matching
// fs.ErrNotExist; as root, a file that someone other than root could have
// written (checkStateTrust) returns an error wrapping ErrUntrusted;
// anything unparsable, of another version, naming a key tailpath does not
// manage, or holding an invalid value returns an error wrapping
// ErrCorruptState.
func LoadState(path string) (State, error) {
	b, err := readState(path)
	if err != nil {
		return State{}, err
	}
	return ParseState(b, path)
}

// maxStateBytes bounds a state file read: tailpath writes a few hundred
// bytes.
const maxStateBytes = 1 << 20

// testHookStateChecked runs after readState's checks of the path and
// before the file is opened (tests swap the file there).
var testHookStateChecked = func(string) {}

// readState reads the state file at path. As root, the path is checked
// first (checkStateTrust: the directories above it), then the file is
// opened once, without following a link, and the open file itself is
// checked (checkStateFile: a regular file of root's that nobody else
// may write) and read from that descriptor: what is read is what was
// checked, whatever is put at the path meanwhile (a sticky /tmp lets
// anyone add a file there between a check and a read).
func readState(path string) ([]byte, error) {
	root := geteuid() == 0
	if root {
		if err := checkStateTrust(path); err != nil {
			return nil, err
		}
	}
	testHookStateChecked(path)
	f, err := openNoFollow(path)
	if err != nil {
		if isSymlinkRefused(err) {
			return nil, fmt.Errorf("refusing the tune state file %s: %w: it is a symbolic link; give the file itself (root keeps it in %s)", path, ErrUntrusted, RootStatePath)
		}
		return nil, err
	}
	defer f.Close()
	if root {
		if err := checkStateFile(f, path); err != nil {
			return nil, fmt.Errorf("refusing the tune state file %s: %w (root keeps it in %s)", path, err, RootStatePath)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxStateBytes {
		return nil, fmt.Errorf("%w %s: more than %d bytes (tailpath writes a few hundred); delete it after checking the values by hand", ErrCorruptState, path, maxStateBytes)
	}
	return b, nil
}

// checkStateFile checks the open state file f (at path) for root: a
// regular file, owned by root, that group and others may not write
// (trustedEntry, on f's own fstat, not the path's). In a directory others
// may add to (world-writable or sticky, /tmp) only root may own it.
func checkStateFile(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrUntrusted, path)
	}
	if err := trustedEntry(path, fi); err != nil {
		return err
	}
	if di, err := os.Stat(filepath.Dir(path)); err == nil && (di.Mode().Perm()&0o002 != 0 || di.Mode()&fs.ModeSticky != 0) {
		if uid, ok := fileOwner(fi); ok && uid != 0 {
			return fmt.Errorf("%w: %s is owned by uid %d in %s, a directory others may add to; only a file of root's is read there", ErrUntrusted, path, uid, filepath.Dir(path))
		}
	}
	return nil
}

// checkStateTrust refuses, when running as root, a state file that root
// must not trust (CheckTrusted): revert writes sysctls and removes files
// from what it records, so a file another user can write would let them
// choose both. Others (who cannot apply anything) are not checked.
func checkStateTrust(path string) error {
	if geteuid() != 0 {
		return nil
	}
	if err := CheckTrusted(path); err != nil {
		return fmt.Errorf("refusing the tune state file %s: %w (root keeps it in %s)", path, err, RootStatePath)
	}
	return nil
}

// ParseState parses state file bytes (name is for messages). Errors wrap
// ErrCorruptState.
func ParseState(b []byte, name string) (State, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s; delete it after checking the values by hand", ErrCorruptState, name, fmt.Sprintf(format, a...))
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return State{}, bad("%v", err)
	}
	if dec.More() {
		return State{}, bad("trailing data after the JSON object")
	}
	if s.Version != StateVersion {
		return State{}, bad("version %d, want %d", s.Version, StateVersion)
	}
	seen := map[string]bool{}
	for _, c := range s.Keys {
		if seen[c.Key] {
			return State{}, bad("key %s appears twice", c.Key)
		}
		seen[c.Key] = true
		if c.Old == "" {
			return State{}, bad("key %s has no previous value", c.Key)
		}
		if err := validateRestore(c.Key, c.Old); err != nil {
			return State{}, bad("previous value of %v", err)
		}
		// What tailpath set is persisted from here: validated as on apply.
		if err := ValidateValue(c.Key, c.New, nil); err != nil {
			return State{}, bad("value set of %v", err)
		}
	}
	if s.Persisted != "" && (!filepath.IsAbs(s.Persisted) || filepath.Base(s.Persisted) != PersistFile) {
		return State{}, bad("persisted path %q is not a %s file", s.Persisted, PersistFile)
	}
	if s.Persist != nil {
		if err := s.Persist.validate(); err != nil {
			return State{}, bad("%v", err)
		}
	}
	return s, nil
}

// validate checks a record names only what --persist could have written:
// revert deletes files and TrueNAS tunables from it. (Which files is
// checked against the host too, by Host.checkPersisted.)
func (p Persisted) validate() error {
	wantBase := map[PersistMethod]string{PersistSysctlD: PersistFile, PersistDSMScript: DSMScript, PersistUnraidGo: "go"}
	switch p.Method {
	case PersistSysctlD, PersistDSMScript, PersistUnraidGo:
		if !filepath.IsAbs(p.Path) || filepath.Base(p.Path) != wantBase[p.Method] {
			return fmt.Errorf("persisted path %q is not a %s file", p.Path, wantBase[p.Method])
		}
		if p.Method == PersistUnraidGo {
			if err := validBlock(p.Block); err != nil {
				return fmt.Errorf("persisted block in %s: %w", p.Path, err)
			}
		}
		for _, d := range p.CreatedDirs {
			if rel, err := filepath.Rel(d, p.Path); err != nil || !filepath.IsAbs(d) || strings.HasPrefix(rel, "..") {
				return fmt.Errorf("created directory %q does not hold %s", d, p.Path)
			}
		}
	case PersistMidclt:
		// p.Midclt (written by older versions) is never run: revert runs
		// the host's own midclt (Host.midcltPath).
		for _, id := range p.Tunables {
			if id <= 0 {
				return fmt.Errorf("TrueNAS tunable id %d", id)
			}
		}
	case PersistSteps:
	default:
		return fmt.Errorf("unknown persist method %q", p.Method)
	}
	return nil
}

// validateRestore validates a previous value: it came from the kernel, so a
// triple need not be ordered, but it must be well-formed.
func validateRestore(key, value string) error {
	switch key {
	case KeyTCPRmem, KeyTCPWmem:
		if _, err := parseKernelTriple(value); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
	return ValidateValue(key, value, nil)
}

// Merge records applied changes, keeping the earliest Old for keys already
// recorded so repeated applies still revert to the original values.
func (s *State) Merge(applied []Change) {
	for _, c := range applied {
		found := false
		for i := range s.Keys {
			if s.Keys[i].Key == c.Key {
				s.Keys[i].New = c.New
				found = true
			}
		}
		if !found {
			s.Keys = append(s.Keys, Change{Key: c.Key, Old: c.Old, New: c.New})
		}
	}
}

// SaveState writes s to path atomically (temporary file, fsync, rename),
// creating the directory (0755) if needed; the file is 0644.
func SaveState(path string, s State) error {
	s.Version = StateVersion
	if s.Saved.IsZero() {
		s.Saved = time.Now().UTC()
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := checkStateTrust(path); err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// WriteFileAtomic writes data to path via a temporary file in the same
// directory, fsync and rename, so readers see the old or the new file,
// never a torn one. The directory is created (0755) if missing.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return writeAtomic(path, data, perm, true)
}

// writeAtomic writes data to path through a temporary file in its
// directory (fsync, rename, then the directory's fsync). The chmod to perm
// fails the write only when strictPerm (a FAT file system such as
// Unraid's /boot has no permission bits to set).
func writeAtomic(path string, data []byte, perm fs.FileMode, strictPerm bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil && strictPerm {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ApplyRecorded validates every change, then writes the keys in order,
// reading each back to verify, and on the first failure restores every key
// already written and returns an error wrapping the cause
// (os.ErrPermission, ErrReadOnly, ErrNoKey, ErrInvalid…); the result says
// exactly what happened. It records the previous values in
// the state file at statePath first (merged with any earlier record), so a
// crash mid-way still leaves a way back. A corrupt existing state file is an
// error (ErrCorruptState) before anything is written. If the apply fails and
// rolls back, the state file is restored to what it was.
func ApplyRecorded(w Writer, changes []Change, ccAvailable func(string) bool, statePath string) (ApplyResult, error) {
	if err := Validate(changes, ccAvailable); err != nil {
		return ApplyResult{}, fmt.Errorf("nothing written: %w", err)
	}
	prev, prevErr := readState(statePath)
	var st State
	switch {
	case prevErr == nil:
		var err error
		if st, err = ParseState(prev, statePath); err != nil {
			return ApplyResult{}, fmt.Errorf("nothing written: %w", err)
		}
	case errors.Is(prevErr, fs.ErrNotExist):
	default:
		return ApplyResult{}, fmt.Errorf("nothing written: reading state file: %w", prevErr)
	}
	// Record the intended changes with their current values before writing.
	var planned []Change
	for _, c := range changes {
		old, err := w.ReadRaw(c.Key)
		if err != nil {
			return ApplyResult{}, fmt.Errorf("nothing written: reading current value: %w", err)
		}
		if !SameValue(old, c.New) {
			planned = append(planned, Change{Key: c.Key, Old: strings.TrimRight(old, "\n"), New: Normalize(c.New), Why: c.Why})
		}
	}
	if len(planned) == 0 {
		return ApplyResult{}, nil
	}
	next := st
	next.Keys = append([]Change(nil), st.Keys...)
	next.Saved = time.Now().UTC()
	next.Merge(planned)
	if err := SaveState(statePath, next); err != nil {
		return ApplyResult{}, fmt.Errorf("nothing written: recording previous values: %w", err)
	}
	res, err := applyCore(w, planned) // planned ⊆ changes, validated above
	if err != nil && len(res.RollbackErrors) == 0 {
		// Everything was restored: the record must not claim otherwise.
		if prevErr == nil {
			WriteFileAtomic(statePath, prev, 0o644)
		} else {
			os.Remove(statePath)
		}
	}
	return res, err
}

// Revert restores every key recorded in the state file at statePath to its
// previous value (reverse order, verified, rolled forward again on failure
// like Apply), removes what --persist wrote (see RemovePersisted), and then
// deletes the state file. Errors: PlanRevert's (nothing written), or
// Apply's errors.
func Revert(w Writer, statePath string) (ApplyResult, error) {
	st, back, err := PlanRevert(w, statePath)
	if err != nil {
		return ApplyResult{}, err
	}
	h, _ := w.(Host) // a test's wrapped Writer: the real machine's paths
	res, err := applyCore(w, back)
	if err != nil {
		return res, err
	}
	if st.Persisted != "" {
		if err := h.RemovePersisted(context.Background(), Persisted{Method: PersistSysctlD, Path: st.Persisted}); err != nil {
			return res, fmt.Errorf("values restored, but %w", err)
		}
	}
	if st.Persist != nil {
		if err := h.RemovePersisted(context.Background(), *st.Persist); err != nil {
			return res, fmt.Errorf("values restored, but %w", err)
		}
	}
	if err := os.Remove(statePath); err != nil {
		return res, fmt.Errorf("values restored, but removing %s failed: %w", statePath, err)
	}
	return res, nil
}

// PlanRevert reads and checks the state file at statePath as Revert does,
// writing nothing, and returns it with the changes Revert would write (in
// the order it writes them: each key back to its previous value), so a
// caller can show them and ask first. Errors: fs.ErrNotExist when there
// is nothing to revert, ErrCorruptState, a state file that is not
// trusted or holds a value that cannot be restored.
func PlanRevert(w Writer, statePath string) (State, []Change, error) {
	st, err := LoadState(statePath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return State{}, nil, fmt.Errorf("nothing to revert: no state file at %s (tailpath tune --apply writes it): %w", statePath, err)
		}
		return State{}, nil, fmt.Errorf("nothing written: %w", err)
	}
	h, _ := w.(Host) // a test's wrapped Writer: the real machine's paths
	if err := h.checkState(st, statePath); err != nil {
		return State{}, nil, fmt.Errorf("nothing written: %w", err)
	}
	var back []Change
	for i := len(st.Keys) - 1; i >= 0; i-- {
		c := st.Keys[i]
		cur := c.New // what tailpath wrote, unless the key reads otherwise now
		if v, err := w.ReadRaw(c.Key); err == nil {
			cur = strings.TrimRight(v, "\n")
		}
		back = append(back, Change{Key: c.Key, Old: cur, New: c.Old, Why: "revert"})
	}
	// Previous values came from the kernel: validate them as such, so an
	// unordered triple the host had before can be put back.
	for _, c := range back {
		if err := validateRestore(c.Key, c.New); err != nil {
			return State{}, nil, fmt.Errorf("nothing written: %w", err)
		}
	}
	return st, back, nil
}

// validBlock checks an Unraid go-file block is one PlanPersist writes:
// its markers, comment lines, and `sysctl -w 'key=value'` lines of
// managed keys with valid values, nothing else (revert removes exactly
// this text from a file Unraid runs as root at boot).
func validBlock(block string) error {
	lines := strings.Split(strings.TrimPrefix(block, "\n"), "\n")
	if len(lines) < 3 || lines[0] != blockBegin || lines[len(lines)-2] != blockEnd || lines[len(lines)-1] != "" {
		return fmt.Errorf("not between tailpath's markers")
	}
	for _, l := range lines[1 : len(lines)-2] {
		if strings.HasPrefix(l, "# ") {
			continue
		}
		arg, ok := strings.CutPrefix(l, "sysctl -w ")
		if !ok {
			return fmt.Errorf("line %q is not one tailpath writes", l)
		}
		kv := strings.TrimSuffix(strings.TrimPrefix(arg, "'"), "'")
		k, v, _ := strings.Cut(kv, "=")
		if err := ValidateValue(k, v, nil); err != nil {
			return err
		}
		if arg != shellQuote(k+"="+Normalize(v)) {
			return fmt.Errorf("line %q is not one tailpath writes", l)
		}
	}
	return nil
}

// checkState checks what st says --persist wrote against what PlanPersist
// writes on h (the same file names under h's root), so a state file can
// make revert touch nothing else. path names the state file in errors.
func (h Host) checkState(st State, path string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s; delete it after checking the values by hand", ErrCorruptState, path, fmt.Sprintf(format, a...))
	}
	sysctlD := filepath.Join(h.sysctlDir(), PersistFile)
	if st.Persisted != "" && filepath.Clean(st.Persisted) != sysctlD {
		return bad("persisted path %q is not %s", st.Persisted, sysctlD)
	}
	p := st.Persist
	if p == nil {
		return nil
	}
	var want string
	switch p.Method {
	case PersistSysctlD:
		want = sysctlD
	case PersistDSMScript:
		want = h.At(dsmScriptDir + "/" + DSMScript)
	case PersistUnraidGo:
		want = h.At(unraidGo)
	default:
		return nil
	}
	if filepath.Clean(p.Path) != want {
		return bad("persisted path %q is not %s", p.Path, want)
	}
	root := filepath.Clean(h.root())
	for _, d := range p.CreatedDirs {
		if d = filepath.Clean(d); d == root || d == "/" {
			return bad("created directory %q is the root", d)
		}
	}
	return nil
}
