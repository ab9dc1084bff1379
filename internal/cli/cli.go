// Package cli is tailpath's command framework: a Command is a flag set,
// its usage text and its run function, built only when selected
// (Command.Make); Program.Run selects one by its first argument, parses its flags in one place, prints usage and errors
// one way, suggests a near name for a mistyped command or flag, and maps
// every outcome to one exit status scheme (ExitOK, ExitError,
// ExitUsage). It also holds the process settings of a one-shot command
// (OneShotGC) and the CPU profile for docs/perf.md (StartProfile). The
// command tree itself is the root package's (main.go's commands).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Command is one tailpath subcommand.
type Command struct {
	// Name is the first argument that selects it ("" for the default).
	Name string
	// Short is a one-line description for tailpath's usage.
	Short string
	// Usage is the synopsis and description printed before the flags on
	// -h and after a usage error; it ends without a newline.
	Usage string
	// Flags holds the command's flags, bound to its flags struct.
	Flags *flag.FlagSet
	// Run executes the command with the arguments left after the flags.
	Run func(ctx context.Context, args []string, stdio IO) error
	// Make, when set, builds the command's Usage, Flags and Run the first
	// time they are needed (Load): only the command that runs, or whose
	// usage is printed, registers its flags, so a one-shot status does
	// not build every other command's. Name and Short are the entry's.
	Make func() *Command
}

// Load builds c's Usage, Flags and Run with Make, once, and returns c; a
// command without Make is built already.
func (c *Command) Load() *Command {
	if c.Make != nil {
		m := c.Make()
		c.Usage, c.Flags, c.Run, c.Make = m.Usage, m.Flags, m.Run, nil
	}
	return c
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
// 2 a usage error (bad flags or arguments: the error, then where the
// usage is) or unusable input (a --from, --peer-snapshot or --elf file
// that cannot be read or is not what it should be: the error alone).
// TestExitCodes
// covers every command.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed at run time; the error is on stderr
	ExitUsage = 2 // bad flags or arguments, or unusable input; the error is on stderr
)

// InputError is input the user gave that cannot be used (a file that is
// missing or not what its flag wants): Run prints it and exits 2, without
// the usage (the flags were right).
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// UsageError is a bad flag value or argument found after parsing: Run
// prints it like a parse error (once, then a line naming -h) and exits 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// UsageErrorf formats a UsageError.
func UsageErrorf(format string, a ...any) error {
	return UsageError{fmt.Errorf(format, a...)}
}

// NoArgs is the usage error for commands that take flags only.
func NoArgs(args []string) error {
	if len(args) > 0 {
		return UsageErrorf("unexpected argument %q; flags only", args[0])
	}
	return nil
}

// CodeError carries a specific exit status out of a command; the error is
// printed as any other.
type CodeError struct {
	Code int
	Err  error
}

func (e *CodeError) Error() string { return e.Err.Error() }
func (e *CodeError) Unwrap() error { return e.Err }

// Program is the command tree and how its errors map to exit statuses.
type Program struct {
	// Commands are the commands in the order usage lists them. The
	// first, with no Name, runs when no command is given.
	Commands []*Command
	// IsInput reports whether an error a command returned is unusable
	// input (exit 2, without the usage) although it is no InputError:
	// a library's own kind of it. nil: none is.
	IsInput func(error) bool
}

// Run selects the command args name and runs it; it returns the exit status.
func (p *Program) Run(ctx context.Context, args []string, stdio IO) int {
	name := ""
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		name, args = "version", args[1:]
	}
	if len(args) > 0 && name == "" && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		if len(args) > 0 {
			if c := p.find(args[0]); c != nil && c.Name != "" {
				p.printUsage(stdio.Stdout, c)
				return ExitOK
			}
		}
		p.usage(stdio.Stdout)
		return ExitOK
	}
	c := p.find(name)
	if c == nil {
		fmt.Fprintf(stdio.Stderr, "tailpath: unknown command %q\n", name)
		names := []string{"help"}
		for _, c := range p.Commands {
			names = append(names, c.Name)
		}
		if s := suggest(name, names); s != "" {
			fmt.Fprintf(stdio.Stderr, "tailpath: did you mean %s?\n", s)
		}
		fmt.Fprintln(stdio.Stderr, "run 'tailpath help' for the commands")
		return ExitUsage
	}
	return p.Exec(ctx, c, args, stdio)
}

func (p *Program) find(name string) *Command {
	for _, c := range p.Commands {
		if c.Name == name {
			return c.Load()
		}
	}
	return nil
}

// Exec runs c with args (its flags and arguments). It is the one
// flag-parsing path: -h prints the usage to stdout and exits 0; a bad
// flag, or a UsageError from Run, prints the error once, a "did you mean"
// for a near miss, then one line naming -h, and exits 2; any other error is printed once and exits 1 (or its
// CodeError's status).
func (p *Program) Exec(ctx context.Context, c *Command, args []string, stdio IO) int {
	c.Load()
	// The flag package would print errors and usage itself; this does.
	c.Flags.SetOutput(io.Discard)
	c.Flags.Usage = func() {}
	err := c.Flags.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		// Asked for: to stdout, so `tailpath serve --help | less` works.
		p.printUsage(stdio.Stdout, c)
		return ExitOK
	}
	if err == nil {
		err = c.Run(ctx, c.Flags.Args(), stdio)
	} else {
		err = UsageError{err}
	}
	if err == nil {
		return ExitOK
	}
	var ue UsageError
	if errors.As(err, &ue) {
		// The error and where the usage is, not the usage itself: the
		// error would scroll away above 60 lines of flags.
		fmt.Fprintf(stdio.Stderr, "%s%v\n", c.ErrPrefix(), err)
		if s := p.suggestFlag(c, undefinedFlag(err)); s != "" {
			fmt.Fprintf(stdio.Stderr, "tailpath: did you mean %s?\n", s)
		}
		fmt.Fprintf(stdio.Stderr, "run '%s -h' for usage\n", c.Invocation())
		return ExitUsage
	}
	// The last line a command writes: an error may carry outside text
	// (a daemon's reply, a file's bytes) that no edge cleaned.
	fmt.Fprintf(stdio.Stderr, "tailpath: %s\n", safetext.Of(err))
	var ce *CodeError
	var ie InputError
	switch {
	case errors.As(err, &ce):
		return ce.Code
	case errors.As(err, &ie), p.IsInput != nil && p.IsInput(err):
		return ExitUsage
	}
	return ExitError
}

// suggestFlag is the flag (with its dashes) nearest to name, a flag c
// does not define, or "". The default command also takes --version
// (Program.Run reads it before any command), so "-v" is a near miss of it.
func (p *Program) suggestFlag(c *Command, name string) string {
	if name == "" {
		return ""
	}
	names := flagNames(c.Flags)
	if c.Name == "" && p.find("version") != nil {
		names = append(names, "version")
	}
	if s := suggest(name, names); s != "" {
		return "--" + s
	}
	return ""
}

// Invocation is how c is run: "tailpath" or "tailpath serve".
func (c *Command) Invocation() string {
	if c.Name == "" {
		return "tailpath"
	}
	return "tailpath " + c.Name
}

// ErrPrefix starts a usage error's line: "tailpath: " or "tailpath: tune: ".
func (c *Command) ErrPrefix() string {
	if c.Name == "" {
		return "tailpath: "
	}
	return "tailpath: " + c.Name + ": "
}

// printUsage writes c's usage text and its flags; the default command's
// is tailpath's own usage first.
func (p *Program) printUsage(w io.Writer, c *Command) {
	if c.Name == "" {
		p.usage(w)
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, c.Usage)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "flags:")
	c.Flags.SetOutput(w)
	c.Flags.PrintDefaults()
	c.Flags.SetOutput(io.Discard)
}

// usage is tailpath's own: the commands and their one-line descriptions.
func (p *Program) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tailpath [command] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range p.Commands {
		label := c.Name
		if label == "" {
			label = "(none)"
		}
		fmt.Fprintf(w, "  %-8s %s\n", label, c.Short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tailpath <command> -h' for a command's flags.")
}

// NewFlagSet is a command's empty flag set; Run does the printing.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// GCSettings are the garbage collector's target (debug.SetGCPercent) and
// soft memory limit in bytes (debug.SetMemoryLimit).
type GCSettings struct {
	Percent int
	Limit   int64
}

// OneShotMemLimit is the heap a one-shot command may grow to before the
// collector runs at all: a 1,000-peer status peaks at about 40 MB RSS
// without collecting.
const OneShotMemLimit = 256 << 20

// OneShotGC is how a one-shot command's process collects garbage: status
// prints once and exits within a second, so collecting while it runs only
// costs time (15% of a 1,000-peer status, docs/perf.md); it runs with the
// collector off until the heap nears OneShotMemLimit, then the runtime
// collects as usual to stay near it. ok is false for any other command
// (the dashboard, tail and serve run for hours) and when GOGC or
// GOMEMLIMIT is set, which stand.
func OneShotGC(args []string, getenv func(string) string) (GCSettings, bool) {
	if len(args) == 0 || args[0] != "status" || getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return GCSettings{}, false
	}
	return GCSettings{Percent: -1, Limit: OneShotMemLimit}, true
}

// ProfileEnv names the variable StartProfile's path comes from (main).
const ProfileEnv = "TAILPATH_CPUPROFILE"

// StartProfile writes a CPU profile to path until the returned function is
// called (for docs/perf.md measurements); "" does nothing. A profile that
// cannot be written is said on stderr and the command runs without it.
//
// As root, path comes from an environment another user may have set (it
// survives `sudo -E` and `su` without `-`), so it is opened as
// OpenDebugFile opens it: a new file, never through a link, in a
// directory of root's, with a name ending .prof or .pprof.
func StartProfile(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	var f *os.File
	var err error
	if os.Geteuid() == 0 {
		f, err = OpenDebugFile(path)
	} else {
		f, err = os.Create(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tailpath: %s: %s; no profile written\n", ProfileEnv, safetext.Clean(err.Error()))
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "tailpath: %s: %v\n", ProfileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// ErrDebugFile is wrapped by OpenDebugFile's refusals.
var ErrDebugFile = errors.New("refused")

// OpenDebugFile creates the debugging file path for root: its name must end
// .prof or .pprof (a name no system file has: root must not create
// /etc/nologin because a variable said so), its directory must be owned by
// root (checked on the open directory, so a link swapped meanwhile changes
// nothing), and the file is created there new (O_CREAT|O_EXCL, mode 0600)
// without following a link: an existing file, or a link another user put
// there, is never opened. On systems without Unix owners it creates path
// new. Errors wrap ErrDebugFile (or the system's) and say what to do.
func OpenDebugFile(path string) (*os.File, error) {
	base := filepath.Base(path)
	if !strings.HasSuffix(base, ".prof") && !strings.HasSuffix(base, ".pprof") {
		return nil, fmt.Errorf("%w: as root, %q must name a .prof or .pprof file", ErrDebugFile, path)
	}
	return openDebugFile(path)
}
