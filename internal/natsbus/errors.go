package natsbus

import (
	"errors"
	"fmt"
)

// Sentinel errors of the natsbus package. Each carries a stable snake_case
// code as its text; callers match them with errors.Is. Returned errors wrap
// the sentinel and add detail ("nats_config_invalid: store name ...").
var (
	// ErrConfigInvalid: Config is unusable (bad store name, Listen together
	// with URL, a missing creds/TLS file, JetStream without StoreDir, ...).
	ErrConfigInvalid = errors.New("nats_config_invalid")
	// ErrServerStartFailed: the embedded nats-server could not be created or
	// did not become ready (or JetStream was requested and did not start).
	ErrServerStartFailed = errors.New("nats_server_start_failed")
	// ErrServerNotLinked: the Bus needs an embedded server (no URL) and
	// Config.Server is nil (the program did not link package natsserver).
	ErrServerNotLinked = errors.New("nats_server_not_linked")
	// ErrConnectFailed: the client connection (in-process or to Config.URL)
	// could not be established.
	ErrConnectFailed = errors.New("nats_connect_failed")
	// ErrClosed: the Bus was used after Close (subscriptions, Mirror).
	// Publishing hints or notifications after Close is a silent no-op.
	ErrClosed = errors.New("nats_bus_closed")
	// ErrUnavailable: the connection is not currently established
	// (disconnected, reconnecting or closed); returned by Mirror, never by
	// the hint and notification publishers.
	ErrUnavailable = errors.New("nats_unavailable")
	// ErrSubscribeFailed: a subscription could not be created.
	ErrSubscribeFailed = errors.New("nats_subscribe_failed")
	// ErrNotificationInvalid: a ConflictNotification is missing ConflictID,
	// has a Resolution on "opened" or none on "resolved", names another
	// store, or cannot be encoded as JSON (e.g. a NaN value).
	ErrNotificationInvalid = errors.New("nats_notification_invalid")
	// ErrMirrorDisabled: Mirror was called but Config.Mirror.Enabled is false.
	ErrMirrorDisabled = errors.New("nats_mirror_disabled")
	// ErrMirrorPublishFailed: the JetStream mirror stream could not be
	// created, or an event was not acknowledged by the stream in time.
	ErrMirrorPublishFailed = errors.New("nats_mirror_publish_failed")
	// ErrMirrorReadFailed: ReadMirror could not connect, find the stream or
	// consume it.
	ErrMirrorReadFailed = errors.New("nats_mirror_read_failed")
	// ErrMirrorCorrupt: a mirrored message has no valid Nats-Msg-Id header or
	// its record fails events.DecodeRecord (the error also matches
	// events.ErrCorruptRecord in the latter case).
	ErrMirrorCorrupt = errors.New("nats_mirror_corrupt")
	// ErrMirrorGap: ReadMirror delivered every message but the sequence of
	// events had holes where stream messages were deleted. See
	// *MirrorGapError.
	ErrMirrorGap = errors.New("nats_mirror_gap")
	// ErrMirrorSequence: a mirrored record breaks the sequence chain: its
	// log seq is not above the previous one (duplicated or out of order), or
	// its stream position departs from the log-seq-to-stream-seq mapping
	// the publisher established. See *MirrorRecordError.
	ErrMirrorSequence = errors.New("nats_mirror_sequence")
	// ErrMirrorForged: a mirrored record is not signed, or not signed by the
	// store's mirror key (the pinned key, else the key of the first record
	// read). See *MirrorRecordError.
	ErrMirrorForged = errors.New("nats_mirror_forged")
	// ErrMirrorForeignRecord: the publisher found in its stream a record it
	// did not write: a duplicate acknowledgement for a record it had just
	// published whose stored content differs (someone else published that
	// Nats-Msg-Id first), an acknowledgement at another stream position
	// than the next one, or a stream tail that is not this log's record.
	// The mirror stops there until an operator replaces the stream.
	ErrMirrorForeignRecord = errors.New("nats_mirror_foreign_record")
	// ErrListenUnauthenticated: Listen asks for a listener without
	// authentication on an address that is not loopback, or with no
	// authentication configured at all (see ListenAuth).
	ErrListenUnauthenticated = errors.New("nats_listen_unauthenticated")
	// ErrCredentialsFile: a generated credentials or signing key file
	// cannot be created or read, is not a regular file, is accessible by
	// group or others, or does not hold a valid seed. The error names the
	// file, never its content.
	ErrCredentialsFile = errors.New("nats_credentials_file_invalid")
)

// MirrorRecordError names the mirrored record a reader refused: the stream
// message and the log seq it claims. It wraps ErrMirrorSequence,
// ErrMirrorForged or ErrMirrorCorrupt.
type MirrorRecordError struct {
	Stream    string
	StreamSeq uint64 // position in the JetStream stream
	Seq       uint64 // log seq the record claims (0 = none readable)
	Reason    string
	Err       error // the sentinel
	Cause     error // e.g. the *events.CorruptRecordError (may be nil)
}

// Error returns "<code>: stream ...: message N (log seq S): reason".
func (e *MirrorRecordError) Error() string {
	return fmt.Sprintf("%s: stream %q: message %d (log seq %d): %s", e.Err, e.Stream, e.StreamSeq, e.Seq, e.Reason)
}

// Unwrap returns the sentinel and the cause, if any.
func (e *MirrorRecordError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// MirrorGapError reports that the events read from a mirror stream were not
// dense: after seq After the next event read was Next (> After+1). Gaps is
// the number of such holes in the whole stream. It wraps ErrMirrorGap.
type MirrorGapError struct {
	Stream string
	After  uint64 // last log sequence before the first hole
	Next   uint64 // first log sequence after the first hole
	Gaps   int    // number of holes found
}

// Error returns "nats_mirror_gap: stream ...: first hole between seq A and B (N hole(s))".
func (e *MirrorGapError) Error() string {
	return fmt.Sprintf("%s: stream %q: first hole between seq %d and %d (%d hole(s))", ErrMirrorGap, e.Stream, e.After, e.Next, e.Gaps)
}

// Unwrap returns ErrMirrorGap.
func (e *MirrorGapError) Unwrap() error { return ErrMirrorGap }
