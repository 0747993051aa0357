package events

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// Sentinel errors of the events package. Each carries a stable snake_case code
// as its text; callers match them with errors.Is and read details from the
// typed errors below with errors.As.
var (
	// ErrUnsupportedType: a value outside the canonical set (null, bool,
	// integers, float64, string, time.Time, []any, map[string]any).
	ErrUnsupportedType = errors.New("canonical_unsupported_type")
	// ErrNonFinite: a float is NaN or ±Inf (I17: such values have no canonical form).
	ErrNonFinite = errors.New("canonical_non_finite")
	// ErrInvalidUTF8: a string or map key is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("canonical_invalid_utf8")
	// ErrDuplicateKey: two map keys are equal after NFC normalisation.
	ErrDuplicateKey = errors.New("canonical_duplicate_key")
	// ErrTimeRange: a time is outside years 0001–9999 (UTC).
	ErrTimeRange = errors.New("canonical_time_out_of_range")
	// ErrIntRange: an unsigned integer does not fit in int64.
	ErrIntRange = errors.New("canonical_int_out_of_range")
	// ErrMalformedCanonical: bytes are not a canonical encoding.
	ErrMalformedCanonical = errors.New("canonical_malformed")

	// ErrCorruptRecord: a log record failed its checksum or could not be
	// decoded (torn write, bit rot). See *CorruptRecordError for the sequence.
	ErrCorruptRecord = errors.New("log_record_corrupt")
	// ErrLogCorrupt: log.db's file structure is damaged (a meta page, the
	// file size, a B+tree page, a missing bucket, a sequence hole) or bbolt
	// panicked or faulted reading it. See *LogCorruptError for what was
	// found. Once a Log has seen it, it refuses appends; `hikoutei salvage`
	// copies what is still readable into a new store.
	ErrLogCorrupt = errors.New("log_corrupt")
	// ErrSalvageTarget: salvage was given a target that exists (log.db) or a
	// source that is not a log.
	ErrSalvageTarget = errors.New("salvage_target_invalid")
	// ErrBackupTarget: a backup was given a target that exists (without
	// force), is not a regular file (a directory, device, FIFO, socket or
	// symbolic link, even with force), or lies inside a store directory
	// (any store's: ErrTargetInsideStore too).
	ErrBackupTarget = errors.New("backup_target_invalid")
	// ErrTargetInsideStore: a command's output (a backup, a restored or
	// salvaged store, a replayed read model, a scratch copy) would be
	// written inside a store directory — a directory holding a log.db,
	// lease.toml or read.sqlite, or below one. See *InsideStoreError.
	ErrTargetInsideStore = errors.New("target_inside_store")
	// ErrBackupCorrupt: a backup fails verification (a record's checksum,
	// the sequence, the file's structure); the error names the sequence.
	ErrBackupCorrupt = errors.New("backup_corrupt")
	// ErrRestoreTarget: a restore was given a target directory that exists
	// and is not empty (or is not a directory).
	ErrRestoreTarget = errors.New("restore_target_not_empty")
	// ErrRestoreSource: a restore was given a source that is not a
	// regular file (a FIFO, a device such as /dev/zero, a directory) or
	// cannot be opened; nothing was copied.
	ErrRestoreSource = errors.New("restore_source_invalid")
	// ErrRestoreIncomplete: a directory holds what an interrupted restore
	// leaves (its unverified copy of the log, .log.db.tmp-*, and the
	// segments it copied) and no log.db: it is no store yet. See
	// *RestoreIncompleteError.
	ErrRestoreIncomplete = errors.New("restore_incomplete")
	// ErrVersionConflict: optimistic concurrency failed. See *VersionConflictError.
	ErrVersionConflict = errors.New("stream_version_conflict")
	// ErrInvalidEvent: an event to append lacks a stream or type, or its
	// payload cannot be encoded.
	ErrInvalidEvent = errors.New("invalid_event")
	// ErrChainBroken: a record of the log does not continue its hash
	// chain (it or the record before it was changed, removed or moved, or
	// it is torn or missing). See *ChainBrokenError for the sequence.
	ErrChainBroken = errors.New("chain_broken")
	// ErrChainPinMismatch: the log does not extend a pinned chain head
	// (its chain value at the pinned sequence differs, or the log ends
	// before it). See *ChainPinError.
	ErrChainPinMismatch = errors.New("chain_pin_mismatch")
	// ErrChainRestarted: the log's hash chain restarts after a hole a
	// salvage recorded, so no link ties the records after the hole to the
	// genesis value; verification refuses it unless holes are accepted
	// explicitly. See *ChainRestartedError.
	ErrChainRestarted = errors.New("chain_restarted")
	// ErrValueNotConvertible: a recorded value cannot take a field's new
	// kind without changing what it says (see ConvertValue).
	ErrValueNotConvertible = errors.New("value_not_convertible")
	// ErrLogClosed: the log was used after Close.
	ErrLogClosed = errors.New("log_closed")
	// ErrLogFileReplaced: the store directory's log.db is no longer the
	// file this Log has open (it was replaced, renamed or removed under
	// the running store): appends are refused from then on, since nothing
	// appended to the open file would be found at the path again.
	ErrLogFileReplaced = errors.New("log_file_replaced")

	// ErrReplicaFenced: the replicated log refused a commit because
	// another writer appended first (a Replicator's answer; Append
	// reports it as ErrStaleWriterFence too). Nothing was stored.
	ErrReplicaFenced = errors.New("replication_fenced")
	// ErrReplicaUncertain: the replicated log did not answer whether it
	// stored a commit; nothing was committed locally. The commit may still
	// be in the replicated log: a standby or the next open applies it.
	ErrReplicaUncertain = errors.New("replication_uncertain")
	// ErrReplicaRejected: the replicated log refused a commit for another
	// reason than fencing (too large, a missing stream). Nothing was
	// stored, nothing committed locally.
	ErrReplicaRejected = errors.New("replication_rejected")
	// ErrReplicaGap: a replica commit does not continue the local log.
	// See *ReplicaGapError.
	ErrReplicaGap = errors.New("replication_gap")
	// ErrStoreIDMismatch: a log opened for one store (Options.StoreID)
	// belongs to another.
	ErrStoreIDMismatch = errors.New("store_id_mismatch")
	// ErrSegmentMissing: a sealed segment the log vouches for (a
	// segment.sealed event) is not in the store's segments folder, so the
	// records it holds cannot be read. See *SegmentError for its name.
	ErrSegmentMissing = errors.New("segment_missing")
	// ErrSegmentDamaged: a sealed segment's file is not the one the log
	// vouches for (its digest, its records or their chain differ). See
	// *SegmentError for its name.
	ErrSegmentDamaged = errors.New("segment_damaged")
	// ErrSegmentStoreUnavailable: the store holding the sealed segments
	// (Options.Segments: a folder or an object store) cannot be reached
	// or refused a read or a write; the segment is not known to be
	// missing. See *SegmentError for the segment a read needed. It is
	// segstore.ErrUnavailable.
	ErrSegmentStoreUnavailable = segstore.ErrUnavailable
	// ErrSealRefused: a seal was asked for that would move nothing, or
	// move what must stay in log.db (a replicated log, a retention point
	// past what the caller allows, a range crossing a salvage's holes).
	ErrSealRefused = errors.New("seal_refused")
	// ErrReplicaSegmentMismatch: a standby (or a primary catching up)
	// applying a replicated segment.sealed event built, from its own
	// copy of the records, a segment that is not the one the event
	// vouches for (another range, chain value, record count or file
	// digest): the commit is not applied and nothing is removed. See
	// *SegmentError for its name.
	ErrReplicaSegmentMismatch = errors.New("replica_segment_mismatch")

	// ErrStaleWriterFence: an append or lease operation carried an epoch or
	// fencing token that is not the current live lease's (I01).
	ErrStaleWriterFence = errors.New("stale_writer_fence")
	// ErrLeaseExpired: the caller's own lease has lease_until <= now.
	ErrLeaseExpired = errors.New("lease_expired")
	// ErrLeaseHeld: another writer holds a live lease that the takeover rule
	// (I02) does not allow to be taken over yet. See *LeaseHeldError.
	ErrLeaseHeld = errors.New("lease_held")
	// ErrStoreLocked: another process has the store open (bbolt file lock).
	// See *StoreLockedError for the holder named in lease.toml.
	ErrStoreLocked = errors.New("store_locked")
	// ErrStoreLogMissing: a directory that held a store (a read model,
	// snapshots, a lease file, …) has no usable log.db; nothing is
	// created there. See *StoreLogMissingError.
	ErrStoreLogMissing = errors.New("store_log_missing")
	// ErrLeaseFileInvalid: lease.toml does not have the closed four-key shape (I22).
	ErrLeaseFileInvalid = errors.New("lease_file_invalid")
	// ErrUnknownEventType: an event's type (or its schema) is not in this
	// build's catalogue: a log written by a newer build, or foreign bytes.
	// See *PayloadError.
	ErrUnknownEventType = errors.New("event_type_unknown")
	// ErrMalformedPayload: a payload does not have its catalogue type's
	// shape (an unknown key, a value of the wrong type, a missing required
	// key, a failed upcast). See *PayloadError.
	ErrMalformedPayload = errors.New("event_payload_malformed")
)

// CorruptRecordError names the log sequence whose record is torn or corrupt.
// It wraps ErrCorruptRecord.
type CorruptRecordError struct {
	Seq    uint64 // global sequence (the record's key)
	Reason string // short description: "checksum mismatch", "truncated", …
}

func (e *CorruptRecordError) Error() string {
	return fmt.Sprintf("%s: seq %d: %s", ErrCorruptRecord, e.Seq, e.Reason)
}

// Unwrap returns ErrCorruptRecord.
func (e *CorruptRecordError) Unwrap() error { return ErrCorruptRecord }

// SegmentError names the sealed segment a read or a verification could
// not use. It wraps ErrSegmentMissing, ErrSegmentDamaged or
// ErrSegmentStoreUnavailable.
type SegmentError struct {
	Err    error  // ErrSegmentMissing, ErrSegmentDamaged, ErrSegmentStoreUnavailable or ErrReplicaSegmentMismatch
	Name   string // the segment's file name
	Reason string // short description
}

func (e *SegmentError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Err, e.Name, e.Reason)
}

// Unwrap returns Err.
func (e *SegmentError) Unwrap() error { return e.Err }

// ChainBrokenError names the first sequence at which the hash chain of a
// log breaks: the first record whose stored bytes are not what the chain
// committed to. It wraps ErrChainBroken.
type ChainBrokenError struct {
	Seq    uint64 // the first record changed, missing, torn or out of place
	Reason string // short description
}

func (e *ChainBrokenError) Error() string {
	return fmt.Sprintf("%s: seq %d: %s", ErrChainBroken, e.Seq, e.Reason)
}

// Unwrap returns ErrChainBroken.
func (e *ChainBrokenError) Unwrap() error { return ErrChainBroken }

// ChainPinError reports a pinned head the log does not extend, or one it
// cannot vouch for: a pin taken before a salvage hole (Hole) never vouches
// for the records after it. It wraps ErrChainPinMismatch.
type ChainPinError struct {
	Pin    ChainPin
	Got    ChainHash // the log's chain value at Pin.Seq (zero when it has none)
	Hole   SeqRanges // the salvage hole the pin cannot vouch across (empty for another mismatch)
	Reason string
}

func (e *ChainPinError) Error() string {
	return fmt.Sprintf("%s: pin %d: %s", ErrChainPinMismatch, e.Pin.Seq, e.Reason)
}

// Unwrap returns ErrChainPinMismatch.
func (e *ChainPinError) Unwrap() error { return ErrChainPinMismatch }

// ChainRestartedError reports that the hash chain restarts after the
// first hole a salvage recorded: the records Lost are gone and the chain
// is taken up again from the link of record At (0: no chained record
// follows the hole). Holes counts every hole the walk found. The records
// from At on are tied to each other but to nothing before the hole: only
// a head pinned after the last hole, which the log still extends, vouches
// for them. It wraps ErrChainRestarted.
type ChainRestartedError struct {
	Lost  SeqRanges
	At    uint64
	Holes int
}

func (e *ChainRestartedError) Error() string {
	at := "no chained record follows it"
	if e.At != 0 {
		at = fmt.Sprintf("the chain restarts at seq %d", e.At)
	}
	more := ""
	if e.Holes > 1 {
		more = fmt.Sprintf(" (%d holes in all)", e.Holes)
	}
	return fmt.Sprintf("%s: seq %s lost to a salvage; %s%s: no link ties the records after the hole to the "+
		"records before it, so only a head pinned after the last hole that the log still extends vouches for them; "+
		"accept salvage holes explicitly to pass", ErrChainRestarted, e.Lost, at, more)
}

// Unwrap returns ErrChainRestarted.
func (e *ChainRestartedError) Unwrap() error { return ErrChainRestarted }

// StoreLogMissingError reports a store directory whose log.db is missing
// or empty while other files remain. It wraps ErrStoreLogMissing.
// StoreFiles is false when none of those files is a store's (lease.toml,
// read.sqlite, snapshots/, …): a directory that never was a store, which
// the tools report as not_a_store (see engine.IsStore).
type StoreLogMissingError struct {
	// Held: a process still holds the store (its administrative channel
	// answers): the log it has open is the only copy of the records, and
	// its channel can still write a backup of it.
	Held       bool
	Dir        string
	Found      []string // what the directory holds instead (names, sorted)
	Empty      bool     // log.db exists but has zero length, or is not a file
	Kind       string   // what log.db is when it is not a file (FileKind: "FIFO", "directory", …); "" else
	StoreFiles bool     // Found includes a store's file (or log.db is empty)
}

func (e *StoreLogMissingError) Error() string {
	what := "no " + LogFileName
	switch {
	case e.Kind != "":
		what = fmt.Sprintf("a %s named %s, not a file", e.Kind, LogFileName)
	case e.Empty:
		what = "an empty " + LogFileName
	}
	holds := "holds nothing"
	if len(e.Found) > 0 {
		holds = "holds " + strings.Join(e.Found, ", ")
	}
	if e.Held {
		return fmt.Sprintf("%s: %s %s but %s, and a process still holds the log: it has the removed or replaced %s open, "+
			"the only copy of the store's records, lost when it stops. Run `hikoutei backup --dir %s --out FILE` before stopping it "+
			"(the process writes a full copy of its open log, verified), then `hikoutei restore --from FILE --to NEWDIR`",
			ErrStoreLogMissing, e.Dir, holds, what, LogFileName, e.Dir)
	}
	if !e.StoreFiles {
		return fmt.Sprintf("%s: %s %s but none of a store's files (%s, lease.toml, read.sqlite): it is not a store directory "+
			"and nothing was created there; open an empty or new directory to start a store", ErrStoreLogMissing, e.Dir, holds, LogFileName)
	}
	return fmt.Sprintf("%s: %s %s but %s: the log is the store's only source of truth and nothing was created; "+
		"restore %s from a backup (the read model and snapshots are projections of it, not substitutes), "+
		"or move the directory's contents away to start a new store there", ErrStoreLogMissing, e.Dir, holds, what, LogFileName)
}

// Unwrap returns ErrStoreLogMissing.
func (e *StoreLogMissingError) Unwrap() error { return ErrStoreLogMissing }

// RestoreIncompleteError is a directory holding only what a restore
// interrupted before it installed log.db leaves: nothing in it is a
// store, and the next step is to remove it and restore again.
type RestoreIncompleteError struct {
	Dir   string
	Found []string // what it holds (names, sorted; folders end in /)
	// Running is the id of the process whose copy of the log it holds
	// when that process still runs (a restore under way, not an
	// interrupted one: the next step is to wait); 0 otherwise.
	Running int
}

func (e *RestoreIncompleteError) Error() string {
	if e.Running > 0 {
		return fmt.Sprintf("%s: %s holds %s and no %s yet: a restore into it runs (process %d) and has not verified "+
			"and installed the log it copies; wait for it to end, and remove nothing there meanwhile", ErrRestoreIncomplete,
			e.Dir, strings.Join(e.Found, ", "), LogFileName, e.Running)
	}
	return fmt.Sprintf("%s: %s holds %s and no %s: a restore into it was interrupted (killed, or the machine stopped) before "+
		"the log it copied was verified and installed, so nothing in it is a store and nothing was created there; "+
		"remove the directory (rm -r %s) and run hikoutei restore again", ErrRestoreIncomplete, e.Dir, strings.Join(e.Found, ", "),
		LogFileName, e.Dir)
}

// Unwrap returns ErrRestoreIncomplete.
func (e *RestoreIncompleteError) Unwrap() error { return ErrRestoreIncomplete }

// CorruptCheck names the check that found log.db damaged.
type CorruptCheck string

// The checks of *LogCorruptError.
const (
	CheckFile     CorruptCheck = "file"     // empty, unreadable, or shorter than the high-water mark
	CheckMeta     CorruptCheck = "meta"     // meta pages: magic, version, checksum, page size, page ids
	CheckFreelist CorruptCheck = "freelist" // the freelist page and the page ids it lists
	CheckPage     CorruptCheck = "page"     // a B+tree page: id, type, element count, bounds, key order, references
	CheckBucket   CorruptCheck = "bucket"   // a bucket of the log is missing or is not a bucket
	CheckHead     CorruptCheck = "head"     // the head in meta disagrees with the records
	CheckSequence CorruptCheck = "sequence" // a sequence key is malformed, out of order or past the head
	CheckBbolt    CorruptCheck = "bbolt"    // bbolt's own consistency check (tx.Check)
	CheckPanic    CorruptCheck = "panic"    // bbolt panicked or faulted reading the file
)

// LogCorruptError says what is damaged in log.db. It wraps ErrLogCorrupt.
type LogCorruptError struct {
	Check  CorruptCheck
	Page   uint64 // the page the damage was found on (0: not page-specific)
	Seq    uint64 // the sequence concerned (0: none)
	Detail string
}

func (e *LogCorruptError) Error() string {
	s := fmt.Sprintf("%s: %s check", ErrLogCorrupt, e.Check)
	if e.Page != 0 {
		s += fmt.Sprintf(": page %d", e.Page)
	}
	if e.Seq != 0 {
		s += fmt.Sprintf(": seq %d", e.Seq)
	}
	return s + ": " + e.Detail
}

// Unwrap returns ErrLogCorrupt.
func (e *LogCorruptError) Unwrap() error { return ErrLogCorrupt }

// VersionConflictError reports a failed expected-version check on one stream.
// It wraps ErrVersionConflict.
type VersionConflictError struct {
	Stream   string
	Expected uint64
	Actual   uint64
}

func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("%s: stream %q expected version %d, actual %d", ErrVersionConflict, e.Stream, e.Expected, e.Actual)
}

// Unwrap returns ErrVersionConflict.
func (e *VersionConflictError) Unwrap() error { return ErrVersionConflict }

// LeaseHeldError names the live holder of a lease. It wraps ErrLeaseHeld.
type LeaseHeldError struct {
	Role     string
	WriterID string
	Epoch    uint64
	// TakeoverAt is the earliest instant at which the takeover rule could
	// allow a takeover if the holder stops renewing.
	TakeoverAt string
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%s: role %q held by writer %s at epoch %d (takeover possible from %s if it stops renewing)",
		ErrLeaseHeld, e.Role, e.WriterID, e.Epoch, e.TakeoverAt)
}

// Unwrap returns ErrLeaseHeld.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// StoreLockedError names the process holding a store, as read from its
// lease.toml. It wraps ErrStoreLocked.
type StoreLockedError struct {
	Dir    string
	Holder string // "host pid N writer W", or a note when lease.toml is absent/invalid
	// Operation is the holder's declared operation (e.g. "serve", "demo").
	Operation string
}

func (e *StoreLockedError) Error() string {
	return fmt.Sprintf("%s: store %s is held by %s (operation %q)", ErrStoreLocked, e.Dir, e.Holder, e.Operation)
}

// Unwrap returns ErrStoreLocked.
func (e *StoreLockedError) Unwrap() error { return ErrStoreLocked }
