package events

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ValueResolver fills in the values of effect.queued records that refer
// to the entity.persisted of their commit (EffectQueued.ValuesOf) while
// events are read in log order: it remembers the entity.persisted events
// of the commit being read. Log reads use it (falling back to the stream
// index for a reference to a persisted event read before); a reader of
// records shipped elsewhere (a mirror) uses it on the events in order.
type ValueResolver struct {
	commit    string
	persisted map[refKey]EntityPersisted // this commit's, by stream and version
}

// NewValueResolver returns an empty resolver.
func NewValueResolver() *ValueResolver {
	return &ValueResolver{persisted: map[refKey]EntityPersisted{}}
}

// Resolve notes e if it is an entity.persisted and fills in e's values if
// it is an effect.queued that refers to one. Errors: *PayloadError
// (ErrMalformedPayload) for a reference to a persisted event this
// resolver has not seen in e's commit.
func (r *ValueResolver) Resolve(e *Event) error {
	return r.resolve(e, nil)
}

// resolve is Resolve, looking a reference it has not seen up with lookup
// (may be nil).
func (r *ValueResolver) resolve(e *Event, lookup func(stream string, version uint64) (Event, bool, error)) error {
	if e.Commit != r.commit {
		r.commit = e.Commit
		clear(r.persisted)
	}
	switch p := e.Payload.(type) {
	case EntityPersisted:
		r.persisted[refKey{e.Stream, e.Version}] = p
	case EffectQueued:
		if p.ValuesOf == 0 || p.Values != nil {
			return nil
		}
		stream := EntityStream(p.Entity, p.ID)
		src, ok := r.persisted[refKey{stream, p.ValuesOf}]
		if !ok && lookup != nil {
			ev, found, err := lookup(stream, p.ValuesOf)
			if err != nil {
				return err
			}
			src, ok = ev.Payload.(EntityPersisted)
			ok = ok && found && ev.Commit == e.Commit
		}
		if !ok {
			return &PayloadError{Seq: e.Seq, Type: e.Type(), Reason: fmt.Sprintf("values_of %d: no %s at %s version %d in commit %s", p.ValuesOf, TypeEntityPersisted, stream, p.ValuesOf, e.Commit)}
		}
		p.Values = p.ValuesFrom(src)
		var err error
		if p, err = p.withDerivedHash(); err != nil {
			return &PayloadError{Seq: e.Seq, Type: e.Type(), Reason: fmt.Sprintf("values_of %d: %v", p.ValuesOf, err)}
		}
		e.Payload = p
	}
	return nil
}

// refKey names an event by stream and version.
type refKey struct {
	stream  string
	version uint64
}

// eventAt reads the event at version of stream through the links or the
// stream index, or from the segments when neither holds it (sealed).
func (l *Log) eventAt(stream string, version uint64) (Event, bool, error) {
	var at eventLookup
	err := l.view(func(tx *bolt.Tx) (err error) {
		at, err = l.eventAtTx(tx, stream, version)
		return err
	})
	switch {
	case err != nil:
		return Event{}, false, err
	case at.inSegments:
		return l.sealedEventAt(stream, version)
	case at.sealedSeq == 0:
		return at.out, at.found, nil
	}
	evs := []Event{{Seq: at.sealedSeq}}
	if err := (&sealedLookup{l: l}).fill(evs, []int{0}); err != nil || evs[0].Payload == nil {
		return Event{}, false, err
	}
	return evs[0], true, nil
}

// eventLookup is what a read transaction found of an event: the event
// (found), or that it is sealed: somewhere in the segments (inSegments),
// or at sealedSeq (an index entry an earlier build kept).
type eventLookup struct {
	out        Event
	found      bool
	inSegments bool
	sealedSeq  uint64
}

// eventAtTx looks the event at version of stream up in tx: through the
// links, then the stream index.
func (l *Log) eventAtTx(tx *bolt.Tx, stream string, version uint64) (at eventLookup, err error) {
	v, last := streamHead(tx.Bucket(bucketStreams), stream)
	w, err := walkLinks(tx, version, v, last)
	switch {
	case err != nil || version > v:
		return at, err
	case w.next < version:
		r := w.recs[len(w.recs)-1]
		at.out, err = l.decode(u64(r.seq), r.raw, nil)
		at.found = err == nil
		return at, err
	case w.seq != 0:
		at.inSegments = true
		return at, nil
	}
	seq := tx.Bucket(bucketIndex).Get(indexKey(stream, version))
	if len(seq) != 8 {
		at.inSegments = version <= v
		return at, nil
	}
	raw := tx.Bucket(bucketEvents).Get(seq)
	if raw == nil { // sealed: read from its segment after this transaction
		at.sealedSeq = binary.BigEndian.Uint64(seq)
		return at, nil
	}
	at.out, err = l.decode(seq, raw, nil)
	at.found = err == nil
	return at, err
}

// sealedEventAt reads the event at version of stream from the segments.
func (l *Log) sealedEventAt(stream string, version uint64) (Event, bool, error) {
	evs, err := l.sealedStream(stream, version, version+1, 0)
	if err != nil || len(evs) == 0 {
		return Event{}, false, err
	}
	return evs[0], true, nil
}
