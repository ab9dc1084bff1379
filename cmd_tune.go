package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/termcolor"
	"github.com/tailpath/tailpath/probes/tailscaled"
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
	headroom  float64       // --headroom: BDP multiplier, 1 to 100
	bbr       bool          // --bbr: also switch to bbr (and fq where needed) when possible
	apply     bool          // --apply: write the recommended values (root)
	persist   bool          // --persist: also keep the values where this system applies them at boot (with --apply)
	bulkConns int           // --bulk-conns: bulk connections sharing tcp_mem, 1 to maxBulkConns
	floor     string        // --floor: smallest buffer max to raise to ("16MiB", "0"); empty means the default, and only when a change is needed
	revert    bool          // --revert: restore the values recorded by the last --apply
	json      bool          // --json: one JSON object on stdout
	yes       bool          // --yes: do not ask before applying
	state     string        // --state: revert state file (default the host's sysctl.Host.StatePath())
	root      string        // --root: treat this directory as "/" (sandbox copies, tests)
	mtuProbe  string        // --mtu-probe: peer to probe the path MTU to, instead of tuning
	socket    string        // --socket: tailscaled's LocalAPI socket ("" the platform's default)
	observed  string        // --observed: throughput seen through this box ("0.5Mbit"); empty means unknown

	// daemon is what tune asks tailscaled; nil makes --peer and
	// --mtu-probe say they need tailscaled, and leaves the TUN question
	// to the interface and the platform's files.
	daemon *tuneDaemon
}

// tuneDaemon is what `tailpath tune` asks the tailscaled listening on a
// socket ("" the platform's default).
type tuneDaemon struct {
	// peerRTT measures the round trip to a tailnet peer by name (--peer).
	peerRTT func(ctx context.Context, socket, peer string) (time.Duration, error)
	// probeMTU runs --mtu-probe (DISCO pings of growing size).
	probeMTU func(ctx context.Context, socket, peer string, o tune.MTUProbeOptions) (tune.MTUProbe, error)
	// tun reports LocalAPI's Status.TUN: false is userspace networking.
	tun func(ctx context.Context, socket string) (bool, error)
	// prefs reports tailscaled's version and advertised routes; nil
	// means do not ask.
	prefs func(ctx context.Context, socket string) (tune.DaemonPrefs, error)
	// path reports the path to a peer (or the busiest) with its verdict;
	// nil means do not ask.
	path func(ctx context.Context, socket, peer string) (tune.PeerPath, error)
	// crypto measures the crypto ceiling; nil means tune's own (once per
	// process). Tests fix it so their output does not depend on this
	// machine's speed.
	crypto func(ctx context.Context) (tune.CryptoMeasure, error)
}

// Input ranges of tune's numeric flags: beyond a hard limit a value is a
// usage error; beyond an unusual one it gets a warning line (a unit off by
// a thousand, most likely).
const (
	maxBulkConns       = 10000
	maxHeadroom        = 100.0
	maxBandwidth       = 10e12 // bits/s
	unusualBandwidth   = 400e9 // bits/s
	maxRTT             = time.Minute
	unusualRTT         = 2 * time.Second
	maxFloor           = sysctl.CapBufferBytes
	defaultFloorString = "16MiB"
)

// tuneUsage is the text before the flag list of `tailpath tune -h`.
const tuneUsage = `usage: tailpath tune [flags]

Show this host's TCP buffer sysctls against what a target bandwidth × RTT
needs, with the arithmetic, BBR availability and the tailnet TCP
connections; buffers are raised only where something says they limit.
First it names any other limit: the busiest peer (or --peer) relayed
through DERP, a kernel in a known regression's range, this CPU's
ChaCha20-Poly1305 ceiling (measured for about a second), an offload, or
forwarding (an exit node or subnet router); and whether tailnet TCP is
the kernel's at all (with tailscaled in userspace networking, kernel
sysctls do not apply to it). --apply writes
the recommendation (as root), --persist keeps it where this system keeps
sysctls at boot, --revert undoes both. --mtu-probe PEER measures the path
MTU to a peer instead. Linux only, except --root and --mtu-probe.`

// tuneShort is `tailpath tune`'s line in tailpath's usage.
const tuneShort = "TCP tuning for the tailnet: current vs recommended sysctls, BBR, apply, persist, revert"

// tuneCommand is tailpath tune, asking the tailscaled at --socket.
func tuneCommand() *cli.Command {
	// One set of questions per socket (a run has one), so that when
	// nothing answers the first failure stands for the rest
	// (app.TuneDaemon).
	var mu sync.Mutex
	asked := map[string]tune.Inputs{}
	daemon := func(socket string) tune.Inputs {
		mu.Lock()
		defer mu.Unlock()
		in, ok := asked[socket]
		if !ok {
			in = app.TuneDaemon(socket, tune.Inputs{})
			asked[socket] = in
		}
		return in
	}
	return newTuneCommand(&tuneDaemon{
		peerRTT: func(ctx context.Context, socket, peer string) (time.Duration, error) {
			return app.PeerRTT(ctx, tailscaled.NewClient(socket), peer)
		},
		probeMTU: func(ctx context.Context, socket, peer string, o tune.MTUProbeOptions) (tune.MTUProbe, error) {
			return app.MTUProbe(ctx, tailscaled.NewClient(socket), peer, o)
		},
		tun: func(ctx context.Context, socket string) (bool, error) {
			return daemon(socket).DaemonTUN(ctx)
		},
		prefs: func(ctx context.Context, socket string) (tune.DaemonPrefs, error) {
			return daemon(socket).Prefs(ctx)
		},
		path: func(ctx context.Context, socket, peer string) (tune.PeerPath, error) {
			return daemon(socket).PeerPath(ctx, peer)
		},
	})
}

// newTuneCommand is tailpath tune asking d (nil: no tailscaled to ask).
func newTuneCommand(d *tuneDaemon) *cli.Command {
	f := tuneFlags{daemon: d}
	fs := cli.NewFlagSet("tailpath tune")
	fs.StringVar(&f.bandwidth, "bandwidth", "", "target throughput with a unit, e.g. 400Mbit or 1Gbit, up to 10Tbit (default: measured from tailnet connections, else 1Gbit)")
	fs.StringVar(&f.rtt, "rtt", "", "round-trip time to the peers that matter, with a unit, e.g. 20ms, up to 1m (default: --peer, else measured, else 20ms)")
	fs.StringVar(&f.peer, "peer", "", "measure the RTT with a tailnet ping to this peer (needs tailscaled)")
	fs.Float64Var(&f.headroom, "headroom", sysctl.DefaultHeadroom, "multiply the bandwidth-delay product by this, from 1 to 100")
	fs.BoolVar(&f.bbr, "bbr", false, "also recommend bbr (and fq on kernels before 4.13) when this kernel can run it")
	fs.BoolVar(&f.apply, "apply", false, "apply the recommended values (needs root); previous values are saved for --revert")
	fs.BoolVar(&f.persist, "persist", false, "with --apply, also keep the values across a reboot where this system keeps them (/etc/sysctl.d, a DSM boot script, Unraid's /boot/config/go, TrueNAS tunables; elsewhere the steps are printed)")
	fs.IntVar(&f.bulkConns, "bulk-conns", sysctl.DefaultBulkConns, fmt.Sprintf("bulk connections expected at full buffer at once, from 1 to %d; tcp_mem is shared among them", maxBulkConns))
	fs.StringVar(&f.floor, "floor", "", "smallest buffer max to raise to, e.g. 16MiB, or 0 for none, up to 256MiB (default "+defaultFloorString+", and only when buffers are the limit)")
	fs.BoolVar(&f.revert, "revert", false, "restore the values saved by the last --apply (and remove what --persist wrote)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	fs.BoolVar(&f.yes, "yes", false, "apply without asking")
	fs.StringVar(&f.state, "state", "", "state file for --revert (default "+sysctl.DefaultStatePath()+"; with --root, DIR/var/lib/tailpath/tune-state.json)")
	fs.StringVar(&f.mtuProbe, "mtu-probe", "", "instead of tuning, find the largest packet the direct path to this peer carries (DISCO pings of growing size through tailscaled, like tailscale ping --size)")
	fs.StringVar(&f.root, "root", "", "treat this directory as / (a sandbox copy of /proc/sys; for tests and the demo)")
	fs.StringVar(&f.socket, "socket", "", "tailscaled's LocalAPI socket, for --peer, --mtu-probe, the path to the busiest peer, the advertised routes and whether it runs in userspace networking (default "+tailscaled.DefaultSocket()+"; with --root, only when given)")
	fs.StringVar(&f.observed, "observed", "", "the throughput you see through this box, e.g. 0.5Mbit: far below the CPU's ceiling, it points at an offload (TSO on a bridge)")
	f.fs = fs
	return &cli.Command{
		Name:  "tune",
		Short: tuneShort,
		Usage: tuneUsage,
		Flags: fs,
		Run:   f.run,
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

func (f *tuneFlags) run(ctx context.Context, args []string, stdio cli.IO) error {
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	warnings, err := f.check()
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stdio.Stderr, "tailpath: tune: warning: %s\n", w)
	}
	if f.mtuProbe != "" {
		return f.runMTUProbe(ctx, stdio)
	}
	if runtime.GOOS != "linux" && f.root == "" {
		return fmt.Errorf("tune: %w: this is %s", tune.ErrNotLinux, runtime.GOOS)
	}
	in := tune.Inputs{Peer: f.peer, Headroom: f.headroom, BBR: f.bbr, BulkConns: f.bulkConns,
		BandwidthSource: "flag --bandwidth", RTTSource: "flag --rtt"}
	in.Bandwidth, _ = f.bandwidthValue()
	in.RTT, _ = f.rttValue()
	if f.floor != "" {
		in.Floor, _ = sysctl.ParseBytes(f.floor)
		in.FloorSet = true
	}
	if f.observed != "" {
		in.Observed, _ = sysctl.ParseBandwidth(f.observed)
		in.ObservedSource = "flag --observed"
	}
	in.Progress = func(s string) { fmt.Fprintln(stdio.Stderr, s) }
	if d := f.daemon; d != nil {
		in.Crypto = d.crypto
		in.PeerRTT = func(ctx context.Context, peer string) (time.Duration, error) { return d.peerRTT(ctx, f.socket, peer) }
		// The sandbox of --root is not this machine: its tailscaled is
		// not the one on the default socket, but one named by --socket
		// is taken as the root's (a lab's, a test's).
		if f.root == "" || flagSet(f.fs, "socket") {
			in.DaemonTUN = func(ctx context.Context) (bool, error) { return d.tun(ctx, f.socket) }
			in.Daemon = app.DaemonName(f.socket)
			if d.prefs != nil {
				in.Prefs = func(ctx context.Context) (tune.DaemonPrefs, error) { return d.prefs(ctx, f.socket) }
			}
			if d.path != nil {
				in.PeerPath = func(ctx context.Context, peer string) (tune.PeerPath, error) { return d.path(ctx, f.socket, peer) }
			}
		}
	}
	if f.root != "" {
		if err := checkRoot(f.root); err != nil {
			return err
		}
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
	err = tune.Run(ctx, in, act, stdio.Stdin, stdio.Stdout)
	if errors.Is(err, tune.ErrNeedsYes) {
		// Nobody to ask and no --yes: what was typed cannot run (exit 2).
		return cli.UsageError{Err: err}
	}
	return err
}

// runMTUProbe is `tailpath tune --mtu-probe PEER`: progress on stderr, the
// result on stdout (JSON with --json).
func (f *tuneFlags) runMTUProbe(ctx context.Context, stdio cli.IO) error {
	if f.daemon == nil {
		return fmt.Errorf("tune: --mtu-probe needs tailscaled")
	}
	o := tune.MTUProbeOptions{Progress: func(s string) { fmt.Fprintln(stdio.Stderr, "  "+s) }}
	if l, err := sockdiag.LinkInfo(sockdiag.TailscaleInterface); err == nil && l.MTU > 0 {
		o.TunMTU = int(l.MTU)
	}
	fmt.Fprintf(stdio.Stderr, "probing the path MTU to %s…\n", f.mtuProbe)
	r, err := f.daemon.probeMTU(ctx, f.socket, f.mtuProbe, o)
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

// check validates every value flag, each against its own range, and
// returns the warnings for values that are legal but unusual. Its errors
// are usage errors naming the flag.
func (f *tuneFlags) check() (warnings []string, err error) {
	if !(f.headroom >= 1 && f.headroom <= maxHeadroom) {
		return nil, cli.UsageErrorf("--headroom %g: want a multiplier from 1 to %g (default %g); below 1 the buffers would hold less than one bandwidth-delay product", f.headroom, maxHeadroom, sysctl.DefaultHeadroom)
	}
	if f.bulkConns < 1 || f.bulkConns > maxBulkConns {
		return nil, cli.UsageErrorf("--bulk-conns %d: want a count from 1 to %d (default %d), the bulk connections that share tcp_mem at once", f.bulkConns, maxBulkConns, sysctl.DefaultBulkConns)
	}
	bw, err := f.bandwidthValue()
	if err != nil {
		return nil, err
	}
	if bw > unusualBandwidth {
		warnings = append(warnings, fmt.Sprintf("unusual: --bandwidth %s is over %s; did you mean %s?", f.bandwidth, sysctl.FormatBandwidth(unusualBandwidth), sysctl.FormatBandwidthFlag(bw/1000)))
	}
	d, err := f.rttValue()
	if err != nil {
		return nil, err
	}
	if d > unusualRTT {
		warnings = append(warnings, fmt.Sprintf("unusual: --rtt %s is over %v; did you mean %v?", f.rtt, unusualRTT, d/1000))
	}
	if f.rtt != "" && f.peer != "" {
		return nil, cli.UsageErrorf("pass --rtt or --peer, not both")
	}
	if f.floor != "" {
		n, err := sysctl.ParseBytes(f.floor)
		if err != nil {
			return nil, cli.UsageErrorf("--floor %v", err)
		}
		if n > maxFloor {
			return nil, cli.UsageErrorf("--floor %q: at most %s, the cap on any buffer tailpath recommends", f.floor, sysctl.FormatBytes(maxFloor))
		}
	}
	if f.observed != "" {
		if _, err := sysctl.ParseBandwidth(f.observed); err != nil {
			return nil, cli.UsageErrorf("--observed %v", err)
		}
	}
	if f.mtuProbe != "" && (f.apply || f.revert || f.persist) {
		return nil, cli.UsageErrorf("--mtu-probe only measures; run it without --apply, --persist or --revert")
	}
	return warnings, nil
}

// bandwidthValue is --bandwidth in bits/s, 0 when not given.
func (f *tuneFlags) bandwidthValue() (float64, error) {
	if f.bandwidth == "" {
		return 0, nil
	}
	bw, err := sysctl.ParseBandwidth(f.bandwidth)
	if err != nil {
		return 0, cli.UsageErrorf("--bandwidth %v", err)
	}
	if bw > maxBandwidth {
		return 0, cli.UsageErrorf("--bandwidth %q: at most %s", f.bandwidth, sysctl.FormatBandwidthFlag(maxBandwidth))
	}
	return bw, nil
}

// rttValue is --rtt, 0 when not given.
func (f *tuneFlags) rttValue() (time.Duration, error) {
	if f.rtt == "" {
		return 0, nil
	}
	d, err := sysctl.ParseRTT(f.rtt)
	if err != nil {
		return 0, cli.UsageErrorf("--rtt %v", err)
	}
	if d > maxRTT {
		return 0, cli.UsageErrorf("--rtt %q: at most %v", f.rtt, maxRTT)
	}
	return d, nil
}

// flagSet reports whether the flag named name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	if fs != nil {
		fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	}
	return set
}

// checkRoot refuses a --root that is no copy of a system: missing, not a
// directory, or without proc/sys (unusable input, exit 2, not procfs's
// "is it mounted?").
func checkRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cli.InputError{Err: fmt.Errorf("--root %s: no such directory", root)}
	case err != nil:
		return cli.InputError{Err: fmt.Errorf("--root %v", err)}
	case !fi.IsDir():
		return cli.InputError{Err: fmt.Errorf("--root %s: not a directory", root)}
	}
	if fi, err := os.Stat(filepath.Join(root, "proc", "sys")); err != nil || !fi.IsDir() {
		return cli.InputError{Err: fmt.Errorf("--root %s: no proc/sys inside: --root takes a copy of a system's / holding at least proc/sys/net (as `tailpath demo` makes one)", root)}
	}
	return nil
}
