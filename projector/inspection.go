package projector

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// Inspection: typed read-only queries of the outbox and the quarantine for
// operators (hikoutei outbox, hikoutei quarantine, hikoutei status). They
// take any connection to a read model, so another process reads it through
// SQLite's WAL while the store runs. They never return the spreadsheet a
// target names, and only InspectOutboxEntry reads cell values.

// OutboxFilter selects outbox entries. Every set condition holds.
type OutboxFilter struct {
	States []aggregates.EffectState // any of these; empty: every state
	Reason string                   // the entry's last code (failure, block, conflict); "": any
	Tab    string                   // logical tab; "": any
	Limit  int                      // at most this many, newest first; <= 0: no limit
}

// OutboxEntry is one outbox effect as an operator inspects it: the row it
// writes, its state and reason; never its cell values or spreadsheet.
type OutboxEntry struct {
	ID           string
	Tab          string
	Anchor       string
	Binding      string
	Entity       string
	EntityID     string
	Op           events.Op
	State        aggregates.EffectState
	Reason       string // last code: why it failed, was blocked, or went uncertain ("" when none)
	Terminal     bool   // failed and never retried: reconciliation supersedes it
	Attempts     int64
	Probes       int64
	DueAt        time.Time // next retry or probe (zero: none scheduled)
	StreamSeq    uint64    // place among the row's effects
	QueuedSeq    uint64    // log sequence of effect.queued
	UpdatedSeq   uint64    // log sequence of the last transition
	SupersededBy string
	// Fields are the payload's column names, sorted (InspectOutboxEntry only).
	Fields []string
}

const inspectCols = `effect_id, tab, anchor, binding, entity, entity_id, op, state, coalesce(last_code, ''), terminal, attempts, probes,
  coalesce(due_at, ''), stream_sequence, queued_seq, updated_seq, coalesce(superseded_by, '')`

func scanOutboxEntry(st *sqlite.Stmt) OutboxEntry {
	e := OutboxEntry{ID: st.ColumnText(0), Tab: st.ColumnText(1), Anchor: st.ColumnText(2), Binding: st.ColumnText(3),
		Entity: st.ColumnText(4), EntityID: st.ColumnText(5), Op: events.Op(st.ColumnText(6)),
		State: aggregates.EffectState(st.ColumnText(7)), Reason: st.ColumnText(8), Terminal: st.ColumnInt64(9) != 0,
		Attempts: st.ColumnInt64(10), Probes: st.ColumnInt64(11), StreamSeq: uint64(st.ColumnInt64(13)),
		QueuedSeq: uint64(st.ColumnInt64(14)), UpdatedSeq: uint64(st.ColumnInt64(15)), SupersededBy: st.ColumnText(16)}
	if due := st.ColumnText(12); due != "" {
		e.DueAt, _ = time.Parse(TimeLayout, due)
	}
	return e
}

// outboxWhere is the filter's fixed WHERE clause; outboxArgs binds it.
const outboxWhere = `(?1 = '[]' OR state IN (SELECT value FROM json_each(?1)))
  AND (?2 = '' OR last_code = ?2) AND (?3 = '' OR tab = ?3)`

func outboxArgs(f OutboxFilter) ([]any, error) {
	states := make([]string, 0, len(f.States))
	for _, s := range f.States {
		states = append(states, string(s))
	}
	list, err := json.Marshal(states)
	return []any{string(list), f.Reason, f.Tab}, err
}

// ListOutbox returns the entries f selects, newest first, and how many
// there are in all (more than returned when f.Limit cut the list).
func ListOutbox(conn *sqlite.Conn, f OutboxFilter) ([]OutboxEntry, int64, error) {
	args, err := outboxArgs(f)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	err = queryConn(conn, "SELECT count(*) FROM hk_outbox WHERE "+outboxWhere, func(st *sqlite.Stmt) error {
		total = st.ColumnInt64(0)
		return nil
	}, args...)
	if err != nil {
		return nil, 0, err
	}
	out := []OutboxEntry{}
	err = queryConn(conn, "SELECT "+inspectCols+" FROM hk_outbox WHERE "+outboxWhere+" ORDER BY queued_seq DESC LIMIT ?4",
		func(st *sqlite.Stmt) error { out = append(out, scanOutboxEntry(st)); return nil }, append(args, limitArg(f.Limit))...)
	return out, total, err
}

// limitArg is a LIMIT operand: n, or -1 (no limit) when n <= 0.
func limitArg(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

// InspectOutboxEntry returns one entry with its payload's column names,
// and the payload's cell values (user data: the caller decides whether
// to show them). Errors: ErrOutboxEntryNotFound; ErrReadModelInvalid
// when the stored payload does not decode.
func InspectOutboxEntry(conn *sqlite.Conn, id string) (OutboxEntry, map[string]any, error) {
	var e OutboxEntry
	var payload []byte
	found := false
	err := queryConn(conn, "SELECT "+inspectCols+", payload FROM hk_outbox WHERE effect_id = ?", func(st *sqlite.Stmt) error {
		e, found = scanOutboxEntry(st), true
		payload = make([]byte, st.ColumnLen(17))
		st.ColumnBytes(17, payload)
		return nil
	}, id)
	if err != nil {
		return e, nil, err
	}
	if !found {
		return e, nil, fmt.Errorf("%w: %s", ErrOutboxEntryNotFound, id)
	}
	v, err := events.DecodeCanonical(payload)
	if err != nil {
		return e, nil, fmt.Errorf("%w: outbox payload of %s: %w", ErrReadModelInvalid, id, err)
	}
	values, _ := v.(map[string]any)
	e.Fields = make([]string, 0, len(values))
	for k := range values {
		e.Fields = append(e.Fields, k)
	}
	sort.Strings(e.Fields)
	return e, values, nil
}

// ReasonCount is how many records carry one reason code.
type ReasonCount struct {
	Reason string
	Count  int64
}

// OutboxReasons counts the entries in each of states by reason code
// (most frequent first); a state without entries is absent.
func OutboxReasons(conn *sqlite.Conn, states ...aggregates.EffectState) (map[aggregates.EffectState][]ReasonCount, error) {
	args, err := outboxArgs(OutboxFilter{States: states})
	if err != nil {
		return nil, err
	}
	out := map[aggregates.EffectState][]ReasonCount{}
	err = queryConn(conn, `SELECT state, coalesce(last_code, ''), count(*) AS n FROM hk_outbox WHERE `+outboxWhere+`
GROUP BY 1, 2 ORDER BY 1, n DESC, 2`, func(st *sqlite.Stmt) error {
		s := aggregates.EffectState(st.ColumnText(0))
		out[s] = append(out[s], ReasonCount{Reason: st.ColumnText(1), Count: st.ColumnInt64(2)})
		return nil
	}, args...)
	return out, err
}

// QuarantineScope says which quarantine records a query sees.
type QuarantineScope uint8

// Scopes.
const (
	// QuarantineActive: the evidence still shows in its tab.
	QuarantineActive QuarantineScope = iota
	// QuarantineAll: active and cleared records.
	QuarantineAll
)

// QuarantineFilter selects quarantine records. Every set condition holds.
type QuarantineFilter struct {
	Scope  QuarantineScope
	Reason string // "": any
	Tab    string // "": any
	Limit  int    // at most this many, newest first; <= 0: no limit
}

// QuarantineEntry is one piece of inbound evidence: a malformed,
// ambiguous or missing row of an Input tab, or a tab-level finding such as
// a suspected mass deletion. It holds no cell value.
type QuarantineEntry struct {
	ID         string
	Tab        string
	Anchor     string // the row's anchor (the entity's key); "" when the row has none or for a tab
	SheetRow   int64  // 1-based row when observed (informational; 0 for a tab)
	RowHash    string // full-row visible hash when observed ("" for a missing row)
	Reason     string
	Column     string // the offending column, when one is
	Active     bool
	Seq        uint64 // log sequence that (last) recorded it
	ClearedSeq uint64 // log sequence that cleared it (0 while active)
}

const quarantineCols = `quarantine_id, tab, anchor, sheet_row, row_hash, reason, column_name, active, seq, coalesce(cleared_seq, 0)`

const quarantineWhere = `(?1 = 1 OR active = 1) AND (?2 = '' OR reason = ?2) AND (?3 = '' OR tab = ?3)`

func scanQuarantineEntry(st *sqlite.Stmt) QuarantineEntry {
	return QuarantineEntry{ID: st.ColumnText(0), Tab: st.ColumnText(1), Anchor: st.ColumnText(2), SheetRow: st.ColumnInt64(3),
		RowHash: st.ColumnText(4), Reason: st.ColumnText(5), Column: st.ColumnText(6), Active: st.ColumnInt64(7) != 0,
		Seq: uint64(st.ColumnInt64(8)), ClearedSeq: uint64(st.ColumnInt64(9))}
}

// ListQuarantine returns the records f selects, newest first, and how
// many there are in all.
func ListQuarantine(conn *sqlite.Conn, f QuarantineFilter) ([]QuarantineEntry, int64, error) {
	args := []any{f.Scope == QuarantineAll, f.Reason, f.Tab}
	var total int64
	err := queryConn(conn, "SELECT count(*) FROM hk_quarantine WHERE "+quarantineWhere, func(st *sqlite.Stmt) error {
		total = st.ColumnInt64(0)
		return nil
	}, args...)
	if err != nil {
		return nil, 0, err
	}
	out := []QuarantineEntry{}
	err = queryConn(conn, "SELECT "+quarantineCols+" FROM hk_quarantine WHERE "+quarantineWhere+" ORDER BY seq DESC, quarantine_id LIMIT ?4",
		func(st *sqlite.Stmt) error { out = append(out, scanQuarantineEntry(st)); return nil }, append(args, limitArg(f.Limit))...)
	return out, total, err
}

// QuarantineEntryByID returns one record, active or cleared.
// Errors: ErrQuarantineEntryNotFound.
func QuarantineEntryByID(conn *sqlite.Conn, id string) (QuarantineEntry, error) {
	var q QuarantineEntry
	found := false
	err := queryConn(conn, "SELECT "+quarantineCols+" FROM hk_quarantine WHERE quarantine_id = ?", func(st *sqlite.Stmt) error {
		q, found = scanQuarantineEntry(st), true
		return nil
	}, id)
	if err == nil && !found {
		err = fmt.Errorf("%w: %s", ErrQuarantineEntryNotFound, id)
	}
	return q, err
}

// QuarantineReasons counts the active records by reason code (most
// frequent first).
func QuarantineReasons(conn *sqlite.Conn) ([]ReasonCount, error) {
	var out []ReasonCount
	err := queryConn(conn, "SELECT reason, count(*) AS n FROM hk_quarantine WHERE active = 1 GROUP BY reason ORDER BY n DESC, reason",
		func(st *sqlite.Stmt) error {
			out = append(out, ReasonCount{Reason: st.ColumnText(0), Count: st.ColumnInt64(1)})
			return nil
		})
	return out, err
}
