package hikoutei

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/projector"
)

// maxGroup bounds how many queued commits one log transaction carries.
const maxGroup = 256

// commitReq is one unit of work handed to the single writer, or (query set)
// a function to run on the writer goroutine.
type commitReq struct {
	cmds  []command
	query func()
	res   CommitResult
	err   error
	done  chan struct{}
}

// command is one validated persist or remove of a unit of work.
type command struct {
	def    *EntityDef
	id     string
	values map[string]any // nil for a remove
}

// CommitResult describes a committed unit of work.
type CommitResult struct {
	Commit   string // commit id shared by the unit's events ("" if nothing changed)
	FirstSeq uint64 // first log sequence of the unit (0 if nothing changed)
	LastSeq  uint64
	Events   int // events appended (0 when every entity was unchanged)
}

// send hands r to the writer goroutine and waits for its outcome.
func (s *Store) send(r *commitReq) error {
	r.done = make(chan struct{})
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrStoreClosed
	}
	s.reqs <- r
	s.mu.RUnlock()
	<-r.done
	return r.err
}

// lingerMax bounds how long the writer waits for the callers it answered
// last to come back before it starts a group commit without them.
const lingerMax = time.Millisecond

// run is the single writer: it gathers a group of commits (see gather),
// decides, appends them in one fenced log transaction, projects them in one
// SQLite transaction and answers.
func (s *Store) run() {
	defer close(s.done)
	answered := 0
	for {
		select {
		case <-s.stop:
			return
		case r := <-s.reqs:
			batch := s.gather(r, answered)
			s.serve(batch)
			answered = commitsIn(batch)
		}
	}
}

// commitsIn counts the commits (not queries) of a served batch: all of
// them have been answered.
func commitsIn(batch []*commitReq) int {
	n := 0
	for _, r := range batch {
		if r.query == nil {
			n++
		}
	}
	return n
}

// gather takes every request queued at that instant and, while it holds
// fewer than target (the callers the last group answered, who typically
// commit again at once), waits up to lingerMax for more, so that they share
// one fsync instead of splitting into two group commits (measured on 2
// cores: this beats projecting batch N while appending N+1, which halves
// the groups). A lone caller (target 1) never waits.
func (s *Store) gather(first *commitReq, target int) []*commitReq {
	batch := []*commitReq{first}
	var linger <-chan time.Time
	for len(batch) < maxGroup {
		select {
		case r := <-s.reqs:
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
		case r := <-s.reqs:
			batch = append(batch, r)
		case <-linger:
			return batch
		case <-s.stop:
			return batch
		}
	}
	return batch
}

func (s *Store) serve(batch []*commitReq) {
	var commits []*commitReq
	for _, r := range batch {
		if r.query != nil {
			r.query()
			close(r.done)
			continue
		}
		commits = append(commits, r)
	}
	if len(commits) > 0 {
		s.commitBatch(commits)
		s.autoSnapshot()
	}
}

// pendingUnit pairs a request with its log unit and the entity states it
// decided while a batch is decided.
type pendingUnit struct {
	req    *commitReq
	unit   events.Unit
	states map[string]aggregates.EntityState
	res    events.UnitResult // once appended
}

func (s *Store) commitBatch(batch []*commitReq) {
	if err := s.repairReadModel(); err != nil {
		finish(batch, err)
		return
	}
	now := s.opts.Clock.Now()
	overlay := newBatchState()
	overlay.logVersions = s.logVersions(batch)
	var pending []pendingUnit
	for _, r := range batch {
		unit, states, err := s.decide(r.cmds, overlay, now)
		switch {
		case err != nil:
			finish([]*commitReq{r}, err)
		case len(unit.Streams) == 0:
			finish([]*commitReq{r}, nil) // nothing changed: no event
		default:
			pending = append(pending, pendingUnit{req: r, unit: unit, states: states})
		}
	}
	if len(pending) > 0 {
		s.appendAndProject(pending)
	}
}

// batchState carries the decisions of earlier units of one group commit:
// entity states and outbox stream versions by stream.
type batchState struct {
	entities map[string]aggregates.EntityState
	outbox   map[string]uint64
	// logVersions (overlay only; nil = unknown) holds the log's version of
	// every entity stream the group touches: 0 = never persisted, so there
	// is no state to read.
	logVersions map[string]uint64
}

// logVersions reads from the log, in one transaction, the stream version
// of every entity the batch touches (nil when the read fails: decisions
// then read every state from the read model).
func (s *Store) logVersions(batch []*commitReq) map[string]uint64 {
	var keys []string
	for _, r := range batch {
		for _, c := range r.cmds {
			keys = append(keys, aggregates.EntityStream(c.def.name, c.id))
		}
	}
	vs, err := s.w.Log().StreamVersions(keys)
	if err != nil {
		return nil
	}
	m := make(map[string]uint64, len(keys))
	for i, k := range keys {
		m[k] = vs[i]
	}
	return m
}

func newBatchState() *batchState {
	return &batchState{entities: map[string]aggregates.EntityState{}, outbox: map[string]uint64{}}
}

// merge folds a valid unit's local state into the batch's.
func (b *batchState) merge(local *batchState) {
	for k, v := range local.entities {
		b.entities[k] = v
	}
	for k, v := range local.outbox {
		b.outbox[k] = v
	}
}

// decide runs the aggregates for one unit against the read model plus the
// batch's earlier decisions (and, with sync on, queues the unit's effects);
// the overlay is only updated if the whole unit is valid. It returns the
// unit and the entity states it decided.
func (s *Store) decide(cmds []command, overlay *batchState, now time.Time) (events.Unit, map[string]aggregates.EntityState, error) {
	local := newBatchState()
	var unit events.Unit
	for _, c := range cmds {
		key := aggregates.EntityStream(c.def.name, c.id)
		cur, err := s.currentState(key, c, local, overlay)
		if err != nil {
			return events.Unit{}, nil, err
		}
		d, err := decideOne(cur, c, now)
		if err != nil {
			return events.Unit{}, nil, err
		}
		local.entities[key] = d.Next
		if len(d.Events) == 0 {
			continue
		}
		unit.Streams = append(unit.Streams, events.StreamAppend{Stream: d.Stream, ExpectedVersion: d.ExpectedVersion, Events: d.Events})
		fx, err := s.queueEffects(c, d, local, overlay, now)
		if err != nil {
			return events.Unit{}, nil, err
		}
		unit.Streams = append(unit.Streams, fx...)
	}
	overlay.merge(local)
	return unit, local.entities, nil
}

func decideOne(cur aggregates.EntityState, c command, now time.Time) (aggregates.Decision, error) {
	if c.values == nil {
		return aggregates.DecideRemove(cur, aggregates.Remove{Entity: c.def.name, ID: c.id}, now)
	}
	return aggregates.DecidePersist(cur, aggregates.Persist{Entity: c.def.name, ID: c.id, Values: c.values}, now)
}

func (s *Store) currentState(key string, c command, local, overlay *batchState) (aggregates.EntityState, error) {
	if st, ok := local.entities[key]; ok {
		return st, nil
	}
	if st, ok := overlay.entities[key]; ok {
		return st, nil
	}
	if v, ok := overlay.logVersions[key]; ok && v == 0 {
		return aggregates.EntityState{Fields: map[string]aggregates.FieldState{}}, nil // never persisted
	}
	row, err := s.proj.EntityState(c.def.name, c.id)
	if err != nil {
		return aggregates.EntityState{}, fmt.Errorf("read entity state: %w", err)
	}
	st := aggregates.EntityState{Exists: row.Exists, Version: row.Version, Fields: make(map[string]aggregates.FieldState, len(row.Fields))}
	for name, f := range row.Fields {
		st.Fields[name] = aggregates.FieldState{Hash: f.Hash, Revision: f.Revision}
	}
	return st, nil
}

// appendAndProject appends the batch's units in one log transaction and
// projects them in one SQLite transaction, overlapping the two: the log
// commits (and fsyncs) on another goroutine while the events are applied,
// and the SQLite transaction commits only after the log commit succeeded
// (rolled back otherwise), so the read model never gets ahead of the log.
func (s *Store) appendAndProject(pending []pendingUnit) {
	units := make([]events.Unit, len(pending))
	for i, p := range pending {
		units[i] = p.unit
	}
	err := s.w.RenewIfDue()
	var results []events.UnitResult
	var wait func() error
	if err == nil {
		results, wait, err = s.w.AppendAsync(units...)
	}
	s.stats.LogTxns++
	if err != nil {
		failAll(pending, err)
		return
	}
	applied, known, ok := acceptedUnits(pending, results)
	var logErr error
	waited := false
	projErr := s.proj.ApplyKnownThen(applied, known, func() error {
		waited, logErr = true, s.logCommitted(wait)
		return logErr
	})
	if !waited {
		logErr = s.logCommitted(wait)
	}
	if logErr != nil {
		failAll(ok, logErr)
		return
	}
	s.answer(ok, s.projected(projErr))
	s.afterCommit(queuedEffects(pending))
}

// logCommitted waits for the log commit of the batch being projected.
func (s *Store) logCommitted(wait func() error) error {
	if err := wait(); err != nil {
		return err
	}
	failpoint.Inject(failpoint.StoreAfterLogCommit)
	return nil
}

// failAll answers every unit of a batch the log did not commit.
func failAll(pending []pendingUnit, err error) {
	for _, p := range pending {
		finish([]*commitReq{p.req}, fmt.Errorf("append: %w", err))
	}
}

// acceptedUnits answers the units the log rejected and returns the others
// (and their events, with the field hashes their decisions computed).
func acceptedUnits(pending []pendingUnit, results []events.UnitResult) ([]events.Event, []projector.KnownHashes, []pendingUnit) {
	var applied []events.Event
	var known []projector.KnownHashes
	var ok []pendingUnit
	for i, p := range pending {
		if results[i].Err != nil {
			finish([]*commitReq{p.req}, results[i].Err)
			continue
		}
		for _, e := range unitEvents(p.unit) {
			applied = append(applied, e)
			known = append(known, knownHashes(p.states, e))
		}
		p.res = results[i]
		ok = append(ok, p)
	}
	return applied, known, ok
}

// answer records the committed units and answers them with projErr.
func (s *Store) answer(ok []pendingUnit, projErr error) {
	reqs := make([]*commitReq, len(ok))
	for i, p := range ok {
		p.req.res = CommitResult{Commit: p.res.Commit, FirstSeq: p.res.First, LastSeq: p.res.Last, Events: int(p.res.Last - p.res.First + 1)}
		reqs[i] = p.req
		s.stats.Commits++
		s.stats.Events += uint64(p.req.res.Events)
	}
	finish(reqs, projErr)
}

func queuedEffects(pending []pendingUnit) bool {
	for _, p := range pending {
		for _, st := range p.unit.Streams {
			if strings.HasPrefix(st.Stream, "outbox/") {
				return true
			}
		}
	}
	return false
}

// unitEvents returns a unit's events (stamped by the append) in seq order.
func unitEvents(u events.Unit) []events.Event {
	var out []events.Event
	for _, st := range u.Streams {
		out = append(out, st.Events...)
	}
	return out
}

// knownHashes returns the field hashes a unit's decision computed for e
// (nil when e is not an entity's persist). A hash is only offered for the
// revision e carries, so it is always the hash of e's value.
func knownHashes(states map[string]aggregates.EntityState, e events.Event) projector.KnownHashes {
	st, ok := states[e.Stream]
	revs, _ := e.Payload["revisions"].(map[string]any)
	if !ok || revs == nil || e.Type != aggregates.TypeEntityPersisted {
		return nil
	}
	return func(field string) (string, bool) {
		f, ok := st.Fields[field]
		rev, _ := revs[field].(int64)
		return f.Hash, ok && f.Hash != "" && f.Revision == uint64(rev)
	}
}

func (s *Store) project(evs []events.Event) error { return s.projected(s.proj.Apply(evs)) }

// projected handles the outcome of projecting appended events: a failure
// leaves the read model behind the log (repaired before the next batch).
func (s *Store) projected(err error) error {
	if s.failAfterAppend {
		s.failAfterAppend, err = false, errors.New("injected failure after the log commit")
	}
	if err != nil {
		s.behind = true
		s.log.Error("read model behind the log", "err", err.Error())
		return fmt.Errorf("%w: %w", ErrReadModelBehind, err)
	}
	s.notifyConflicts() // inbound: OnConflict hook (conflicts.go)
	return nil
}

// repairReadModel catches the read model up after a failed projection,
// before anything new is decided against it.
func (s *Store) repairReadModel() error {
	if !s.behind {
		return nil
	}
	head, err := s.w.Log().Head()
	if err == nil {
		err = s.catchUp(head, "catch-up")
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReadModelBehind, err)
	}
	s.behind = false
	return nil
}

func finish(reqs []*commitReq, err error) {
	for _, r := range reqs {
		r.err = err
		close(r.done)
	}
}
