package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Conflict errors (stable snake_case codes; match with errors.Is).
var (
	// ErrConflictOpen: Commit removing an entity that has an unresolved
	// conflict fails closed; nothing of the unit commits (I15).
	ErrConflictOpen = aggregates.ErrConflictOpen
	// ErrAckStale: AcknowledgeSystem's fence (canonical revision, candidate
	// hash, candidate epoch) is no longer current (I13).
	ErrAckStale = aggregates.ErrAckStale
	// ErrAckRejected: the conflict is not open, or is a legacy conflict
	// without candidate visible evidence (I14).
	ErrAckRejected = aggregates.ErrAckRejected
	// ErrConflictNotFound: no conflict has that id.
	ErrConflictNotFound = errors.New("conflict_not_found")
)

// Conflict is one row of the conflict table (hk_conflicts): the field a
// person and the system both changed, the candidate fence and the
// candidate-time visible evidence. VisibleHash "" marks a legacy conflict.
type Conflict = projector.ConflictRow

// ConflictEvent is delivered to SyncOptions.OnConflict after the commit
// that opened or resolved a conflict. Type is "opened" or "resolved";
// Resolution is "system_wins" or "system_acknowledged" when resolved.
// The hook runs on its own goroutine (never the writer's), in log order; a
// slow hook delays only later notifications. JSON form (for the NATS
// subjects conflict.opened / conflict.resolved): the tags below.
type ConflictEvent struct {
	Type        string `json:"type"`
	ConflictID  string `json:"conflict_id"`
	Entity      string `json:"entity"`
	ID          string `json:"id"`
	Field       string `json:"field"`
	SystemValue string `json:"system_value"`
	SheetValue  string `json:"sheet_value"`
	Resolution  string `json:"resolution,omitempty"`
	Seq         uint64 `json:"seq"` // log sequence of the event
	// CanonicalRevision and CandidateEpoch are the conflict's fence at
	// detection (what `conflicts ack` needs).
	CanonicalRevision uint64 `json:"canonical_revision"`
	CandidateEpoch    int64  `json:"candidate_epoch"`
}

// Conflicts lists conflicts in state ("open", "resolved" or "" for all),
// oldest first.
func (s *Store) Conflicts(state string) ([]Conflict, error) {
	var out []Conflict
	err := s.onWriter(func() (err error) {
		if state == "" {
			out, err = s.proj.Conflicts("1 = 1")
		} else {
			out, err = s.proj.Conflicts("state = ?", state)
		}
		return err
	})
	return out, err
}

// observer.candidate records value A against canonical B (I11): the
// active candidate with its candidate-time full-row visible hash/revision
// and, unless the field's conflict is already open, an OPEN conflict and
// the OPEN audit row on Sync_Conflicts — nothing else: polling creates no
// resolution command and never resolves.
func (ob *observer) candidate(r *sheetsio.GridRow, h, binding, field string, sf projector.SheetField, a string, sheetVal, sysVal any, vrev int64) error {
	es, err := ob.s.proj.EntityState(ob.def.name, r.Anchor)
	if err != nil {
		return err
	}
	rev := es.Fields[field].Revision
	cid, opening := sf.ConflictID, sf.ConflictID == ""
	if opening {
		cid = aggregates.ConflictID(binding, field, sf.CandidateEpoch)
	}
	ob.st.Candidates++
	ob.add(aggregates.InboundEvent(aggregates.TypeCandidateDetected, map[string]any{"tab": ob.tabName, "anchor": r.Anchor,
		"binding": binding, "entity": ob.def.name, "id": r.Anchor, "field": field, "candidate_hash": a, "candidate_value": sheetVal,
		"epoch": sf.CandidateEpoch, "visible_revision": vrev, "visible_hash": h, "canonical_revision": int64(rev),
		"conflict_id": cid, "sheet_value": render(sheetVal)}, ob.now))
	if !opening {
		return nil
	}
	ob.b.add(aggregates.ConflictStream(cid), aggregates.InboundEvent(aggregates.TypeConflictOpened, map[string]any{
		"conflict_id": cid, "entity": ob.def.name, "id": r.Anchor, "field": field, "tab": ob.tabName, "anchor": r.Anchor,
		"binding": binding, "canonical_revision": int64(rev), "candidate_hash": a, "candidate_epoch": sf.CandidateEpoch,
		"visible_revision": vrev, "visible_hash": h, "system_value": render(sysVal), "sheet_value": render(sheetVal)}, ob.now))
	_, err = ob.b.queue(aggregates.Queue{Target: ob.s.target(layout.ConflictsTab, cid), Op: aggregates.OpAppend, Entity: ob.def.name, ID: r.Anchor,
		Values: map[string]any{layout.ConflictID: cid, layout.ConflictEntity: ob.def.name, layout.ConflictRecordKey: r.Anchor,
			layout.ConflictField: field, layout.ConflictSystemValue: render(sysVal), layout.ConflictSheetValue: render(sheetVal),
			layout.ConflictStatus: "OPEN", layout.ConflictOpenedAt: ob.now.UTC()}}, "", ob.now)
	return err
}

// render is the audit text of a canonical value.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// onEntityCommit runs on the writer's commit path for every entity
// decision with sync on (called by queueEffects, after the decision's own
// effects): a remove of an entity with an unresolved conflict fails closed
// before anything commits (I15); a persist that strictly raises the
// revision of a conflicted field resolves that conflict system-wins in the
// same commit (I12) — clearing the candidate (epoch + 1), updating the
// audit row, and guarding the Input row's rewrite with the candidate-time
// row hash, so a later human edit is not overwritten.
func (s *Store) onEntityCommit(c command, d aggregates.Decision, out []events.StreamAppend, local, overlay *batchState, now time.Time) ([]events.StreamAppend, error) {
	if !hasUserFields(c.def) {
		return out, nil // no Input tab: no candidates, no conflicts
	}
	open, err := s.proj.Conflicts("entity = ? AND id = ? AND state = 'open'", c.def.name, c.id)
	if err != nil || len(open) == 0 {
		return out, err
	}
	b := newUnitBuilder(s, local.outbox, overlay.outbox)
	var live []projector.ConflictRow
	for _, cf := range open {
		if !b.touched(aggregates.ConflictStream(cf.ID)) { // resolved by an earlier unit of this group commit
			live = append(live, cf)
		}
	}
	if len(live) == 0 {
		return out, nil
	}
	if d.Events[0].Type == aggregates.TypeEntityRemoved {
		return nil, fmt.Errorf("%w: %s %q has %d unresolved conflict(s)", ErrConflictOpen, c.def.name, c.id, len(live))
	}
	revs, _ := d.Events[0].Payload["revisions"].(map[string]any)
	for _, cf := range live {
		rv, ok := revs[cf.Field].(int64)
		if !ok {
			continue // unrelated fields are not approval
		}
		sheet, err := s.proj.SheetFields(cf.Binding)
		if err != nil {
			return nil, err
		}
		sf := sheet[cf.Field]
		if !aggregates.ResolvesOnCommit(conflictState(cf, sf, 0), cf.Field, uint64(rv)) {
			continue
		}
		if err := s.resolve(b, cf, sf, aggregates.ResolutionSystemWins, uint64(rv), now); err != nil {
			return nil, err
		}
		for i := range out {
			if out[i].Stream == aggregates.OutboxStream(cf.Binding) && len(out[i].Events) > 0 && sf.CandidateRow != "" {
				out[i].Events[0].Payload["expected_hash"] = sf.CandidateRow
			}
		}
	}
	if b.err != nil {
		return nil, b.err
	}
	return append(out, b.appends()...), nil
}

func conflictState(cf projector.ConflictRow, sf projector.SheetField, version uint64) aggregates.ConflictState {
	return aggregates.ConflictState{ID: cf.ID, Open: cf.State == "open", Field: cf.Field, CanonicalRevision: cf.CanonicalRevision,
		CandidateHash: sf.CandidateHash, CandidateEpoch: sf.CandidateEpoch, VisibleHash: cf.VisibleHash,
		VisibleRevision: cf.VisibleRevision, Version: version}
}

// resolve adds conflict.resolved, candidate.cleared (epoch + 1, no ABA)
// and the audit row's RESOLVED update.
func (s *Store) resolve(b *unitBuilder, cf projector.ConflictRow, sf projector.SheetField, resolution string, rev uint64, now time.Time) error {
	b.add(aggregates.ConflictStream(cf.ID), aggregates.ConflictResolved(cf.ID, resolution, rev, now))
	b.add(aggregates.InboundStream(cf.Tab), aggregates.CandidateCleared(cf.Binding, cf.Field, sf.CandidateEpoch, resolution, now))
	_, err := b.queue(aggregates.Queue{Target: s.target(layout.ConflictsTab, cf.ID), Op: aggregates.OpUpdate, Entity: cf.Entity, ID: cf.EntityID,
		Values: map[string]any{layout.ConflictStatus: "RESOLVED", layout.ConflictResolvedAt: now.UTC()}}, "", now)
	return err
}

// Acknowledge is the acknowledge_system command (I13): keep the system's
// value of a conflicted field. The fence is what the caller saw: the
// field's canonical revision, the candidate hash and the candidate epoch
// (Conflict.CanonicalRevision, CandidateHash, CandidateEpoch).
type Acknowledge = aggregates.Acknowledge

// AckResult reports an acknowledge_system command.
type AckResult struct {
	Outcome         string // "applied", "stale" or "rejected"
	ReconcileEffect string // the row reconcile effect id (applied)
}

// AcknowledgeSystem runs acknowledge_system: in ONE fenced commit it
// records the command (requested + applied/stale/rejected) and, when the
// fence holds, resolves the conflict, clears the candidate (epoch + 1) and
// queues the row reconcile — an update of the Input cell to the canonical
// value guarded by the candidate-time full-row visible hash: if a person
// edited the row again, the reconcile settles blocked_candidate instead of
// overwriting it. Errors: ErrConflictNotFound, ErrAckStale, ErrAckRejected
// (legacy conflicts without visible evidence stay unresolved, I14), and
// fencing / store errors.
func (s *Store) AcknowledgeSystem(ctx context.Context, cmd Acknowledge) (AckResult, error) {
	var res AckResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	err := s.onWriter(func() error {
		if s.sync == nil {
			return fmt.Errorf("%w: sync is not configured", ErrSyncStartup)
		}
		now := s.opts.Clock.Now()
		cf, ok, err := s.proj.Conflict(cmd.ConflictID)
		if err != nil || !ok {
			return errors.Join(err, fmt.Errorf("%w: %s", ErrConflictNotFound, cmd.ConflictID))
		}
		ver, err := s.w.Log().StreamVersion(aggregates.ConflictStream(cf.ID))
		if err != nil {
			return err
		}
		sheet, err := s.proj.SheetFields(cf.Binding)
		if err != nil {
			return err
		}
		es, err := s.proj.EntityState(cf.Entity, cf.EntityID)
		if err != nil {
			return err
		}
		sf := sheet[cf.Field]
		d, derr := aggregates.DecideAcknowledge(conflictState(cf, sf, ver), es.Fields[cf.Field].Revision, cmd, now)
		b := newUnitBuilder(s, nil, nil)
		b.add(d.Stream, d.Events...)
		switch {
		case errors.Is(derr, ErrAckStale):
			res.Outcome = "stale"
		case derr != nil:
			res.Outcome = "rejected"
		default:
			res.Outcome = "applied"
			vals, _, err := s.proj.EntityValues(cf.Entity, cf.EntityID)
			if err != nil {
				return err
			}
			id, err := b.queue(aggregates.Queue{Target: s.target(cf.Tab, cf.Anchor), Op: aggregates.OpUpdate, Entity: cf.Entity, ID: cf.EntityID,
				Values: map[string]any{cf.Field: vals[cf.Field]}}, sf.CandidateRow, now)
			if err != nil {
				return err
			}
			d.Events[1].Payload["reconcile_effect"], res.ReconcileEffect = id, id
			if err := s.resolve(b, cf, sf, aggregates.ResolutionAcknowledged, es.Fields[cf.Field].Revision, now); err != nil {
				return err
			}
		}
		if err := b.commit(); err != nil {
			return err
		}
		return derr
	})
	return res, err
}

// AcknowledgeCommand is the CLI form of AcknowledgeSystem:
// args = <conflict_id> <canonical_revision> <candidate_hash> <candidate_epoch>
// (as `hikoutei conflicts` lists them). Errors: ErrInvalidAckArgs, and
// AcknowledgeSystem's.
func AcknowledgeCommand(ctx context.Context, s *Store, args []string) (AckResult, error) {
	if len(args) != 4 {
		return AckResult{}, fmt.Errorf("%w: want <conflict_id> <canonical_revision> <candidate_hash> <candidate_epoch>", ErrInvalidAckArgs)
	}
	rev, err1 := strconv.ParseUint(args[1], 10, 64)
	epoch, err2 := strconv.ParseInt(args[3], 10, 64)
	if err1 != nil || err2 != nil {
		return AckResult{}, fmt.Errorf("%w: revision and epoch are decimal integers", ErrInvalidAckArgs)
	}
	return s.AcknowledgeSystem(ctx, Acknowledge{ConflictID: args[0], CanonicalRevision: rev, CandidateHash: args[2], CandidateEpoch: epoch})
}

// ErrInvalidAckArgs: AcknowledgeCommand got malformed arguments.
var ErrInvalidAckArgs = errors.New("invalid_acknowledge_arguments")

// settleDecision decides one settlement (Store.Settle): a guard failure of
// an acknowledge_system row reconcile is blocked_candidate (I13); every
// other outcome is aggregates.DecideSettle's.
func (s *Store) settleDecision(r projector.OutboxRow, st effects.Settlement, now time.Time) (aggregates.Decision, error) {
	if st.Outcome.Kind == "conflict" {
		rows, err := s.proj.Conflicts("reconcile_effect = ?", r.ID)
		if err != nil {
			return aggregates.Decision{}, err
		}
		if len(rows) > 0 {
			return aggregates.DecideBlocked(effectOf(r), st.ClaimToken, st.Outcome.Code, now)
		}
	}
	return aggregates.DecideSettle(effectOf(r), st.ClaimToken, st.Outcome, now)
}

// enableInbound turns on conflict notifications once the read model has
// caught up at Open (old conflicts are not news).
func (s *Store) enableInbound() {
	if s.sync == nil {
		return
	}
	_ = s.onWriter(func() error { s.proj.SetConflictNotes(true); return nil })
}

// notifyConflicts hands the conflicts opened or resolved by the batch just
// projected to SyncOptions.OnConflict, in log order, on a goroutine (the
// writer never waits on the hook). Writer goroutine only.
func (s *Store) notifyConflicts() {
	if s.sync == nil {
		return
	}
	notes := s.proj.TakeConflictNotes()
	fn := s.sync.opts.OnConflict
	if len(notes) == 0 || fn == nil {
		return
	}
	evs := make([]ConflictEvent, 0, len(notes))
	for _, n := range notes {
		if n.Seq <= s.sync.noteSeq {
			continue // re-applied after a failed projection: already delivered
		}
		s.sync.noteSeq = n.Seq
		cf, _, _ := s.proj.Conflict(n.ConflictID)
		typ := "opened"
		if n.Type == aggregates.TypeConflictResolved {
			typ = "resolved"
		}
		evs = append(evs, ConflictEvent{Type: typ, ConflictID: n.ConflictID, Entity: cf.Entity, ID: cf.EntityID, Field: cf.Field,
			SystemValue: cf.SystemValue, SheetValue: cf.SheetValue, Resolution: n.Resolution, Seq: n.Seq,
			CanonicalRevision: cf.CanonicalRevision, CandidateEpoch: cf.CandidateEpoch})
	}
	if len(evs) == 0 {
		return
	}
	prev, done := s.sync.noteDone, make(chan struct{})
	s.sync.noteDone = done
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		for _, ev := range evs {
			fn(ev)
		}
	}()
}
