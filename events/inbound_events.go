package events

// Inbound events: what the pollers observed on an Input tab. Stream
// "inbound/<tab>".
const (
	TypeObservationAccepted  Type = "observation.accepted"
	TypeObservationRejected  Type = "observation.rejected"
	TypeRowQuarantined       Type = "row.quarantined"
	TypeRowQuarantineCleared Type = "row.quarantine_cleared"
	TypeCandidateDetected    Type = "candidate.detected"
	TypeCandidateCleared     Type = "candidate.cleared"
	TypeObservationConfirmed Type = "observation.confirmed"
)

// InboundStream is the stream of one Input tab's observations.
func InboundStream(tab string) string { return "inbound/" + tab }

// ObservationAccepted records a person's edit of user-owned fields that
// became canonical: entity.persisted is in the same commit.
type ObservationAccepted struct {
	// Tab is the Input tab the row is on.
	Tab string `canon:"tab"`
	// Anchor is the row's anchor (the entity's primary key).
	Anchor string `canon:"anchor"`
	// Binding identifies the row: a stable hash of tab and anchor.
	Binding string `canon:"binding"`
	// Entity and ID name the entity the row shows.
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// Fields holds the accepted values by field.
	Fields map[string]any `canon:"fields"`
	// FieldHashes holds the hash of what each accepted cell now shows.
	FieldHashes map[string]string `canon:"field_hashes"`
	// RowHash is the full-row visible hash the edit was read with.
	RowHash string `canon:"row_hash"`
}

// ObservationConfirmed records that a poll read an Input row whose last
// write was lost (it met a person's edit and was not made) showing
// canonical state in every user-owned cell: the person typed the values
// the write carried. Nothing is imported and nothing is written; the
// store expects the row as read from now on.
type ObservationConfirmed struct {
	// Tab is the Input tab the row is on.
	Tab string `canon:"tab"`
	// Anchor is the row's anchor (the entity's primary key).
	Anchor string `canon:"anchor"`
	// Binding identifies the row: a stable hash of tab and anchor.
	Binding string `canon:"binding"`
	// Entity and ID name the entity the row shows.
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// FieldHashes holds the hash of what each cell showing canonical
	// state shows.
	FieldHashes map[string]string `canon:"field_hashes"`
	// RowHash is the full-row visible hash the row was read with.
	RowHash string `canon:"row_hash"`
}

// Evidence is the payload of observation.rejected and row.quarantined:
// something a poll saw that is not data. See ObservationRejected and
// RowQuarantined.
type Evidence struct {
	// Tab is the Input tab the evidence was seen on, or, for a row of a
	// tab people kept that hikoutei adopt did not import, the title that
	// tab is kept under ("<tab> (before hikoutei)").
	Tab    string `canon:"tab"`
	Anchor string `canon:"anchor"` // "" for a row without an anchor
	// SheetRow is the 1-based row the evidence was seen on (0 for a tab).
	SheetRow int64 `canon:"sheet_row"`
	// RowHash is the full-row visible hash of that row.
	RowHash string `canon:"row_hash"`
	// Reason is the stable code (row_deleted, cell_formula, …).
	Reason string `canon:"reason"`
	// Column names the offending column, when one is.
	Column string `canon:"column"`
	// Detail is a short description (never a cell value).
	Detail string `canon:"detail"`
	// QuarantineID identifies the evidence: the same tab, anchor, row hash
	// and reason always give the same id.
	QuarantineID string `canon:"quarantine_id"`
	// Entity and ID name the entity the row's anchor names, when known.
	Entity string `canon:"entity,omitempty"`
	ID     string `canon:"id,omitempty"`
}

// ObservationRejected records evidence that is not data: a deleted row, a
// suspected mass deletion, a row without a known anchor, a blocked tab.
type ObservationRejected Evidence

// RowQuarantined records a malformed or ambiguous row (a formula, a number
// in a text column, a duplicated anchor, an edited key; for an adopted tab
// also a duplicate, empty or existing key: key_empty, key_invalid,
// duplicate_key, key_exists): nothing of it is written into an entity
// table.
type RowQuarantined Evidence

// RowQuarantineCleared records that a piece of evidence no longer shows
// in its tab.
type RowQuarantineCleared struct {
	// Tab is the Input tab the evidence was on.
	Tab string `canon:"tab"`
	// QuarantineID is the evidence cleared.
	QuarantineID string `canon:"quarantine_id"`
	// Anchor is the evidence's anchor ("" for a row without one).
	Anchor string `canon:"anchor"`
}

// CandidateDetected records a person's value A for a field whose
// canonical value B changed too since the sheet last showed it: the
// candidate, with its candidate-time row evidence.
type CandidateDetected struct {
	// Tab is the Input tab the row is on.
	Tab string `canon:"tab"`
	// Anchor is the row's anchor (the entity's primary key).
	Anchor string `canon:"anchor"`
	// Binding identifies the row: a stable hash of tab and anchor.
	Binding string `canon:"binding"`
	// Entity and ID name the entity the row shows.
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// Field is the user-owned field the person changed.
	Field string `canon:"field"`
	// CandidateHash is the hash of the person's value.
	CandidateHash string `canon:"candidate_hash"`
	// CandidateValue is the person's value (canonical).
	CandidateValue any `canon:"candidate_value"`
	// Epoch is the field's candidate epoch.
	Epoch int64 `canon:"epoch"`
	// VisibleRevision and VisibleHash are the row's full visible revision
	// and hash when the candidate was seen.
	VisibleRevision int64  `canon:"visible_revision"`
	VisibleHash     string `canon:"visible_hash"`
	// CanonicalRevision is the field's canonical revision then.
	CanonicalRevision uint64 `canon:"canonical_revision"`
	// ConflictID is the conflict the candidate belongs to.
	ConflictID string `canon:"conflict_id"`
	// SheetValue is the person's value as rendered for the audit.
	SheetValue string `canon:"sheet_value"`
}

// CandidateCleared records that a field's candidate ended (its conflict
// was resolved): the candidate epoch moves to Epoch, so a command fenced
// by the old candidate can never match a later one with the same value.
type CandidateCleared struct {
	// Binding identifies the Input row.
	Binding string `canon:"binding"`
	// Field is the field whose candidate ended.
	Field string `canon:"field"`
	// Epoch is the NEW candidate epoch (the old one plus one).
	Epoch int64 `canon:"epoch"`
	// Reason is the resolution that cleared it.
	Reason string `canon:"reason"`
}

// EventType implements Payload.
func (ObservationAccepted) EventType() Type { return TypeObservationAccepted }

// EventType implements Payload.
func (ObservationRejected) EventType() Type { return TypeObservationRejected }

// EventType implements Payload.
func (RowQuarantined) EventType() Type { return TypeRowQuarantined }

// EventType implements Payload.
func (RowQuarantineCleared) EventType() Type { return TypeRowQuarantineCleared }

// EventType implements Payload.
func (CandidateDetected) EventType() Type { return TypeCandidateDetected }

// EventType implements Payload.
func (CandidateCleared) EventType() Type { return TypeCandidateCleared }

// EventType implements Payload.
func (ObservationConfirmed) EventType() Type { return TypeObservationConfirmed }

const inboundStreamPattern = "inbound/<tab>"

func init() {
	register[ObservationAccepted](1, inboundStreamPattern)
	register[ObservationRejected](1, inboundStreamPattern)
	register[RowQuarantined](1, inboundStreamPattern)
	register[RowQuarantineCleared](1, inboundStreamPattern)
	register[CandidateDetected](1, inboundStreamPattern)
	register[CandidateCleared](1, inboundStreamPattern)
	register[ObservationConfirmed](1, inboundStreamPattern)
}
