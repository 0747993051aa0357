// Package progress shows how far a long operation of the CLI is. On a
// terminal it draws a bar that redraws in place, with the count, the
// elapsed time and an estimate of the time left (schollz/progressbar).
// Anywhere else (a pipe, a file, a CI log) it writes plain lines, one
// each time another tenth of the work is done and one when it ends, and
// never a carriage return or an escape sequence.
//
// It is used by cmd/hikoutei and internal/above/demo only; the library never
// draws progress.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar reports the progress of one operation. Its methods are safe for
// concurrent use.
type Bar struct {
	mu    sync.Mutex
	what  string
	w     io.Writer
	tty   *progressbar.ProgressBar // nil: plain lines
	max   int64                    // <= 0: not known yet
	done  int64
	tenth int64 // the last tenth a plain line reported
	start time.Time
	now   func() time.Time
	ended bool
}

// New starts a bar for what (e.g. "replaying") writing to w (nil: no
// output). max is the amount of work, or 0 while it is unknown (SetMax).
func New(w io.Writer, max int64, what string) *Bar {
	return newBar(w, max, what, IsTerminal(w), time.Now)
}

func newBar(w io.Writer, max int64, what string, tty bool, now func() time.Time) *Bar {
	if w == nil {
		w = io.Discard
	}
	b := &Bar{what: what, w: w, max: max, start: now(), now: now}
	if tty {
		b.tty = progressbar.NewOptions64(terminalMax(max), progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionSetWidth(30), progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetSpinnerChangeInterval(0),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	}
	return b
}

// IsTerminal reports whether w is a terminal (an *os.File on a TTY).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalMax is progressbar's max: -1 draws a spinner while unknown.
func terminalMax(max int64) int64 {
	if max <= 0 {
		return -1
	}
	return max
}

// SetMax sets the amount of work once it is known (or when it grew).
func (b *Bar) SetMax(max int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if max == b.max {
		return
	}
	b.max = max
	if b.tty != nil {
		b.tty.ChangeMax64(terminalMax(max))
	}
}

// Set records that n units of work are done.
func (b *Bar) Set(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.done = n
	if b.tty != nil {
		_ = b.tty.Set64(n)
		return
	}
	b.plainLine()
}

// plainLine writes a line when the work crossed another tenth.
func (b *Bar) plainLine() {
	if b.max <= 0 || b.done >= b.max {
		return
	}
	tenth := b.done * 10 / b.max
	if tenth <= b.tenth {
		return
	}
	b.tenth = tenth
	elapsed := b.now().Sub(b.start)
	left := time.Duration(float64(elapsed) * float64(b.max-b.done) / float64(max(b.done, 1)))
	fmt.Fprintf(b.w, "%s: %d%% (%d/%d) elapsed %s, about %s left\n", b.what, b.done*100/b.max, b.done, b.max, round(elapsed), round(left))
}

// Finish ends the bar: the work is complete, and the bar shows it (100%
// on a terminal; a last plain line elsewhere). Later calls do nothing.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.ended = true
	if b.max > 0 {
		b.done = b.max
	}
	if b.tty != nil {
		if b.max > 0 {
			_ = b.tty.Set64(b.max)
		}
		_ = b.tty.Finish()
		return
	}
	fmt.Fprintf(b.w, "%s: done (%d) in %s\n", b.what, b.done, round(b.now().Sub(b.start)))
}

// Abandon ends the bar without claiming the work completed (the
// operation failed): a terminal bar stops where it was.
func (b *Bar) Abandon() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.ended = true
	if b.tty != nil {
		_ = b.tty.Exit()
		fmt.Fprintln(b.w)
	}
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
