// Package sheetcheck compares what a spreadsheet shows with canonical
// state, for the campaigns (internal/above/lab/crash, internal/above/lab/converge) and their
// tests: one row per live entity showing its canonical values, encoded the
// way the product encodes them (sheetsio.ExpectedRowHash), no anchor shown
// twice, no row for an entity that does not exist.
package sheetcheck

import (
	"sort"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Report is how one tab differs from canonical state; each list holds
// anchors, sorted.
type Report struct {
	Missing    []string // live entities without a row
	Duplicated []string // entities shown by more than one row
	Drifted    []string // a row whose visible values are not the canonical ones
	Orphans    []string // rows of anchors that are not live entities
	Excused    []string // rows that differ but excused accepted (not differences)
}

// Clean reports a tab equal to canonical state.
func (r Report) Clean() bool {
	return len(r.Missing)+len(r.Duplicated)+len(r.Drifted)+len(r.Orphans) == 0
}

// Differences counts the rows that differ.
func (r Report) Differences() int {
	return len(r.Missing) + len(r.Duplicated) + len(r.Drifted) + len(r.Orphans)
}

// Tab compares one tab as snap read it with want (anchor → the entity's
// field values by field name; fields the tab does not show are ignored).
// A row that differs (or is missing: missing true) and whose anchor
// excused accepts (an open conflict keeps a person's value on an Input
// tab until acknowledged) is reported as Excused, not as a difference.
// Errors: a value the product could not encode.
func Tab(snap *sheetsio.TabSnapshot, spec layout.TabSpec, want map[string]map[string]any, excused func(anchor string, missing bool) bool) (Report, error) {
	var rep Report
	for _, id := range sortedKeys(want) {
		hash, err := sheetsio.ExpectedRowHash(spec, id, shown(spec, want[id]))
		if err != nil {
			return rep, err
		}
		switch rows := snap.Find(id); {
		case len(rows) == 0 && excused != nil && excused(id, true):
			rep.Excused = append(rep.Excused, id)
		case len(rows) == 0:
			rep.Missing = append(rep.Missing, id)
		case len(rows) > 1:
			rep.Duplicated = append(rep.Duplicated, id)
		case rows[0].Hash == hash:
		case excused != nil && excused(id, false):
			rep.Excused = append(rep.Excused, id)
		default:
			rep.Drifted = append(rep.Drifted, id)
		}
	}
	for _, r := range snap.Rows {
		if _, ok := want[r.Anchor]; !ok && r.Anchor != "" {
			rep.Orphans = append(rep.Orphans, r.Anchor)
		}
	}
	sort.Strings(rep.Orphans)
	return rep, nil
}

// DuplicateAnchors returns the anchors that rows (as a person sees them,
// header first) show more than once, in the column whose header is one of
// anchorHeaders (layout.AnchorHeader when none are given).
func DuplicateAnchors(rows [][]string, anchorHeaders ...string) []string {
	if len(rows) == 0 {
		return nil
	}
	if len(anchorHeaders) == 0 {
		anchorHeaders = []string{layout.AnchorHeader}
	}
	ai := -1
	for i, h := range rows[0] {
		for _, a := range anchorHeaders {
			if h == a {
				ai = i
			}
		}
	}
	if ai < 0 {
		return nil
	}
	seen := map[string]bool{}
	var dup []string
	for _, r := range rows[1:] {
		if ai >= len(r) || r[ai] == "" {
			continue
		}
		if seen[r[ai]] {
			dup = append(dup, r[ai])
		}
		seen[r[ai]] = true
	}
	return dup
}

// LastEffect returns the op and state of the newest effect on a row of
// target (the outbox key, engine.Target; "" for any), read-only from a
// read model's outbox table.
func LastEffect(readModel, target, tab, anchor string) (op, state string, err error) {
	conn, err := sqlite.OpenConn(readModel, sqlite.OpenReadOnly)
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	err = sqlitex.Execute(conn, `SELECT op, state FROM hk_outbox WHERE tab = ? AND anchor = ? AND (? = '' OR spreadsheet = ?)
ORDER BY stream_sequence DESC LIMIT 1`,
		&sqlitex.ExecOptions{Args: []any{tab, anchor, target, target}, ResultFunc: func(st *sqlite.Stmt) error {
			op, state = st.ColumnText(0), st.ColumnText(1)
			return nil
		}})
	return op, state, err
}

// shown keeps the values of the columns the tab shows.
func shown(spec layout.TabSpec, vals map[string]any) map[string]any {
	out := map[string]any{}
	for _, h := range spec.Headers() {
		if v, ok := vals[h]; ok {
			out[h] = v
		}
	}
	return out
}

func sortedKeys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
