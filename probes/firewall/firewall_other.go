//go:build !linux

package firewall

func readRules() func(port uint16) (Result, error) {
	return func(port uint16) (Result, error) {
		return Result{Port: port, Verdict: Unknown, Why: ErrNotSupported.Error()}, ErrNotSupported
	}
}
