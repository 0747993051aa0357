package hikoutei

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// QueueUnsynced queues append effects for up to max existing entities the
// spreadsheet has never been told about — entities committed while sync was
// off, or before this spreadsheet was configured (effects.Outbox; part of
// reconciliation: missing System rows are re-projected, never duplicated,
// since an entity with any queued effect is skipped).
func (s *Store) QueueUnsynced(spreadsheet string, max int) (int, error) {
	n := 0
	err := s.onWriter(func() error {
		refs, err := s.proj.Unsynced(spreadsheet, max)
		if err != nil {
			return err
		}
		now := s.opts.Clock.Now()
		local, overlay := newBatchState(), newBatchState()
		var ds []aggregates.Decision
		for _, r := range refs {
			fx, err := s.backfillEffects(r.Entity, r.ID, local, overlay, now)
			if err != nil {
				return err
			}
			for _, sa := range fx {
				ds = append(ds, aggregates.Decision{Stream: sa.Stream, ExpectedVersion: sa.ExpectedVersion, Events: sa.Events})
			}
		}
		n = len(refs)
		return s.appendDecisions(ds)
	})
	return n, err
}

func (s *Store) backfillEffects(entity, id string, local, overlay *batchState, now time.Time) ([]events.StreamAppend, error) {
	def := s.byName[entity]
	if def == nil {
		return nil, nil
	}
	vals, ok, err := s.proj.EntityValues(entity, id)
	if err != nil || !ok {
		return nil, err
	}
	c := command{def: def, id: id, values: vals}
	d := aggregates.Decision{Events: []events.Event{{Type: aggregates.TypeEntityPersisted,
		Payload: map[string]any{"created": true, "fields": vals}}}}
	return s.queueEffects(c, d, local, overlay, now)
}
