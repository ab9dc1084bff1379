package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
)

// demoFlags are the flags of tailpath demo.
type demoFlags struct {
	// status prints the lab's status once (like tailpath status) and exits.
	status bool
	// json selects JSON for --status.
	json bool
	// logFile (--lab-log) receives the lab components' logs (control, DERP,
	// nodes); the dashboard's --log-file is the device log instead.
	logFile string
	// interval is how often Status is polled.
	interval time.Duration
	// labOnly runs the lab without the dashboard until interrupted, printing
	// the observer's LocalAPI socket for other tools (tailpath --socket,
	// tailpath status --socket).
	labOnly bool
}

func init() {
	preMainHooks = append(preMainHooks, lab.MaybeRunNode)
	register(&command{
		name:  "demo",
		short: "start a lab tailnet on loopback and show it in the dashboard",
		run:   runDemo,
	})
}

func runDemo(ctx context.Context, args []string, stdio IO) error {
	var f demoFlags
	fs := flag.NewFlagSet("tailpath demo", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	fs.BoolVar(&f.status, "status", false, "print the lab's peers, paths and verdicts once and exit")
	fs.BoolVar(&f.json, "json", false, "with --status: print JSON")
	fs.StringVar(&f.logFile, "lab-log", "", "append the lab's own logs (control, DERP, nodes) to this file")
	fs.BoolVar(&f.labOnly, "lab-only", false, "run only the lab tailnet until interrupted and print its LocalAPI socket (for 'tailpath --socket' or 'tailpath status --socket')")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "how often to poll the observer's status")
	fs.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tailpath demo [--status [--json]]

Starts a lab tailnet made of real Tailscale code on 127.0.0.1 (control, two
DERP regions, STUN and five nodes: the observer the dashboard watches, a
direct peer, a DERP-only peer in a child process that advertises no
endpoints, an idle peer and an offline one), then shows it in the dashboard.
Needs no root and no network beyond loopback.

flags:`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.json && !f.status {
		return fmt.Errorf("--json needs --status")
	}

	if !f.status && !f.labOnly {
		// Fail before the lab's few seconds of start-up, not after.
		if err := needTerminal(stdio.Stdin); err != nil {
			return err
		}
	}
	prog := newProgress(stdio.Stderr)
	prog.Step("starting the lab tailnet on 127.0.0.1")
	l, err := lab.Start(ctx, lab.Options{Progress: prog.Step, LogFile: f.logFile})
	prog.Done()
	if err != nil {
		return fmt.Errorf("demo: starting the lab tailnet: %w", err)
	}
	defer l.Close()

	if f.status {
		return demoStatus(ctx, l, f.json, stdio.Stdout)
	}
	if f.labOnly {
		fmt.Fprintf(stdio.Stdout, "lab tailnet running; the observer's LocalAPI socket is\n  %s\ntry: tailpath --socket %s\nCtrl-C stops the lab.\n", l.ObserverSocket(), l.ObserverSocket())
		<-ctx.Done()
		return nil
	}
	d := dashboard{
		client:   l.Observer(),
		socket:   l.ObserverSocket(),
		interval: f.interval,
		title:    "tailpath demo (lab tailnet on 127.0.0.1)",
	}
	for _, hook := range demoHooks {
		if err := hook(ctx, &d, l); err != nil {
			return err
		}
	}
	return d.run(ctx, stdio)
}

// demoHooks add the device and tuning panes to the demo when those parts are
// built in; each may add panes and feeds to the dashboard.
var demoHooks []func(ctx context.Context, d *dashboard, l *lab.Lab) error

// demoStatus prints the observer's view once, as tailpath status does (one
// snapshot, so rates read 0).
func demoStatus(ctx context.Context, l *lab.Lab, asJSON bool, w io.Writer) error {
	snap, err := probes.Gather(ctx, l.Observer(), nil)
	if err != nil {
		return err
	}
	return printStatus(w, snap, asJSON)
}

// progress shows long work as it happens: on a terminal, a spinner line
// with the elapsed time that each step replaces; otherwise one line a step.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time

	mu   sync.Mutex
	cur  string
	stop chan struct{}
	done chan struct{}
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now()}
	if isTerminal(w) {
		p.tty = true
		p.stop = make(chan struct{})
		p.done = make(chan struct{})
		go p.spin()
	}
	return p
}

// Step reports the step now under way.
func (p *progress) Step(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.start).Seconds()
	if p.tty {
		// Keep finished steps on screen above the spinner.
		if p.cur != "" {
			fmt.Fprintf(p.w, "\r\x1b[K  %s\n", p.cur)
		}
		p.cur = s
		return
	}
	fmt.Fprintf(p.w, "[%5.1fs] %s\n", el, s)
}

// Done stops the spinner and leaves the last step on screen.
func (p *progress) Done() {
	if !p.tty {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != "" {
		fmt.Fprintf(p.w, "\r\x1b[K  %s (%.1fs)\n", p.cur, time.Since(p.start).Seconds())
	}
}

func (p *progress) spin() {
	defer close(p.done)
	frames := []string{"|", "/", "-", "\\"}
	t := time.NewTicker(120 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r\x1b[K%s %s  %.1fs", frames[i%len(frames)], p.cur, time.Since(p.start).Seconds())
			p.mu.Unlock()
		}
	}
}
