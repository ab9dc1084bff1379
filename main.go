// Command tailpath shows which tailnet peers go through a DERP relay, and why,
// beside a CoreS3 board's own view of its path and the host's TCP tuning.
//
// The command tree is the table in commands, below; each command is one
// cmd_<name>.go file (its flags struct, its run function, its usage text).
// The wiring the dashboard and demo share is internal/app; docs/
// architecture.md maps the rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/probes/lab"
)

// commands is tailpath's command tree, in the order usage lists it. The
// first, with no name, runs when no command is given.
func commands() []*command {
	return []*command{
		dashboardCommand(), // tailpath [flags]     cmd_dashboard.go
		demoCommand(),      // tailpath demo        cmd_demo.go
		statusCommand(),    // tailpath status      cmd_status.go
		tailCommand(),      // tailpath tail        cmd_tail.go
		tuneCommand(),      // tailpath tune        cmd_tune.go
		serveCommand(),     // tailpath serve       cmd_serve.go
		versionCommand(),   // tailpath version     cmd_version.go
	}
}

// command is one tailpath subcommand.
type command struct {
	// name is the first argument that selects it ("" for the default).
	name string
	// short is a one-line description for tailpath's usage.
	short string
	// usage is the synopsis and description printed before the flags on
	// -h and after a usage error; it ends without a newline.
	usage string
	// flags holds the command's flags, bound to its flags struct.
	flags *flag.FlagSet
	// run executes the command with the arguments left after the flags.
	run func(ctx context.Context, args []string, stdio IO) error
}

// IO is where a command reads and writes, so tests can capture it.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Exit statuses, one scheme for every command (README, "Exit status"):
// 0 ok; 1 a runtime failure (tailscaled not reachable or not Running, no
// board, a port or address that cannot be opened, a write that failed);
// 2 a usage error (bad flags or arguments: the error, then the usage) or
// unusable input (a --from, --peer-snapshot or --elf file that cannot be
// read or is not what it should be: the error alone). TestExitCodes
// covers every command.
const (
	exitOK    = 0
	exitError = 1 // the command failed at run time; the error is on stderr
	exitUsage = 2 // bad flags or arguments, or unusable input; the error is on stderr
)

// inputError is input the user gave that cannot be used (a file that is
// missing or not what its flag wants): run prints it and exits 2, without
// the usage (the flags were right).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// usageError is a bad flag value or argument found after parsing: run
// prints it like a parse error (once, then the usage) and exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf formats a usageError.
func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// noArgs is the usage error for commands that take flags only.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q; flags only", args[0])
	}
	return nil
}

// codeError carries a specific exit status out of a command; the error is
// printed as any other.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func main() {
	// A re-executed tailpath is a lab node child process (the demo's
	// DERP-only node): it runs the node and exits here.
	lab.MaybeRunNode()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if gc, ok := oneShotGC(os.Args[1:], os.Getenv); ok {
		debug.SetGCPercent(gc.percent)
		debug.SetMemoryLimit(gc.limit)
	}
	stopProfile := startProfile(os.Getenv("TAILPATH_CPUPROFILE"))
	code := run(ctx, os.Args[1:], IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stopProfile()
	stop()
	os.Exit(code)
}

// run selects the command args name and runs it; it returns the exit status.
func run(ctx context.Context, args []string, stdio IO) int {
	cmds := commands()
	name := ""
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		name, args = "version", args[1:]
	}
	if len(args) > 0 && name == "" && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		if len(args) > 0 {
			if c := find(cmds, args[0]); c != nil && c.name != "" {
				c.printUsage(stdio.Stdout)
				return exitOK
			}
		}
		usage(stdio.Stdout, cmds)
		return exitOK
	}
	c := find(cmds, name)
	if c == nil {
		fmt.Fprintf(stdio.Stderr, "tailpath: unknown command %q\n", name)
		names := []string{"help"}
		for _, c := range cmds {
			names = append(names, c.name)
		}
		if s := suggest(name, names); s != "" {
			fmt.Fprintf(stdio.Stderr, "tailpath: did you mean %s?\n", s)
		}
		fmt.Fprintln(stdio.Stderr)
		usage(stdio.Stderr, cmds)
		return exitUsage
	}
	return c.exec(ctx, args, stdio)
}

func find(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// exec is the one flag-parsing path: -h prints the usage to stdout and exits 0; a bad
// flag, or a usageError from run, prints the error once, then the usage,
// and exits 2; any other error is printed once and exits 1 (or its
// codeError's status).
func (c *command) exec(ctx context.Context, args []string, stdio IO) int {
	// The flag package would print errors and usage itself; this does.
	c.flags.SetOutput(io.Discard)
	c.flags.Usage = func() {}
	err := c.flags.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		// Asked for: to stdout, so `tailpath serve --help | less` works.
		c.printUsage(stdio.Stdout)
		return exitOK
	}
	if err == nil {
		err = c.run(ctx, c.flags.Args(), stdio)
	} else {
		err = usageError{err}
	}
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stdio.Stderr, "%s%v\n", c.errPrefix(), err)
		if s := suggest(undefinedFlag(err), flagNames(c.flags)); s != "" {
			fmt.Fprintf(stdio.Stderr, "tailpath: did you mean --%s?\n", s)
		}
		fmt.Fprintln(stdio.Stderr)
		c.printUsage(stdio.Stderr)
		return exitUsage
	}
	fmt.Fprintf(stdio.Stderr, "tailpath: %v\n", err)
	var ce *codeError
	var ie inputError
	var aie app.InputError
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ie), errors.As(err, &aie), errors.Is(err, app.ErrNoTerminal):
		return exitUsage
	}
	return exitError
}

// errPrefix starts a usage error's line: "tailpath: " or "tailpath: tune: ".
func (c *command) errPrefix() string {
	if c.name == "" {
		return "tailpath: "
	}
	return "tailpath: " + c.name + ": "
}

// printUsage writes the command's usage text and its flags; the default
// command's is tailpath's own usage first.
func (c *command) printUsage(w io.Writer) {
	if c.name == "" {
		usage(w, commands())
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, c.usage)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "flags:")
	c.flags.SetOutput(w)
	c.flags.PrintDefaults()
	c.flags.SetOutput(io.Discard)
}

// usage is tailpath's own: the commands and their one-line descriptions.
func usage(w io.Writer, cmds []*command) {
	fmt.Fprintln(w, "usage: tailpath [command] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range cmds {
		label := c.name
		if label == "" {
			label = "(none)"
		}
		fmt.Fprintf(w, "  %-8s %s\n", label, c.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tailpath <command> -h' for a command's flags.")
}

// newFlagSet is a command's empty flag set; exec does the printing.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// gcSettings are the garbage collector's target (debug.SetGCPercent) and
// soft memory limit in bytes (debug.SetMemoryLimit).
type gcSettings struct {
	percent int
	limit   int64
}

// oneShotMemLimit is the heap a one-shot command may grow to before the
// collector runs at all: a 1,000-peer status peaks at about 40 MB RSS
// without collecting.
const oneShotMemLimit = 256 << 20

// oneShotGC is how a one-shot command's process collects garbage: status
// prints once and exits within a second, so collecting while it runs only
// costs time (15% of a 1,000-peer status, docs/perf.md); it runs with the
// collector off until the heap nears oneShotMemLimit, then the runtime
// collects as usual to stay near it. ok is false for any other command
// (the dashboard, tail and serve run for hours) and when GOGC or
// GOMEMLIMIT is set, which stand.
func oneShotGC(args []string, getenv func(string) string) (gcSettings, bool) {
	if len(args) == 0 || args[0] != "status" || getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return gcSettings{}, false
	}
	return gcSettings{percent: -1, limit: oneShotMemLimit}, true
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
