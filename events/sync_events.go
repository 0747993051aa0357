package events

// Sync events. Stream "sync/<target>".
const (
	TypeSyncDiverged    Type = "sync.diverged"
	TypeSyncTargetBound Type = "sync.target_bound"
)

// SyncStream is the stream of one sync target's events.
func SyncStream(target string) string { return "sync/" + target }

// SyncDiverged records that a sync target's authority stopped naming this
// writer (another store or a newer epoch): dispatching to it stopped.
type SyncDiverged struct {
	// Target is the sync target's name.
	Target string `canon:"target"`
	// Reason says what the authority named instead.
	Reason string `canon:"reason"`
}

// EventType implements Payload.
func (SyncDiverged) EventType() Type { return TypeSyncDiverged }

// SyncTargetBound records which sync target the store's outbox serves
// from now on. A target is a digest of the spreadsheet id ("ss-…"; the id
// itself never enters the log). Previous is the target served before (""
// = none recorded): a switch supersedes Previous's unsettled effects in
// the same unit, and the new spreadsheet is backfilled completely.
// Adopted is a legacy target name (from before targets were keyed by
// spreadsheet) whose effects now belong to Target; a store with several
// records one event per name.
type SyncTargetBound struct {
	// Target is the sync target bound.
	Target string `canon:"target"`
	// Previous is the target served before, if any.
	Previous string `canon:"previous,omitempty"`
	// Adopted is a legacy target name whose effects move to Target.
	Adopted string `canon:"adopted,omitempty"`
}

// EventType implements Payload.
func (SyncTargetBound) EventType() Type { return TypeSyncTargetBound }

func init() {
	register[SyncDiverged](1, "sync/<target>")
	register[SyncTargetBound](1, "sync/<target>")
}
