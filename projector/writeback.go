package projector

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// A read model being built (Options.Build) is written without syncs and
// synced once, by CloseBuilt, before it is installed. Left to the end,
// that sync would write the whole file back while nothing else runs; a
// writeBack syncs it from its own goroutine after each committed batch
// instead, so the disk writes the pages while the next batches are
// applied and the final sync finds little left to write. It changes what
// is on disk only in when, never in what.

// writeBack syncs a building read model's file in the background.
type writeBack struct {
	kick chan struct{} // a batch committed: sync again (buffered, coalescing)
	done chan error    // the first sync or close error, once kick is closed
	once sync.Once     // stop's first call ends the goroutine; later calls return its error
	err  error         // what the goroutine returned on done
}

// startWriteBack opens path for syncing and starts the goroutine.
func startWriteBack(path string) (*writeBack, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("sync %s: %w", FileName, err)
	}
	w := &writeBack{kick: make(chan struct{}, 1), done: make(chan error, 1)}
	go w.run(f)
	return w, nil
}

func (w *writeBack) run(f *os.File) {
	var err error
	for range w.kick {
		if err == nil {
			err = f.Sync()
		}
	}
	w.done <- errors.Join(err, f.Close())
}

// nudge asks for a sync of what the committed batches wrote; it never
// waits (a sync already asked for covers it).
func (w *writeBack) nudge() {
	if w != nil {
		ring(w.kick)
	}
}

// ring sends on bell, a channel buffered for one, unless a send already
// waits there (it covers this one); it never blocks.
func ring(bell chan<- struct{}) {
	select {
	case bell <- struct{}{}:
	default:
	}
}

// stop ends the goroutine once its last sync is done and returns its
// first error (nil: none, or no writeBack). Called again (Close after
// CloseBuilt), it returns the same error without waiting.
func (w *writeBack) stop() error {
	if w == nil {
		return nil
	}
	w.once.Do(func() {
		close(w.kick)
		if err := <-w.done; err != nil {
			w.err = fmt.Errorf("sync %s: %w", FileName, err)
		}
	})
	return w.err
}
