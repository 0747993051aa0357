package projector

import (
	"sort"

	"zombiezen.com/go/sqlite"
)

// The search for rows a spreadsheet was never told about (Unsynced) reads
// every entity of the store: a scan of hk_entity_state with an anti-join
// against hk_outbox per row, whose cost grows with the store, not with what
// changed. Whether an entity is such a row changes only when its state is
// written (created, updated, removed, revived: an entity event, which moves
// its last_seq) or when what counts as having told the spreadsheet changes
// (a switch of target or a tab's move: sync.target_bound, sync.tab_routed).
// Outbox rows are never deleted, nor moved off a row. So the projector lists
// the entities it wrote since it opened (written), and a search that knows
// every existing entity was told at a checkpoint reads only those written
// after it (UnsyncedAfter). The list lives in memory: a new projector (a
// reopened store, a rebuilt read model) starts with a full search.

// maxWritten bounds the list: past it, the older half is forgotten and
// a search that needs it is a full one (a store committing with no search
// running: sync off, a long setup). Keeping the newer half lets a search
// that runs beside a long stream of commits (a backfill) stay one of what
// was written since it last looked.
const maxWritten = 1 << 15

// writtenRef is one entity state written by the event at seq.
type writtenRef struct {
	seq        uint64
	entity, id string
}

// writtenLog lists, in log order, the entity states written by events
// past from (every one of them; the entries of a batch that rolled back
// may stay: a search then reads a few more entities, never fewer).
type writtenLog struct {
	from uint64
	refs []writtenRef
}

// note lists the state of entity id written by the event at seq. An entry
// past seq was written by a batch that rolled back (seqs rise over the
// batches that commit): it is dropped, keeping the list in log order.
func (w *writtenLog) note(seq uint64, entity, id string) {
	n := len(w.refs)
	for n > 0 && w.refs[n-1].seq > seq {
		n--
	}
	w.refs = w.refs[:n]
	if n == maxWritten {
		w.forgetOlder(n / 2)
	}
	w.refs = append(w.refs, writtenRef{seq: seq, entity: entity, id: id})
}

// forgetOlder drops the oldest k entries: a search that needs what was
// written at or before the last of them is a full one. Entries of that
// same seq left in the list are never needed by a search the list still
// answers (it reads those past its seq).
func (w *writtenLog) forgetOlder(k int) {
	w.from = max(w.from, w.refs[k-1].seq)
	w.refs = append(w.refs[:0], w.refs[k:]...)
}

// forget drops the list up to seq: a search that needs what was written
// at or before seq is a full one.
func (w *writtenLog) forget(seq uint64) {
	w.from = max(w.from, seq)
	w.refs = w.refs[:0]
}

// after returns the distinct ids of each entity written by events past
// seq; ok is false when the list no longer holds them all.
func (w *writtenLog) after(seq uint64) (ids map[string][]string, ok bool) {
	if seq < w.from {
		return nil, false
	}
	i := sort.Search(len(w.refs), func(i int) bool { return w.refs[i].seq > seq })
	ids = map[string][]string{}
	seen := map[writtenRef]bool{}
	for _, r := range w.refs[i:] {
		k := writtenRef{entity: r.entity, id: r.id}
		if !seen[k] {
			seen[k] = true
			ids[r.entity] = append(ids[r.entity], r.id)
		}
	}
	return ids, true
}

// noteWritten lists an entity state the event at seq writes; a building
// read model (bulk) lists none: no search reads it before it is live.
func (p *Projector) noteWritten(seq uint64, entity, id string) {
	if p.bulk != nil {
		p.written.forget(seq)
		return
	}
	p.written.note(seq, entity, id)
}

// EntityRef names one entity and one of its row tabs.
type EntityRef struct{ Entity, ID, Tab string }

// unsyncedQuery finds the existing entities of ?1 whose row on tab ?3 of
// spreadsheet ?2 had no effect queued after ?4 (the tab's last switch or
// move), oldest write first, at most ?5.
const unsyncedQuery = `SELECT e.id FROM hk_entity_state AS e
WHERE e.entity = ?1 AND e.removed = 0 AND NOT EXISTS (SELECT 1 FROM hk_outbox AS o
  WHERE o.spreadsheet = ?2 AND o.tab = ?3 AND o.anchor = e.id AND o.queued_seq > ?4)
ORDER BY e.last_seq LIMIT ?5`

// UnsyncedOfQuery is unsyncedQuery over the entities listed in the JSON
// array ?6 only: a search of the primary key per listed id (exported for
// the plan test).
const UnsyncedOfQuery = `SELECT e.id FROM json_each(?6) AS j CROSS JOIN hk_entity_state AS e
WHERE e.entity = ?1 AND e.id = j.value AND e.removed = 0 AND NOT EXISTS (SELECT 1 FROM hk_outbox AS o
  WHERE o.spreadsheet = ?2 AND o.tab = ?3 AND o.anchor = e.id AND o.queued_seq > ?4)
ORDER BY e.last_seq LIMIT ?5`

// Unsynced returns up to max rows of existing entities of which
// spreadsheet has never been told: no effect was ever queued for that row
// (e.g. committed before sync was turned on, or the spreadsheet was
// switched and a later update queued only the System row). Each row tab
// of an entity (rowTabs) is checked on its own. Reconciliation queues
// these rows. It reads every entity of the store.
func (p *Projector) Unsynced(spreadsheet string, max int, rowTabs func(entity string) []string) ([]EntityRef, error) {
	return p.unsynced(spreadsheet, max, rowTabs, nil)
}

// UnsyncedAfter is Unsynced for a caller that knows every existing entity
// had been told about at checkpoint seq of this projector (a search at seq
// that found fewer than its max, each row found queued since): it reads
// only the entities written after seq, and finds what Unsynced would. ok
// is false, with nothing read, when the projector no longer lists them
// all (then Unsynced is the search).
func (p *Projector) UnsyncedAfter(spreadsheet string, seq uint64, max int, rowTabs func(entity string) []string) (refs []EntityRef, ok bool, err error) {
	ids, ok := p.written.after(seq)
	if !ok {
		return nil, false, nil
	}
	refs, err = p.unsynced(spreadsheet, max, rowTabs, ids)
	return refs, true, err
}

// unsynced is the search over every entity (ids nil) or the listed ones.
func (p *Projector) unsynced(spreadsheet string, max int, rowTabs func(entity string) []string, ids map[string][]string) ([]EntityRef, error) {
	var out []EntityRef
	since, err := p.targetSince()
	if err != nil {
		return nil, err
	}
	for _, t := range p.shapes() {
		q, list := unsyncedQuery, ""
		if ids != nil {
			if len(ids[t.Name]) == 0 {
				continue
			}
			q, list = UnsyncedOfQuery, jsonArray(ids[t.Name])
		}
		for _, tab := range rowTabs(t.Name) {
			if len(out) >= max {
				return out, nil
			}
			tabSince, err := p.tabSince(since, tab)
			if err != nil {
				return nil, err
			}
			args := []any{t.Name, spreadsheet, tab, tabSince, int64(max - len(out))}
			if ids != nil {
				args = append(args, list)
			}
			err = p.query(q, func(st *sqlite.Stmt) error {
				out = append(out, EntityRef{Entity: t.Name, ID: st.ColumnText(0), Tab: tab})
				return nil
			}, args...)
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// jsonArray writes ids as a JSON array of strings.
func jsonArray(ids []string) string {
	buf := make([]byte, 0, 16*len(ids)+2)
	buf = append(buf, '[')
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, id)
	}
	return string(append(buf, ']'))
}
