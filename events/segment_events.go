package events

// Segment events: the log vouches for the sealed segments of a store.
// Stream "segments".
const (
	TypeSegmentSealed Type = "segment.sealed"
)

// SegmentStream holds the segment.sealed events: the catalogue of the
// store's sealed segments.
const SegmentStream = "segments"

// SegmentSealed records that the records First..Last moved out of log.db
// into one sealed segment: an immutable, compressed file in the store's
// segments folder holding them as log.db stored them, so the chain runs
// through it unchanged. It commits the seal: the same transaction removes
// those records from log.db. The records of the streams a store reads
// when it opens (entity schemas, snapshots, integrity, segments) stay in
// log.db and are not in the segment (Kept counts them). The segment was
// written, synced and read back (every record, its chain and Digest)
// before this event was appended.
type SegmentSealed struct {
	// Name is the segment's file name: its first and last sequences and
	// the first 16 hex digits of FirstLink and LastHash.
	Name string `canon:"name,required"`
	// First and Last are the sequences the segment covers.
	First uint64 `canon:"first"`
	Last  uint64 `canon:"last"`
	// FirstLink is the chain value before First (the genesis value for
	// the first segment); LastHash is the chain value after Last, the one
	// the next record links to. 64 hex digits each.
	FirstLink string `canon:"first_link,required"`
	LastHash  string `canon:"last_hash,required"`
	// Records is how many records the segment holds; Kept how many of
	// First..Last stayed in log.db.
	Records uint64 `canon:"records"`
	Kept    uint64 `canon:"kept"`
	// Size is the file's length in bytes.
	Size int64 `canon:"size"`
	// Digest is "sha256:" and the hex SHA-256 of the file.
	Digest string `canon:"digest,required"`
}

// EventType implements Payload.
func (SegmentSealed) EventType() Type { return TypeSegmentSealed }

func init() {
	register[SegmentSealed](1, SegmentStream)
}
