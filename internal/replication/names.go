package replication

import (
	"fmt"
	"strings"

	"github.com/hikoutei/hikoutei-go/internal/natsbus"
)

// Names of the replication subjects, streams and buckets, in one place.
const (
	// SubjectPrefix precedes the store id in a log subject.
	SubjectPrefix = "hikoutei.repl."
	// StreamPrefix precedes the upper-cased store id in a log stream name.
	StreamPrefix = "HIKOUTEI_REPL_"
	// LeaseBucket is the KV bucket holding one writer lease per store
	// (key = store id).
	LeaseBucket = "HIKOUTEI_LEASES"
	// DefaultReplicas is the replication factor of the stream and bucket.
	DefaultReplicas = 3
)

// Subject returns the log subject of store: "hikoutei.repl.<store>".
func Subject(store string) string { return SubjectPrefix + store }

// StreamName returns the log stream of store: "HIKOUTEI_REPL_<STORE>"
// ('-' becomes '_'). Two store ids differing only in case or in '-'
// versus '_' share a stream name, which Open then refuses (the existing
// stream captures another subject).
func StreamName(store string) string {
	return StreamPrefix + strings.ToUpper(strings.ReplaceAll(store, "-", "_"))
}

// validateStore checks a store id (natsbus.ValidateStore's rules: A-Z
// a-z 0-9 _ -, bounded length), so it is one subject token and a KV key.
func validateStore(store string) error {
	if err := natsbus.ValidateStore(store); err != nil {
		return fmt.Errorf("%w: %v", ErrConfigInvalid, err)
	}
	return nil
}

// validateReplicas checks a replication factor (JetStream allows 1..5).
func validateReplicas(n int) error {
	if n < 1 || n > 5 {
		return fmt.Errorf("%w: replicas %d (allowed 1..5)", ErrConfigInvalid, n)
	}
	return nil
}
