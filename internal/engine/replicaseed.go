package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// ErrReplicaHistory: a store with history that never replicated was
// opened as the primary of a replicated store whose stream holds another
// log. Nothing was written.
var ErrReplicaHistory = errors.New("replication_history_mismatch")

// commitFraming bounds the bytes EncodeCommit adds per record (a length
// varint) and per commit (format byte and count).
const commitFraming = 10

// seedHistory stores the history of a store that ran unreplicated in the
// stream, as commits 1..n of at most MaxCommitBytes each, and records n
// as l's replica head. The commits are cut the same way every time and
// appends are idempotent, so an interrupted seeding is resumed by running
// it again; a stream that holds another log refuses the first append
// (ErrReplicaHistory). Records are stored in replica form (no token,
// otherwise as stored: the standby's hash chain is this log's).
func (e *Engine) seedHistory(l *events.Log) error {
	s := &seeder{ctx: e.repl.ctx, timeout: e.AppendTimeout(), stream: e.repl.stream, max: e.repl.stream.MaxCommitBytes(), size: commitFraming}
	err := l.ReadRecords(1, func(_ uint64, stored []byte) error {
		rec, err := events.ReplicaForm(stored)
		if err != nil {
			return err
		}
		return s.add(rec)
	})
	if err == nil {
		err = s.flush()
	}
	if err != nil {
		return fmt.Errorf("replication: store the log's history in the stream: %w", err)
	}
	e.log.Info("replication: the store's history was stored in the stream", "store", e.repl.store, "commits", s.pos)
	return l.SeedReplicaHead(s.pos)
}

// seeder cuts records into commits and appends them at positions 1, 2, …
type seeder struct {
	ctx     context.Context
	timeout time.Duration // per append
	stream  *replication.Log
	max     int
	batch   [][]byte
	size    int
	pos     uint64
}

func (s *seeder) add(rec []byte) error {
	if len(s.batch) > 0 && s.size+len(rec)+commitFraming > s.max {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.batch = append(s.batch, rec)
	s.size += len(rec) + commitFraming
	return nil
}

func (s *seeder) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	got, err := s.stream.Append(ctx, s.pos, s.batch)
	if errors.Is(err, replication.ErrFenced) {
		return fmt.Errorf("%w: the stream already holds another log at commit %d: %w", ErrReplicaHistory, s.pos+1, err)
	}
	if err != nil {
		return err
	}
	s.pos, s.batch, s.size = got, nil, commitFraming
	return nil
}
