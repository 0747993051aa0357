package effects

import (
	stdcmp "cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// MemOutboxConfig configures a MemOutbox.
type MemOutboxConfig struct {
	// Spreadsheet is the name of the one sync target the outbox serves
	// (default "sheets", the engine's default). Calls naming another
	// target find nothing.
	Spreadsheet string
	// Clock is the store clock every decision takes `now` from (default
	// the wall clock).
	Clock events.Clock
	// Fence is the writer identity mirrored into the spreadsheet (I05);
	// its Epoch is the lease epoch claims record.
	Fence sheetsio.Fence
	// Schema is the spreadsheet layout: which tabs show an entity and
	// their columns, as the engine derives them from its entity shapes
	// (an entity's Input tab shows its rows when it has a column that is
	// not a key). Commit and QueueUnsynced queue nothing for an entity it
	// does not lay out, and a correction of a tab it does not know writes
	// no column. Nil: no entity.
	Schema *layout.Schema
}

// MemOutbox is an in-memory Outbox, event-sourced like the engine: every
// method reads its state, asks aggregates for the decision (the claim
// order of aggregates.ClaimableHeads, aggregates.DecideClaim,
// DecideOutcome, DecideProbeRescheduled, DecideRecovered, Correction and
// DecideSupersede, DecideQueue, DecideDivergence, DecideMisdirectedAll
// (C06), and DecidePersist or
// DecideRemove for its entities, and DecideCoalesce for a change of a row
// whose pending tail it may merge into, I32), appends the decided events as one
// fenced unit (every stream's expected version checked, nothing applied
// unless all are) and folds their typed payloads into its state. It keeps
// no rule of its own. Safe for concurrent use.
//
// What it leaves out of the engine: it opens no conflicts and queues no
// acknowledge_system row reconcile (so a guard failure on a claimed effect
// settles as a conflict, never blocked_candidate), and it has no inbound
// side. After Displace every append fails like an append of a writer whose
// lease was taken over (events.ErrStaleWriterFence); as in the engine, a
// call that decides nothing appends nothing and so does not fail.
type MemOutbox struct {
	cfg   MemOutboxConfig
	sheet Sheet

	mu        sync.Mutex
	log       []events.Event
	versions  map[string]uint64             // stream → version
	fx        map[string]*aggregates.Effect // effect id → state
	queue     []string                      // effect ids in queue order
	tails     map[string]string             // binding → id of the row's last queued effect
	visible   map[string]string             // binding → full-row visible hash after its last applied write
	written   map[string]uint64             // binding → log sequence of its last applied write
	entities  map[string]*memEntity         // entity stream → state
	displaced bool
	commits   uint64
	claims    uint64
}

// memEntity is one entity as its events left it.
type memEntity struct {
	entity, id string
	state      aggregates.EntityState
	values     map[string]any // canonical values, the key included (nil once removed)
	lastSeq    uint64
}

// NewMemOutbox returns an empty MemOutbox.
func NewMemOutbox(cfg MemOutboxConfig) *MemOutbox {
	if cfg.Spreadsheet == "" {
		cfg.Spreadsheet = "sheets"
	}
	if cfg.Clock == nil {
		cfg.Clock = events.SystemClock{}
	}
	if cfg.Schema == nil {
		cfg.Schema, _ = layout.NewSchema()
	}
	return &MemOutbox{cfg: cfg, sheet: Sheet{Spreadsheet: cfg.Spreadsheet, Schema: cfg.Schema},
		versions: map[string]uint64{}, fx: map[string]*aggregates.Effect{}, visible: map[string]string{}, tails: map[string]string{},
		written: map[string]uint64{}, entities: map[string]*memEntity{}}
}

var _ Outbox = (*MemOutbox)(nil)

// ErrMemDisplaced is what Renew and every later append of a displaced
// MemOutbox fail with; it wraps events.ErrStaleWriterFence.
var ErrMemDisplaced = fmt.Errorf("%w: the writer lease was taken over (MemOutbox.Displace)", events.ErrStaleWriterFence)

// Now is the store clock (Outbox).
func (m *MemOutbox) Now() time.Time { return m.cfg.Clock.Now() }

// Fence is the configured writer identity (Outbox).
func (m *MemOutbox) Fence() sheetsio.Fence { return m.cfg.Fence }

// Renew fails once the outbox was displaced (Outbox, I04).
func (m *MemOutbox) Renew() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.displaced {
		return ErrMemDisplaced
	}
	return nil
}

// Displace takes the writer lease over: Renew and every later append
// fail with ErrMemDisplaced (events.ErrStaleWriterFence), as for an
// engine whose lease another writer acquired.
func (m *MemOutbox) Displace() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.displaced = true
}

// Claim claims up to n claimable heads of spreadsheet (Outbox, I07):
// each is returned as claimed, guarded by its queue-time expected hash or,
// for an update or delete without one, by the full-row hash of its row's
// last applied write (I06).
func (m *MemOutbox) Claim(spreadsheet string, n int) ([]aggregates.Effect, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	heads := aggregates.ClaimableHeads(m.effectsOf(spreadsheet, nil), now, max(n, 0))
	var ch aggregates.Changes
	guards := make([]string, len(heads))
	for i, fx := range heads {
		guards[i] = fx.ExpectedHash
		if guards[i] == "" && fx.Op != events.OpAppend {
			guards[i] = m.visible[fx.Target.Binding]
		}
		m.claims++
		d, err := aggregates.DecideClaim(fx, fmt.Sprintf("memclaim-%d", m.claims), uint64(m.cfg.Fence.Epoch), now)
		if err != nil {
			return nil, err
		}
		ch.AddDecision(d)
	}
	if err := m.appendChanges(ch, now, nil); err != nil {
		return nil, err
	}
	out := make([]aggregates.Effect, len(heads))
	for i, fx := range heads {
		out[i] = m.copyOf(fx.ID)
		out[i].ExpectedHash = guards[i]
	}
	return out, nil
}

// DueProbes returns up to n delivery_uncertain effects of spreadsheet
// whose probe is due, in queue order (Outbox, I08).
func (m *MemOutbox) DueProbes(spreadsheet string, n int) ([]aggregates.Effect, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	due := m.effectsOf(spreadsheet, func(e *aggregates.Effect) bool {
		return e.State == aggregates.EffectUncertain && !e.DueAt.After(now)
	})
	return due[:min(len(due), max(n, 0))], nil
}

// Settle records outcomes in one fenced unit (Outbox). A settlement whose
// claim is not current is skipped and reported (aggregates.ErrStaleClaim);
// the others are recorded. An unknown effect id fails the whole call.
func (m *MemOutbox) Settle(s []Settlement) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	for _, st := range s {
		if _, ok := m.fx[st.ID]; !ok {
			return fmt.Errorf("settle: unknown effect %s", st.ID)
		}
	}
	var ch aggregates.Changes
	var stale []error
	var misdirected []Settlement
	for _, st := range s {
		if st.Outcome.Kind == aggregates.OutcomeMisdirected {
			misdirected = append(misdirected, st)
			continue
		}
		d, err := aggregates.DecideOutcome(*m.fx[st.ID], st.ClaimToken, st.Outcome, false, now)
		if err != nil {
			stale = append(stale, err)
			continue
		}
		ch.AddDecision(d)
	}
	stale = append(stale, m.settleMisdirected(&ch, misdirected, map[string]uint64{}, now)...)
	return errors.Join(append(stale, m.appendChanges(ch, now, nil))...)
}

// settleMisdirected adds the settlements of misdirected writes (C06,
// aggregates.DecideMisdirectedAll) to ch and returns the stale claims.
// Callers hold m.mu.
func (m *MemOutbox) settleMisdirected(ch *aggregates.Changes, s []Settlement, next map[string]uint64, now time.Time) []error {
	var claims []aggregates.MisdirectedClaim
	var bad []error
	for _, st := range s {
		md, err := aggregates.MisdirectionOf(st.Outcome)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		fx := *m.fx[st.ID]
		c := aggregates.MisdirectedClaim{Effect: fx, Token: st.ClaimToken, Where: md, Intended: m.canonical(fx.Entity, fx.EntityID)}
		if entity, id, ok := aggregates.Displaced(fx, md, m.sheet); ok {
			c.Displaced = m.canonical(entity, id)
		}
		claims = append(claims, c)
	}
	queue := func(q aggregates.Queue) (aggregates.Decision, string, error) { return m.decideQueue(q, next, now) }
	ds, stale := aggregates.DecideMisdirectedAll(claims, m.sheet, queue, now)
	for _, d := range ds {
		ch.AddDecision(d)
	}
	return append(bad, stale...)
}

// canonical is an entity's current values. Callers hold m.mu.
func (m *MemOutbox) canonical(entity, id string) aggregates.Canonical {
	ent, ok := m.entities[events.EntityStream(entity, id)]
	if !ok || !ent.state.Exists {
		return aggregates.Canonical{}
	}
	return aggregates.Canonical{Values: ent.values, Exists: true}
}

// Reschedule records an inconclusive probe (Outbox, I08).
func (m *MemOutbox) Reschedule(id, token string, next time.Time, maxProbes int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fx, ok := m.fx[id]
	if !ok {
		return fmt.Errorf("reschedule: unknown effect %s", id)
	}
	now := m.Now()
	d, err := aggregates.DecideProbeRescheduled(*fx, token, maxProbes, next, now)
	if err != nil {
		return err
	}
	var ch aggregates.Changes
	ch.AddDecision(d)
	return m.appendChanges(ch, now, nil)
}

// RecoverProcessing turns every processing effect of spreadsheet into
// delivery_uncertain due at probeAt (Outbox).
func (m *MemOutbox) RecoverProcessing(spreadsheet string, probeAt time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	left := m.effectsOf(spreadsheet, func(e *aggregates.Effect) bool { return e.State == aggregates.EffectProcessing })
	var ch aggregates.Changes
	for _, fx := range left {
		d, err := aggregates.DecideRecovered(fx, probeAt, now)
		if err != nil {
			return 0, err
		}
		ch.AddDecision(d)
	}
	if err := m.appendChanges(ch, now, nil); err != nil {
		return 0, err
	}
	return len(left), nil
}

// SupersedeTerminal supersedes up to n terminal failed effects of
// spreadsheet, each in the same unit as its correction (aggregates.
// Correction from the entity's current values, queued at its row's next
// stream_sequence), oldest first (Outbox, I10).
func (m *MemOutbox) SupersedeTerminal(spreadsheet string, n int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	heads := m.effectsOf(spreadsheet, func(e *aggregates.Effect) bool { return e.State == aggregates.EffectFailed && e.Terminal })
	heads = heads[:min(len(heads), max(n, 0))]
	var ch aggregates.Changes
	next := map[string]uint64{} // outbox stream → version, corrections of this unit included
	folded := map[string]bool{}
	for _, fx := range heads {
		var vals map[string]any
		ent, exists := m.entities[events.EntityStream(fx.Entity, fx.EntityID)]
		if exists = exists && ent.state.Exists; exists {
			vals = ent.values
		}
		replacement := ""
		q, write := aggregates.Correction(fx, vals, exists, m.sheet.Columns(fx.Target.Tab))
		var qd aggregates.Decision
		if write {
			var err error
			if qd, replacement, err = m.decideQueue(q, next, now); err != nil {
				return 0, err
			}
		}
		sd, err := aggregates.DecideSupersede(fx, replacement, now)
		if err != nil {
			return 0, err
		}
		ch.AddDecision(sd)
		if err := m.foldBehind(&ch, fx, replacement, folded, now); err != nil {
			return 0, err
		}
		ch.AddDecision(qd)
	}
	if err := m.appendChanges(ch, now, nil); err != nil {
		return 0, err
	}
	return len(heads), nil
}

// foldBehind supersedes the pending effects behind fx on its row by its
// correction (decideFold, in aggregates), each once per unit. Callers hold m.mu.
func (m *MemOutbox) foldBehind(ch *aggregates.Changes, fx aggregates.Effect, replacement string, folded map[string]bool, now time.Time) error {
	if replacement == "" {
		return nil
	}
	behind := m.effectsOf(fx.Target.Spreadsheet, func(e *aggregates.Effect) bool { return aggregates.Behind(*e, fx) })
	return aggregates.FoldBehind(ch, behind, fx, replacement, folded, now)
}

// RecordDivergence appends sync.diverged (Outbox).
func (m *MemOutbox) RecordDivergence(spreadsheet, reason string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	var ch aggregates.Changes
	ch.AddDecision(aggregates.DecideDivergence(spreadsheet, reason, now))
	return m.appendChanges(ch, now, nil)
}

// QueueUnsynced queues, as the engine does, up to n rows of existing
// entities (oldest change first) for which no effect was ever queued to
// that tab of spreadsheet: entities set with SetEntity (the engine's
// commits while sync was off) are shown in full on each of their tabs
// (aggregates.RowEffects); rows that already had an effect are skipped,
// so rows are never duplicated. It returns how many rows it queued
// (Outbox).
func (m *MemOutbox) QueueUnsynced(spreadsheet string, n int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if spreadsheet != m.cfg.Spreadsheet || n <= 0 {
		return 0, nil
	}
	told := map[string]bool{} // entity stream + tab → that row had an effect
	for _, id := range m.queue {
		fx := m.fx[id]
		if fx.Target.Spreadsheet == spreadsheet && fx.Target.Anchor == fx.EntityID {
			told[events.EntityStream(fx.Entity, fx.EntityID)+"\x00"+fx.Target.Tab] = true
		}
	}
	var live []*memEntity
	for _, ent := range m.entities {
		if ent.state.Exists {
			live = append(live, ent)
		}
	}
	sortEntities(live)
	var ch aggregates.Changes
	for _, ent := range live {
		created := events.EntityPersisted{Entity: ent.entity, ID: ent.id, Created: true, Fields: ent.values}
		for _, q := range aggregates.RowEffects(m.sheet, ent.entity, ent.id, m.sheet.key(ent.entity), created) {
			if len(ch.Queue) < n && !told[events.EntityStream(ent.entity, ent.id)+"\x00"+q.Target.Tab] {
				ch.Queue = append(ch.Queue, q)
			}
		}
	}
	if err := m.appendChanges(ch, m.Now(), nil); err != nil {
		return 0, err
	}
	return len(ch.Queue), nil
}

// Commit changes an entity as an application commit does with sync on:
// values holds every field's canonical value (the key aside), nil removes
// the entity; the change is decided by aggregates.DecidePersist or
// DecideRemove and its row effects (aggregates.RowEffects over Schema)
// are queued in the same unit. It returns the ids of the queued effects,
// in queue order (none when nothing changed). Errors: aggregates errors
// (ErrInvalidValue, ErrEntityNotFound), ErrMemDisplaced.
func (m *MemOutbox) Commit(entity, id string, values map[string]any) ([]string, error) {
	return m.change(entity, id, values, true)
}

// SetEntity persists an entity without queueing effects, as a commit
// while sync was off: corrections read its values, QueueUnsynced queues
// its rows. values holds every field's canonical value (the key aside).
func (m *MemOutbox) SetEntity(entity, id string, values map[string]any) error {
	if values == nil {
		values = map[string]any{}
	}
	_, err := m.change(entity, id, values, false)
	return err
}

// RemoveEntity removes an entity without queueing effects.
func (m *MemOutbox) RemoveEntity(entity, id string) error {
	_, err := m.change(entity, id, nil, false)
	return err
}

func (m *MemOutbox) change(entity, id string, values map[string]any, rows bool) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Now()
	cur := aggregates.EntityState{Fields: map[string]aggregates.FieldState{}}
	if ent, ok := m.entities[events.EntityStream(entity, id)]; ok {
		cur = ent.state
	}
	var d aggregates.Decision
	var err error
	if values == nil {
		d, err = aggregates.DecideRemove(cur, aggregates.Remove{Entity: entity, ID: id}, now)
	} else {
		d, err = aggregates.DecidePersist(cur, aggregates.Persist{Entity: entity, ID: id, Values: values}, now)
	}
	if err != nil || len(d.Events) == 0 {
		return nil, err
	}
	var ch aggregates.Changes
	ch.AddDecision(d)
	if rows {
		ch.Queue = aggregates.RowEffects(m.sheet, entity, id, m.sheet.key(entity), d.Events[0].Payload)
	}
	var ids []string
	err = m.appendChanges(ch, now, &ids)
	return ids, err
}

// Queue queues q at its row's next stream_sequence (aggregates.
// DecideQueue) and returns the effect's id.
func (m *MemOutbox) Queue(q aggregates.Queue) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	err := m.appendChanges(aggregates.Changes{Queue: []aggregates.Queue{q}}, m.Now(), &ids)
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// Effect returns the effect id as the outbox knows it.
func (m *MemOutbox) Effect(id string) (aggregates.Effect, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.fx[id]; !ok {
		return aggregates.Effect{}, false
	}
	return m.copyOf(id), true
}

// Effects returns every effect, in queue order.
func (m *MemOutbox) Effects() []aggregates.Effect {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]aggregates.Effect, len(m.queue))
	for i, id := range m.queue {
		out[i] = m.copyOf(id)
	}
	return out
}

// Events returns every event the outbox appended, in log order, stamped
// like the log's (sequence, stream version, fence, commit id).
func (m *MemOutbox) Events() []events.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]events.Event(nil), m.log...)
}

// effectsOf lists copies of spreadsheet's effects that keep returns true
// for (all when nil), in queue order. Callers hold m.mu.
func (m *MemOutbox) effectsOf(spreadsheet string, keep func(*aggregates.Effect) bool) []aggregates.Effect {
	var out []aggregates.Effect
	for _, id := range m.queue {
		fx := m.fx[id]
		if fx.Target.Spreadsheet == spreadsheet && (keep == nil || keep(fx)) {
			out = append(out, m.copyOf(id))
		}
	}
	return out
}

func (m *MemOutbox) copyOf(id string) aggregates.Effect {
	fx := *m.fx[id]
	fx.Values = maps.Clone(fx.Values)
	return fx
}

// decideQueue decides q at its row's next stream_sequence, as of next
// (the versions this unit already decided) or the outbox.
func (m *MemOutbox) decideQueue(q aggregates.Queue, next map[string]uint64, now time.Time) (aggregates.Decision, string, error) {
	stream := events.OutboxStream(q.Target.Binding)
	v, ok := next[stream]
	if !ok {
		v = m.versions[stream]
	}
	d, id, err := aggregates.DecideQueue(v, q, now)
	if err == nil {
		next[stream] = v + 1
	}
	return d, id, err
}

// queueOne decides q: merged into its row's pending tail when I32 allows
// (aggregates.DecideCoalesce), else queued at the row's next
// stream_sequence (decideQueue). As in the engine, only a tail neither
// queued nor changed earlier in this unit (next) is merged into. It
// returns the id of the effect that carries q. Callers hold m.mu.
func (m *MemOutbox) queueOne(q aggregates.Queue, next map[string]uint64, now time.Time) (aggregates.Decision, string, error) {
	stream := events.OutboxStream(q.Target.Binding)
	tailID, ok := m.tails[q.Target.Binding]
	_, queuedHere := next[stream]
	_, changedHere := next[events.EffectStream(tailID)]
	if ok && !queuedHere && !changedHere {
		d, merged, err := aggregates.DecideCoalesce(m.copyOf(tailID), q, m.sheet, now)
		if err != nil {
			return d, "", err
		}
		if merged {
			next[d.Stream] = d.ExpectedVersion + uint64(len(d.Events))
			return d, tailID, nil
		}
	}
	return m.decideQueue(q, next, now)
}

// appendChanges queues ch's effects (DecideQueue, ids appended to *ids)
// after its appends and appends the whole as one unit. Callers hold m.mu.
func (m *MemOutbox) appendChanges(ch aggregates.Changes, now time.Time, ids *[]string) error {
	unit := append([]events.StreamAppend(nil), ch.Appends...)
	next := map[string]uint64{}
	for _, a := range ch.Appends {
		if a.ExpectedVersion != events.AnyVersion {
			next[a.Stream] = a.ExpectedVersion + uint64(len(a.Events))
		}
	}
	var queued []string
	for _, q := range ch.Queue {
		d, id, err := m.queueOne(q, next, now)
		if err != nil {
			return err
		}
		unit = append(unit, events.StreamAppend{Stream: d.Stream, ExpectedVersion: d.ExpectedVersion, Events: d.Events})
		queued = append(queued, id)
	}
	if err := m.append(unit); err != nil {
		return err
	}
	if ids != nil {
		*ids = queued
	}
	return nil
}

// append is the log append: it checks the fence and every stream's
// expected version, then stamps the events (sequence, version, fence,
// commit id) and folds them. Nothing is applied unless all checks pass; an
// empty unit appends nothing. Callers hold m.mu.
func (m *MemOutbox) append(unit []events.StreamAppend) error {
	n := 0
	for _, a := range unit {
		n += len(a.Events)
	}
	if n == 0 {
		return nil
	}
	if m.displaced {
		return ErrMemDisplaced
	}
	work := map[string]uint64{}
	version := func(s string) uint64 {
		if v, ok := work[s]; ok {
			return v
		}
		return m.versions[s]
	}
	for _, a := range unit {
		if v := version(a.Stream); a.ExpectedVersion != events.AnyVersion && a.ExpectedVersion != v {
			return &events.VersionConflictError{Stream: a.Stream, Expected: a.ExpectedVersion, Actual: v}
		}
		for _, ev := range a.Events {
			if !folds(ev.Payload) {
				return fmt.Errorf("%w: MemOutbox cannot fold %s", events.ErrInvalidEvent, ev.Type())
			}
		}
		work[a.Stream] = version(a.Stream) + uint64(len(a.Events))
	}
	m.commits++
	commit := fmt.Sprintf("memcommit-%d", m.commits)
	for _, a := range unit {
		for _, ev := range a.Events {
			m.versions[a.Stream]++
			ev.Seq, ev.Stream, ev.Version = uint64(len(m.log))+1, a.Stream, m.versions[a.Stream]
			ev.Epoch, ev.Token, ev.Commit = uint64(m.cfg.Fence.Epoch), m.cfg.Fence.Token, commit
			m.fold(ev)
			m.log = append(m.log, ev)
		}
	}
	return nil
}

func folds(p events.Payload) bool {
	switch p.(type) {
	case events.EffectsClaimed, events.EffectsApplied, events.EffectQueued, events.EffectCoalesced, events.EffectClaimed, events.EffectApplied, events.EffectUncertain, events.EffectProbeScheduled,
		events.EffectFailed, events.EffectSuperseded, events.EffectConflict, events.EffectBlocked, events.EffectValueUnwritable,
		events.EntityPersisted, events.EntityRemoved, events.SyncDiverged, events.SyncWriteMisdirected:
		return true
	}
	return false
}

// fold applies one stamped event to the state (the projector's part).
func (m *MemOutbox) fold(ev events.Event) {
	if b, ok := ev.Payload.(events.Batch); ok { // its items, the effects' versions kept (set)
		for _, p := range b.Each() {
			item := ev
			item.Payload = p
			m.fold(item)
		}
		return
	}
	switch x := ev.Payload.(type) {
	case events.EffectQueued:
		m.fx[x.EffectID] = &aggregates.Effect{ID: x.EffectID, StreamSeq: x.StreamSequence, QueuedSeq: ev.Seq, Op: x.Op,
			Target:      aggregates.Target{Spreadsheet: x.Spreadsheet, Tab: x.Tab, Anchor: x.Anchor, Binding: x.Binding},
			Values:      maps.Clone(x.Values),
			PayloadHash: x.PayloadHash, Entity: x.Entity, EntityID: x.ID, State: aggregates.EffectPending, ExpectedHash: x.ExpectedHash}
		m.queue = append(m.queue, x.EffectID)
		m.tails[x.Binding] = x.EffectID
	case events.EffectCoalesced:
		m.set(ev, x.EffectID, aggregates.EffectPending, func(e *aggregates.Effect) {
			e.Op, e.Values, e.PayloadHash = x.Op, maps.Clone(x.Values), x.PayloadHash
		})
	case events.EffectClaimed:
		m.set(ev, x.EffectID, aggregates.EffectProcessing, func(e *aggregates.Effect) {
			e.ClaimToken, e.Attempts, e.Probes, e.DueAt, e.LastCode = x.ClaimToken, x.Attempt, 0, time.Time{}, ""
		})
	case events.EffectApplied:
		m.set(ev, x.EffectID, aggregates.EffectApplied, func(e *aggregates.Effect) {
			e.DueAt = time.Time{}
			m.visible[e.Target.Binding], m.written[e.Target.Binding] = x.WrittenHash, ev.Seq
		})
	case events.EffectUncertain:
		m.set(ev, x.EffectID, aggregates.EffectUncertain, func(e *aggregates.Effect) { e.DueAt, e.LastCode = x.ProbeAt, x.Code })
	case events.EffectProbeScheduled:
		m.set(ev, x.EffectID, aggregates.EffectUncertain, func(e *aggregates.Effect) { e.DueAt, e.Probes = x.ProbeAt, x.Probes })
	case events.EffectFailed:
		m.set(ev, x.EffectID, aggregates.EffectFailed, func(e *aggregates.Effect) {
			e.Terminal, e.DueAt, e.LastCode, e.ObservedHash = x.Terminal, x.RetryAt, x.Code, x.ObservedHash
		})
	case events.EffectSuperseded:
		m.set(ev, x.EffectID, aggregates.EffectSuperseded, func(*aggregates.Effect) {})
	case events.EffectConflict:
		m.set(ev, x.EffectID, aggregates.EffectConflict, func(e *aggregates.Effect) { e.LastCode, e.ObservedHash = x.Code, x.ObservedHash })
	case events.EffectBlocked:
		m.set(ev, x.EffectID, aggregates.EffectBlocked, func(e *aggregates.Effect) { e.LastCode = x.Code })
	case events.EffectValueUnwritable: // follows effect.applied on the effect's stream
		m.set(ev, x.EffectID, aggregates.EffectApplied, func(*aggregates.Effect) {})
	case events.EntityPersisted:
		ent := m.entity(x.Entity, x.ID)
		if !ent.state.Exists {
			ent.values = map[string]any{}
			if key := m.sheet.key(x.Entity); key != "" {
				ent.values[key] = x.ID
			}
		}
		ent.state.Exists, ent.state.Version, ent.lastSeq = true, ev.Version, ev.Seq
		for name, v := range x.Fields {
			h, _ := events.Hash(v) // decided values have a canonical form
			ent.state.Fields[name] = aggregates.FieldState{Hash: h, Revision: x.Revisions[name]}
			ent.values[name] = v
		}
	case events.EntityRemoved:
		ent := m.entity(x.Entity, x.ID)
		ent.state.Exists, ent.state.Version, ent.lastSeq, ent.values = false, ev.Version, ev.Seq, nil
		for name, fs := range ent.state.Fields {
			ent.state.Fields[name] = aggregates.FieldState{Revision: fs.Revision}
		}
	case events.SyncDiverged, events.SyncWriteMisdirected: // recorded in the log only (Events)
	}
}

// set moves an effect to state at the event's stream version.
func (m *MemOutbox) set(ev events.Event, id string, state aggregates.EffectState, f func(*aggregates.Effect)) {
	e := m.fx[id]
	if e == nil { // a transition of an effect never queued: nothing to fold into
		return
	}
	e.State = state
	if !events.IsDispatchStream(ev.Stream) { // a batch item leaves the effect's stream as it is
		e.Version = ev.Version
	}
	f(e)
}

func (m *MemOutbox) entity(entity, id string) *memEntity {
	key := events.EntityStream(entity, id)
	ent, ok := m.entities[key]
	if !ok {
		ent = &memEntity{entity: entity, id: id, state: aggregates.EntityState{Fields: map[string]aggregates.FieldState{}}}
		m.entities[key] = ent
	}
	return ent
}

func sortEntities(es []*memEntity) {
	slices.SortFunc(es, func(a, b *memEntity) int { return stdcmp.Compare(a.lastSeq, b.lastSeq) })
}
