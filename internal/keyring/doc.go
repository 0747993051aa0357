// Package keyring is a store's key file (keys.db): one random data key per
// data subject, found by a keyed digest of the subject (an HMAC under the
// file's own secret, never the subject in clear), and the sealing of
// personal field values with it (AES-256-GCM, the nonce synthesised from
// the key, the associated data and the value, so the same value of the
// same field of the same subject always seals to the same text). Erasing a
// subject destroys its key and rewrites the file, so no page of keys.db
// keeps it. The key file is not part of the log and not part of a backup
// (docs/erasure.md).
package keyring
