package events

// Snapshot events: the log vouches for the read-model snapshots a store
// took. Stream "snapshot/read-model".
const (
	TypeSnapshotTaken Type = "snapshot.taken"
)

// SnapshotStream holds the snapshot.taken events of a store.
const SnapshotStream = "snapshot/read-model"

// SnapshotTaken records a snapshot of the read model written to the
// store's snapshots folder. A snapshot is restored only when its file's
// digest equals the Digest of one of these events, so a snapshot file or
// manifest changed afterwards is refused. It changes no entity data: the
// read model projects it to nothing but its checkpoint.
type SnapshotTaken struct {
	// Seq is the log sequence the snapshot includes (its checkpoint); the
	// event itself comes after it.
	Seq uint64 `canon:"seq"`
	// Digest is "sha256:" and the hex SHA-256 of the snapshot file.
	Digest string `canon:"digest,required"`
	// Size is the snapshot file's length in bytes.
	Size int64 `canon:"size"`
	// StoreID is the store the snapshot belongs to.
	StoreID string `canon:"store_id,required"`
}

// EventType implements Payload.
func (SnapshotTaken) EventType() Type { return TypeSnapshotTaken }

func init() {
	register[SnapshotTaken](1, SnapshotStream)
}
