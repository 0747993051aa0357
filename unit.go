package hikoutei

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Unit is a unit of work: persists and removes collected in memory and
// committed atomically by Commit — all of them or none. Values are read at
// Commit (flush semantics), so changes made after Persist are included.
// A Unit is not safe for concurrent use; create one per goroutine.
type Unit struct {
	store  *Store
	order  []string          // entity stream keys in first-touch order
	ops    map[string]unitOp // last op per entity wins
	loaded map[any]string    // pointers loaded through this unit → original key
	err    error             // first validation error: Commit fails with it
	done   bool
}

type unitOp struct {
	ptr    reflect.Value
	def    *EntityDef
	id     string
	remove bool
}

// Begin starts a unit of work.
func (s *Store) Begin() *Unit {
	return &Unit{store: s, ops: map[string]unitOp{}, loaded: map[any]string{}}
}

// Persist schedules entity (a pointer to a declared struct) to be stored.
// Errors (also returned by Commit, which then commits nothing):
// ErrUnregisteredType, ErrInvalidPrimaryKey, ErrPrimaryKeyChanged, ErrUnitDone.
func (u *Unit) Persist(entity any) error { return u.add(entity, false) }

// Remove schedules entity to be deleted. Errors as Persist; Commit fails
// with ErrNotFound if it does not exist.
func (u *Unit) Remove(entity any) error { return u.add(entity, true) }

func (u *Unit) add(entity any, remove bool) error {
	if u.done {
		return ErrUnitDone
	}
	op, err := u.store.op(entity, remove)
	if err == nil {
		if orig, ok := u.loaded[entity]; ok && orig != op.id {
			err = fmt.Errorf("%w: %s %q was loaded as %q", ErrPrimaryKeyChanged, op.def.name, op.id, orig)
		}
	}
	if err != nil {
		if u.err == nil {
			u.err = err
		}
		return err
	}
	key := op.def.name + "/" + op.id
	if _, seen := u.ops[key]; !seen {
		u.order = append(u.order, key)
	}
	u.ops[key] = op
	return nil
}

func (s *Store) op(entity any, remove bool) (unitOp, error) {
	v := reflect.ValueOf(entity)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return unitOp{}, fmt.Errorf("%w: %T (pass a non-nil pointer to a declared struct)", ErrUnregisteredType, entity)
	}
	def := s.byType[v.Type().Elem()]
	if def == nil {
		return unitOp{}, fmt.Errorf("%w: %T", ErrUnregisteredType, entity)
	}
	id, err := def.key(v.Elem())
	return unitOp{ptr: v, def: def, id: id, remove: remove}, err
}

// Commit validates every scheduled change, then hands the unit to the single
// writer and returns once it is durable in the log AND applied to the read
// model (reads after Commit see it). Unchanged entities produce no event. It
// never waits on Google Sheets. The context only bounds validation:
// once handed to the writer, the unit commits or fails as one.
// A nil error or ErrReadModelBehind means the unit is durable in the log;
// every other error means nothing of it was committed (with one exception,
// ErrLogCommitUncertain, whose outcome is unknown until reopen).
// Errors: the first Persist/Remove error; ErrInvalidValue; ErrNotFound;
// ErrStoreClosed; ErrStaleWriterFence if the lease was lost; ErrLogWrite
// (disk full, I/O error); ErrReadModelUnavailable; ErrLogCommitUncertain;
// ErrReadModelBehind (durable, but the read model lags).
func (u *Unit) Commit(ctx context.Context) (CommitResult, error) {
	if u.done {
		return CommitResult{}, ErrUnitDone
	}
	u.done = true
	if u.err != nil {
		return CommitResult{}, u.err
	}
	tr := u.store.instrument(ctx, len(u.order))
	res, err := u.commit(ctx)
	tr.end(res, err)
	return res, err
}

// commit validates the unit and hands it to the single writer.
func (u *Unit) commit(ctx context.Context) (CommitResult, error) {
	cmds, err := u.commands()
	if err != nil {
		return CommitResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return CommitResult{}, err
	}
	res, err := u.store.e.Commit(cmds)
	return CommitResult(res), err
}

// CommitResult describes a committed unit of work: its commit id, the log
// sequences of its events and how many (all zero when nothing changed).
type CommitResult struct {
	Commit   string // commit id shared by the unit's events ("" if nothing changed)
	FirstSeq uint64 // first log sequence of the unit (0 if nothing changed)
	LastSeq  uint64
	Events   int // events appended (0 when every entity was unchanged)
}

func (u *Unit) commands() ([]engine.Command, error) {
	cmds := make([]engine.Command, 0, len(u.order))
	ops := make([]unitOp, 0, len(u.order))
	for _, key := range u.order {
		op := u.ops[key]
		ops = append(ops, op)
		c := engine.Command{Entity: op.def.name, ID: op.id}
		if id, err := op.def.key(op.ptr.Elem()); err != nil || id != op.id {
			return nil, fmt.Errorf("%w: %s %q changed to %q after Persist", ErrPrimaryKeyChanged, op.def.name, op.id, id)
		}
		if !op.remove {
			vals, err := op.def.values(op.ptr.Elem(), op.id)
			if err != nil {
				return nil, err
			}
			c.Values = vals
		}
		cmds = append(cmds, c)
	}
	return cmds, u.store.sealUnit(cmds, ops)
}
