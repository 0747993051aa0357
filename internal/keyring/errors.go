package keyring

import "errors"

// Sentinel errors of the key file. Each has a stable snake_case code as
// its text.
var (
	// ErrKeysLost (personal_keys_lost): a sealed value names a key file
	// this store no longer has (keys.db deleted, replaced or restored
	// from elsewhere), or a key the key file never held and no erasure
	// destroyed: the value is unreadable, and it is reported, never shown
	// as empty.
	ErrKeysLost = errors.New("personal_keys_lost")
	// ErrKeyFile (personal_key_file): the key file could not be read or
	// written (I/O error, damaged file, wrong permissions).
	ErrKeyFile = errors.New("personal_key_file")
	// ErrSealedValueMalformed (sealed_value_malformed): a value carries
	// the sealed prefix but is not a sealed value this build can open, or
	// its authentication failed (it was moved to another field, entity or
	// subject, or altered).
	ErrSealedValueMalformed = errors.New("sealed_value_malformed")
)
