//go:build demo

package app

// Progress is the lab's start-up progress: only the demo, built with the
// demo tag, starts work long enough to show it.

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/termcolor"
)

// Progress shows long work as it happens: on a terminal, a spinner line
// with the elapsed time that each step replaces; otherwise one line a step.
type Progress struct {
	w     io.Writer
	tty   bool
	start time.Time

	mu   sync.Mutex
	cur  string
	stop chan struct{}
	done chan struct{}
}

// NewProgress starts showing progress on w (a spinner when w is a
// terminal). Call Done when the work ends.
func NewProgress(w io.Writer) *Progress {
	p := &Progress{w: w, start: time.Now()}
	if termcolor.IsTerminal(w) {
		p.tty = true
		p.stop = make(chan struct{})
		p.done = make(chan struct{})
		go p.spin()
	}
	return p
}

// Step reports the step now under way.
func (p *Progress) Step(s string) {
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
func (p *Progress) Done() {
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

func (p *Progress) spin() {
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
