package events

import (
	"fmt"
	"sync"
)

// memReplica is an in-memory Replicator: a list of commits in order, with
// the expected-last check of the real one (internal/replication), for
// tests and for several logs in one process.
type memReplica struct {
	mu      sync.Mutex
	commits [][][]byte
	// failNext, when set, is returned by the next Append; stored says
	// whether that Append stored the commit before failing (a lost
	// acknowledgement).
	failNext error
	stored   bool
}

var _ Replicator = (*memReplica)(nil)

// Append implements Replicator.
func (m *memReplica) Append(last uint64, records [][]byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failNext; err != nil {
		m.failNext = nil
		if m.stored {
			m.commits = append(m.commits, records)
		}
		return 0, err
	}
	if head := uint64(len(m.commits)); last != head {
		return 0, fmt.Errorf("%w: the replicated log ends at %d, the writer expected %d", ErrReplicaFenced, head, last)
	}
	m.commits = append(m.commits, records)
	return uint64(len(m.commits)), nil
}

// FailNext makes the next Append fail with err, after storing its commit
// when stored (an acknowledgement lost on the way back).
func (m *memReplica) FailNext(err error, stored bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failNext, m.stored = err, stored
}

// Head returns the number of commits stored.
func (m *memReplica) Head() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.commits))
}

// Commit returns commit n (1-based) as stored.
func (m *memReplica) Commit(n uint64) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.commits[n-1]
}

// Follow applies every commit after the log's replica head to l, in
// order: what a standby does with the replicated log.
func (m *memReplica) Follow(l *Log) error {
	have, err := l.ReplicaHead()
	if err != nil {
		return err
	}
	for n := have + 1; n <= m.Head(); n++ {
		if err := l.ApplyReplica(n, m.Commit(n)); err != nil {
			return err
		}
	}
	return nil
}
