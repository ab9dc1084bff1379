package tui_test

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/common"
)

// The wiring main does: build the model, start the program, relay every
// source event with Program.Send. Ping returns a command that only asks the
// source to start a run; the results arrive as probes.PingResult events.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		events   <-chan probes.Event                // e.g. (*tailscaled.Source).Run(ctx)
		startRun func(probes.Peer, probes.PingKind) // e.g. (*tailscaled.Source).Ping
		extra    []common.Pane                      // Device, Log, Tuning panes
	)
	m := tui.New(tui.Options{
		Title: "tailpath demo (lab tailnet)",
		Panes: extra,
		Ping: func(p probes.Peer, k probes.PingKind) tea.Cmd {
			return func() tea.Msg { startRun(p, k); return nil }
		},
	})
	p := tea.NewProgram(m, tea.WithContext(ctx)) // the model's View asks for the alternate screen
	go func() {
		for ev := range events {
			p.Send(ev)
		}
	}()
	_ = p // main calls p.Run(), then cancels the sources and waits for them.
}
