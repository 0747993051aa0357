package aggregates

import (
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// CodeWriteMisdirected is the failure code of an effect whose write landed
// on another row (C06).
const CodeWriteMisdirected = "write_misdirected"

// Misdirected is what a dispatch learned of an update whose cells landed
// on another row (C06): a person moved rows between the dispatch's read
// and its write, and the write's own response showed another anchor at
// the written row. SheetRow is that row (1-based), DisplacedAnchor its
// anchor ("" when it has none), Columns the cells written there, RowHash
// the row's full visible hash right after the write.
type Misdirected struct {
	SheetRow        int
	DisplacedAnchor string
	Columns         []string
	RowHash         string
}

// Canonical is a record's current values as the store knows them (Exists
// false once removed or never created).
type Canonical struct {
	Values map[string]any
	Exists bool
}

// Displaced names the record whose row received a misdirected write of e:
// the same tab shows the same entity, and a row's anchor is its record's
// id. ok is false for a row without an anchor, and on the conflicts tab
// (its rows are conflicts, not records).
func Displaced(e Effect, m Misdirected, sheet Sheet) (entity, id string, ok bool) {
	if e.Entity == "" || m.DisplacedAnchor == "" || m.DisplacedAnchor == e.Target.Anchor || e.Target.Tab == sheet.ConflictsTab() {
		return "", "", false
	}
	return e.Entity, m.DisplacedAnchor, true
}

// misdirectedQueues decides what a misdirected update e needs queued
// (C06): requeue writes the intended row's cells again from canonical
// state (intended), guarded by that row's last applied write, queued at
// its row's next stream_sequence so later effects keep their order;
// repair rewrites the displaced row's overwritten cells from its record's
// canonical state (displaced), guarded by the row as the write left it.
// Either is nil when there is no record to take the values from. A
// conflicts-tab row (an audit row, not a record) is re-queued with e's own
// values and its displaced row is left to the evidence.
func misdirectedQueues(e Effect, m Misdirected, sheet Sheet, intended, displaced Canonical) (requeue, repair *Queue) {
	switch {
	case e.Target.Tab == sheet.ConflictsTab():
		requeue = &Queue{Target: e.Target, Op: events.OpUpdate, Values: e.Values, Entity: e.Entity, ID: e.EntityID}
	case intended.Exists && len(m.Columns) > 0:
		requeue = &Queue{Target: e.Target, Op: events.OpUpdate, Values: cellsOf(m.Columns, intended.Values),
			Entity: e.Entity, ID: e.EntityID}
	}
	entity, id, ok := Displaced(e, m, sheet)
	if ok && displaced.Exists && len(m.Columns) > 0 {
		repair = &Queue{Target: sheet.Target(e.Target.Tab, m.DisplacedAnchor), Op: events.OpUpdate,
			Values: cellsOf(m.Columns, displaced.Values), Entity: entity, ID: id, ExpectedHash: m.RowHash}
	}
	return requeue, repair
}

// cellsOf picks the columns' canonical values, a blank (nil) for a value
// the record does not hold: every overwritten cell is rewritten.
func cellsOf(columns []string, vals map[string]any) map[string]any {
	out := make(map[string]any, len(columns))
	for _, c := range columns {
		out[c] = vals[c]
	}
	return out
}

// decideMisdirected settles the claim of e, whose write landed on another
// row (C06): e fails terminally with CodeWriteMisdirected (its receipt was
// written with the batch and proves nothing) and is superseded by the
// re-queued effect requeued ("" when none), in one decision on e's stream;
// a sync.write_misdirected event on the target's sync stream is the
// evidence naming the overwritten cells (never their values) and the
// repair effect ("" when none). Errors: ErrStaleClaim.
func decideMisdirected(e Effect, token string, m Misdirected, sheet Sheet, requeued, repair string, now time.Time) ([]Decision, error) {
	if err := currentClaim(e, token); err != nil {
		return nil, err
	}
	stream := events.EffectStream(e.ID)
	settle := Decision{Stream: stream, ExpectedVersion: e.Version, Events: []events.Event{
		events.New(stream, events.EffectFailed{EffectID: e.ID, ClaimToken: token, Code: CodeWriteMisdirected, Terminal: true}, now),
		events.New(stream, events.EffectSuperseded{EffectID: e.ID, By: requeued}, now),
	}}
	ev := events.SyncWriteMisdirected{Target: e.Target.Spreadsheet, EffectID: e.ID, Tab: e.Target.Tab, Anchor: e.Target.Anchor,
		SheetRow: int64(m.SheetRow), DisplacedAnchor: m.DisplacedAnchor, Requeued: requeued, Repair: repair}
	if entity, id, ok := Displaced(e, m, sheet); ok {
		ev.Entity, ev.ID = entity, id
	}
	for _, c := range m.Columns {
		ev.Cells = append(ev.Cells, events.MisdirectedCell{Column: c})
	}
	sync := events.SyncStream(e.Target.Spreadsheet)
	evidence := Decision{Stream: sync, ExpectedVersion: events.AnyVersion, Events: []events.Event{events.New(sync, ev, now)}}
	return []Decision{settle, evidence}, nil
}

// MisdirectedClaim is one misdirected write to settle: the claimed effect
// and its token, where the write landed, and the canonical values of the
// intended record and of the displaced row's record (see Displaced).
type MisdirectedClaim struct {
	Effect    Effect
	Token     string
	Where     Misdirected
	Intended  Canonical
	Displaced Canonical
}

// QueueFunc decides q at its row's next stream_sequence (the caller keeps
// the outbox versions, this commit's own queues included) and returns the
// decision and the effect's id.
type QueueFunc func(q Queue) (Decision, string, error)

// DecideMisdirectedAll settles the misdirected writes of one dispatch in
// one commit (C06). Every displaced row's repair is queued before any
// re-queue: when a sort moved several written rows, a row can be both
// displaced (another update landed on it) and intended (its own update
// landed elsewhere); its repair, guarded by the row as the writes left
// it, must come first, so its re-queue then finds the repair's write as
// the row's last applied one. Stale claims are skipped and reported
// (ErrStaleClaim); the others get misdirectedQueues and decideMisdirected.
func DecideMisdirectedAll(claims []MisdirectedClaim, sheet Sheet, queue QueueFunc, now time.Time) ([]Decision, []error) {
	var live []MisdirectedClaim
	var stale []error
	for _, c := range claims {
		if err := currentClaim(c.Effect, c.Token); err != nil {
			stale = append(stale, err)
			continue
		}
		live = append(live, c)
	}
	var out []Decision
	requeued, repaired := make([]string, len(live)), make([]string, len(live))
	requeues := make([]*Queue, len(live))
	for i, c := range live {
		var repair *Queue
		requeues[i], repair = misdirectedQueues(c.Effect, c.Where, sheet, c.Intended, c.Displaced)
		d, err := queueIf(repair, queue, &repaired[i])
		if err != nil {
			return nil, append(stale, err)
		}
		out = append(out, d...)
	}
	for i := range live {
		d, err := queueIf(requeues[i], queue, &requeued[i])
		if err != nil {
			return nil, append(stale, err)
		}
		out = append(out, d...)
	}
	for i, c := range live {
		ds, err := decideMisdirected(c.Effect, c.Token, c.Where, sheet, requeued[i], repaired[i], now)
		if err != nil {
			return nil, append(stale, err)
		}
		out = append(out, ds...)
	}
	return out, stale
}

// queueIf decides q (nil: nothing) and stores its effect id in *id.
func queueIf(q *Queue, queue QueueFunc, id *string) ([]Decision, error) {
	if q == nil {
		return nil, nil
	}
	d, qid, err := queue(*q)
	if err != nil {
		return nil, err
	}
	*id = qid
	return []Decision{d}, nil
}

// errMisdirectedWithout is returned for an OutcomeMisdirected without its
// description.
var errMisdirectedWithout = fmt.Errorf("%w: a misdirected outcome without its row", ErrInvalidCommand)

// MisdirectionOf returns the description of a misdirected outcome.
// Errors: ErrInvalidCommand when o is misdirected without one.
func MisdirectionOf(o Outcome) (Misdirected, error) {
	if o.Misdirected == nil {
		return Misdirected{}, errMisdirectedWithout
	}
	return *o.Misdirected, nil
}
