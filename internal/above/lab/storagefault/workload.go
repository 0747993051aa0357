package storagefault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// t0 is the manual clock's start in every run.
var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// ledger is what a run's workload was told: the note each acknowledged
// id holds, and the ids of refused units.
type ledger struct {
	acked   map[string]string
	refused []string
	// uncertain are ids of units refused with log_commit_uncertain: they
	// may or may not be in the log.
	uncertain map[string]bool
}

func newLedger() *ledger {
	return &ledger{acked: map[string]string{}, uncertain: map[string]bool{}}
}

// workload commits units of 1–3 notes with a seeded generator.
type workload struct {
	rng  *rand.Rand
	next int
	l    *ledger
}

func newWorkload(seed uint64) *workload {
	return &workload{rng: rand.New(rand.NewPCG(seed, 0x5709)), l: newLedger()}
}

// unit commits one unit and records its outcome; it returns the error.
func (w *workload) unit(s *hikoutei.Store) error {
	notes := map[string]string{}
	u := s.Begin()
	for range 1 + w.rng.IntN(3) {
		id := fmt.Sprintf("n%05d", w.next)
		w.next++
		notes[id] = w.text()
		if err := u.Persist(&Note{ID: id, Text: notes[id]}); err != nil {
			return err
		}
	}
	_, err := u.Commit(context.Background())
	w.record(notes, err)
	return err
}

func (w *workload) record(notes map[string]string, err error) {
	for id, text := range notes {
		switch {
		case err == nil || errors.Is(err, hikoutei.ErrReadModelBehind):
			w.l.acked[id] = text
		case errors.Is(err, hikoutei.ErrLogCommitUncertain):
			w.l.uncertain[id] = true
		default:
			w.l.refused = append(w.l.refused, id)
		}
	}
}

func (w *workload) text() string {
	b := make([]byte, 40+w.rng.IntN(400))
	for i := range b {
		b[i] = byte('a' + w.rng.IntN(26))
	}
	return string(b)
}

// storeOptions are the options of every open in a run: a manual clock
// a minute later each time (a copied or crashed writer's lease can be
// taken over at once), snapshots every 40 events.
func storeOptions(opens int) hikoutei.Options {
	return hikoutei.Options{Clock: events.NewManualClock(t0.Add(time.Duration(opens) * time.Minute)), HeartbeatInterval: -1,
		AcquireWait: -1, SnapshotEvery: 40}
}

// baseStore creates a store at dir holding units acknowledged commits,
// closed cleanly, and returns the workload that wrote it.
func baseStore(dir string, units int, seed uint64) (*workload, error) {
	s, err := hikoutei.Open(context.Background(), dir, storeOptions(0), NoteDef)
	if err != nil {
		return nil, err
	}
	w := newWorkload(seed)
	for range units {
		if err := w.unit(s); err != nil {
			return w, errors.Join(err, s.Close())
		}
	}
	return w, s.Close()
}
