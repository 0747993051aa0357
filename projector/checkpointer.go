package projector

import (
	"sync"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// A live read model's WAL is copied into read.sqlite by a goroutine of its
// own (Options.CheckpointAside) rather than by the writing connection at
// the commit that fills it: SQLite's automatic checkpoint runs inside that
// COMMIT, so the writer — and every caller of its group commit — waited for
// the copy and its syncs. The goroutine runs a PASSIVE checkpoint (it never
// waits for the writer or for readers) on a connection of its own each time
// the writer has applied checkpointEvery events since it last rang; the
// WAL then restarts at the writer's next transaction, as after an
// automatic checkpoint. The writer keeps an automatic checkpoint of
// walBackstop pages for a transaction far larger than usual.

// checkpointEvery is how many applied events ring the checkpointer.
const checkpointEvery = 4096

// walBackstop is the writer's own automatic checkpoint (pages) while a
// checkpointer runs; SQLite's default is 1000.
const walBackstop = 10000

type checkpointer struct {
	conn  *sqlite.Conn
	mu    sync.Mutex // held while a checkpoint runs (checkpointTruncate takes it too)
	bell  chan struct{}
	done  chan struct{}
	owed  int   // events applied since the last ring (the writer's)
	rings int   // times the writer rang (the writer's; tests)
	runs  int   // checkpoints run (under mu; tests)
	err   error // the last checkpoint's failure (under mu)
}

// startCheckpointer opens its connection to the read model at path.
func startCheckpointer(path string) (*checkpointer, error) {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenWAL)
	if err != nil {
		return nil, err
	}
	c := &checkpointer{conn: conn, bell: make(chan struct{}, 1), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	for range c.bell {
		c.mu.Lock()
		c.err = sqlitex.ExecuteTransient(c.conn, "PRAGMA wal_checkpoint(PASSIVE)", nil)
		c.runs++
		c.mu.Unlock()
	}
}

// applied counts n events committed by the writer, ringing every
// checkpointEvery (never blocking: a rung bell is enough).
func (c *checkpointer) applied(n int) {
	if c.owed += n; c.owed < checkpointEvery {
		return
	}
	c.owed = 0
	c.rings++
	select {
	case c.bell <- struct{}{}:
	default:
	}
}

// lastErr is the last checkpoint's failure (nil when it succeeded).
func (c *checkpointer) lastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// stop waits for a running checkpoint and closes the connection.
func (c *checkpointer) stop() error {
	close(c.bell)
	<-c.done
	return c.conn.Close()
}
