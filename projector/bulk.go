package projector

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/hikoutei/hikoutei-go/events"
)

// A read model being built (Options.Build) takes the bulk path for the
// event a rebuild applies most: the create of an entity whose every field
// is set (a stream's first entity.persisted). Its table row and its
// hk_entity_state row wait in a bulk load and go out as multi-row
// upserts of up to bulkRows rows, one statement where the live path runs
// one per row: SQLite's per-statement work (step, halt, reset, cursors)
// is then paid once per bulkRows rows. The rows are exactly those the
// per-event path writes (same columns, digest, state JSON, conflict
// clauses, in log order), and the load is flushed before any other event
// is applied and before the batch's checkpoint is set, so every read of
// the connection sees every event before it. The live path (commits,
// catch-up of an existing read model) never takes it.

// bulkRows is how many rows one multi-row upsert writes at most.
const bulkRows = 64

// bulkLoad holds the creates not yet written.
type bulkLoad struct {
	rows   map[string][]bulkRow // by table, in log order
	tables []string             // the tables with rows, in first-seen order
	states []bulkState          // hk_entity_state rows, in log order
	json   []byte               // the states' fields JSON, back to back
	vals   []any                // the rows' field values in column order, back to back
	sql    map[string]string    // multi-row upserts by table (or state table) and row count
}

// bulkRow is one table row: its key, its field values (vals[from:], one
// a column, in column order) and the row digest computed from them.
type bulkRow struct {
	id     string
	from   int
	digest int64
}

// bulkState is one hk_entity_state row; its JSON is json[from:to].
type bulkState struct {
	entity, id       string
	version, seq     uint64
	jsonFrom, jsonTo int
}

func newBulkLoad() *bulkLoad {
	return &bulkLoad{rows: map[string][]bulkRow{}, sql: map[string]string{}}
}

// bulkPersisted takes x (upcast and masked, with its entity and id)
// into the bulk load when it is a full-row create; ok = false (nothing
// done) when it must take the per-event path.
func (p *Projector) bulkPersisted(e *events.Event, x events.EntityPersisted) (ok bool, err error) {
	t, declared := p.tables[x.Entity]
	if e.Version != 1 || !declared || len(x.Fields) != len(t.Fields) { // a later version reads the stored state
		return false, nil
	}
	b := p.bulk
	from := len(b.vals)
	digest, full := p.fullDigest(t, x.ID, x.Fields)
	if !full {
		b.vals = b.vals[:from]
		return false, nil
	}
	state, err := p.mergeFieldState(x.Entity, x.ID, e, x.Fields, x.Revisions)
	if err != nil {
		return true, err
	}
	if _, seen := b.rows[t.Name]; !seen {
		b.tables = append(b.tables, t.Name)
	}
	b.rows[t.Name] = append(b.rows[t.Name], bulkRow{id: x.ID, from: from, digest: digest})
	jsonFrom := len(b.json)
	b.json = appendFieldEntries(b.json, state)
	b.states = append(b.states, bulkState{entity: x.Entity, id: x.ID, version: e.Version, seq: e.Seq, jsonFrom: jsonFrom, jsonTo: len(b.json)})
	return true, nil
}

// fullDigest is the row digest writeFullRow binds for a row of t holding
// fields, whose values it appends to the bulk load's in column order;
// full = false when a column is missing or a value is not its kind's
// plain Go type (the caller then drops what it appended).
func (p *Projector) fullDigest(t events.EntityShape, id string, fields map[string]any) (digest int64, full bool) {
	p.digest.start(p.fullRowOf(t).tag)
	p.digest.text(id)
	for _, f := range t.Fields {
		v, ok := fields[f.Name]
		if !ok || !p.digest.value(f.Kind, v) {
			return 0, false
		}
		p.bulk.vals = append(p.bulk.vals, v)
	}
	return p.digest.sum(), true
}

// flushBulk writes the bulk load's rows (tables first, then their
// states) and empties it. Nothing to write: nothing done.
func (p *Projector) flushBulk() error {
	b := p.bulk
	if b == nil || len(b.states) == 0 {
		return nil
	}
	defer b.drop()
	for _, name := range b.tables {
		if err := p.writeBulkRows(p.tables[name], b.rows[name]); err != nil {
			return fmt.Errorf("bulk rows of %s: %w", name, err)
		}
	}
	if err := p.writeBulkStates(b.states); err != nil {
		return fmt.Errorf("bulk entity states: %w", err)
	}
	return nil
}

// writeBulkRows upserts rows into t, bulkRows per statement.
func (p *Projector) writeBulkRows(t events.EntityShape, rows []bulkRow) error {
	width := len(t.Fields) + 2 // key, fields, digest
	for len(rows) > 0 {
		n := min(len(rows), bulkRows)
		st, err := p.conn.Prepare(p.bulkSQL(t.Name, n, func() string { return p.fullRowOf(t).sql }))
		if err != nil {
			return err
		}
		for i, r := range rows[:n] {
			base := i * width
			st.BindText(base+1, r.id)
			for j, v := range p.bulk.vals[r.from : r.from+len(t.Fields)] {
				BindValue(st, base+j+2, v)
			}
			st.BindInt64(base+width, r.digest)
		}
		if err := run(st); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// writeBulkStates upserts the hk_entity_state rows, bulkRows per
// statement.
func (p *Projector) writeBulkStates(states []bulkState) error {
	const width = 6
	for len(states) > 0 {
		n := min(len(states), bulkRows)
		st, err := p.conn.Prepare(p.bulkSQL("\x00state", n, func() string { return putEntityStateSQL }))
		if err != nil {
			return err
		}
		for i, s := range states[:n] {
			base := i * width
			js := p.bulk.json[s.jsonFrom:s.jsonTo]
			st.BindText(base+1, s.entity)
			st.BindText(base+2, s.id)
			st.BindInt64(base+3, int64(s.version))
			st.BindBool(base+4, false)
			st.BindInt64(base+5, int64(s.seq))
			st.BindText(base+6, unsafe.String(unsafe.SliceData(js), len(js))) // BindText copies it before returning
		}
		if err := run(st); err != nil {
			return err
		}
		states = states[n:]
	}
	return nil
}

// bulkSQL is the n-row form (built once per key and n) of the single-row
// upsert single() returns: its VALUES tuple repeated n times, with its
// numbered parameters ?k renumbered per tuple and its conflict clause
// kept, so each row is upserted as the single-row statement would.
func (p *Projector) bulkSQL(key string, n int, single func() string) string {
	cacheKey := fmt.Sprintf("%s\x00%d", key, n)
	if q, ok := p.bulk.sql[cacheKey]; ok {
		return q
	}
	q := single()
	open := strings.Index(q, "VALUES (") + len("VALUES ")
	closeAt := open + strings.Index(q[open:], ")") + 1
	tuple, width := numberedTuple(q[open:closeAt])
	var b strings.Builder
	b.WriteString(q[:open])
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple(i * width))
	}
	b.WriteString(q[closeAt:])
	p.bulk.sql[cacheKey] = b.String()
	return p.bulk.sql[cacheKey]
}

// numberedTuple parses a VALUES tuple of parameters ("(?, ?)" or
// "(?1, ?2)") and returns a function writing it with every parameter
// numbered from offset+1, and its width.
func numberedTuple(tuple string) (func(offset int) string, int) {
	width := strings.Count(tuple, "?")
	return func(offset int) string {
		marks := make([]string, width)
		for i := range marks {
			marks[i] = fmt.Sprintf("?%d", offset+i+1)
		}
		return "(" + strings.Join(marks, ", ") + ")"
	}, width
}

// drop forgets the rows not yet written (nil: nothing to forget).
func (b *bulkLoad) drop() {
	if b == nil {
		return
	}
	for name := range b.rows {
		b.rows[name] = b.rows[name][:0]
	}
	clear(b.vals) // the values are the events': let them go
	b.states, b.json, b.vals = b.states[:0], b.json[:0], b.vals[:0]
}

// bulkOr is bulkPersisted on a building read model; otherwise, and for
// an event the bulk path does not take, it writes the bulk load first
// (the event's own writes read it) and returns taken = false.
func (p *Projector) bulkOr(e *events.Event, x events.EntityPersisted) (taken bool, err error) {
	if p.bulk == nil {
		return false, nil
	}
	if taken, err := p.bulkPersisted(e, x); taken || err != nil {
		return true, err
	}
	return false, p.flushBulk()
}
