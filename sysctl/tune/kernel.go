package tune

import (
	"fmt"

	"github.com/tailpath/tailpath/sysctl"
)

// kernelFacts matches this kernel against sysctl.KernelBugs. A hit whose
// client workaround the tailscaled here already has is marked mitigated:
// shown, but not the limit.
func (r *Report) kernelFacts(in Inputs) {
	version, _ := in.Host.ReadRaw(sysctl.KernelKeyVersion)
	for _, h := range sysctl.MatchKernel(r.BBR.Kernel, sysctl.Normalize(version), sysctl.KernelBugs) {
		k := KernelHit{KernelHit: h}
		if fix := h.Bug.ClientFix; fix != "" && r.Tailscale != "" {
			fma, fmi, _ := sysctl.ParseKernelVersion(fix)
			if after, known := versionAtLeast(r.Tailscale, fma, fmi); known && after {
				k.Mitigated = fmt.Sprintf("tailscaled %s (%s) has the workaround (%s and later)", r.Tailscale, r.TailscaleFrom, fix)
			}
		}
		r.Kernel = append(r.Kernel, k)
	}
}

// limitNoun names a limit kind in a sentence ("the path").
func limitNoun(k LimitKind) string {
	switch k {
	case LimitPath:
		return "the relayed path"
	case LimitKernel:
		return "a kernel regression"
	case LimitCPU:
		return "the CPU"
	case LimitOffload:
		return "an offload setting"
	case LimitForwarding:
		return "the forwarding path"
	}
	return string(k)
}
