//go:build !linux

package firewall

func inboundUDP(port uint16) (Result, error) {
	return Result{Port: port, Verdict: Unknown, Why: ErrNotSupported.Error()}, ErrNotSupported
}
