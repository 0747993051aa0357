package events

// Conflict events and the commands that resolve a conflict
// (acknowledge_system, accept_user). Stream "conflict/<conflict_id>".
const (
	TypeConflictOpened      Type = "conflict.opened"
	TypeConflictResolved    Type = "conflict.resolved"
	TypeAckRequested        Type = "command.acknowledge_system.requested"
	TypeAckApplied          Type = "command.acknowledge_system.applied"
	TypeAckStale            Type = "command.acknowledge_system.stale"
	TypeAckRejected         Type = "command.acknowledge_system.rejected"
	TypeAcceptUserRequested Type = "command.accept_user.requested"
	TypeAcceptUserApplied   Type = "command.accept_user.applied"
	TypeAcceptUserStale     Type = "command.accept_user.stale"
	TypeAcceptUserRejected  Type = "command.accept_user.rejected"
)

// ConflictStream is the stream of one conflict and its commands.
func ConflictStream(id string) string { return "conflict/" + id }

// Resolution says how a conflict ended.
type Resolution string

// Resolutions.
const (
	// ResolutionSystemWins: a later local commit raised the field's revision.
	ResolutionSystemWins Resolution = "system_wins"
	// ResolutionAcknowledged: acknowledge_system kept the system's value
	// ("keep system").
	ResolutionAcknowledged Resolution = "system_acknowledged"
	// ResolutionUseSheet: accept_user committed the person's value ("use
	// the sheet's value").
	ResolutionUseSheet Resolution = "use_sheet"
	// ResolutionShapeChanged: the application's new declaration dropped
	// the conflicted field, or people no longer edit it: the conflict
	// ended, with its candidate, in the unit that recorded the change
	// (schema.changed); the canonical value stands.
	ResolutionShapeChanged Resolution = "shape_changed"
)

// Actor says who made a change or resolved a conflict. Events recorded
// before actors existed carry none (""). Besides the constants below, a
// migration's output carries "migration:<entity>/<version>"
// (MigrationActor): the application's migration of that name rewrote
// the record when the entity's shape changed.
type Actor string

// migrationActorPrefix starts the actor of a migration's events.
const migrationActorPrefix = "migration:"

// MigrationActor is the actor of the events a migration wrote: the
// migration's name ("<entity>/<version>", MigrationRun.Name) after
// "migration:".
func MigrationActor(name string) Actor { return Actor(migrationActorPrefix + name) }

// Actors.
const (
	// ActorApplication: the application, through the Go API.
	ActorApplication Actor = "application"
	// ActorCLI: a person, through the hikoutei command.
	ActorCLI Actor = "cli"
	// ActorSheet: a person, through the spreadsheet.
	ActorSheet Actor = "sheet"
	// ActorAdopt: the rows of a tab people kept, imported by hikoutei
	// adopt (Store.Adopt).
	ActorAdopt Actor = "adopt"
)

// ConflictOpened records a conflict: a person and the system both changed
// one field since the sheet last showed it.
type ConflictOpened struct {
	// ConflictID is deterministic: one per row binding, field and candidate epoch.
	ConflictID string `canon:"conflict_id,required"`
	// Entity and ID name the entity of the conflicted field.
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// Field is the conflicted user-owned field.
	Field string `canon:"field"`
	// Tab, Anchor and Binding name the Input row the person edited.
	Tab     string `canon:"tab"`
	Anchor  string `canon:"anchor"`
	Binding string `canon:"binding"`
	// CanonicalRevision is the field's canonical revision when it opened.
	CanonicalRevision uint64 `canon:"canonical_revision"`
	// CandidateHash and CandidateEpoch fence the commands that resolve it.
	CandidateHash  string `canon:"candidate_hash"`
	CandidateEpoch int64  `canon:"candidate_epoch"`
	// VisibleRevision and VisibleHash are the row's candidate-time visible
	// evidence; an empty VisibleHash marks a legacy conflict that no
	// command resolves.
	VisibleRevision int64  `canon:"visible_revision"`
	VisibleHash     string `canon:"visible_hash"`
	// SystemValue and SheetValue are the two values as rendered for the audit.
	SystemValue string `canon:"system_value"`
	SheetValue  string `canon:"sheet_value"`
}

// ConflictResolved records how a conflict ended.
type ConflictResolved struct {
	// ConflictID is the conflict resolved.
	ConflictID string     `canon:"conflict_id,required"`
	Resolution Resolution `canon:"resolution"`
	// CanonicalRevision is the field's canonical revision at resolution.
	CanonicalRevision uint64 `canon:"canonical_revision"`
	// Actor is who resolved it ("" in events recorded before actors).
	Actor Actor `canon:"actor,omitempty"`
}

// AckCommand is the payload of the events of both resolution commands
// (acknowledge_system and accept_user): the fence the caller saw and, once
// decided, the outcome. See AckRequested, AckApplied, AckStale,
// AckRejected and their AcceptUser counterparts.
type AckCommand struct {
	// ConflictID is the conflict the command targets.
	ConflictID string `canon:"conflict_id,required"`
	// CanonicalRevision is the field's canonical revision the caller saw
	// (the fence, not necessarily the current one).
	CanonicalRevision uint64 `canon:"canonical_revision"`
	// CandidateHash and CandidateEpoch are the candidate the caller saw:
	// the command applies only while both are still current.
	CandidateHash  string `canon:"candidate_hash"`
	CandidateEpoch int64  `canon:"candidate_epoch"`
	// Reason is why a stale or rejected command changed nothing.
	Reason string `canon:"reason,omitempty"`
	// ReconcileEffect is the row reconcile an applied command queued.
	ReconcileEffect string `canon:"reconcile_effect,omitempty"`
	// CommandID makes the command idempotent: a repeated id with the same
	// payload returns the first outcome ("" = none given).
	CommandID string `canon:"command_id,omitempty"`
	// Actor is who asked ("" in events recorded before actors).
	Actor Actor `canon:"actor,omitempty"`
}

// AckRequested records that acknowledge_system was asked for.
type AckRequested AckCommand

// AckApplied records that the fence held: the conflict is resolved in the
// same commit, and the Input row reconcile queued.
type AckApplied AckCommand

// AckStale records that the fence no longer held: nothing changed.
type AckStale AckCommand

// AckRejected records a command for a conflict that is not open, or a
// legacy conflict without visible evidence: nothing changed.
type AckRejected AckCommand

// AcceptUserRequested records that accept_user ("use the sheet's value")
// was asked for.
type AcceptUserRequested AckCommand

// AcceptUserApplied records that the fence held: the person's value is
// committed (entity.persisted), the conflict resolved and the Input row
// reconcile queued, all in the same commit.
type AcceptUserApplied AckCommand

// AcceptUserStale records that the fence no longer held: nothing changed.
type AcceptUserStale AckCommand

// AcceptUserRejected records a command for a conflict that is not open, a
// legacy conflict without visible evidence or a candidate whose value is
// unknown: nothing changed.
type AcceptUserRejected AckCommand

// EventType implements Payload.
func (ConflictOpened) EventType() Type { return TypeConflictOpened }

// EventType implements Payload.
func (ConflictResolved) EventType() Type { return TypeConflictResolved }

// EventType implements Payload.
func (AckRequested) EventType() Type { return TypeAckRequested }

// EventType implements Payload.
func (AckApplied) EventType() Type { return TypeAckApplied }

// EventType implements Payload.
func (AckStale) EventType() Type { return TypeAckStale }

// EventType implements Payload.
func (AckRejected) EventType() Type { return TypeAckRejected }

// EventType implements Payload.
func (AcceptUserRequested) EventType() Type { return TypeAcceptUserRequested }

// EventType implements Payload.
func (AcceptUserApplied) EventType() Type { return TypeAcceptUserApplied }

// EventType implements Payload.
func (AcceptUserStale) EventType() Type { return TypeAcceptUserStale }

// EventType implements Payload.
func (AcceptUserRejected) EventType() Type { return TypeAcceptUserRejected }

const conflictStreamPattern = "conflict/<conflict_id>"

func init() {
	register[ConflictOpened](1, conflictStreamPattern)
	register[ConflictResolved](1, conflictStreamPattern)
	register[AckRequested](1, conflictStreamPattern)
	register[AckApplied](1, conflictStreamPattern)
	register[AckStale](1, conflictStreamPattern)
	register[AckRejected](1, conflictStreamPattern)
	register[AcceptUserRequested](1, conflictStreamPattern)
	register[AcceptUserApplied](1, conflictStreamPattern)
	register[AcceptUserStale](1, conflictStreamPattern)
	register[AcceptUserRejected](1, conflictStreamPattern)
}
