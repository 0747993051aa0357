package demo

import (
	"context"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// readModel is a read-only connection to the store's read model, for
// the demo's checks of what the pollers and the cleanup recorded.
type readModel struct {
	conn *sqlite.Conn
}

func (e *env) openReadModel() (*readModel, error) {
	conn, err := sqlite.OpenConn(e.store.ReadModelPath(), sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	return &readModel{conn: conn}, nil
}

func (rm *readModel) close() { rm.conn.Close() }

// count runs a SELECT count(*) query.
func (rm *readModel) count(q string, args ...any) (int, error) {
	n := 0
	err := sqlitex.Execute(rm.conn, q, &sqlitex.ExecOptions{Args: args,
		ResultFunc: func(s *sqlite.Stmt) error { n = s.ColumnInt(0); return nil }})
	return n, err
}

// unsettled is the SQL list of the effect states not yet settled.
func unsettled() string {
	var s []string
	for _, st := range aggregates.Unsettled() {
		s = append(s, "'"+string(st)+"'")
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// quarantined counts the active evidence of reason ("" = any) on anchor.
func (rm *readModel) quarantined(anchor, reason string) (int, error) {
	return rm.count(`SELECT count(*) FROM hk_quarantine WHERE active = 1 AND tab = ? AND anchor = ? AND (? = '' OR reason = ?)`,
		inputTab, anchor, reason, reason)
}

// inFlight counts the unsettled effects on anchor's Input row.
func (rm *readModel) inFlight(anchor string) (int, error) {
	return rm.count(`SELECT count(*) FROM hk_outbox WHERE tab = ? AND anchor = ? AND state IN `+unsettled(), inputTab, anchor)
}

// removed counts the applied full-row CAS deletes of anchor's Input rows
// (the surplus-row cleanup).
func (rm *readModel) removed(anchor string) (int, error) {
	return rm.count(`SELECT count(*) FROM hk_outbox WHERE tab = ? AND anchor = ? AND op = 'delete' AND state = 'applied'`, inputTab, anchor)
}

// accepted counts the accepted observations (a person's edits made
// canonical) of anchor.
func (rm *readModel) accepted(anchor string) (int, error) {
	return rm.count(`SELECT count(*) FROM hk_evidence WHERE kind = ? AND anchor = ?`, string(events.TypeObservationAccepted), anchor)
}

// acceptedOutside counts the accepted observations of anchors other than
// these.
func (rm *readModel) acceptedOutside(anchors ...string) (int, error) {
	q := `SELECT count(*) FROM hk_evidence WHERE kind = ? AND anchor NOT IN (?` + strings.Repeat(", ?", len(anchors)-1) + `)`
	args := []any{string(events.TypeObservationAccepted)}
	for _, a := range anchors {
		args = append(args, a)
	}
	return rm.count(q, args...)
}

// conflicts counts the conflicts of an entity id in state ("" = any).
func (rm *readModel) conflicts(id, state string) (int, error) {
	return rm.count(`SELECT count(*) FROM hk_conflicts WHERE entity = 'Airport' AND id = ? AND (? = '' OR state = ?)`, id, state, state)
}

// openConflict is the id of an entity id's open conflict ("" = none).
func (rm *readModel) openConflict(id string) (string, error) {
	var cid string
	err := sqlitex.Execute(rm.conn, `SELECT conflict_id FROM hk_conflicts WHERE entity = 'Airport' AND id = ? AND state = 'open'`,
		&sqlitex.ExecOptions{Args: []any{id}, ResultFunc: func(st *sqlite.Stmt) error { cid = st.ColumnText(0); return nil }})
	return cid, err
}

// inbound counts what the pollers recorded.
type inbound struct {
	opened, resolved, inSheet, quarantined int
}

func (rm *readModel) inbound() (inbound, error) {
	var in inbound
	for q, dst := range map[string]*int{
		"SELECT count(*) FROM hk_conflicts":                                                    &in.opened,
		"SELECT count(*) FROM hk_conflicts WHERE state = 'resolved'":                           &in.resolved,
		"SELECT count(*) FROM hk_conflicts WHERE state = 'resolved' AND resolved_by = 'sheet'": &in.inSheet,
		"SELECT count(*) FROM hk_quarantine WHERE active = 1":                                  &in.quarantined,
	} {
		n, err := rm.count(q)
		if err != nil {
			return in, err
		}
		*dst = n
	}
	return in, nil
}

// withReadModel runs fn on a fresh read-only connection.
func (e *env) withReadModel(_ context.Context, fn func(*readModel) error) error {
	rm, err := e.openReadModel()
	if err != nil {
		return err
	}
	defer rm.close()
	return fn(rm)
}
