package aggregates

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hikoutei/hikoutei-go/events"
)

// Reasons an adopted row is not imported, besides the cell codec's
// (cell_type_mismatch, cell_formula, cell_merged, cell_date_text, …).
// They are stable codes: the quarantine records of the kept tab carry
// them (hikoutei quarantine list).
const (
	// ReasonKeyEmpty: the row's key cell is blank.
	ReasonKeyEmpty = "key_empty"
	// ReasonKeyInvalid: the key holds a control character (or is not
	// UTF-8), which no key may hold.
	ReasonKeyInvalid = "key_invalid"
	// ReasonDuplicateKey: another row of the tab has the same key; none of
	// them is imported (fail closed: which one is right is a person's
	// call).
	ReasonDuplicateKey = "duplicate_key"
	// ReasonKeyExists: the store already holds the key with other values;
	// they are never overwritten by an adoption.
	ReasonKeyExists = "key_exists"
	// ReasonValueInvalid: a decoded value has no canonical form.
	ReasonValueInvalid = "invalid_field_value"
)

// AdoptOutcome is what becomes of one row of an adopted tab.
type AdoptOutcome string

// Outcomes of an adopted row.
const (
	// AdoptCreate: the row becomes a new record (actor adopt).
	AdoptCreate AdoptOutcome = "create"
	// AdoptUnchanged: the store already holds the key with the row's
	// values (an adoption resumed after a crash): nothing is recorded.
	AdoptUnchanged AdoptOutcome = "unchanged"
	// AdoptSkip: the row is not imported; the real run quarantines it.
	AdoptSkip AdoptOutcome = "skip"
)

// AdoptIssue is one cell of an adopted row that is not a value of its
// field: the field, the column's letter and the codec's reason.
type AdoptIssue struct {
	Field, Column, Reason string
}

// AdoptRow is one data row of a tab being adopted, as the engine decoded
// it: its 1-based row, the key cell's text ("" when blank or not text),
// the full-row visible hash, every declared field's canonical value (nil
// when a cell did not decode) and the cells that did not (Issues: the
// key's first, when it failed).
type AdoptRow struct {
	SheetRow int
	Key      string
	Hash     string
	Values   map[string]any
	Issues   []AdoptIssue
}

// AdoptDecision is the outcome of one row. For a skipped row, Reason is
// its code, Field and Column the offending field and column (empty for a
// duplicate), Detail a short note naming rows, never a value; Issues
// lists every cell that did not decode.
type AdoptDecision struct {
	SheetRow                      int
	Key                           string
	Hash                          string
	Outcome                       AdoptOutcome
	Reason, Field, Column, Detail string
	Issues                        []AdoptIssue
}

// AdoptPlan decides the rows of one tab being adopted into entity (key:
// its primary key field; mapped: the fields a column holds, compared with
// a record that exists). Duplicate keys are found over the whole tab.
type AdoptPlan struct {
	entity, key string
	mapped      []string
	rows        []AdoptRow
	copies      map[string][]int // key → sheet rows
}

// NewAdoptPlan plans rows.
func NewAdoptPlan(entity, key string, mapped []string, rows []AdoptRow) *AdoptPlan {
	p := &AdoptPlan{entity: entity, key: key, mapped: mapped, rows: rows, copies: map[string][]int{}}
	for _, r := range rows {
		if r.Key != "" && (len(r.Issues) == 0 || r.Issues[0].Field != key) {
			p.copies[r.Key] = append(p.copies[r.Key], r.SheetRow)
		}
	}
	return p
}

// Len is the number of rows.
func (p *AdoptPlan) Len() int { return len(p.rows) }

// Key is row i's key ("" when it has none usable).
func (p *AdoptPlan) Key(i int) string {
	r := p.rows[i]
	if r.Key == "" || len(r.Issues) > 0 && r.Issues[0].Field == p.key || keyProblem(r.Key) != "" {
		return ""
	}
	return r.Key
}

// Decide decides row i given its key's current state (the zero state for
// a key the store never held). Precedence: the key's problems, a
// duplicate key, the other cells' problems, a value without canonical
// form, then the record the store holds.
func (p *AdoptPlan) Decide(i int, cur EntityState) AdoptDecision {
	r := p.rows[i]
	d := AdoptDecision{SheetRow: r.SheetRow, Key: r.Key, Hash: r.Hash, Outcome: AdoptSkip, Issues: r.Issues}
	if why, field, col := p.keyIssue(r); why != "" {
		d.Reason, d.Field, d.Column = why, field, col
		return d
	}
	if rows := p.copies[r.Key]; len(rows) > 1 {
		d.Reason, d.Detail = ReasonDuplicateKey, "the key is on rows "+joinRows(rows)
		return d
	}
	if len(r.Issues) > 0 {
		d.Reason, d.Field, d.Column = r.Issues[0].Reason, r.Issues[0].Field, r.Issues[0].Column
		return d
	}
	hashes, bad := p.hashes(r)
	if bad != "" {
		d.Reason, d.Field = ReasonValueInvalid, bad
		return d
	}
	if !cur.Exists {
		d.Outcome = AdoptCreate
		return d
	}
	for _, f := range p.mapped {
		if cur.Fields[f].Hash != hashes[f] {
			d.Reason, d.Field, d.Detail = ReasonKeyExists, f, "the store holds this key with another value"
			return d
		}
	}
	d.Outcome = AdoptUnchanged
	return d
}

// keyIssue is why row r's key is unusable ("" when it is usable).
func (p *AdoptPlan) keyIssue(r AdoptRow) (reason, field, column string) {
	switch {
	case len(r.Issues) > 0 && r.Issues[0].Field == p.key:
		return r.Issues[0].Reason, p.key, r.Issues[0].Column
	case r.Key == "":
		return ReasonKeyEmpty, p.key, ""
	case keyProblem(r.Key) != "":
		return ReasonKeyInvalid, p.key, ""
	}
	return "", "", ""
}

// hashes are the canonical hashes of the mapped fields of r; bad names a
// field whose value has no canonical form.
func (p *AdoptPlan) hashes(r AdoptRow) (map[string]string, string) {
	out := make(map[string]string, len(p.mapped))
	for _, f := range p.mapped {
		if f == p.key {
			continue
		}
		h, err := events.Hash(r.Values[f])
		if err != nil {
			return nil, f
		}
		out[f] = h
	}
	return out, ""
}

// keyProblem says why k cannot be a key ("" when it can). Blank keys and
// edge white space are found before (key_empty, cell_edge_whitespace).
func keyProblem(k string) string {
	if !utf8.ValidString(k) || strings.IndexFunc(k, unicode.IsControl) >= 0 {
		return ReasonKeyInvalid
	}
	return ""
}

func joinRows(rows []int) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = fmt.Sprint(r)
	}
	return strings.Join(s, ", ")
}

// AdoptCommand is the persist a create decision commits: every field's
// value (the row's, zero values for fields no column holds), actor
// adopt, create only (an entity that appeared since the plan read its
// state fails the unit with ErrEntityExists, never overwritten).
func (p *AdoptPlan) AdoptCommand(i int) Persist {
	r := p.rows[i]
	return Persist{Entity: p.entity, ID: r.Key, Values: r.Values, Actor: events.ActorAdopt, CreateOnly: true}
}

// Quarantine records, on the inbound stream of tab (the title
// the adopted tab is kept under; version: that stream's version), one
// row.quarantined per skipped row that is not already active there, and
// clears the active records of tab that no skipped row shows any more (a
// row fixed and imported by a later adoption of the kept tab). A record
// is one row: its first reason, column, key (the anchor) and visible
// hash; its id also covers the row's number, so two identical pasted
// rows are two records, and the same row with the same content always
// gives the same record (a rerun records nothing new).
func (p *AdoptPlan) Quarantine(tab string, skipped []AdoptDecision, active map[string]Quarantine, version uint64, now time.Time) Changes {
	var ch Changes
	stream := events.InboundStream(tab)
	add := func(p events.Payload) { ch.Add(stream, version, events.New(stream, p, now)) }
	found := map[string]bool{}
	for _, d := range skipped {
		id := quarantineID(tab, d.Key, fmt.Sprintf("%s@%d", d.Hash, d.SheetRow), d.Reason)
		found[id] = true
		if _, ok := active[id]; ok {
			continue
		}
		e := events.Evidence{Tab: tab, Anchor: d.Key, SheetRow: int64(d.SheetRow), RowHash: d.Hash, Reason: d.Reason,
			Column: d.Field, Detail: adoptDetail(d), QuarantineID: id, Entity: p.entity}
		if d.Field != p.key {
			e.ID = d.Key // the key itself is usable: the row names that record
		}
		add(events.RowQuarantined(e))
	}
	ids := make([]string, 0, len(active))
	for id := range active {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !found[id] {
			add(events.RowQuarantineCleared{Tab: tab, QuarantineID: id, Anchor: active[id].Anchor})
		}
	}
	return ch
}

// adoptDetail is a skipped row's detail: where it was seen, never a value.
func adoptDetail(d AdoptDecision) string {
	s := "not adopted"
	if d.Column != "" {
		s += ": column " + d.Column
	}
	if d.Detail != "" {
		s += "; " + d.Detail
	}
	return s
}
