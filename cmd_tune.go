package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/termcolor"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// tuneFlags are `tailpath tune`'s flags.
type tuneFlags struct {
	fs        *flag.FlagSet // the flags as parsed, for the command lines tune prints
	bandwidth string        // --bandwidth: target throughput ("400Mbit"); empty means measure
	rtt       string        // --rtt: round trip to the peers that matter ("20ms"); empty means --peer or measure
	peer      string        // --peer: tailnet peer whose ping RTT to use
	headroom  float64       // --headroom: BDP multiplier (0: sysctl.DefaultHeadroom)
	bbr       bool          // --bbr: also switch to bbr (and fq where needed) when possible
	apply     bool          // --apply: write the recommended values (root)
	persist   bool          // --persist: also keep the values where this system applies them at boot (with --apply)
	bulkConns int           // --bulk-conns: bulk connections sharing tcp_mem (0: sysctl.DefaultBulkConns)
	revert    bool          // --revert: restore the values recorded by the last --apply
	json      bool          // --json: one JSON object on stdout
	yes       bool          // --yes: do not ask before applying
	state     string        // --state: revert state file (default the host's sysctl.Host.StatePath())
	root      string        // --root: treat this directory as "/" (sandbox copies, tests)
	mtuProbe  string        // --mtu-probe: peer to probe the path MTU to, instead of tuning

	// peerRTT measures the round trip to a tailnet peer by name for
	// --peer; nil makes --peer say it needs tailscaled and ask for --rtt.
	peerRTT func(ctx context.Context, peer string) (time.Duration, error)
	// probeMTU runs --mtu-probe (DISCO pings of growing size through
	// tailscaled); nil makes it say it needs tailscaled.
	probeMTU func(ctx context.Context, peer string, o tune.MTUProbeOptions) (tune.MTUProbe, error)
}

// tuneUsage is the text before the flag list of `tailpath tune -h`.
const tuneUsage = `usage: tailpath tune [flags]

Show this host's TCP buffer sysctls against what a target bandwidth × RTT
needs, with the arithmetic, BBR availability and the tailnet TCP
connections; --apply writes the recommendation (as root), --persist keeps
it where this system keeps sysctls at boot, --revert undoes both.
--mtu-probe PEER measures the path MTU to a peer instead.`

// tuneCommand is tailpath tune, measuring --peer's RTT through the local
// tailscaled.
func tuneCommand() *command {
	cmd := newTuneCommand(func(ctx context.Context, peer string) (time.Duration, error) {
		return app.PeerRTT(ctx, probes.NewClient(""), peer)
	})
	return cmd
}

// newTuneCommand is tailpath tune with peerRTT measuring --peer (nil: no
// tailscaled to measure with).
func newTuneCommand(peerRTT func(ctx context.Context, peer string) (time.Duration, error)) *command {
	f := tuneFlags{peerRTT: peerRTT}
	if peerRTT != nil {
		f.probeMTU = func(ctx context.Context, peer string, o tune.MTUProbeOptions) (tune.MTUProbe, error) {
			return app.MTUProbe(ctx, probes.NewClient(""), peer, o)
		}
	}
	fs := newFlagSet("tailpath tune")
	fs.StringVar(&f.bandwidth, "bandwidth", "", "target throughput with a unit, e.g. 400Mbit or 1Gbit (default: measured from tailnet connections, else 1Gbit)")
	fs.StringVar(&f.rtt, "rtt", "", "round-trip time to the peers that matter, with a unit, e.g. 20ms (default: --peer, else measured, else 20ms)")
	fs.StringVar(&f.peer, "peer", "", "measure the RTT with a tailnet ping to this peer (needs tailscaled)")
	fs.Float64Var(&f.headroom, "headroom", 0, fmt.Sprintf("multiply the bandwidth-delay product by this (default %g)", sysctl.DefaultHeadroom))
	fs.BoolVar(&f.bbr, "bbr", false, "also recommend bbr (and fq on kernels before 4.13) when this kernel can run it")
	fs.BoolVar(&f.apply, "apply", false, "apply the recommended values (needs root); previous values are saved for --revert")
	fs.BoolVar(&f.persist, "persist", false, "with --apply, also keep the values across a reboot where this system keeps them (/etc/sysctl.d, a DSM boot script, Unraid's /boot/config/go, TrueNAS tunables; elsewhere the steps are printed)")
	fs.IntVar(&f.bulkConns, "bulk-conns", 0, fmt.Sprintf("bulk connections expected at full buffer at once; tcp_mem is shared among them (default %d)", sysctl.DefaultBulkConns))
	fs.BoolVar(&f.revert, "revert", false, "restore the values saved by the last --apply (and remove what --persist wrote)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	fs.BoolVar(&f.yes, "yes", false, "apply without asking")
	fs.StringVar(&f.state, "state", "", "state file for --revert (default "+sysctl.DefaultStatePath()+"; with --root, DIR/var/lib/tailpath/tune-state.json)")
	fs.StringVar(&f.mtuProbe, "mtu-probe", "", "instead of tuning, find the largest packet the direct path to this peer carries (DISCO pings of growing size through tailscaled, like tailscale ping --size)")
	fs.StringVar(&f.root, "root", "", "treat this directory as / (a sandbox copy of /proc/sys; for tests and the demo)")
	f.fs = fs
	return &command{
		name:  "tune",
		short: "TCP tuning for the tailnet: current vs recommended sysctls, BBR, apply, persist, revert",
		usage: tuneUsage,
		flags: fs,
		run:   f.run,
	}
}

// setFlags are the flags set on fs as command-line words, in name order:
// "--name" for a true bool flag, "--name", "value" for others.
func setFlags(fs *flag.FlagSet) []string {
	var out []string
	if fs == nil {
		return nil
	}
	fs.Visit(func(fl *flag.Flag) {
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if fl.Value.String() == "true" {
				out = append(out, "--"+fl.Name)
			}
			return
		}
		out = append(out, "--"+fl.Name, fl.Value.String())
	})
	return out
}

func (f *tuneFlags) run(ctx context.Context, args []string, stdio IO) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if f.mtuProbe != "" {
		return f.runMTUProbe(ctx, stdio)
	}
	if runtime.GOOS != "linux" && f.root == "" {
		return fmt.Errorf("tune: %w: this is %s", tune.ErrNotLinux, runtime.GOOS)
	}
	if f.bulkConns < 0 {
		return usageErrorf("--bulk-conns %d: want a positive count (e.g. 4)", f.bulkConns)
	}
	in := tune.Inputs{Peer: f.peer, PeerRTT: f.peerRTT, Headroom: f.headroom, BBR: f.bbr, BulkConns: f.bulkConns,
		BandwidthSource: "flag --bandwidth", RTTSource: "flag --rtt"}
	if f.bandwidth != "" {
		bw, err := sysctl.ParseBandwidth(f.bandwidth)
		if err != nil {
			return usageErrorf("--bandwidth %v", err)
		}
		in.Bandwidth = bw
	}
	if f.rtt != "" {
		d, err := parseRTT(f.rtt)
		if err != nil {
			return usageErrorf("--rtt %v", err)
		}
		in.RTT = d
	}
	if f.rtt != "" && f.peer != "" {
		return usageErrorf("pass --rtt or --peer, not both")
	}
	if f.root != "" {
		in.Host, in.Sandbox = sysctl.AtRoot(f.root), true
	}
	// The command as typed, so the hints tune prints (to apply, to run
	// with sudo) keep --root, --bandwidth and the rest.
	cmdline := append([]string{"tailpath", "tune"}, setFlags(f.fs)...)
	revertCmd := []string{"tailpath", "tune"}
	if f.root != "" {
		revertCmd = append(revertCmd, "--root", f.root)
	}
	if f.state != "" {
		revertCmd = append(revertCmd, "--state", f.state)
	}
	act := tune.Action{
		Apply: f.apply, Persist: f.persist, Revert: f.revert, JSON: f.json, Yes: f.yes,
		StatePath: f.state, Cmdline: cmdline, RevertCmdline: append(revertCmd, "--revert"),
		Terminal: termcolor.IsTerminal(stdio.Stdin),
	}
	return tune.Run(ctx, in, act, stdio.Stdin, stdio.Stdout)
}

// runMTUProbe is `tailpath tune --mtu-probe PEER`: progress on stderr, the
// result on stdout (JSON with --json).
func (f *tuneFlags) runMTUProbe(ctx context.Context, stdio IO) error {
	if f.apply || f.revert || f.persist {
		return usageErrorf("--mtu-probe only measures; run it without --apply, --persist or --revert")
	}
	if f.probeMTU == nil {
		return fmt.Errorf("tune: --mtu-probe needs tailscaled")
	}
	o := tune.MTUProbeOptions{Progress: func(s string) { fmt.Fprintln(stdio.Stderr, "  "+s) }}
	if l, err := sockdiag.LinkInfo(sockdiag.TailscaleInterface); err == nil && l.MTU > 0 {
		o.TunMTU = int(l.MTU)
	}
	fmt.Fprintf(stdio.Stderr, "probing the path MTU to %s…\n", f.mtuProbe)
	r, err := f.probeMTU(ctx, f.mtuProbe, o)
	if err != nil {
		return fmt.Errorf("tune --mtu-probe %s: %w", f.mtuProbe, err)
	}
	if f.json {
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.WriteText(stdio.Stdout)
	return nil
}

// parseRTT parses a positive duration with a unit ("20ms", "1.5s"). Its
// errors start with the quoted input, to follow the flag name.
func parseRTT(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
			return 0, fmt.Errorf("%q: missing unit (e.g. %sms)", s, strings.TrimSpace(s))
		}
		return 0, fmt.Errorf("%q: not a duration (e.g. 20ms or 1.5s)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: must be positive (e.g. 20ms)", s)
	}
	return d, nil
}
