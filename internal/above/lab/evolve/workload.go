package evolve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Texts the application writes: some are numbers' shortest forms (a
// retype to a number takes them), most are not.
var words = []string{"bolt", "nut", "12", "2.5", "-7", "00123", "=1+1", "+1 555", "Zürich", "naïve", "washer", "", "1e+21", "0.1"}

// workload is the application's side of a run: it commits creates,
// updates and removes to whatever shape the store has now, and notes
// each acknowledged commit in the model.
type workload struct {
	run int
	n   int // ids issued
	m   *model
	rng *rand.Rand
}

// step commits one seeded change of sh's entity.
func (w *workload) step(ctx context.Context, s *hikoutei.Store, sh *shape) error {
	ids := w.m.ids(sh.entity)
	x := w.rng.IntN(100)
	if x < 35 || len(ids) == 0 {
		return w.create(ctx, s, sh, 1+w.rng.IntN(3))
	}
	id := ids[w.rng.IntN(len(ids))]
	if x >= 92 {
		return w.commit(ctx, s, sh, id, nil, true)
	}
	f := sh.fields[w.rng.IntN(len(sh.fields))]
	return w.set(ctx, s, sh, id, f, w.value(f))
}

// set reads record id, sets field f to v and commits it.
func (w *workload) set(ctx context.Context, s *hikoutei.Store, sh *shape, id string, f field, v any) error {
	r, ok, err := sh.get(ctx, s, id)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("get %s %s: not in the store", sh.entity, id)
	}
	r[f.name] = v
	return w.commit(ctx, s, sh, id, r, false)
}

// create commits n new records in one unit.
func (w *workload) create(ctx context.Context, s *hikoutei.Store, sh *shape, n int) error {
	u := s.Begin()
	made := map[string]rec{}
	for range n {
		w.n++
		id := fmt.Sprintf("%c%03d-%04d", sh.entity[0]+'a'-'A', w.run, w.n)
		r := rec{}
		for _, f := range sh.fields {
			r[f.name] = w.value(f)
		}
		if sh.pk == "code" || sh.pk == "key" { // keyed by code: the id in ref
			if _, ok := sh.field("ref"); ok {
				r["ref"], id = id, "k"+id
			}
		}
		if err := u.Persist(sh.value(id, r)); err != nil {
			return err
		}
		made[id] = r
	}
	res, err := u.Commit(ctx)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	w.m.acked = append(w.m.acked, res.Commit)
	for id, r := range made {
		w.m.put(sh.entity, id, r)
	}
	return nil
}

// commit persists (or removes) one record; a remove refused because the
// record has an open conflict commits nothing (I15).
func (w *workload) commit(ctx context.Context, s *hikoutei.Store, sh *shape, id string, r rec, remove bool) error {
	u := s.Begin()
	var err error
	if remove {
		err = u.Remove(sh.value(id, w.m.recs[sh.entity][id]))
	} else {
		err = u.Persist(sh.value(id, r))
	}
	if err != nil {
		return err
	}
	res, err := u.Commit(ctx)
	switch {
	case remove && errors.Is(err, hikoutei.ErrConflictOpen):
		return nil
	case err != nil:
		return fmt.Errorf("commit %s %s: %w", sh.entity, id, err)
	}
	if res.Events > 0 {
		w.m.acked = append(w.m.acked, res.Commit)
	}
	if remove {
		w.m.remove(sh.entity, id)
	} else {
		w.m.put(sh.entity, id, r)
	}
	return nil
}

// value is a value the application writes into f.
func (w *workload) value(f field) any {
	switch {
	case f.kind == kindInt && w.rng.IntN(5) == 0:
		return int64(1<<40) + w.rng.Int64N(1000)
	case f.kind == kindInt:
		return w.rng.Int64N(1000)
	case f.kind == kindFloat:
		return float64(w.rng.IntN(100)) + []float64{0, 0.5, 0.25}[w.rng.IntN(3)]
	case f.user && w.rng.IntN(2) == 0:
		return fmt.Sprintf("app-%d", w.rng.IntN(1000)) // competes with people's edits
	}
	return words[w.rng.IntN(len(words))]
}
