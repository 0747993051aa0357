package converge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Part is the campaign's entity: Name and Count are the application's
// (System tab only); SKU, Qty and Notes are user fields people may edit on
// Part_Input, and the application changes Notes too (conflicts). Email is
// personal (docs/erasure.md: sealed under the key of its subject, the
// part's id): the workload erases subjects (personal.go).
type Part struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	SKU   string `hikoutei:"sku,user"`
	Qty   int64  `hikoutei:"qty,user"`
	Notes string `hikoutei:"notes,user"`
	Email string `hikoutei:"email,personal"`
}

// Entity is the declaration the campaign's stores open with.
func Entity() hikoutei.EntityDef { return hikoutei.Entity[Part]("Part") }

// values are a part's fields by name, as the product encodes them.
func values(p *Part) map[string]any {
	return map[string]any{"id": p.ID, "name": p.Name, "count": p.Count, "sku": p.SKU, "qty": p.Qty, "notes": p.Notes, "email": p.Email}
}

var words = []string{"bolt", "nut", "00123", "=1+1", "+1 555", "Zürich", "naïve", "washer", "NaN", ""}

// workload is the application's side of a run: the commits it made and
// what they say each live part's application fields are.
type workload struct {
	run   int
	n     int
	live  map[string]Part // id → the application fields last acknowledged
	ids   []string
	acked []string // commit ids acknowledged
	pii   personalLedger
}

func newWorkload(run int) *workload {
	return &workload{run: run, live: map[string]Part{}, pii: personalLedger{values: map[string]string{}, erased: map[string]bool{}}}
}

// step commits one seeded change: create, update an application field,
// the user field Notes or the personal Email, remove, or erase a subject
// (7 % of the workload's steps, about 3 % of a run's acts).
func (w *workload) step(ctx context.Context, s *hikoutei.Store, rng *rand.Rand) error {
	x := rng.IntN(100)
	if x < 40 || len(w.ids) == 0 {
		return w.create(ctx, s, rng, 1+rng.IntN(4))
	}
	id := w.ids[rng.IntN(len(w.ids))]
	p, err := hikoutei.Get[Part](ctx, s, id)
	if err != nil {
		return fmt.Errorf("get %s: %w", id, err)
	}
	switch {
	case x < 58:
		p.Name = words[rng.IntN(len(words))]
	case x < 66:
		p.Count++
	case x < 78:
		p.Notes = fmt.Sprintf("app-%d", rng.IntN(1000)) // competes with people's edits
	case x < 84:
		if p.Email == hikoutei.Erased || w.pii.erased[id] {
			return nil // an erased subject is never given a value again
		}
		p.Email = w.pii.newValue(id, w.run)
	case x >= 93:
		return w.erase(ctx, s, id)
	default:
		err := w.commit(ctx, s, p, true)
		if errors.Is(err, hikoutei.ErrConflictOpen) {
			return nil // I15: fails closed, nothing committed
		}
		return err
	}
	return w.commit(ctx, s, p, false)
}

// touch commits a new Notes for part id (if it is live), racing a
// person's edit of the same Input row.
func (w *workload) touch(ctx context.Context, s *hikoutei.Store, id string, rng *rand.Rand) error {
	if _, ok := w.live[id]; !ok {
		return nil
	}
	p, err := hikoutei.Get[Part](ctx, s, id)
	if err != nil {
		return fmt.Errorf("get %s: %w", id, err)
	}
	p.Notes = fmt.Sprintf("app-%d", rng.IntN(1000))
	return w.commit(ctx, s, p, false)
}

// create commits n new parts in one unit.
func (w *workload) create(ctx context.Context, s *hikoutei.Store, rng *rand.Rand, n int) error {
	u := s.Begin()
	var ps []*Part
	for range n {
		w.n++
		id := fmt.Sprintf("p%03d-%03d", w.run, w.n)
		p := &Part{ID: id, Name: words[rng.IntN(len(words))], Count: rng.Int64N(1 << 40),
			SKU: fmt.Sprintf("%05d", rng.IntN(100000)), Qty: rng.Int64N(100), Email: w.pii.newValue(id, w.run)}
		if err := u.Persist(p); err != nil {
			return err
		}
		ps = append(ps, p)
	}
	res, err := u.Commit(ctx)
	if err != nil {
		return err
	}
	w.acked = append(w.acked, res.Commit)
	for _, p := range ps {
		w.note(p, false)
	}
	return nil
}

func (w *workload) commit(ctx context.Context, s *hikoutei.Store, p *Part, remove bool) error {
	u := s.Begin()
	var err error
	if remove {
		err = u.Remove(p)
	} else {
		err = u.Persist(p)
	}
	if err != nil {
		return err
	}
	res, err := u.Commit(ctx)
	if err != nil {
		return err
	}
	if res.Events > 0 {
		w.acked = append(w.acked, res.Commit)
	}
	w.note(p, remove)
	return nil
}

// note records an acknowledged change in the model.
func (w *workload) note(p *Part, remove bool) {
	_, known := w.live[p.ID]
	switch {
	case remove:
		delete(w.live, p.ID)
		for i, id := range w.ids {
			if id == p.ID {
				w.ids = append(w.ids[:i], w.ids[i+1:]...)
				break
			}
		}
	case !known:
		w.ids = append(w.ids, p.ID)
		fallthrough
	default:
		w.live[p.ID] = Part{ID: p.ID, Name: p.Name, Count: p.Count, Email: p.Email}
	}
}

// lost compares the store's parts with the acknowledged model: every live
// part is there with the application fields last acknowledged, and none
// the application removed. It returns one line per difference.
func (w *workload) lost(parts []*Part) []string {
	var out []string
	have := map[string]*Part{}
	for _, p := range parts {
		have[p.ID] = p
		if _, ok := w.live[p.ID]; !ok {
			out = append(out, fmt.Sprintf("part %s is in the store but was removed (or never created)", p.ID))
		}
	}
	for id, m := range w.live {
		p, ok := have[id]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("acknowledged part %s is missing from the store", id))
		case p.Name != m.Name || p.Count != m.Count:
			out = append(out, fmt.Sprintf("part %s shows name/count %q/%d, acknowledged %q/%d", id, p.Name, p.Count, m.Name, m.Count))
		}
	}
	return out
}
