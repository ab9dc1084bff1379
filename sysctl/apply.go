package sysctl

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Writer reads and writes sysctl keys. Host implements it; tests wrap it to
// inject faults.
type Writer interface {
	ReadRaw(key string) (string, error)
	WriteRaw(key, value string) error
}

// Managed lists the keys tailpath may write, and so the only keys a state
// file or ApplyRecorded may name.
var Managed = []string{
	KeyTCPRmem, KeyTCPWmem, KeyRmemMax, KeyWmemMax,
	KeyCongestionControl, KeyDefaultQdisc,
	KeyMTUProbing, KeySlowStartAfterIdle, KeyNotsentLowat,
}

// knownQdiscs are qdisc names default_qdisc accepts on mainline kernels.
var knownQdiscs = map[string]bool{
	"fq": true, "fq_codel": true, "pfifo_fast": true, "cake": true, "sfq": true,
	"codel": true, "fq_pie": true, "pie": true, "pfifo": true, "bfifo": true, "noqueue": true,
}

// ValidateValue checks one value for key without touching the system.
// ccAvailable decides which congestion control names are acceptable (nil accepts any
// well-formed name). Errors wrap ErrInvalid, or ErrBadKey for a key tailpath
// does not manage.
func ValidateValue(key, value string, ccAvailable func(string) bool) error {
	v := Normalize(value)
	intIn := func(lo, hi int64) error {
		n, err := parseInt(v)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%s: %w: %d is outside %d…%d", key, ErrInvalid, n, lo, hi)
		}
		return nil
	}
	switch key {
	case KeyTCPRmem, KeyTCPWmem:
		if _, err := ParseTriple(v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	case KeyRmemMax, KeyWmemMax:
		return intIn(1, maxBufferBytes)
	case KeyNotsentLowat:
		return intIn(0, 1<<32-1)
	case KeyMTUProbing:
		return intIn(0, 2)
	case KeySlowStartAfterIdle:
		return intIn(0, 1)
	case KeyCongestionControl:
		if v == "" || strings.IndexFunc(v, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			return fmt.Errorf("%s: %w: %q is not a congestion control name", key, ErrInvalid, value)
		}
		if ccAvailable != nil && !ccAvailable(v) {
			return fmt.Errorf("%s: %w: congestion control %q is not available on this kernel (see tcp_available_congestion_control)", key, ErrInvalid, v)
		}
		return nil
	case KeyDefaultQdisc:
		if !knownQdiscs[v] {
			return fmt.Errorf("%s: %w: unknown qdisc %q", key, ErrInvalid, v)
		}
		return nil
	}
	return fmt.Errorf("%w %q: not a key tailpath tune manages", ErrBadKey, key)
}

// Validate checks every change (values, min ≤ default ≤ max, known
// congestion control, no key twice) before anything is written.
func Validate(changes []Change, ccAvailable func(string) bool) error {
	seen := map[string]bool{}
	var errs []error
	for _, c := range changes {
		if seen[c.Key] {
			errs = append(errs, fmt.Errorf("%w: %s appears twice", ErrInvalid, c.Key))
			continue
		}
		seen[c.Key] = true
		if err := ValidateValue(c.Key, c.New, ccAvailable); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CCChecker returns a ccAvailable function accepting the available algorithms and,
// when bbr can be loaded, "bbr".
func CCChecker(s Settings, bbr *BBRStatus) func(string) bool {
	return func(name string) bool {
		if s.HasCC(name) {
			return true
		}
		return name == "bbr" && bbr != nil && bbr.CanWork()
	}
}

// Failure is the key that stopped an apply and why.
type Failure struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Err   string `json:"err"`
}

// ApplyResult says exactly what an apply or revert did.
type ApplyResult struct {
	// Planned are the changes with Old re-read just before writing.
	Planned []Change `json:"planned"`
	// Written are the keys written and verified by read-back, in order.
	// After a failure they were rolled back (see RolledBack).
	Written []Change `json:"written"`
	// Failed is the key that failed; nil on success.
	Failed *Failure `json:"failed,omitempty"`
	// RolledBack are the keys restored to Old after a failure.
	RolledBack []Change `json:"rolled_back,omitempty"`
	// RollbackErrors lists keys that could not be restored: the system is
	// left partly changed and these need a person.
	RollbackErrors []string `json:"rollback_errors,omitempty"`
}

// Report renders the result as lines a person reads.
func (r ApplyResult) Report() string {
	var b strings.Builder
	for _, c := range r.Written {
		fmt.Fprintf(&b, "set %s\n", c)
	}
	if r.Failed != nil {
		fmt.Fprintf(&b, "FAILED %s = %s: %s\n", r.Failed.Key, r.Failed.Value, r.Failed.Err)
		for _, c := range r.RolledBack {
			fmt.Fprintf(&b, "restored %s to %s\n", c.Key, orNone(Normalize(c.Old)))
		}
		for _, e := range r.RollbackErrors {
			fmt.Fprintf(&b, "NOT RESTORED: %s\n", e)
		}
		if len(r.RollbackErrors) == 0 {
			fmt.Fprintf(&b, "nothing changed: every key written was restored\n")
		}
	}
	return b.String()
}

// applyCore writes validated changes in order, reading each back to
// verify; on the first failure it restores every key already written (in
// reverse order). Changes whose current value already equals New are
// skipped.
func applyCore(w Writer, changes []Change) (ApplyResult, error) {
	var res ApplyResult
	for _, c := range changes {
		old, err := w.ReadRaw(c.Key)
		if err != nil {
			return res, fmt.Errorf("nothing written: reading current value: %w", err)
		}
		// Keep the value exactly as the kernel printed it (tabs included):
		// a rollback writes back the same bytes.
		c.Old = strings.TrimRight(old, "\n")
		if SameValue(c.Old, c.New) {
			continue
		}
		// New is written as given: a revert writes back the exact bytes it recorded.
		res.Planned = append(res.Planned, c)
	}
	var cause error
	for _, c := range res.Planned {
		if err := writeVerify(w, c.Key, c.New); err != nil {
			res.Failed = &Failure{Key: c.Key, Value: c.New, Err: err.Error()}
			cause = err
			break
		}
		res.Written = append(res.Written, c)
	}
	if cause == nil {
		return res, nil
	}
	// The failed key itself may have changed (a write the read-back
	// rejected, a partial write): restore it too when it differs.
	restore := append([]Change(nil), res.Written...)
	failed := res.Planned[len(res.Written)]
	if now, err := w.ReadRaw(failed.Key); err != nil || !SameValue(now, failed.Old) {
		restore = append(restore, failed)
	}
	for i := len(restore) - 1; i >= 0; i-- {
		c := restore[i]
		if err := writeVerify(w, c.Key, c.Old); err != nil {
			res.RollbackErrors = append(res.RollbackErrors, fmt.Sprintf("%s (wanted %s back): %v", c.Key, c.Old, err))
			continue
		}
		res.RolledBack = append(res.RolledBack, c)
	}
	if len(res.RollbackErrors) > 0 {
		return res, fmt.Errorf("applying %s failed and %d key(s) could not be restored: %w", res.Failed.Key, len(res.RollbackErrors), cause)
	}
	if len(res.RolledBack) == 0 {
		return res, fmt.Errorf("applying %s failed; nothing was changed: %w", res.Failed.Key, cause)
	}
	return res, fmt.Errorf("applying %s failed; restored the %d key(s) already written: %w", res.Failed.Key, len(res.RolledBack), cause)
}

// writeVerify writes value to key and reads it back.
func writeVerify(w Writer, key, value string) error {
	if err := w.WriteRaw(key, value); err != nil {
		return err
	}
	got, err := w.ReadRaw(key)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", key, err)
	}
	if !SameValue(got, value) {
		return fmt.Errorf("sysctl %s: wrote %q but read back %q (the kernel adjusted or refused it)", key, Normalize(value), Normalize(got))
	}
	return nil
}

// NeedRootError is an error wrapping os.ErrPermission that prints the
// exact sudo command to run. cmdline is the command as the person typed
// it, without "sudo".
func NeedRootError(cmdline []string) error {
	if len(cmdline) == 0 {
		cmdline = []string{"tailpath", "tune"}
	}
	return fmt.Errorf("%w: changing sysctls needs root; run:\n  sudo %s", os.ErrPermission, ShellCommand(cmdline))
}

// ShellCommand joins args into a command line a POSIX shell reads back as
// the same words (single-quoting where needed).
func ShellCommand(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
