package devlink

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/internal/safetext"
)

// Event is what a Source sends the dashboard: the lines that arrived since
// the previous event and a snapshot of the device state after them. Events
// are coalesced (at most one per Source.Every), so a serial flood cannot
// starve the UI.
type Event struct {
	// Lines are copies of the lines, in arrival order (at most MaxBatch).
	Lines []Line
	// Dropped counts lines that arrived while the consumer was behind and
	// did not fit in Lines (they still went into State and the save file).
	Dropped int
	State   State
	// Err is set once, on the last event, when the source stopped on an
	// error (port busy, permission denied, no board). Show ErrText.
	Err error
}

// ErrText is Err's message cleaned for a screen (it names the port and
// carries the system's words); "" when Err is nil.
func (e Event) ErrText() safetext.Text { return safetext.Of(e.Err) }

// ErrReplayEnded is the link-down reason when a replayed capture ends.
var ErrReplayEnded = errors.New("replay ended")

// MaxBatch bounds Event.Lines.
const MaxBatch = 2000

// Source feeds the dashboard from a serial port (Link) or a replayed
// capture (Replay), building one State. Set exactly one of Link and Replay.
type Source struct {
	Link *Link
	// Replay is read to EOF instead of a port ("-" = stdin, the demo's
	// recorded firmware output). Its end is not an error.
	Replay io.Reader
	// Symbols decodes crash PCs; nil to skip decoding.
	Symbols *crash.Symbolizer
	// BinLog decodes Log V2 binary frames into text lines; nil leaves them
	// as KindBinary lines (counted in State.BinaryLogFrames).
	BinLog *BinLog
	// OnLine, if set, sees every line first on the reading goroutine (used
	// for --save); the *Line is reused after it returns.
	OnLine func(*Line)
	// Every is the coalescing period; 0 means 100 ms.
	Every time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Run starts reading and returns the event channel, closed when ctx is done
// or the source stops (after a final event carrying Err, if any).
func (src *Source) Run(ctx context.Context) <-chan Event {
	every := src.Every
	if every == 0 {
		every = 100 * time.Millisecond
	}
	now := src.Now
	if now == nil {
		now = time.Now
	}
	out := make(chan Event, 1)
	var (
		mu      sync.Mutex
		st      = NewState()
		batch   []Line
		dropped int
		dirty   bool
	)
	var onText func(l *Line)
	onLine := func(l *Line) {
		if src.OnLine != nil {
			src.OnLine(l)
		}
		if src.BinLog != nil && l.Kind == KindBinary {
			if src.BinLog.Expand(l, onText) == nil {
				return
			}
		}
		onText(l)
	}
	onText = func(l *Line) {
		mu.Lock()
		defer mu.Unlock()
		st.ApplyLine(l, now(), src.Symbols)
		if len(batch) < MaxBatch {
			c := l.Clone()
			c.Display = l.DisplayText()
			if src.Symbols != nil {
				c.Decoded = safetext.All(DecodeLine(src.Symbols, l)) // names from the ELF's DWARF
			}
			batch = append(batch, c)
		} else {
			dropped++
		}
		dirty = true
	}
	onStatus := func(s LinkStatus) {
		mu.Lock()
		defer mu.Unlock()
		st.ApplyLink(s)
		dirty = true
	}
	take := func() Event {
		mu.Lock()
		defer mu.Unlock()
		ev := Event{Lines: batch, Dropped: dropped, State: st.Clone()}
		batch, dropped, dirty = nil, 0, false
		return ev
	}
	done := make(chan error, 1)
	go func() {
		var err error
		switch {
		case src.Link != nil:
			err = src.Link.Run(ctx, onLine, onStatus)
		case src.Replay != nil:
			onStatus(LinkStatus{Up: true, Port: "replay", Replay: true, At: now()})
			err = Pump(ctx, src.Replay, 0, onLine)
			onStatus(LinkStatus{Up: false, Port: "replay", Replay: true, At: now(), Err: ErrReplayEnded})
		}
		done <- err
	}()
	go func() {
		defer close(out)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				mu.Lock()
				d := dirty
				mu.Unlock()
				if !d {
					continue
				}
				select {
				case out <- take():
				case <-ctx.Done():
				}
			case err := <-done:
				ev := take()
				ev.Err = err
				select {
				case out <- ev:
				case <-ctx.Done():
				}
				return
			}
		}
	}()
	return out
}
