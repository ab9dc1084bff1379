// Command tailpath shows which tailnet peers go through a DERP relay, and why,
// beside a CoreS3 board's own view of its path and the host's TCP tuning.
//
// The command tree is the table in commands, below; each command is one
// cmd_<name>.go file (its flags struct, its run function, its usage text)
// that parses its flags and calls a library. internal/cli is the
// framework (flag parsing, usage, exit statuses); the wiring the commands
// share is internal/app; docs/architecture.md maps the rest.
package main

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/dashboard"
	// For its init alone: the Ps of a one-shot command, set before
	// the other packages' inits.
	_ "github.com/tailpath/tailpath/internal/procs"
)

// commands is tailpath's command tree, in the order usage lists it. The
// first, with no name, runs when no command is given.
func commands() []*cli.Command {
	return []*cli.Command{
		{Name: "", Short: dashboardShort, Make: dashboardCommand},    // tailpath [flags]     cmd_dashboard.go
		{Name: "demo", Short: demoShort, Make: demoCommand},          // tailpath demo        cmd_demo.go
		{Name: "status", Short: statusShort, Make: statusCommand},    // tailpath status      cmd_status.go
		{Name: "tail", Short: tailShort, Make: tailCommand},          // tailpath tail        cmd_tail.go
		{Name: "tune", Short: tuneShort, Make: tuneCommand},          // tailpath tune        cmd_tune.go
		{Name: "serve", Short: serveShort, Make: serveCommand},       // tailpath serve       cmd_serve.go
		{Name: "version", Short: versionShort, Make: versionCommand}, // tailpath version     cmd_version.go
	}
}

func main() {
	// A re-executed tailpath is a lab node child process (the demo's
	// DERP-only node): it runs the node and exits here. Only builds with
	// the demo tag have one (cmd_demo_lab.go).
	maybeRunLabNode()
	ctx, stop := cli.NotifyContext(context.Background(), cli.SignalsAfter(os.Args[1:]), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if gc, ok := cli.OneShotGC(os.Args[1:], os.Getenv); ok {
		debug.SetGCPercent(gc.Percent)
		debug.SetMemoryLimit(gc.Limit)
	}
	stopProfile := cli.StartProfile(os.Getenv(cli.ProfileEnv), os.Stderr)
	code := dispatch(ctx, os.Args[1:], cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stopProfile()
	stop()
	os.Exit(code)
}

// dispatch runs the command args name; it returns the exit status.
func dispatch(ctx context.Context, args []string, stdio cli.IO) int {
	p := cli.Program{Commands: commands(), IsInput: isInputError}
	return p.Run(ctx, args, stdio)
}

// isInputError reports the libraries' unusable input: an --elf that is no
// firmware (app.InputError), a dashboard without a terminal.
func isInputError(err error) bool {
	var aie app.InputError
	return errors.As(err, &aie) || errors.Is(err, dashboard.ErrNoTerminal)
}
