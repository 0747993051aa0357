// Package loggen writes long store logs quickly, for the benchmarks and
// campaigns that need a store with a history (Open at 10^7
// events, `audit verify` over a year of simulated history). The store is
// a real one: engine.Open creates it and records its shapes; the events
// are appended through events.Log in large transactions without fsync
// (valid chained records, stream versions and index entries, exactly as
// the writer appends them), then engine.Open brings the read model up to
// the head. Nothing in the library imports it.
package loggen

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Entity is the generated store's one entity: Item {id (key), n, name}.
const Entity = "Item"

// Shape is Item's declared shape.
var Shape = events.EntityShape{Name: Entity, PK: "id", Fields: []events.FieldShape{
	{Name: "n", Kind: events.KindInt, Owner: events.OwnerSystem},
	{Name: "name", Kind: events.KindString, Owner: events.OwnerSystem},
}}

// Options configures Generate. Zero values take the defaults.
type Options struct {
	Keys int // distinct entities updated in turn (default 5,000)
	Unit int // events per unit of work (default 100)
	// Batch is the events per log transaction (default 20,000).
	Batch int
	// Start is the clock reading of the first generated event; each event
	// is Step later than the one before (default: a year before now, and a
	// year spread over the events).
	Start time.Time
	Step  time.Duration
	// Progress, when set, hears of the events appended so far.
	Progress func(done, total uint64)
}

func (o Options) withDefaults(n uint64) Options {
	if o.Keys <= 0 {
		o.Keys = 5000
	}
	if o.Unit <= 0 {
		o.Unit = 100
	}
	if o.Batch <= 0 {
		o.Batch = 20000
	}
	if o.Start.IsZero() {
		o.Start = time.Now().Add(-365 * 24 * time.Hour).UTC()
	}
	if o.Step <= 0 && n > 0 {
		o.Step = max(time.Duration(int64(365*24*time.Hour)/int64(n)), time.Microsecond)
	}
	return o
}

// Generate appends n updates of Item to the store at dir (created when
// it does not exist; an existing one must have been made by Generate),
// then opens it once so that its read model is at the head, and closes
// it. It returns the log head.
func Generate(dir string, n uint64, opts Options) (uint64, error) {
	opts = opts.withDefaults(n)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := engine.Config{NoSync: true, Logger: quiet, HeartbeatInterval: -1}
	e, err := engine.Open(dir, cfg, engine.Shapes(Shape))
	if err != nil {
		return 0, err
	}
	if err := e.Close(); err != nil {
		return 0, err
	}
	if err := appendUpdates(dir, n, opts); err != nil {
		return 0, err
	}
	if e, err = engine.Open(dir, cfg, engine.Shapes(Shape)); err != nil {
		return 0, err
	}
	head, err := e.Log().Head()
	return head, errorsJoin(err, e.Close())
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// appendUpdates appends n entity.persisted events through the log,
// opts.Batch per transaction, in units of opts.Unit.
func appendUpdates(dir string, n uint64, opts Options) error {
	w, err := events.OpenWriter(dir, events.WriterOptions{Log: events.Options{NoSync: true}, HeartbeatInterval: -1, Operation: "loggen"})
	if err != nil {
		return err
	}
	defer w.Close()
	versions := make([]uint64, opts.Keys)
	streams := make([]string, opts.Keys)
	for k := range streams {
		streams[k] = events.EntityStream(Entity, key(k))
		v, err := w.Log().StreamVersion(streams[k])
		if err != nil {
			return err
		}
		versions[k] = v
	}
	head, err := w.Log().Head()
	if err != nil {
		return err
	}
	at := opts.Start
	var done uint64
	next := int(head) % opts.Keys
	for done < n {
		batch := min(n-done, uint64(opts.Batch))
		var units []events.Unit
		for i := uint64(0); i < batch; i += uint64(opts.Unit) {
			u := events.Unit{}
			for j := uint64(0); j < uint64(opts.Unit) && i+j < batch; j++ {
				k := next
				next = (next + 1) % opts.Keys
				versions[k]++
				v := versions[k]
				p := events.EntityPersisted{Entity: Entity, ID: key(k), Created: v == 1,
					Fields:    map[string]any{"n": int64(v)},
					Revisions: map[string]uint64{"n": v}}
				if v == 1 {
					p.Fields["name"] = "item " + key(k)
					p.Revisions["name"] = 1
				}
				u.Streams = append(u.Streams, events.StreamAppend{Stream: streams[k], ExpectedVersion: events.AnyVersion,
					Events: []events.Event{{At: at, Payload: p}}})
				at = at.Add(opts.Step)
			}
			units = append(units, u)
		}
		if err := w.RenewIfDue(); err != nil {
			return err
		}
		res, err := w.Append(units...)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("generated unit: %w", r.Err)
			}
		}
		done += batch
		if opts.Progress != nil {
			opts.Progress(done, n)
		}
	}
	return nil
}

func key(k int) string { return "k" + strconv.Itoa(k) }
