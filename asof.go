package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Point names a point of the log's history for AsOf: a sequence (AtSeq)
// or a time (AtTime).
type Point struct{ p engine.Point }

// AtSeq is the point right after the record at log sequence seq.
func AtSeq(seq uint64) Point { return Point{engine.Point{Seq: seq}} }

// AtTime is the point at time t: the last log sequence whose recorded
// time (the `at` of its event, the clock reading its decision used) is
// at or before t.
func AtTime(t time.Time) Point { return Point{engine.Point{Time: t, ByTime: true}} }

// String is "seq N" or the RFC 3339 time.
func (p Point) String() string {
	if p.p.ByTime {
		return p.p.Time.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("seq %d", p.p.Seq)
}

// View is a read-only read model of the store as it was at one log
// sequence: every entity as the log up to that sequence makes it. Read it
// as the store (Get, FindOne, Find, Count with any QueryOption); it
// never changes, whatever the store commits later. Close removes it. Safe
// for concurrent use.
type View struct {
	v      *engine.View
	byType map[reflect.Type]*EntityDef
	keys   *keys // opens personal values (AsOfDir: the key file read-only)
}

// AsOf builds a view of every entity as of at: a copy of the newest
// snapshot at or before it that the log vouches for (or an empty read
// model), to which the log's records after the snapshot up to at are
// applied, in a private temporary file (0600) that Close removes. The
// live store is not paused. Replay uses the recorded `at` of each event,
// never the clock. Errors: ErrAsOfOutOfRange (sequence 0, past the head,
// or a time before the first record), ErrStoreClosed, the log's read
// errors, the context's (checked between batches).
func (s *Store) AsOf(ctx context.Context, at Point) (*View, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := s.e.AsOf(ctx, at.p)
	if err != nil {
		return nil, fmt.Errorf("as of %s: %w", at, err)
	}
	return &View{v: v, byType: s.byType, keys: s.keys}, nil
}

// AsOfDir builds a view of the store in dir as of at, as AsOf does,
// without opening the store: it holds log.db read-only while it builds
// (the store cannot be opened for writing meanwhile, and it fails if the
// store is open) and writes nothing in dir. With no entities the view
// has the shapes the log declares: read it with Record (typed reads need
// the entities). Errors as AsOf, and ErrNotAStore, ErrStoreLocked,
// ErrInvalidEntity.
func AsOfDir(ctx context.Context, dir string, at Point, entities ...EntityDef) (*View, error) {
	ents, err := viewEntities(entities)
	if err != nil {
		return nil, err
	}
	byType, _, _ := declare(entities)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := engine.AsOfDir(ctx, dir, at.p, ents)
	if err != nil {
		return nil, fmt.Errorf("as of %s: %w", at, err)
	}
	k, err := readKeys(dir)
	if err != nil {
		return nil, errors.Join(err, v.Close())
	}
	return &View{v: v, byType: byType, keys: k}, nil
}

func (v *View) reads() reads      { return reads{byType: v.byType, conns: v.v, keys: v.keys} }
func (v *View) track(any, string) {}

// Seq is the log sequence the view stands at: it shows every record up
// to and including it.
func (v *View) Seq() uint64 { return v.v.Seq() }

// At is the recorded time of the record at Seq.
func (v *View) At() time.Time { return v.v.At() }

// SnapshotSeq is the sequence of the snapshot the view was built from (0:
// it was replayed from the first record).
func (v *View) SnapshotSeq() uint64 { return v.v.SnapshotSeq() }

// Record returns the fields of the entity named entity with primary key
// id, by column name (the key included), as canonical values: string,
// int64, float64, bool, time.Time or nil; an erased personal value is
// ErasedValue. It needs no Go type: tools
// read any declared entity with it. Errors: ErrNotFound,
// ErrUnregisteredType (the view has no such entity), ErrStoreClosed.
func (v *View) Record(ctx context.Context, entity, id string) (map[string]any, error) {
	return v.record(ctx, entity, id, v.keys)
}

// RecordSealed is Record leaving personal values sealed, as the log holds
// them (text starting with "hk1e:"), without the key file: for tools that
// show an auditor which values are personal without opening them
// (hikoutei audit --at). Errors as Record.
func (v *View) RecordSealed(ctx context.Context, entity, id string) (map[string]any, error) {
	return v.record(ctx, entity, id, rawKeys)
}

func (v *View) record(ctx context.Context, entity, id string, k *keys) (map[string]any, error) {
	shape, ok := v.v.Shape(entity)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnregisteredType, entity)
	}
	if n, err := events.NormalizeString(id); err == nil {
		id = n // keys are stored in NFC
	}
	conn, err := v.v.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer v.v.PutConn(conn)
	var out map[string]any
	q := projector.Query{Where: []projector.Cond{{Field: shape.PK, Op: projector.OpEq, Value: id}}, Limit: 1}
	err = projector.Select(conn, shape, q, func(vals []any) error {
		stored := make(map[string]any, len(shape.Fields))
		for i, f := range shape.Fields {
			stored[f.Name] = vals[i+1]
		}
		if k != nil { // values in clear of an erased subject: the marker
			stored = k.maskFields(entity, id, stored, ErasedValue{})
		}
		out = map[string]any{shape.PK: vals[0]}
		for name, v := range stored {
			val, err := k.openValue(entity, name, v)
			if err != nil {
				return fmt.Errorf("%s %q: %w", entity, id, err)
			}
			out[name] = val
		}
		return nil
	})
	if err == nil && out == nil {
		err = fmt.Errorf("%w: %s %q", ErrNotFound, entity, id)
	}
	return out, err
}

// Close removes the view's files, once the reads in flight are done.
// Reads after Close fail with ErrStoreClosed. Errors: ErrStoreClosed on
// a second call.
func (v *View) Close() error {
	err := v.v.Close()
	if v.keys != nil && v.keys.own {
		return errors.Join(err, v.keys.close())
	}
	return err
}
