package aggregates

import (
	"bytes"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// DecideSchema records the entity shapes a store is opened with when they
// differ from the last recorded ones (last, nil when none; version is the
// schema stream's), so that tools can open the store without its Go types.
// No shapes, or the same shapes, record nothing.
func DecideSchema(last *events.SchemaDeclared, version uint64, shapes []events.EntityShape, now time.Time) (Decision, error) {
	d := Decision{Stream: events.SchemaStream, ExpectedVersion: version}
	if len(shapes) == 0 {
		return d, nil
	}
	want := events.SchemaDeclared{Entities: shapes}
	if last != nil {
		same, err := sameCanonical(*last, want)
		if err != nil || same {
			return d, err
		}
	}
	d.Events = []events.Event{events.New(d.Stream, want, now)}
	return d, nil
}

func sameCanonical(a, b events.Payload) (bool, error) {
	ma, err := events.EncodePayload(a)
	if err != nil {
		return false, err
	}
	mb, err := events.EncodePayload(b)
	if err != nil {
		return false, err
	}
	ea, err := events.EncodeCanonical(ma)
	if err != nil {
		return false, err
	}
	eb, err := events.EncodeCanonical(mb)
	return err == nil && bytes.Equal(ea, eb), err
}

// DecideDivergence records that a sync target's authority stopped naming
// this writer (the authority divergence check, I05): dispatching to it stopped.
func DecideDivergence(target, reason string, now time.Time) Decision {
	stream := events.SyncStream(target)
	return Decision{Stream: stream, ExpectedVersion: events.AnyVersion,
		Events: []events.Event{events.New(stream, events.SyncDiverged{Target: target, Reason: reason}, now)}}
}
