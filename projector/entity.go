package projector

import (
	"fmt"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
)

// TimeLayout is how time columns are stored: UTC, milliseconds, sortable.
const TimeLayout = "2006-01-02T15:04:05.000Z"

func (p *Projector) applyPersisted(e *events.Event, x events.EntityPersisted) error {
	x = p.up.persisted(e.Seq, x)
	entity, id := x.Entity, x.ID
	if p.mask != nil && entity != "" && id != "" {
		x.Fields = p.mask(entity, id, x.Fields)
	}
	if entity == "" || id == "" {
		return fmt.Errorf("%w: %s without entity or id", events.ErrMalformedPayload, x.EventType())
	}
	p.noteWritten(e.Seq, entity, id)
	if taken, err := p.bulkOr(e, x); taken || err != nil {
		return err
	}
	if t, ok := p.tables[entity]; ok {
		if err := p.writeRow(t, id, x.Fields); err != nil {
			return err
		}
	}
	state, err := p.mergeFieldState(entity, id, e, x.Fields, x.Revisions)
	if err != nil {
		return err
	}
	return p.putEntityState(entity, id, e.Version, e.Seq, false, state)
}

// writeRow upserts the entity's row with the changed columns: a new row
// gets NULL for absent fields, an existing one keeps them. Upserting
// regardless of the event's "created" flag keeps old logs (whose flag is
// inferred by an upcaster) from wiping or losing rows.
func (p *Projector) writeRow(t events.EntityShape, id string, fields map[string]any) error {
	if len(fields) == len(t.Fields) {
		if ok, err := p.writeFullRow(t, id, fields); ok {
			return err
		}
	}
	names := p.rowNames[:0]
	for _, c := range t.Fields {
		if _, ok := fields[c.Name]; ok {
			names = append(names, c.Name)
		}
	}
	p.rowNames = names
	st, err := p.conn.Prepare(p.upsertSQL(t, names))
	if err != nil {
		return err
	}
	st.BindText(1, id)
	for i, n := range names {
		BindValue(st, i+2, fields[n])
	}
	return run(st)
}

// upsertSQL builds (once per table and column set) the row upsert; names
// are in declaration order. Both paths set hk_digest from the values the
// row holds afterwards: the bound ones, NULL (insert) or the kept column
// (update) for the others.
func (p *Projector) upsertSQL(t events.EntityShape, names []string) string {
	key := t.Name // every column: the common case needs no key building
	if len(names) != len(t.Fields) {
		key = t.Name + "\x00" + strings.Join(names, "\x00")
	}
	if q, ok := p.sqlCache[key]; ok {
		return q
	}
	param := map[string]int{t.PK: 1} // column → its ?N
	cols, marks := []string{fmt.Sprintf("%q", t.PK)}, []string{"?1"}
	for i, n := range names {
		param[n] = i + 2
		cols = append(cols, fmt.Sprintf("%q", n))
		marks = append(marks, fmt.Sprintf("?%d", i+2))
	}
	cols = append(cols, fmt.Sprintf("%q", digestColumn))
	marks = append(marks, digestCall(t, func(c string) string { return bound(param, c, "NULL") }))
	q := fmt.Sprintf("INSERT INTO %q (%s) VALUES (%s) ON CONFLICT (%q) %s", t.Name, strings.Join(cols, ", "),
		strings.Join(marks, ", "), t.PK, onConflict(t, names, param))
	if p.sqlCache == nil {
		p.sqlCache = map[string]string{}
	}
	p.sqlCache[key] = q
	return q
}

// onConflict is the upsert's conflict clause: the bound columns and the
// digest of the updated row, or nothing when no column is bound.
func onConflict(t events.EntityShape, names []string, param map[string]int) string {
	if len(names) == 0 {
		return "DO NOTHING"
	}
	var set []string
	for _, n := range names {
		set = append(set, fmt.Sprintf("%q = excluded.%q", n, n))
	}
	set = append(set, fmt.Sprintf("%q = %s", digestColumn, digestCall(t, func(c string) string {
		return bound(param, c, fmt.Sprintf("%q.%q", t.Name, c))
	})))
	return "DO UPDATE SET " + strings.Join(set, ", ")
}

// bound is column c's bound parameter ?N, or otherwise when c is not bound.
func bound(param map[string]int, c, otherwise string) string {
	if i, ok := param[c]; ok {
		return fmt.Sprintf("?%d", i)
	}
	return otherwise
}

// digestCall is the SQL expression hk_row_digest(tag, key, field…) of t,
// with each column's value expression from expr.
func digestCall(t events.EntityShape, expr func(column string) string) string {
	args := []string{fmt.Sprintf("'%s'", digestTag(t)), expr(t.PK)}
	for _, f := range t.Fields {
		args = append(args, expr(f.Name))
	}
	return fmt.Sprintf("%s(%s)", digestFunc, strings.Join(args, ", "))
}

// mergeFieldState folds an event's changed fields into the stored state
// and returns the result sorted by field name. The first event of a stream
// skips the read: nothing is stored yet.
func (p *Projector) mergeFieldState(entity, id string, e *events.Event, fields map[string]any, revs map[string]uint64) ([]fieldEntry, error) {
	var stored map[string]FieldRow
	if e.Version > 1 {
		row, err := p.entityRow(entity, id)
		if err != nil {
			return nil, err
		}
		stored = row.Fields
	}
	if out, ok, err := p.mergeSorted(entity, fields, revs, stored); ok || err != nil {
		return out, err
	}
	out := p.entries[:0]
	for name, v := range fields {
		h, err := p.hash(name, v)
		if err != nil {
			return nil, err
		}
		out = append(out, fieldEntry{name, FieldRow{Hash: h, Revision: revs[name], Owner: p.owner(entity, name)}})
	}
	for name, f := range stored {
		if _, changed := fields[name]; !changed {
			out = append(out, fieldEntry{name, f})
		}
	}
	sortEntries(out)
	p.entries = out
	return out, nil
}

// mergeSorted is mergeFieldState for an entity whose changed and stored
// fields are all declared columns (the common case): it walks the
// declared names in sorted order instead of sorting. ok = false when a
// field is not declared (the caller then merges and sorts).
func (p *Projector) mergeSorted(entity string, fields map[string]any, revs map[string]uint64, stored map[string]FieldRow) ([]fieldEntry, bool, error) {
	names, declared := p.sortedNames[entity]
	if !declared {
		return nil, false, nil
	}
	out, nFields, nStored := p.entries[:0], 0, 0
	for _, n := range names {
		if v, changed := fields[n.name]; changed {
			h, err := p.hash(n.name, v)
			if err != nil {
				return nil, true, err
			}
			out, nFields = append(out, fieldEntry{n.name, FieldRow{Hash: h, Revision: revs[n.name], Owner: n.owner}}), nFields+1
		} else if f, ok := stored[n.name]; ok {
			out, nStored = append(out, fieldEntry{n.name, f}), nStored+1
		}
	}
	p.entries = out
	return out, nFields == len(fields) && storedDeclared(stored, fields, nStored), nil
}

// storedDeclared reports whether every stored field not changed by fields
// was among the nStored declared ones found.
func storedDeclared(stored map[string]FieldRow, fields map[string]any, nStored int) bool {
	kept := 0
	for name := range stored {
		if _, changed := fields[name]; !changed {
			kept++
		}
	}
	return kept == nStored
}

// hash returns the canonical hash of field's value v: the caller's when
// it passed one (ApplyKnown), computed otherwise.
func (p *Projector) hash(field string, v any) (string, error) {
	if _, ok := v.(notConverted); ok {
		return "", nil // unknown: the value did not convert to the field's kind
	}
	if p.known != nil {
		if h, ok := p.known(field); ok {
			return h, nil
		}
	}
	return events.HashReuse(&p.hashBuf, v)
}

func (p *Projector) owner(entity, field string) events.Owner {
	if p.userOwned[entity][field] {
		return events.OwnerUser
	}
	return events.OwnerSystem
}

func (p *Projector) applyRemoved(e *events.Event, x events.EntityRemoved) error {
	entity, id := x.Entity, x.ID
	if entity == "" || id == "" {
		return fmt.Errorf("%w: %s without entity or id", events.ErrMalformedPayload, x.EventType())
	}
	p.noteWritten(e.Seq, entity, id)
	if t, ok := p.tables[entity]; ok {
		if err := p.exec(fmt.Sprintf("DELETE FROM %q WHERE %q = ?", t.Name, t.PK), id); err != nil {
			return err
		}
	}
	row, err := p.entityRow(entity, id)
	if err != nil {
		return err
	}
	for name, f := range row.Fields {
		row.Fields[name] = FieldRow{Revision: f.Revision, Owner: f.Owner}
	}
	return p.putEntityState(entity, id, e.Version, e.Seq, true, entriesOf(row.Fields))
}

// applyLease records a lease grant or release: its history row and the
// role's current holder (a release keeps the last host, pid and operation).
func (p *Projector) applyLease(e *events.Event, g events.LeaseGrant) error {
	if err := p.leaseHistory(e, g.WriterID, g.State); err != nil {
		return err
	}
	return p.exec(`INSERT INTO hk_lease (role, writer_id, epoch, state, host, pid, operation, at, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (role) DO UPDATE SET writer_id = excluded.writer_id, epoch = excluded.epoch, state = excluded.state,
  host = CASE WHEN excluded.host = '' THEN host ELSE excluded.host END, pid = CASE WHEN excluded.pid = 0 THEN pid ELSE excluded.pid END,
  operation = CASE WHEN excluded.operation = '' THEN operation ELSE excluded.operation END, at = excluded.at, seq = excluded.seq`,
		leaseRole(e), g.WriterID, int64(e.Epoch), string(g.State), g.Host, g.PID, g.Operation, e.At, int64(e.Seq))
}

func (p *Projector) leaseHistory(e *events.Event, writer string, state events.LeaseState) error {
	return p.exec("INSERT INTO hk_lease_history (seq, role, type, writer_id, epoch, state, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		int64(e.Seq), leaseRole(e), string(e.Type()), writer, int64(e.Epoch), string(state), e.At)
}

func leaseRole(e *events.Event) string { return strings.TrimPrefix(e.Stream, events.LeaseStream("")) }

// BindValue binds a canonical value to parameter i (1-based) the way the
// read model stores it (times as TimeLayout text, bools as 0/1).
func BindValue(stmt *sqlite.Stmt, i int, v any) {
	switch x := v.(type) {
	case nil, notConverted:
		stmt.BindNull(i)
	case string:
		stmt.BindText(i, x)
	case int64:
		stmt.BindInt64(i, x)
	case float64:
		stmt.BindFloat(i, x)
	case bool:
		stmt.BindBool(i, x)
	case time.Time:
		stmt.BindText(i, x.UTC().Format(TimeLayout))
	case []byte:
		stmt.BindBytes(i, x)
	default:
		stmt.BindText(i, fmt.Sprint(x))
	}
}

func bindAll(stmt *sqlite.Stmt, vals ...any) {
	for i, v := range vals {
		BindValue(stmt, i+1, v)
	}
}

// run steps a prepared statement that returns no rows and resets it.
func run(stmt *sqlite.Stmt) error {
	_, err := stmt.Step()
	if rerr := stmt.Reset(); err == nil {
		err = rerr
	}
	stmt.ClearBindings()
	return err
}
