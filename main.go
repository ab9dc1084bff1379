// Command tailpath shows which tailnet peers go through a DERP relay, and why,
// beside a CoreS3 board's own view of its path and the host's TCP tuning.
//
// Each subcommand lives in its own cmd_*.go file and registers itself in init
// with register; main only dispatches.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"sort"
	"syscall"
)

// command is one tailpath subcommand.
type command struct {
	// name is the first argument that selects it ("" for the default dashboard).
	name string
	// short is a one-line description for the usage text.
	short string
	// hidden commands are not listed in usage (internal helpers).
	hidden bool
	// run executes the command with the arguments after its name.
	run func(ctx context.Context, args []string, io IO) error
}

// IO is where a command reads and writes, so tests can capture it.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("tailpath: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	for _, hook := range preMainHooks {
		hook()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	stopProfile := startProfile(os.Getenv("TAILPATH_CPUPROFILE"))
	code := run(ctx, os.Args[1:], IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stopProfile()
	stop()
	os.Exit(code)
}

// startProfile writes a CPU profile to path until the returned function is
// called (for docs/perf.md measurements); "" does nothing.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tailpath: TAILPATH_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "tailpath: TAILPATH_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// preMainHooks run before argument parsing; the lab uses one to turn a
// re-executed tailpath into a lab node child process.
var preMainHooks []func()

// run dispatches args and returns the process exit code.
func run(ctx context.Context, args []string, stdio IO) int {
	name := ""
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-') {
		name = args[0]
		args = args[1:]
	}
	if name == "help" {
		usage(stdio.Stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stdio.Stderr, "tailpath: unknown command %q\n\n", name)
		usage(stdio.Stderr)
		return 2
	}
	err := c.run(ctx, args, stdio)
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stdio.Stderr, "tailpath: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tailpath [command] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	var names []string
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		label := n
		if label == "" {
			label = "(none)"
		}
		fmt.Fprintf(w, "  %-8s %s\n", label, commands[n].short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tailpath <command> -h' for a command's flags.")
}
