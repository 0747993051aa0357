package projector

import (
	"fmt"
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// ConflictNote is a conflict opened or resolved by an applied batch, for
// the store's conflict notifications (TakeConflictNotes).
type ConflictNote struct {
	Type       events.Type // conflict.opened or conflict.resolved
	ConflictID string
	Resolution events.Resolution
	Actor      events.Actor // who resolved it ("" before actors)
	Seq        uint64
}

// evidenceRow is what hk_evidence records of an inbound event.
type evidenceRow struct {
	tab, anchor, entity, id, field, reason, detail string
}

// applyInbound projects the inbound side (observations, quarantine,
// candidates). It reports whether it handled pl.
func (p *Projector) applyInbound(e *events.Event, pl events.Payload) (bool, error) {
	switch x := pl.(type) {
	case events.ObservationAccepted:
		x.Fields = upcastKeys(p.up, x.Entity, e.Seq, x.Fields)
		x.FieldHashes = upcastKeys(p.up, x.Entity, e.Seq, x.FieldHashes)
		return true, p.observationAccepted(e, x)
	case events.ObservationConfirmed:
		x.FieldHashes = upcastKeys(p.up, x.Entity, e.Seq, x.FieldHashes)
		return true, p.observationConfirmed(e, x)
	case events.ObservationRejected:
		return true, p.quarantined(e, p.upcastEvidence(e.Seq, events.Evidence(x)))
	case events.RowQuarantined:
		return true, p.quarantined(e, p.upcastEvidence(e.Seq, events.Evidence(x)))
	case events.RowQuarantineCleared:
		stmt := p.conn.Prep("UPDATE hk_quarantine SET active = 0, cleared_seq = ? WHERE quarantine_id = ?")
		bindAll(stmt, int64(e.Seq), x.QuarantineID)
		return true, p.also(run(stmt), e, evidenceRow{tab: x.Tab, anchor: x.Anchor, reason: "cleared"})
	case events.CandidateDetected:
		return true, p.candidateDetected(e, x)
	case events.CandidateCleared:
		return true, p.candidateCleared(e, x)
	}
	return false, nil
}

// applyConflict projects conflicts and the acknowledge_system command.
func (p *Projector) applyConflict(e *events.Event, pl events.Payload) (bool, error) {
	switch x := pl.(type) {
	case events.ConflictOpened:
		return true, p.conflictOpened(e, x)
	case events.ConflictResolved:
		stmt := p.conn.Prep(`UPDATE hk_conflicts SET state = 'resolved', resolved_seq = ?, resolved_at = ?, resolution = ?, resolved_by = ?
WHERE conflict_id = ?`)
		bindAll(stmt, int64(e.Seq), e.At, string(x.Resolution), string(x.Actor), x.ConflictID)
		p.note(ConflictNote{Type: e.Type(), ConflictID: x.ConflictID, Resolution: x.Resolution, Actor: x.Actor, Seq: e.Seq})
		return true, p.also(run(stmt), e, evidenceRow{reason: string(x.Resolution), detail: x.ConflictID})
	case events.AckRequested:
		return true, p.ackEvidence(e, events.AckCommand(x))
	case events.AckStale:
		return true, p.commandDone(e, events.AckCommand(x), events.ResolutionAcknowledged, aggregates.AckStale)
	case events.AckRejected:
		return true, p.commandDone(e, events.AckCommand(x), events.ResolutionAcknowledged, aggregates.AckRejected)
	case events.AckApplied:
		return true, p.commandApplied(e, events.AckCommand(x), events.ResolutionAcknowledged)
	}
	return p.applyAcceptUser(e, pl)
}

// applyAcceptUser projects the accept_user command's events (I30).
func (p *Projector) applyAcceptUser(e *events.Event, pl events.Payload) (bool, error) {
	switch x := pl.(type) {
	case events.AcceptUserRequested:
		return true, p.ackEvidence(e, events.AckCommand(x))
	case events.AcceptUserStale:
		return true, p.commandDone(e, events.AckCommand(x), events.ResolutionUseSheet, aggregates.AckStale)
	case events.AcceptUserRejected:
		return true, p.commandDone(e, events.AckCommand(x), events.ResolutionUseSheet, aggregates.AckRejected)
	case events.AcceptUserApplied:
		return true, p.commandApplied(e, events.AckCommand(x), events.ResolutionUseSheet)
	}
	return false, nil
}

// commandApplied records an applied resolution command: the row reconcile
// it queued, on its conflict, and its outcome.
func (p *Projector) commandApplied(e *events.Event, x events.AckCommand, how events.Resolution) error {
	stmt := p.conn.Prep(`UPDATE hk_conflicts SET reconcile_effect = nullif(?, ''), reconcile_state = iif(? = '', NULL, 'pending')
WHERE conflict_id = ?`)
	bindAll(stmt, x.ReconcileEffect, x.ReconcileEffect, x.ConflictID)
	if err := run(stmt); err != nil {
		return err
	}
	return p.commandDone(e, x, how, aggregates.AckApplied)
}

// commandDone records a resolution command's outcome: in hk_commands
// under its command id (when it has one) and in the evidence history.
func (p *Projector) commandDone(e *events.Event, x events.AckCommand, how events.Resolution, outcome aggregates.AckOutcome) error {
	if x.CommandID != "" {
		stmt := p.conn.Prep(`INSERT INTO hk_commands (command_id, conflict_id, resolution, canonical_revision, candidate_hash, candidate_epoch,
  outcome, reason, reconcile_effect, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (command_id) DO NOTHING`)
		bindAll(stmt, x.CommandID, x.ConflictID, string(how), int64(x.CanonicalRevision), x.CandidateHash, x.CandidateEpoch,
			string(outcome), x.Reason, x.ReconcileEffect, int64(e.Seq))
		if err := run(stmt); err != nil {
			return err
		}
	}
	return p.ackEvidence(e, x)
}

func (p *Projector) ackEvidence(e *events.Event, x events.AckCommand) error {
	return p.evidence(e, evidenceRow{reason: x.Reason, detail: x.ConflictID})
}

// also records e in hk_evidence after a successful projection step.
func (p *Projector) also(err error, e *events.Event, r evidenceRow) error {
	if err != nil {
		return err
	}
	return p.evidence(e, r)
}

// evidence appends e to the hk_evidence history.
func (p *Projector) evidence(e *events.Event, r evidenceRow) error {
	if r.reason == "" {
		r.reason = string(e.Type())
	}
	stmt := p.conn.Prep(`INSERT INTO hk_evidence (seq, n, kind, tab, anchor, entity, id, field, reason, detail)
VALUES (?, (SELECT count(*) FROM hk_evidence WHERE seq = ?), ?, ?, ?, ?, ?, ?, ?, ?)`)
	bindAll(stmt, int64(e.Seq), int64(e.Seq), string(e.Type()), r.tab, r.anchor, r.entity, r.id, r.field, r.reason, r.detail)
	return run(stmt)
}

func (p *Projector) note(n ConflictNote) {
	if p.notesOn {
		p.notes = append(p.notes, n)
	}
}

func (p *Projector) observationAccepted(e *events.Event, x events.ObservationAccepted) error {
	if err := p.rowRead(e, x.Binding, x.Tab, x.Anchor, x.RowHash, x.FieldHashes); err != nil {
		return err
	}
	if err := p.unwritableTypedOver(x.Binding, x.Fields); err != nil {
		return err
	}
	names := make([]string, 0, len(x.Fields))
	for n := range x.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return p.evidence(e, evidenceRow{tab: x.Tab, anchor: x.Anchor, entity: x.Entity, id: x.ID, reason: "accepted:" + strings.Join(names, ",")})
}

// observationConfirmed records a row whose lost write it showed anyway:
// the row as read is what the store expects (the lost mark clears).
func (p *Projector) observationConfirmed(e *events.Event, x events.ObservationConfirmed) error {
	if err := p.rowRead(e, x.Binding, x.Tab, x.Anchor, x.RowHash, x.FieldHashes); err != nil {
		return err
	}
	return p.evidence(e, evidenceRow{tab: x.Tab, anchor: x.Anchor, entity: x.Entity, id: x.ID, reason: "confirmed"})
}

// rowRead sets an Input row's visible state to the hash a poll read it
// with, and what each of hashes' fields shows.
func (p *Projector) rowRead(e *events.Event, binding, tab, anchor, hash string, hashes map[string]string) error {
	stmt := p.conn.Prep(`INSERT INTO hk_visible_state (binding, tab, anchor, revision, hash, effect_id, seq) VALUES (?, ?, ?, 1, ?, '', ?)
ON CONFLICT (binding) DO UPDATE SET revision = revision + 1, hash = excluded.hash, effect_id = '', seq = excluded.seq`)
	bindAll(stmt, binding, tab, anchor, hash, int64(e.Seq))
	if err := run(stmt); err != nil {
		return err
	}
	return p.setShown(binding, tab, anchor, hashes, e.Seq)
}

// setShown records what the sheet shows for each field (hash by field).
func (p *Projector) setShown(binding, tab, anchor string, hashes map[string]string, seq uint64) error {
	stmt := p.conn.Prep(`INSERT INTO hk_sheet_field_state (binding, field, tab, anchor, shown_hash, shown_seq) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (binding, field) DO UPDATE SET shown_hash = excluded.shown_hash, shown_seq = excluded.shown_seq`)
	for _, f := range sortedFields(hashes) {
		bindAll(stmt, binding, f, tab, anchor, hashes[f], int64(seq))
		if err := run(stmt); err != nil {
			return err
		}
	}
	return nil
}

func sortedFields(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (p *Projector) quarantined(e *events.Event, x events.Evidence) error {
	if x.QuarantineID != "" {
		stmt := p.conn.Prep(`INSERT INTO hk_quarantine (quarantine_id, tab, anchor, sheet_row, row_hash, reason, column_name, active, seq)
VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)
ON CONFLICT (quarantine_id) DO UPDATE SET active = 1, sheet_row = excluded.sheet_row, seq = excluded.seq, cleared_seq = NULL`)
		bindAll(stmt, x.QuarantineID, x.Tab, x.Anchor, x.SheetRow, x.RowHash, x.Reason, x.Column, int64(e.Seq))
		if err := run(stmt); err != nil {
			return err
		}
	}
	return p.evidence(e, evidenceRow{tab: x.Tab, anchor: x.Anchor, entity: x.Entity, id: x.ID, reason: x.Reason, detail: x.Detail})
}

func (p *Projector) candidateDetected(e *events.Event, x events.CandidateDetected) error {
	if p.up.needed(x.Entity, e.Seq) {
		fm := p.up.field(x.Entity, x.Field, e.Seq)
		if !fm.kept { // the field was dropped since: its conflict ends in the change's unit
			return p.candidateEvidence(e, x)
		}
		x.Field, x.CandidateValue = fm.name, fm.value(x.CandidateValue)
	}
	if err := p.putCandidate(x); err != nil {
		return err
	}
	return p.candidateEvidence(e, x)
}

// putCandidate records a field's active candidate. A candidate value that
// did not convert to the field's newest kind is unknown (NULL).
func (p *Projector) putCandidate(x events.CandidateDetected) error {
	var value []byte
	if _, unknown := x.CandidateValue.(notConverted); !unknown {
		var err error
		if value, err = events.EncodeCanonical(x.CandidateValue); err != nil {
			return fmt.Errorf("%w: candidate value of %s: %w", ErrProjection, x.ConflictID, err)
		}
	}
	stmt := p.conn.Prep(`INSERT INTO hk_sheet_field_state (binding, field, tab, anchor, candidate_hash, candidate_epoch,
  candidate_row_hash, candidate_visible_revision, conflict_id, candidate_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (binding, field) DO UPDATE SET candidate_hash = excluded.candidate_hash, candidate_epoch = excluded.candidate_epoch,
  candidate_row_hash = excluded.candidate_row_hash, candidate_visible_revision = excluded.candidate_visible_revision,
  conflict_id = excluded.conflict_id, candidate_value = excluded.candidate_value`)
	bindAll(stmt, x.Binding, x.Field, x.Tab, x.Anchor, x.CandidateHash, x.Epoch, x.VisibleHash, x.VisibleRevision, x.ConflictID, value)
	if value == nil {
		stmt.BindNull(10)
	}
	return run(stmt)
}

// candidateEvidence updates an open conflict's candidate evidence and
// records the candidate in the evidence history.
func (p *Projector) candidateEvidence(e *events.Event, x events.CandidateDetected) error {
	// A new value for an open conflict replaces its candidate evidence.
	upd := p.conn.Prep(`UPDATE hk_conflicts SET candidate_hash = ?, visible_hash = ?, visible_revision = ?, sheet_value = ?
WHERE conflict_id = ? AND state = 'open' AND visible_hash IS NOT NULL`)
	bindAll(upd, x.CandidateHash, x.VisibleHash, x.VisibleRevision, x.SheetValue, x.ConflictID)
	return p.also(run(upd), e, evidenceRow{tab: x.Tab, anchor: x.Anchor, entity: x.Entity, id: x.ID, field: x.Field,
		reason: "candidate", detail: x.ConflictID})
}

func (p *Projector) conflictOpened(e *events.Event, x events.ConflictOpened) error {
	if name, kept := p.up.name(x.Entity, x.Field, e.Seq); kept {
		x.Field = name // a dropped field's conflict keeps its name: it ends in the change's unit
	}
	stmt := p.conn.Prep(`INSERT INTO hk_conflicts (conflict_id, entity, id, field, tab, anchor, binding, state, canonical_revision,
  candidate_hash, candidate_epoch, visible_revision, visible_hash, system_value, sheet_value, opened_seq, opened_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, nullif(?, ''), ?, ?, nullif(?, ''), ?, ?, ?, ?)
ON CONFLICT (conflict_id) DO NOTHING`)
	bindAll(stmt, x.ConflictID, x.Entity, x.ID, x.Field, x.Tab, x.Anchor, x.Binding, int64(x.CanonicalRevision), x.CandidateHash,
		x.CandidateEpoch, x.VisibleRevision, x.VisibleHash, x.SystemValue, x.SheetValue, int64(e.Seq), e.At)
	p.note(ConflictNote{Type: e.Type(), ConflictID: x.ConflictID, Seq: e.Seq})
	return p.also(run(stmt), e, evidenceRow{tab: x.Tab, anchor: x.Anchor, entity: x.Entity, id: x.ID, field: x.Field,
		reason: "open", detail: x.ConflictID})
}

// afterEffect keeps the inbound state in step with the outbox: an effect
// applied on an Input row records what each written cell now shows; the
// outcome of an acknowledge_system row reconcile is recorded on its
// conflict. Called by apply after applyEffect handled e.
func (p *Projector) afterEffect(e *events.Event, pl events.Payload) error {
	var state aggregates.EffectState
	var id, written string
	switch x := pl.(type) {
	case events.EffectApplied:
		state, id, written = aggregates.EffectApplied, x.EffectID, x.WrittenHash
	case events.EffectBlocked:
		state, id = aggregates.EffectBlocked, x.EffectID
	case events.EffectConflict:
		state, id = aggregates.EffectConflict, x.EffectID
	default:
		return nil
	}
	rec := p.conn.Prep(`UPDATE hk_conflicts SET reconcile_state = ? WHERE reconcile_effect = ?`)
	bindAll(rec, string(state), id)
	if err := run(rec); err != nil || state != aggregates.EffectApplied {
		return err
	}
	return p.shownAfterWrite(e, id, written)
}

// shownAfterWrite records what an applied write shows on an Input row.
func (p *Projector) shownAfterWrite(e *events.Event, id, written string) error {
	if a := p.applied; a.id == id && (!a.found || !p.inputTabs[a.tab]) {
		return nil // the row appliedSet moved is on no Input tab (or there is none): no payload to read
	}
	r, ok, err := p.Effect(id)
	if err != nil || !ok || !p.inputTabs[r.Target.Tab] {
		return err
	}
	if r.Op == events.OpDelete {
		if written != "" {
			return nil
		}
		del := p.conn.Prep("DELETE FROM hk_sheet_field_state WHERE binding = ?") // a surplus copy's delete leaves the row shown
		bindAll(del, r.Target.Binding)
		return run(del)
	}
	return p.shownValues(r.Target.Binding, r.Target.Tab, r.Target.Anchor, r.Entity, r.QueuedSeq, r.Values, e.Seq)
}

// shownValues records on an Input row the shown hashes of an applied
// write's values, read in the layout they were queued in.
func (p *Projector) shownValues(binding, tab, anchor, entity string, queuedSeq uint64, values map[string]any, seq uint64) error {
	hashes := make(map[string]string, len(values))
	for f, v := range upcastKeys(p.up, entity, queuedSeq, values) { // the payload as queued: its layout then
		h, err := aggregates.ShownHash(v)
		if err != nil {
			return err
		}
		hashes[f] = h
	}
	return p.setShown(binding, tab, anchor, hashes, seq)
}

// SetConflictNotes turns the collection of ConflictNotes on or off (off
// while catching up at Open: old conflicts are not news).
func (p *Projector) SetConflictNotes(on bool) { p.notesOn, p.notes = on, nil }

// TakeConflictNotes returns and forgets the notes collected so far.
func (p *Projector) TakeConflictNotes() []ConflictNote {
	n := p.notes
	p.notes = nil
	return n
}

// misdirected records, in hk_evidence, one row per cell a misdirected
// write overwrote (C06): the displaced row's tab, anchor and record, the
// column, and where the write was meant to go. No cell value.
func (p *Projector) misdirected(e *events.Event, x events.SyncWriteMisdirected) error {
	detail := fmt.Sprintf("row %d; meant for %s; effect %s; requeued %s; repair %s", x.SheetRow, x.Anchor, x.EffectID, x.Requeued, x.Repair)
	for _, c := range x.Cells {
		r := evidenceRow{tab: x.Tab, anchor: x.DisplacedAnchor, entity: x.Entity, id: x.ID, field: c.Column,
			reason: aggregates.CodeWriteMisdirected, detail: detail}
		if err := p.evidence(e, r); err != nil {
			return err
		}
	}
	return nil
}

// candidateCleared ends a field's candidate (the field named as the
// event's time named it).
func (p *Projector) candidateCleared(e *events.Event, x events.CandidateCleared) error {
	if entity := p.bindingEntity(x.Binding, e.Seq); entity != "" {
		name, kept := p.up.name(entity, x.Field, e.Seq)
		if !kept {
			if err := p.epochPassed(x); err != nil {
				return err
			}
			return p.evidence(e, evidenceRow{field: x.Field, reason: x.Reason})
		}
		x.Field = name
	}
	stmt := p.conn.Prep(`UPDATE hk_sheet_field_state SET candidate_hash = '', candidate_row_hash = '', candidate_visible_revision = 0,
  conflict_id = '', candidate_value = NULL, candidate_epoch = ? WHERE binding = ? AND field = ?`)
	bindAll(stmt, x.Epoch, x.Binding, x.Field)
	if err := run(stmt); err != nil {
		return err
	}
	return p.also(p.epochPassed(x), e, evidenceRow{field: x.Field, reason: x.Reason})
}

// epochPassed moves the candidate epoch of x's field on its row past x's
// epoch, recording the field's state when the read model holds none
// (a field dropped since, whose candidates and shown values are not
// projected, declared again under the same name): its conflict ids were
// taken (aggregates.ConflictID of binding, name and epoch), so a conflict
// of the field declared again never takes the id of one that ended.
func (p *Projector) epochPassed(x events.CandidateCleared) error {
	stmt := p.conn.Prep(`INSERT INTO hk_sheet_field_state (binding, field, tab, anchor, candidate_epoch)
SELECT binding, ?, tab, anchor, ? FROM hk_sheet_field_state WHERE binding = ? LIMIT 1
ON CONFLICT (binding, field) DO UPDATE SET candidate_epoch = max(candidate_epoch, excluded.candidate_epoch)`)
	bindAll(stmt, x.Field, x.Epoch, x.Binding)
	return run(stmt)
}

// bindingEntity is the entity of an Input row binding, when an event of
// seq may need its field names mapped ("" otherwise).
func (p *Projector) bindingEntity(binding string, seq uint64) string {
	if p.up == nil {
		return ""
	}
	var tab string
	err := p.query("SELECT tab FROM hk_sheet_field_state WHERE binding = ? LIMIT 1", func(st *sqlite.Stmt) error {
		tab = st.ColumnText(0)
		return nil
	}, binding)
	if entity := p.up.tabEntity(tab); err == nil && p.up.needed(entity, seq) {
		return entity
	}
	return ""
}

// upcastEvidence maps the column a piece of evidence names to its field's
// newest name (a dropped field's column keeps its name).
func (p *Projector) upcastEvidence(seq uint64, x events.Evidence) events.Evidence {
	entity := x.Entity
	if entity == "" {
		entity = p.up.tabEntity(x.Tab)
	}
	if name, kept := p.up.name(entity, x.Column, seq); kept {
		x.Column = name
	}
	return x
}
