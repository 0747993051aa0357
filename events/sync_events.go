package events

// Sync events. Stream "sync/<target>".
const (
	TypeSyncDiverged Type = "sync.diverged"
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

func init() {
	register[SyncDiverged](1, "sync/<target>")
}
