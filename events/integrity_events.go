package events

// Integrity events: damage a store found in itself and recorded, so that
// it is never papered over. Stream "integrity".
const (
	TypeLogGapDetected Type = "integrity.log_gap_detected"
	TypeHolesRecorded  Type = "integrity.holes_recorded"
)

// IntegrityStream is the stream of integrity events.
const IntegrityStream = "integrity"

// LogGapDetected records that, when the store was opened, its read model
// had applied records past the log head: the log lost records it had
// acknowledged (a damaged page, an older copy of log.db restored). The
// sequences LogHead+1..ReadModelCheckpoint of that earlier history are
// gone from the log and are never reused: they are recorded as lost (meta
// salvage_lost, and an integrity.holes_recorded event) and numbering
// continues after ReadModelCheckpoint. (Older builds reused them.)
type LogGapDetected struct {
	// ReadModelCheckpoint is the last sequence the read model had applied.
	ReadModelCheckpoint uint64 `canon:"read_model_checkpoint"`
	// LogHead is the log head found, before anything was appended.
	LogHead uint64 `canon:"log_head"`
	// SetAside names the file the old read model was kept as (in the store
	// directory): the only trace of what the lost records changed.
	SetAside string `canon:"set_aside"`
}

// EventType implements Payload.
func (LogGapDetected) EventType() Type { return TypeLogGapDetected }

// HolesRecorded records, in the log itself, sequences the log no longer
// holds and never reuses: the holes a salvage left, or the sequences an
// accepted log gap lost (meta salvage_lost). A store appends it when it
// opens and finds holes no earlier holes_recorded names. It is where a pin
// may vouch across them: verification lets a head pinned at or after this
// record vouch for the records after the holes it names, and refuses a pin
// taken before it (chain_pin_mismatch): that pin was taken before the
// holes appeared, and commits to records the log no longer has.
type HolesRecorded struct {
	// Lost lists the sequences (events.SeqRanges form, e.g. "403, 804-812").
	Lost string `canon:"lost"`
}

// EventType implements Payload.
func (HolesRecorded) EventType() Type { return TypeHolesRecorded }

func init() {
	register[LogGapDetected](1, IntegrityStream)
	register[HolesRecorded](1, IntegrityStream)
}
