package engine

import (
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/projector"
)

// maxGroup bounds how many queued commits one log transaction carries.
const maxGroup = 256

// lingerMax bounds how long the writer waits for the callers it answered
// last to come back before it starts a group commit without them.
const lingerMax = time.Millisecond

// request is one unit of work handed to the single writer, or (query set)
// a function to run on the writer goroutine.
type request struct {
	cmds  []Command
	query func()
	res   CommitResult
	err   error
	done  chan struct{}
}

// Command is one validated persist (Values set: every field's canonical
// value) or remove (Values nil) of a unit of work. Actor and CreateOnly
// are a persist's (aggregates.Persist): an adoption's rows are created
// only, with actor adopt.
type Command struct {
	Entity, ID string
	Values     map[string]any
	// Actor, when set, is recorded on the persist (a migration's output,
	// an adopted row).
	Actor events.Actor
	// CreateOnly refuses a persist of an existing entity (adopt).
	CreateOnly bool
	// hashes are the canonical hashes of Values, computed by Commit on
	// the caller's goroutine (aggregates.Persist.Hashes).
	hashes map[string]string
}

// CommitResult describes a committed unit of work.
type CommitResult struct {
	Commit   string // commit id shared by the unit's events ("" if nothing changed)
	FirstSeq uint64 // first log sequence of the unit (0 if nothing changed)
	LastSeq  uint64
	Events   int // events appended (0 when every entity was unchanged)
}

// Stats are counters of the single writer since Open.
type Stats struct {
	Commits uint64 // units committed with at least one event
	Events  uint64 // events appended (commits and the workers' decisions)
	LogTxns uint64 // log transactions (group commits) that carried them
	// Unchanged counts the tabs a full scan, cleanup or anti-entropy pass
	// skipped: the read digested as the last pass's, which changed
	// nothing, at the same checkpoint (unchanged.go).
	Unchanged uint64
	// RowStates counts the rows whose state a pass read from the read
	// model (the per-row cost an unchanged pass skips).
	RowStates uint64
	// Kept counts the tabs an anti-entropy pass compared from the read a
	// quiet pass kept, without decoding it (keptread.go).
	Kept uint64
}

// Commit decides cmds as one unit and returns once it is durable in the log
// and applied to the read model. It never waits on Google Sheets (I18).
// Errors: aggregates errors (ErrInvalidValue, ErrEntityNotFound,
// ErrConflictOpen); ErrStoreClosed; events.ErrStaleWriterFence if the lease
// was lost; ErrReadModelBehind (durable, but the read model lags).
func (e *Engine) Commit(cmds []Command) (CommitResult, error) {
	r := &request{cmds: hashed(cmds)}
	err := e.send(r)
	return r.res, err
}

// hashed returns a copy of cmds whose persists carry the canonical hash of
// each value, computed here on the caller's goroutine so the single writer
// does not (many callers hash in parallel). A value that cannot be hashed
// gets none: the decision reports it (ErrInvalidValue).
func hashed(cmds []Command) []Command {
	out := make([]Command, len(cmds))
	var buf []byte
	for i, c := range cmds {
		if c.Values != nil {
			c.hashes = make(map[string]string, len(c.Values))
		}
		for name, v := range c.Values {
			if h, err := events.HashReuse(&buf, v); err == nil {
				c.hashes[name] = h
			}
		}
		out[i] = c
	}
	return out
}

// send hands r to the writer goroutine and waits for its outcome.
func (e *Engine) send(r *request) error {
	r.done = make(chan struct{})
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return ErrStoreClosed
	}
	if e.w.Load() == nil {
		e.mu.RUnlock()
		return e.standbyErr()
	}
	e.reqs <- r
	e.mu.RUnlock()
	<-r.done
	return r.err
}

// onWriter runs fn on the writer goroutine.
func (e *Engine) onWriter(fn func() error) error {
	var err error
	if serr := e.send(&request{query: func() { err = fn() }}); serr != nil {
		return serr
	}
	return err
}

// run is the single writer: it gathers a group of commits (see gather),
// decides, appends them in one fenced log transaction, projects them in one
// SQLite transaction and answers.
func (e *Engine) run() {
	defer close(e.done)
	answered := 0
	for {
		select {
		case <-e.stop:
			return
		case r := <-e.reqs:
			batch := e.gather(r, answered)
			answered = e.serve(batch)
		}
	}
}

// gather takes every request queued at that instant and, while it holds
// fewer than target (the callers the last group answered, who typically
// commit again at once), waits up to lingerMax for more, so that they share
// one fsync instead of splitting into two group commits. A lone caller
// (target 1) never waits.
func (e *Engine) gather(first *request, target int) []*request {
	batch := []*request{first}
	var linger <-chan time.Time
	for len(batch) < maxGroup {
		select {
		case r := <-e.reqs:
			batch = append(batch, r)
			continue
		default:
		}
		if len(batch) >= target {
			return batch
		}
		if linger == nil {
			t := time.NewTimer(lingerMax)
			defer t.Stop()
			linger = t.C
		}
		select {
		case r := <-e.reqs:
			batch = append(batch, r)
		case <-linger:
			return batch
		case <-e.stop:
			return batch
		}
	}
	return batch
}

// serve runs the batch's queries and commits; it returns how many commits
// it answered.
func (e *Engine) serve(batch []*request) int {
	var commits []*request
	for _, r := range batch {
		if r.query != nil {
			r.query()
			close(r.done)
			continue
		}
		commits = append(commits, r)
	}
	if len(commits) > 0 {
		e.commitBatch(commits)
		e.autoSnapshot()
		e.ringChainCheck()
		e.ringRetention()
	}
	return len(commits)
}

// pendingUnit pairs a request with its log unit and the entity states it
// decided while a batch is decided.
type pendingUnit struct {
	req    *request
	unit   events.Unit
	states map[string]aggregates.EntityState
	queued bool              // the unit queues effects
	res    events.UnitResult // once appended
}

func (e *Engine) commitBatch(batch []*request) {
	if err := e.refusing(); err != nil {
		finish(batch, err)
		return
	}
	if err := e.repairReadModel(); err != nil {
		finish(batch, err)
		return
	}
	now := e.cfg.Clock.Now()
	overlay := newBatchState(e.entityVersions(batch))
	var pending []pendingUnit
	for _, r := range batch {
		p, err := e.decide(r, overlay, now)
		switch {
		case err != nil:
			finish([]*request{r}, err)
		case len(p.unit.Streams) == 0:
			finish([]*request{r}, nil) // nothing changed: no event
		default:
			pending = append(pending, p)
		}
	}
	if len(pending) > 0 {
		e.appendAndProject(pending)
	}
}

// entityVersions reads from the log, in one transaction, the stream version
// of every entity the batch touches (nil when the read fails: decisions
// then read every state from the read model).
func (e *Engine) entityVersions(batch []*request) map[string]uint64 {
	var keys []string
	for _, r := range batch {
		for _, c := range r.cmds {
			keys = append(keys, events.EntityStream(c.Entity, c.ID))
		}
	}
	vs, err := e.Log().StreamVersions(keys)
	if err != nil {
		return nil
	}
	m := make(map[string]uint64, len(keys))
	for i, k := range keys {
		m[k] = vs[i]
	}
	return m
}

// decide runs the decisions of one unit against the read model plus the
// batch's earlier decisions; the overlay is only updated if the whole unit
// is valid.
func (e *Engine) decide(r *request, overlay *batchState, now time.Time) (pendingUnit, error) {
	local := overlay.child()
	p := pendingUnit{req: r, states: local.entities}
	for _, c := range r.cmds {
		key := events.EntityStream(c.Entity, c.ID)
		cur, err := e.currentState(key, c, local)
		if err != nil {
			return p, err
		}
		d, err := decideOne(cur, c, now)
		if err != nil {
			return p, err
		}
		local.entities[key] = d.Next
		if len(d.Events) == 0 {
			continue
		}
		ch, err := e.commitChanges(c, d, local, now)
		if err != nil {
			return p, err
		}
		appends, err := e.stage(ch, local, now)
		if err != nil {
			return p, err
		}
		p.unit.Streams = append(p.unit.Streams, appends...)
		p.queued = p.queued || len(ch.Queue) > 0
	}
	overlay.merge(local)
	return p, nil
}

func decideOne(cur aggregates.EntityState, c Command, now time.Time) (aggregates.Decision, error) {
	if c.Values == nil {
		return aggregates.DecideRemove(cur, aggregates.Remove{Entity: c.Entity, ID: c.ID}, now)
	}
	return aggregates.DecidePersist(cur, aggregates.Persist{Entity: c.Entity, ID: c.ID, Values: c.Values, Hashes: c.hashes,
		Actor: c.Actor, CreateOnly: c.CreateOnly}, now)
}

// currentState is an entity's state as of the batch's earlier decisions.
func (e *Engine) currentState(key string, c Command, b *batchState) (aggregates.EntityState, error) {
	if st, ok := b.entity(key); ok {
		return st, nil
	}
	if v, ok := b.logVersions[key]; ok && v == 0 {
		return aggregates.EntityState{Fields: map[string]aggregates.FieldState{}}, nil // never persisted
	}
	st, err := e.proj.EntityState(c.Entity, c.ID)
	if err != nil {
		return st, fmt.Errorf("read entity state: %w", err)
	}
	return st, nil
}

// stage turns a decision's changes into stream appends: its appends as
// they are, then each queued effect at its row's next stream_sequence
// (aggregates.DecideQueue). Versions are recorded in b.
func (e *Engine) stage(ch aggregates.Changes, b *batchState, now time.Time) ([]events.StreamAppend, error) {
	out := make([]events.StreamAppend, 0, len(ch.Appends)+len(ch.Queue))
	for _, a := range ch.Appends {
		if a.ExpectedVersion != events.AnyVersion {
			b.setVersion(a.Stream, a.ExpectedVersion+uint64(len(a.Events)))
		}
		out = append(out, a)
	}
	for _, q := range ch.Queue {
		d, err := e.queueOne(q, b, now)
		if err != nil {
			return nil, err
		}
		out = append(out, events.StreamAppend{Stream: d.Stream, ExpectedVersion: d.ExpectedVersion, Events: d.Events})
	}
	return out, nil
}

// queueOne decides q: merged into its row's pending tail when I32 allows
// (aggregates.DecideCoalesce), else queued at the row's next
// stream_sequence. Versions are recorded in b.
func (e *Engine) queueOne(q aggregates.Queue, b *batchState, now time.Time) (aggregates.Decision, error) {
	stream := events.OutboxStream(q.Target.Binding)
	v, err := e.version(stream, b)
	if err != nil {
		return aggregates.Decision{}, err
	}
	d, ok, err := e.coalesce(q, stream, v, b, now)
	if err != nil || ok {
		return d, err
	}
	d, _, err = aggregates.DecideQueue(v, q, now)
	if err == nil {
		b.setVersion(stream, v+1)
	}
	return d, err
}

// coalesce merges q into its row's tail (I32) when the tail is in the
// read model, is the row's last effect (stream_sequence v) and neither the
// row's outbox stream nor the tail's stream was touched earlier in this
// batch: coalescing only ever builds on committed state, so a rejected
// earlier unit can never leave a merge pointing at nothing. A tail queued
// under an older declaration of the entities never takes a write of the
// current one (their values are in different shapes).
func (e *Engine) coalesce(q aggregates.Queue, stream string, v uint64, b *batchState, now time.Time) (aggregates.Decision, bool, error) {
	if v == 0 || e.sheet == nil || b.touched(stream) || e.changingShapes {
		return aggregates.Decision{}, false, nil
	}
	tail, ok, err := e.proj.OutboxTail(q.Target.Binding)
	if err != nil || !ok || tail.StreamSeq != v || b.touched(events.EffectStream(tail.ID)) || e.queuedUnderOlderShapes(tail) {
		return aggregates.Decision{}, false, err
	}
	d, ok, err := aggregates.DecideCoalesce(tail, q, e.sheet, now)
	if ok {
		b.setVersion(d.Stream, d.ExpectedVersion+1)
	}
	return d, ok, err
}

// queuedUnderOlderShapes reports whether fx was queued before the newest
// declaration of the entities: its values are in an older shape, which
// translated reads them from when it is sent (after the tab's layout
// migration), so a write in the current shape must not merge into it.
func (e *Engine) queuedUnderOlderShapes(fx aggregates.Effect) bool {
	return len(e.hist) > 0 && fx.QueuedSeq < e.hist[len(e.hist)-1].Seq
}

// version is a stream's version as of b, else the log's.
func (e *Engine) version(stream string, b *batchState) (uint64, error) {
	if v, ok := b.version(stream); ok {
		return v, nil
	}
	return e.Log().StreamVersion(stream)
}

// appendAndProject appends the batch's units in one log transaction and
// projects them in one SQLite transaction, overlapping the two: the log
// commits (and fsyncs) on another goroutine while the events are applied,
// and the SQLite transaction commits only after the log commit succeeded
// (rolled back otherwise), so the read model never gets ahead of the log.
func (e *Engine) appendAndProject(pending []pendingUnit) {
	units := make([]events.Unit, len(pending))
	for i, p := range pending {
		units[i] = p.unit
	}
	err := e.writer().RenewIfDue()
	var results []events.UnitResult
	var wait func() error
	if err == nil {
		results, wait, err = e.writer().AppendAsync(units...)
	}
	e.stats.LogTxns++
	if err != nil {
		failAll(pending, e.appendRefused(err))
		return
	}
	applied, known, ok := acceptedUnits(pending, results)
	var logErr error
	waited := false
	projErr := e.proj.ApplyKnownThen(applied, known, func() error {
		if waited, logErr = true, logCommitted(wait); logErr != nil {
			return logErr
		}
		return failpoint.Err(failpoint.ReadModelBeforeCommit) // the SQLite commit fails; the log's stands
	})
	if !waited {
		logErr = logCommitted(wait)
	}
	if logErr != nil {
		prev, _ := prevHead(results)
		failAll(ok, e.logWriteFailed(logErr, prev))
		return
	}
	e.clearFault(ErrLogWrite)
	e.answer(ok, e.projected(projErr))
	e.afterCommit(queuedAny(ok))
}

// logCommitted waits for the log commit of the batch being projected.
func logCommitted(wait func() error) error {
	if err := wait(); err != nil {
		return err
	}
	failpoint.Inject(failpoint.StoreAfterLogCommit)
	return nil
}

// failAll answers every unit of a batch the log did not commit.
func failAll(pending []pendingUnit, err error) {
	for _, p := range pending {
		finish([]*request{p.req}, fmt.Errorf("append: %w", err))
	}
}

// acceptedUnits answers the units the log rejected and returns the others
// (and their events, with the field hashes their decisions computed).
func acceptedUnits(pending []pendingUnit, results []events.UnitResult) ([]events.Event, []projector.KnownHashes, []pendingUnit) {
	n := 0
	for _, p := range pending {
		for _, st := range p.unit.Streams {
			n += len(st.Events)
		}
	}
	applied := make([]events.Event, 0, n) // sized once: a group's events are copied once
	known := make([]projector.KnownHashes, 0, n)
	ok := make([]pendingUnit, 0, len(pending))
	for i, p := range pending {
		if results[i].Err != nil {
			finish([]*request{p.req}, results[i].Err)
			continue
		}
		for _, st := range p.unit.Streams {
			for _, ev := range st.Events {
				applied = append(applied, ev)
				known = append(known, knownHashes(p.states, ev))
			}
		}
		p.res = results[i]
		ok = append(ok, p)
	}
	return applied, known, ok
}

// answer records the committed units and answers them with projErr.
func (e *Engine) answer(ok []pendingUnit, projErr error) {
	reqs := make([]*request, len(ok))
	for i, p := range ok {
		p.req.res = CommitResult{Commit: p.res.Commit, FirstSeq: p.res.First, LastSeq: p.res.Last, Events: int(p.res.Last - p.res.First + 1)}
		reqs[i] = p.req
		e.stats.Commits++
		e.stats.Events += uint64(p.req.res.Events)
	}
	finish(reqs, projErr)
}

func queuedAny(pending []pendingUnit) bool {
	for _, p := range pending {
		if p.queued {
			return true
		}
	}
	return false
}

// knownHashes returns the field hashes a unit's decision computed for ev
// (nil when ev is not an entity's persist). A hash is only offered for the
// revision ev carries, so it is always the hash of ev's value.
func knownHashes(states map[string]aggregates.EntityState, ev events.Event) projector.KnownHashes {
	st, ok := states[ev.Stream]
	p, persisted := ev.Payload.(events.EntityPersisted)
	if !ok || !persisted {
		return nil
	}
	return func(field string) (string, bool) {
		f, ok := st.Fields[field]
		return f.Hash, ok && f.Hash != "" && f.Revision == p.Revisions[field]
	}
}

func finish(reqs []*request, err error) {
	for _, r := range reqs {
		r.err = err
		close(r.done)
	}
}

// commitWorker appends a worker's decided changes as one fenced unit and
// projects it (writer goroutine only). Errors: fencing errors (the lease
// is lost), ErrReadModelBehind.
func (e *Engine) commitWorker(ch aggregates.Changes, now time.Time) error {
	if err := e.refusing(); err != nil {
		return err
	}
	if err := e.repairReadModel(); err != nil {
		return err
	}
	appends, err := e.stage(ch, newBatchState(nil), now)
	if err != nil || len(appends) == 0 {
		return err
	}
	if err := e.writer().RenewIfDue(); err != nil {
		return err
	}
	unit := events.Unit{Streams: appends}
	res, err := e.appendWorker(unit)
	if err != nil {
		return err
	}
	e.stats.Events += res[0].Last - res[0].First + 1
	var evs []events.Event
	for _, st := range unit.Streams {
		evs = append(evs, st.Events...)
	}
	err = e.projected(e.proj.Apply(evs))
	e.afterCommit(false) // the mirror and chain.head follow every commit (I36); the workers wake themselves
	return err
}

// appendWorker appends a worker's unit, classifying a failed log commit
// like a group commit's (see logWriteFailed).
func (e *Engine) appendWorker(unit events.Unit) ([]events.UnitResult, error) {
	res, wait, err := e.writer().AppendAsync(unit)
	e.stats.LogTxns++
	if err != nil {
		return nil, e.appendRefused(err)
	}
	if err := wait(); err != nil {
		prev, _ := prevHead(res)
		return nil, e.logWriteFailed(err, prev)
	}
	e.clearFault(ErrLogWrite)
	return res, res[0].Err
}
