package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// Erasure is what Erase did.
type Erasure struct {
	// Subject is the subject's keyed digest as the subject.erased event
	// records it (32 hex digits; never the subject in clear).
	Subject string
	// Generation is the key generation destroyed (0: the subject never
	// had a personal value sealed, so there was no key to destroy; the
	// erasure is recorded all the same).
	Generation uint64
	// Seq is the log sequence of the subject.erased event.
	Seq uint64
	// InClear counts the subject's personal values the log holds in clear,
	// in the records it owns now: values written before their field was
	// marked personal. No key seals them, so the erasure cannot make their
	// bytes unreadable in log.db, its segments and backups; the store's
	// readers show Erased in their place, and read.sqlite and the sheet's
	// cells are rewritten with it (docs/erasure.md, "Values written before
	// a field was personal"). 0 when every value was sealed; -1 when not counted: a
	// store opened without Go types (OpenDeclared, hikoutei erase) does
	// not know which records a subject owns.
	InClear int
}

// EraseOption tunes Erase.
type EraseOption func(*eraseOptions)

type eraseOptions struct{ actor Actor }

// ErasedBy records who asked for the erasure (default ActorApplication;
// the hikoutei erase command records ActorCLI).
func ErasedBy(a Actor) EraseOption { return func(o *eraseOptions) { o.actor = a } }

// Erase erases a data subject: every personal field value sealed for
// subject (the primary key of the records it owns, or their subject
// field's value) becomes unreadable for good, wherever its sealed bytes
// are: the log, its sealed segments, read.sqlite, snapshots, backups, the
// mirror. It marks the erasure in the key file, commits one subject.erased
// event (naming the subject by its keyed digest), then destroys the
// subject's key by rewriting keys.db without it. When Erase returns, every
// reader sees the marker in place of those values (Erased in typed reads,
// ErasedValue in events), at any point of the history (AsOf), and the
// chain still verifies: no logged byte changed (I37, docs/erasure.md).
// Replicated, it then deletes the key from the store's key stream and
// records the erasure there; each standby destroys the key in its own
// keys.db (docs/replication.md, "Personal data keys").
// With sync on, it then queues fenced rewrites of the subject's personal
// cells, which the sheet shows as the marker once they are sent (an error
// after the erasure completed says so; anti-entropy corrects the cells).
// A crash before it returns is finished at the next Open. A subject that
// receives personal values again later gets a new key.
// Errors: ErrInvalidValue (an empty subject), ErrPersonalKeyFile,
// ErrStoreClosed, ErrStandby, fencing and log errors, the context's.
func (s *Store) Erase(ctx context.Context, subject string, opts ...EraseOption) (Erasure, error) {
	o := eraseOptions{actor: ActorApplication}
	for _, fn := range opts {
		fn(&o)
	}
	subject, err := events.NormalizeString(subject)
	if err == nil && strings.TrimSpace(subject) == "" {
		err = fmt.Errorf("empty")
	}
	if err != nil {
		return Erasure{}, fmt.Errorf("%w: erase: the subject: %w", ErrInvalidValue, err)
	}
	if err := ctx.Err(); err != nil {
		return Erasure{}, err
	}
	if s.e.Closed() {
		return Erasure{}, ErrStoreClosed
	}
	if s.e.Role() == engine.RoleStandby {
		return Erasure{}, fmt.Errorf("%w: erase on the primary", ErrStandby)
	}
	s.keys.erase.Lock()
	defer s.keys.erase.Unlock()
	if s.keys.ring.Load() == nil {
		if err := s.createKeys(); err != nil {
			return Erasure{}, err
		}
	}
	ring := s.keys.ring.Load()
	d := ring.Digest(subject)
	if err := ring.MarkPending(d, string(o.actor)); err != nil {
		s.keys.note(err)
		return Erasure{}, err
	}
	gen := ring.Generation(d)
	seq, err := s.recordErasure(d, gen, o.actor)
	if err != nil {
		return Erasure{}, err
	}
	err = failpoint.Err(failpoint.EraseAfterEvent)
	if err == nil {
		err = ring.Destroy(d)
	}
	if err != nil {
		s.keys.note(err)
		return Erasure{}, fmt.Errorf("erasure recorded at seq %d; destroying the key failed (it is retried at the next Open): %w", seq, err)
	}
	s.keys.recovered()
	er := Erasure{Subject: d.String(), Generation: uint64(gen), Seq: seq}
	kerr := s.krep.erased(ctx, d, gen)
	if kerr != nil {
		kerr = fmt.Errorf("erasure complete at seq %d; deleting the key from the replicated key stream failed (it is deleted when the store next opens): %w", seq, kerr)
	}
	recs, err := s.listSubjectRecords(ctx, subject)
	if err != nil {
		return er, errors.Join(kerr, fmt.Errorf("erasure complete at seq %d; listing the subject's records failed (the values in clear are not counted; anti-entropy corrects the cells): %w", seq, err))
	}
	if n, err := s.countInClear(recs); err != nil {
		kerr = errors.Join(kerr, fmt.Errorf("erasure complete at seq %d; counting the values in clear failed: %w", seq, err))
	} else {
		er.InClear = n
	}
	if _, err := s.rewriteErased(recs); err != nil {
		return er, errors.Join(kerr, fmt.Errorf("erasure complete at seq %d; queueing the rewrite of the sheet's cells failed (anti-entropy corrects them): %w", seq, err))
	}
	return er, kerr
}

func (s *Store) recordErasure(d keyring.Digest, gen uint32, actor Actor) (uint64, error) {
	return s.e.RecordErasure(events.SubjectErased{Subject: d.String(), Generation: uint64(gen), Actor: actor})
}

// finishErasure commits the event of an erasure a crash interrupted
// (again, if it was committed: two events name the same erasure), with
// the actor that asked for it (its mark records it; a mark made by an
// earlier build does not: then actor), and destroys the key.
func (s *Store) finishErasure(_ context.Context, d keyring.Digest, actor Actor) error {
	if by := s.keys.ring.Load().PendingBy(d); by != "" {
		actor = Actor(by)
	}
	gen := s.keys.ring.Load().Generation(d)
	if _, err := s.recordErasure(d, gen, actor); err != nil {
		return err
	}
	if err := s.keys.ring.Load().Destroy(d); err != nil {
		return err
	}
	return s.krep.erased(context.Background(), d, gen)
}

// createKeys creates the key file of a store that had none (an erasure
// needs its secret to name the subject); s.keys.erase held.
func (s *Store) createKeys() error {
	r, err := keyring.Open(keyFile(s.Dir()), true)
	if err != nil {
		return err
	}
	s.keys.ring.Store(r)
	return nil
}
