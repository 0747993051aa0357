package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// A conflict the poller opens between two groups of commits is seen by
// every unit of the next burst, whatever group it lands in: each removal
// of the conflicted entity is refused (entity_has_open_conflict) while the
// other units of the burst commit; then one commit of a strictly higher
// revision of the field, in a burst of others, resolves it exactly once.
func TestAConflictOpenedBetweenGroupsIsSeenByEveryUnitOfTheNextBurst(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	bothChanged(t, x) // a group before the poll saw no open conflict
	burst := func(n int, unit func(i int) error) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = unit(i) })
		}
		wg.Wait()
		return errs
	}
	errs := burst(24, func(i int) error {
		u := x.Begin()
		var err error
		if i%4 == 3 {
			err = u.Remove(&Part{ID: "1"})
		} else {
			err = u.Persist(&Part{ID: fmt.Sprintf("b%02d", i), Name: "burst"})
		}
		if err != nil {
			return err
		}
		_, err = u.Commit(ctx)
		return err
	})
	for i, err := range errs {
		if want := i%4 == 3; errors.Is(err, hikoutei.ErrConflictOpen) != want || (!want && err != nil) {
			t.Fatalf("unit %d: %v (removal %v)", i, err, want)
		}
	}
	if open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen); len(open) != 1 || x.part("1") == nil {
		t.Fatalf("open conflicts %+v, part 1 %+v", open, x.part("1"))
	}
	before := x.head()
	p := x.part("1")
	p.Qty = 6
	errs = burst(16, func(i int) error {
		var e any = &Part{ID: fmt.Sprintf("c%02d", i), Name: "burst"}
		if i == 7 {
			e = p
		}
		u := x.Begin()
		if err := u.Persist(e); err != nil {
			return err
		}
		_, err := u.Commit(ctx)
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
	}
	resolved := 0
	mustT(t, x.e.Log().ReadFrom(before+1, func(e events.Event) error {
		if _, ok := e.Payload.(events.ConflictResolved); ok {
			resolved++
		}
		return nil
	}))
	if open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen); len(open) != 0 || resolved != 1 {
		t.Fatalf("open %+v, %d resolutions", open, resolved)
	}
}
