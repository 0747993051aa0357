package projector

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hikoutei/hikoutei-go/events"
)

// Inbound event types (mirrors aggregates/observation.go; the projector
// imports only events).
const (
	typeObservationAccepted = "observation.accepted"
	typeObservationRejected = "observation.rejected"
	typeRowQuarantined      = "row.quarantined"
	typeRowCleared          = "row.quarantine_cleared"
	typeCandidateDetected   = "candidate.detected"
	typeCandidateCleared    = "candidate.cleared"
	typeConflictOpened      = "conflict.opened"
	typeConflictResolved    = "conflict.resolved"
	typeAckPrefix           = "command.acknowledge_system."
	typeAckApplied          = "command.acknowledge_system.applied"
)

// inputTabSuffix marks the Input tabs (sheetsio/layout's fixed naming).
const inputTabSuffix = "_Input"

// ConflictNote is a conflict opened or resolved by an applied batch, for
// the store's OnConflict hook (TakeConflictNotes).
type ConflictNote struct {
	Type       string // "conflict.opened" | "conflict.resolved"
	ConflictID string
	Resolution string
	Seq        uint64
}

// applyInbound projects the inbound side (observations, candidates,
// conflicts, quarantine, evidence). It reports whether it handled e.
func (p *Projector) applyInbound(e *events.Event) (bool, error) {
	switch e.Type {
	case typeObservationAccepted:
		return true, p.observationAccepted(e)
	case typeObservationRejected, typeRowQuarantined:
		return true, p.quarantined(e)
	case typeRowCleared:
		stmt := p.conn.Prep("UPDATE hk_quarantine SET active = 0, cleared_seq = ? WHERE quarantine_id = ?")
		bindAll(stmt, int64(e.Seq), str(e, "quarantine_id"))
		return true, p.also(run(stmt), e, "cleared")
	case typeCandidateDetected:
		return true, p.candidateDetected(e)
	case typeCandidateCleared:
		stmt := p.conn.Prep(`UPDATE hk_sheet_field_state SET candidate_hash = '', candidate_row_hash = '', candidate_visible_revision = 0,
  conflict_id = '', candidate_epoch = ? WHERE binding = ? AND field = ?`)
		bindAll(stmt, num(e, "epoch"), str(e, "binding"), str(e, "field"))
		return true, p.also(run(stmt), e, str(e, "reason"))
	case typeConflictOpened:
		return true, p.conflictOpened(e)
	case typeConflictResolved:
		stmt := p.conn.Prep(`UPDATE hk_conflicts SET state = 'resolved', resolved_seq = ?, resolved_at = ?, resolution = ? WHERE conflict_id = ?`)
		bindAll(stmt, int64(e.Seq), e.At, str(e, "resolution"), str(e, "conflict_id"))
		p.note(e)
		return true, p.also(run(stmt), e, str(e, "resolution"))
	}
	if strings.HasPrefix(e.Type, typeAckPrefix) {
		if e.Type == typeAckApplied {
			stmt := p.conn.Prep(`UPDATE hk_conflicts SET reconcile_effect = ?, reconcile_state = 'pending' WHERE conflict_id = ?`)
			bindAll(stmt, str(e, "reconcile_effect"), str(e, "conflict_id"))
			if err := run(stmt); err != nil {
				return true, err
			}
		}
		return true, p.evidence(e, str(e, "reason"))
	}
	return false, nil
}

// also records e in hk_evidence after a successful projection step.
func (p *Projector) also(err error, e *events.Event, reason string) error {
	if err != nil {
		return err
	}
	return p.evidence(e, reason)
}

// evidence appends e to the hk_evidence history.
func (p *Projector) evidence(e *events.Event, reason string) error {
	if reason == "" {
		reason = e.Type
	}
	detail := str(e, "detail")
	if detail == "" {
		detail = str(e, "conflict_id")
	}
	stmt := p.conn.Prep(`INSERT INTO hk_evidence (seq, n, kind, tab, anchor, entity, id, field, reason, detail)
VALUES (?, (SELECT count(*) FROM hk_evidence WHERE seq = ?), ?, ?, ?, ?, ?, ?, ?, ?)`)
	bindAll(stmt, int64(e.Seq), int64(e.Seq), e.Type, str(e, "tab"), str(e, "anchor"), str(e, "entity"), str(e, "id"),
		str(e, "field"), reason, detail)
	return run(stmt)
}

func (p *Projector) note(e *events.Event) {
	if p.notesOn {
		p.notes = append(p.notes, ConflictNote{Type: e.Type, ConflictID: str(e, "conflict_id"), Resolution: str(e, "resolution"), Seq: e.Seq})
	}
}

func (p *Projector) observationAccepted(e *events.Event) error {
	binding := str(e, "binding")
	stmt := p.conn.Prep(`INSERT INTO hk_visible_state (binding, tab, anchor, revision, hash, effect_id, seq) VALUES (?, ?, ?, 1, ?, '', ?)
ON CONFLICT (binding) DO UPDATE SET revision = revision + 1, hash = excluded.hash, effect_id = '', seq = excluded.seq`)
	bindAll(stmt, binding, str(e, "tab"), str(e, "anchor"), str(e, "row_hash"), int64(e.Seq))
	if err := run(stmt); err != nil {
		return err
	}
	hashes, _ := e.Payload["field_hashes"].(map[string]any)
	if err := p.setShown(binding, str(e, "tab"), str(e, "anchor"), hashes, e.Seq); err != nil {
		return err
	}
	fields, _ := e.Payload["fields"].(map[string]any)
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return p.evidence(e, "accepted:"+strings.Join(names, ","))
}

// setShown records what the sheet shows for each field (hash by field).
func (p *Projector) setShown(binding, tab, anchor string, hashes map[string]any, seq uint64) error {
	stmt := p.conn.Prep(`INSERT INTO hk_sheet_field_state (binding, field, tab, anchor, shown_hash, shown_seq) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (binding, field) DO UPDATE SET shown_hash = excluded.shown_hash, shown_seq = excluded.shown_seq`)
	for f, h := range hashes {
		hs, _ := h.(string)
		bindAll(stmt, binding, f, tab, anchor, hs, int64(seq))
		if err := run(stmt); err != nil {
			return err
		}
	}
	return nil
}

func (p *Projector) quarantined(e *events.Event) error {
	id := str(e, "quarantine_id")
	if id != "" {
		stmt := p.conn.Prep(`INSERT INTO hk_quarantine (quarantine_id, tab, anchor, sheet_row, row_hash, reason, column_name, active, seq)
VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)
ON CONFLICT (quarantine_id) DO UPDATE SET active = 1, sheet_row = excluded.sheet_row, seq = excluded.seq, cleared_seq = NULL`)
		bindAll(stmt, id, str(e, "tab"), str(e, "anchor"), num(e, "sheet_row"), str(e, "row_hash"), str(e, "reason"), str(e, "column"), int64(e.Seq))
		if err := run(stmt); err != nil {
			return err
		}
	}
	return p.evidence(e, str(e, "reason"))
}

func (p *Projector) candidateDetected(e *events.Event) error {
	stmt := p.conn.Prep(`INSERT INTO hk_sheet_field_state (binding, field, tab, anchor, candidate_hash, candidate_epoch,
  candidate_row_hash, candidate_visible_revision, conflict_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (binding, field) DO UPDATE SET candidate_hash = excluded.candidate_hash, candidate_epoch = excluded.candidate_epoch,
  candidate_row_hash = excluded.candidate_row_hash, candidate_visible_revision = excluded.candidate_visible_revision,
  conflict_id = excluded.conflict_id`)
	bindAll(stmt, str(e, "binding"), str(e, "field"), str(e, "tab"), str(e, "anchor"), str(e, "candidate_hash"), num(e, "epoch"),
		str(e, "visible_hash"), num(e, "visible_revision"), str(e, "conflict_id"))
	if err := run(stmt); err != nil {
		return err
	}
	// A new value for an open conflict replaces its candidate evidence.
	upd := p.conn.Prep(`UPDATE hk_conflicts SET candidate_hash = ?, visible_hash = ?, visible_revision = ?, sheet_value = ?
WHERE conflict_id = ? AND state = 'open' AND visible_hash IS NOT NULL`)
	bindAll(upd, str(e, "candidate_hash"), str(e, "visible_hash"), num(e, "visible_revision"), str(e, "sheet_value"), str(e, "conflict_id"))
	return p.also(run(upd), e, "candidate")
}

func (p *Projector) conflictOpened(e *events.Event) error {
	stmt := p.conn.Prep(`INSERT INTO hk_conflicts (conflict_id, entity, id, field, tab, anchor, binding, state, canonical_revision,
  candidate_hash, candidate_epoch, visible_revision, visible_hash, system_value, sheet_value, opened_seq, opened_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, nullif(?, ''), ?, ?, nullif(?, ''), ?, ?, ?, ?)
ON CONFLICT (conflict_id) DO NOTHING`)
	bindAll(stmt, str(e, "conflict_id"), str(e, "entity"), str(e, "id"), str(e, "field"), str(e, "tab"), str(e, "anchor"),
		str(e, "binding"), num(e, "canonical_revision"), str(e, "candidate_hash"), num(e, "candidate_epoch"),
		num(e, "visible_revision"), str(e, "visible_hash"), str(e, "system_value"), str(e, "sheet_value"), int64(e.Seq), e.At)
	p.note(e)
	return p.also(run(stmt), e, "open")
}

// afterEffect keeps the inbound state in step with the outbox: an effect
// applied on an Input row records what each written cell now shows; the
// outcome of an acknowledge_system row reconcile is recorded on its
// conflict. Called by apply after applyEffect handled e.
func (p *Projector) afterEffect(e *events.Event) error {
	var state string
	switch e.Type {
	case typeEffectApplied:
		state = "applied"
	case typeEffectBlocked:
		state = "blocked_candidate"
	case typeEffectConflict:
		state = "conflict"
	default:
		return nil
	}
	id := str(e, "effect_id")
	rec := p.conn.Prep(`UPDATE hk_conflicts SET reconcile_state = ? WHERE reconcile_effect = ?`)
	bindAll(rec, state, id)
	if err := run(rec); err != nil {
		return err
	}
	if state != "applied" {
		return nil
	}
	r, ok, err := p.Effect(id)
	if err != nil || !ok || !strings.HasSuffix(r.Tab, inputTabSuffix) || r.Op == "delete" {
		if ok && r.Op == "delete" && str(e, "written_hash") == "" { // a surplus copy's delete leaves the row shown
			del := p.conn.Prep("DELETE FROM hk_sheet_field_state WHERE binding = ?")
			bindAll(del, r.Binding)
			return run(del)
		}
		return err
	}
	hashes := make(map[string]any, len(r.Values))
	for f, v := range r.Values {
		h, err := ShownHash(v)
		if err != nil {
			return err
		}
		hashes[f] = h
	}
	return p.setShown(r.Binding, r.Tab, r.Anchor, hashes, e.Seq)
}

// ShownHash is the hash comparisons of sheet cells use: events.Hash of the
// canonical value with "" folded into nil (a sheet cannot tell an empty
// text from a blank cell).
func ShownHash(v any) (string, error) {
	if s, ok := v.(string); ok && s == "" {
		v = nil
	}
	h, err := events.Hash(v)
	if err != nil {
		return "", fmt.Errorf("shown hash: %w", err)
	}
	return h, nil
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
