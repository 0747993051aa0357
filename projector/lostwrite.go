package projector

import (
	"fmt"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// lostCandidate is the condition on an outbox row o that its write ended
// in conflict (it met a person's edit and was not made) and no poll
// read the row since (no observation accepted or confirmed, no layout
// migration recorded it after that settlement: a visible state no
// effect set).
const lostCandidate = `o.state = '` + string(aggregates.EffectConflict) + `'` + unreadSince

// blockedCandidate widens lostCandidate, for health only, to a conflict
// resolution's write of the row that its guard blocked
// (blocked_candidate: the row changed since the candidate — a person's
// later edit, accepted or not — so the resolved cell may still show the
// value the resolution did not keep). The row differs, as the store
// knows, until a poll records the row as read (an edit accepted or
// confirmed) or a later write carries the field (the anti-entropy pass
// writes canonical state over a row that still shows it). Polls do not
// take it as a lost write: the value the resolution refused is no new
// edit to decide again.
const blockedCandidate = `o.state IN ('` + string(aggregates.EffectConflict) + `', '` + string(aggregates.EffectBlocked) + `')` +
	unreadSince

// unreadSince: no visible state of the row set after o settled but by an
// effect.
const unreadSince = `
  AND NOT EXISTS (SELECT 1 FROM hk_visible_state v WHERE v.binding = o.binding AND v.seq > o.updated_seq
    AND coalesce(v.effect_id, '') = '')`

// lostWrite is a candidate lost write (lostCandidate).
type lostWrite struct {
	tab, anchor, binding string
	seq                  int64 // its stream sequence
	op                   string
	payload              []byte
}

// lostRows are the rows whose write was lost, by tab and anchor
// (aggregates.TabExpectation.Lost): a lost candidate (the condition
// candidate on o, lostCandidate or blockedCandidate, narrowed by the
// extra condition with args) whose fields no later
// write of the row that applied carried. A later write of other fields
// only (say, a conflict's resolution) leaves the lost write's cells
// showing what they showed: the row still differs.
func lostRows(conn *sqlite.Conn, candidate, extra string, args ...any) (map[string]map[string]bool, error) {
	var cands []lostWrite
	err := queryConn(conn, `SELECT o.tab, o.anchor, o.binding, o.stream_sequence, o.op, o.payload FROM hk_outbox o WHERE `+
		candidate+" "+extra, func(st *sqlite.Stmt) error {
		w := lostWrite{tab: st.ColumnText(0), anchor: st.ColumnText(1), binding: st.ColumnText(2), seq: st.ColumnInt64(3),
			op: st.ColumnText(4)}
		w.payload = make([]byte, st.ColumnLen(5))
		st.ColumnBytes(5, w.payload)
		cands = append(cands, w)
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	var out map[string]map[string]bool
	for _, w := range cands {
		covered, err := laterWriteCovers(conn, w)
		if err != nil {
			return nil, err
		}
		if covered {
			continue
		}
		if out == nil {
			out = map[string]map[string]bool{}
		}
		if out[w.tab] == nil {
			out[w.tab] = map[string]bool{}
		}
		out[w.tab][w.anchor] = true
	}
	return out, nil
}

// laterWriteCovers reports whether the writes of w's row applied after
// it carried every field w carried (a row written whole carries all; a
// lost write of no fields is covered by any later write, as before).
func laterWriteCovers(conn *sqlite.Conn, w lostWrite) (bool, error) {
	want, err := payloadFields(w.payload)
	if err != nil {
		return false, err
	}
	got, later, whole := map[string]bool{}, 0, false
	err = queryConn(conn, `SELECT op, payload FROM hk_outbox WHERE binding = ? AND stream_sequence > ? AND state = ?`,
		func(st *sqlite.Stmt) error {
			later++
			if st.ColumnText(0) != string(events.OpUpdate) {
				whole = true
				return nil
			}
			b := make([]byte, st.ColumnLen(1))
			st.ColumnBytes(1, b)
			fields, err := payloadFields(b)
			for f := range fields {
				got[f] = true
			}
			return err
		}, w.binding, w.seq, string(aggregates.EffectApplied))
	if err != nil || later == 0 || whole {
		return later > 0, err
	}
	for f := range want {
		if !got[f] {
			return false, nil
		}
	}
	return true, nil
}

// payloadFields are the fields an outbox payload carries.
func payloadFields(b []byte) (map[string]any, error) {
	v, err := events.DecodeCanonical(b)
	if err != nil {
		return nil, fmt.Errorf("%w: outbox payload: %w", ErrReadModelInvalid, err)
	}
	m, _ := v.(map[string]any)
	return m, nil
}
