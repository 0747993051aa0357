package hikoutei

import (
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// Snapshot takes a snapshot of the read model now (on the writer goroutine,
// between group commits) and returns its manifest. A store restarted with an
// unusable read.sqlite loads the newest valid snapshot and replays only the
// log after it. Errors: ErrStoreClosed, I/O errors.
func (s *Store) Snapshot() (snapshots.Manifest, error) {
	var m snapshots.Manifest
	var err error
	serr := s.send(&commitReq{query: func() { m, err = s.takeSnapshot() }})
	if serr != nil {
		return m, serr
	}
	return m, err
}

func (s *Store) takeSnapshot() (snapshots.Manifest, error) {
	m, err := s.snaps.Take(s.proj.Conn(), s.proj.Checkpoint(), s.w.Log().StoreID())
	if err == nil {
		s.lastSnap = m.Seq
	}
	return m, err
}

// autoSnapshot takes a snapshot when SnapshotEvery events were applied
// since the last one. A failure is logged, never fails a commit.
func (s *Store) autoSnapshot() {
	every := s.opts.SnapshotEvery
	if every == 0 || s.behind || s.proj.Checkpoint()-s.lastSnap < every {
		return
	}
	if _, err := s.takeSnapshot(); err != nil {
		s.log.Error("automatic snapshot failed", "err", err.Error())
	}
}
