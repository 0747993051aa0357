package wakehook

import "errors"

// Refusals of a wake request and configuration errors. Each text is the
// stable code the handler answers with.
var (
	// ErrMalformed (wake_malformed): the request is not a POST, or its
	// X-Hikoutei-Wake header is missing or does not parse.
	ErrMalformed = errors.New("wake_malformed")
	// ErrSignature (wake_signature_invalid): the signature does not verify
	// with the shared secret.
	ErrSignature = errors.New("wake_signature_invalid")
	// ErrStale (wake_stale): the signed timestamp is further from now than
	// the window allows.
	ErrStale = errors.New("wake_stale")
	// ErrReplayed (wake_replayed): the nonce was already accepted within
	// the window.
	ErrReplayed = errors.New("wake_replayed")
	// ErrBusy (wake_busy): the nonce memory is full of nonces still within
	// the window; the pollers' timers carry the edit.
	ErrBusy = errors.New("wake_busy")
	// ErrStandby (wake_standby): the request verified, but the store is
	// not the active writer (a warm standby, or a primary another writer
	// displaced): its pollers do not run, nothing polls.
	ErrStandby = errors.New("wake_standby")
	// ErrSyncNotRunning (wake_sync_not_running): the request verified, but
	// the store's pollers are not running (sync stopped, not provisioned
	// yet, left to the caller, or the store closed): nothing polls.
	ErrSyncNotRunning = errors.New("wake_sync_not_running")
	// ErrSecret (wake_secret_invalid): the shared secret is shorter than
	// MinSecretBytes.
	ErrSecret = errors.New("wake_secret_invalid")
	// ErrKeyFile (wake_key_file_invalid): the key file cannot be created or
	// read, is not a regular file, is accessible by group or others, or
	// holds no usable secret.
	ErrKeyFile = errors.New("wake_key_file_invalid")
)
