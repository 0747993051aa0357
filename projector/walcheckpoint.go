package projector

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// walSpacing is the least time between two background checkpoints while
// the writer keeps committing: each copies every frame committed since
// the one before, so the write-ahead log stays a few hundred
// milliseconds of commits long, and a burst of commits pays one
// checkpoint (and its fsync of read.sqlite), not one per commit.
const walSpacing = 250 * time.Millisecond

// walCheckpointer copies the write-ahead log's committed frames into
// read.sqlite on a connection of its own, so that the single writer's
// commits do not pay for it: SQLite's automatic checkpoint copies the
// frames, reads them back and fsyncs the database inside the commit that
// crosses its threshold. Checkpoints are PASSIVE: they never wait for the
// writer or for readers, and copy what no reader still needs. The writer
// rings after each commit (nudge); an idle store checkpoints nothing.
//
// The writer keeps an automatic checkpoint, at walBackstopPragma's (eight
// times SQLite's threshold), as the log's bound: only a write
// transaction that starts with every frame copied restarts the log from
// its beginning, and a writer that commits while each background
// checkpoint runs may never see that, so the log would grow with every
// commit. At the backstop the writer's own checkpoint copies what the
// background one has not yet (under a bulk load often most of the log:
// a unit's commit writes 800-1,000 frames), and the next transaction
// restarts the log.
//
// A checkpoint that fails (a full disk, an I/O error) is tried again
// after the next commit: the frames it could not copy stay in the
// write-ahead log, where readers read them as before (SQLite's
// automatic checkpoint ignores its failures the same way); a disk that
// stays full or failing fails the writer's own commits, which say so.
type walCheckpointer struct {
	kick chan struct{} // a commit happened (buffered, coalescing)
	quit chan struct{} // closed by stop: no more checkpoints
	done chan struct{} // closed when the goroutine has ended
	// mu is held for each checkpoint, so one of the writer's own
	// (checkpointTruncate) never runs beside it.
	mu   sync.Mutex
	conn *sqlite.Conn
	run  func(*sqlite.Conn) error // the checkpoint (tests replace it)
	// owed is set when an erasure's truncation of the log was kept from
	// completing (oweTruncate): the goroutine truncates instead of its
	// PASSIVE checkpoint until one completes.
	owed atomic.Bool
	once sync.Once
	err  error // stop's: closing the connection
}

// startWALCheckpointer opens path on a second connection and starts the
// goroutine; the caller then raises the writer's automatic checkpoint
// (walBackstopPragma).
func startWALCheckpointer(path string) (*walCheckpointer, error) {
	conn, err := openConn(path, sqlite.OpenReadWrite|sqlite.OpenWAL)
	if err != nil {
		return nil, fmt.Errorf("checkpoint connection: %w", err)
	}
	conn.SetBusyTimeout(0) // a truncation owed never holds the writer waiting for a reader
	w := &walCheckpointer{kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}), conn: conn,
		run: passiveCheckpoint}
	go w.loop()
	return w, nil
}

// passiveCheckpoint copies what it can of the write-ahead log into the
// database, waiting for no one; a checkpoint already running elsewhere
// (SQLITE_BUSY) is not a failure.
func passiveCheckpoint(conn *sqlite.Conn) error {
	err := sqlitex.ExecuteTransient(conn, "PRAGMA wal_checkpoint(PASSIVE)", nil)
	if sqlite.ErrCode(err).ToPrimary() == sqlite.ResultBusy {
		return nil
	}
	return err
}

func (w *walCheckpointer) loop() {
	defer close(w.done)
	var last time.Time
	for {
		select {
		case <-w.quit:
			return
		case <-w.kick:
		}
		if !w.spaced(last) {
			return
		}
		last = time.Now()
		if w.owed.Load() {
			w.truncate()
			continue
		}
		_ = w.now() // a failure is tried again after the next commit (see the type)
	}
}

// oweTruncate makes the goroutine truncate the log, from its next turn on
// until a truncation completes: an erasure's own (Projector.Remask) was
// kept from completing by a reader, and the log's frames that held the
// erased values in clear stay in read.sqlite-wal until truncated
// (a PASSIVE checkpoint copies them, a restart of the log writes over
// them only as far as new frames reach).
func (w *walCheckpointer) oweTruncate() {
	if w != nil {
		w.owed.Store(true)
		ring(w.kick)
	}
}

// truncate is one try of the truncation owed: TRUNCATE without waiting
// (the connection's busy timeout is zero), so a writer in a transaction or
// a reader of an older snapshot makes it busy at once, and it is tried
// again after walSpacing, commits or not.
func (w *walCheckpointer) truncate() {
	w.mu.Lock()
	busy, err := truncateCheckpoint(w.conn)
	w.mu.Unlock()
	if err != nil || busy {
		ring(w.kick)
		return
	}
	w.owed.Store(false)
}

// spaced waits until walSpacing has passed since last; false when stop
// was called meanwhile.
func (w *walCheckpointer) spaced(last time.Time) bool {
	wait := walSpacing - time.Since(last)
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.quit:
		return false
	}
}

// now checkpoints at once, beside no other checkpoint (under mu): the
// goroutine's, and Open's last step (Projector.CheckpointNow), after
// which a checkpoint the goroutine still owes finds nothing more to copy,
// and writes nothing, unless the writer committed since.
func (w *walCheckpointer) now() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.run(w.conn)
}

// nudge tells the goroutine that the writer committed; it never waits.
func (w *walCheckpointer) nudge() {
	if w != nil {
		ring(w.kick)
	}
}

// stop ends the goroutine (a checkpoint under way finishes) and closes
// its connection; later calls return the same.
func (w *walCheckpointer) stop() error {
	if w == nil {
		return nil
	}
	w.once.Do(func() {
		close(w.quit)
		<-w.done
		if err := w.conn.Close(); err != nil {
			w.err = fmt.Errorf("checkpoint connection: %w", err)
		}
	})
	return w.err
}

// walBackstopPragma sets the writer's automatic checkpoint threshold while
// a walCheckpointer runs: 8,000 frames of 4 KiB pages, a log of about
// 32 MiB. A backfill's unit of 500 rows writes 800–1,000 frames (each row
// lands on leaf pages of its own in several b-trees), so the writer
// reaches any threshold within a second and restarts the log mostly from
// its own checkpoint there, which copies what the background one has not
// yet and syncs read.sqlite: at 4,000 frames (2026-12-05, row 5) that was
// 70 of 89 restarts and 4.1 s of the writer's system calls in a 35 s
// backfill; at 8,000 the backfill ran 7 % faster in six interleaved
// pairs (bench/journal).
const walBackstopPragma = "PRAGMA wal_autocheckpoint=8000"
