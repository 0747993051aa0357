package events

// Erasure events: a data subject's personal values were made unreadable
// by destroying their key (docs/erasure.md). Stream "erasures".
const (
	TypeSubjectErased Type = "subject.erased"
)

// ErasureStream holds the subject.erased events.
const ErasureStream = "erasures"

// SubjectErased records that a data subject was erased: the data key
// that sealed their personal field values is destroyed right after this
// event commits, so every record of the log keeps its bytes (the chain
// still verifies) while the values it sealed can no longer be read.
// Readers see the erased marker in their place from then on, whatever
// point of the history they read.
type SubjectErased struct {
	// Subject is the subject's keyed digest (32 hex digits: an HMAC of
	// the subject under the store's key-file secret), never the subject
	// in clear. The same subject always has the same digest in one store.
	Subject string `canon:"subject,required"`
	// Generation is the subject's key generation that was destroyed
	// (a subject that receives personal values again after an erasure
	// gets a new key, of the next generation).
	Generation uint64 `canon:"generation"`
	// Actor is who asked for the erasure: "application" (Store.Erase)
	// or "cli" (hikoutei erase).
	Actor Actor `canon:"actor,omitempty"`
}

// EventType implements Payload.
func (SubjectErased) EventType() Type { return TypeSubjectErased }

func init() {
	register[SubjectErased](1, ErasureStream)
}
