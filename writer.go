package hikoutei

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
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

// run is the single writer: it takes every commit queued at that instant
// (group commit, no added delay), decides, appends them in one fenced log
// transaction, projects them in one SQLite transaction and answers.
func (s *Store) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case r := <-s.reqs:
			s.serve(s.gather(r))
		}
	}
}

func (s *Store) gather(first *commitReq) []*commitReq {
	batch := []*commitReq{first}
	for len(batch) < maxGroup {
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		default:
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

// pendingUnit pairs a request with its log unit while a batch is decided.
type pendingUnit struct {
	req  *commitReq
	unit events.Unit
}

func (s *Store) commitBatch(batch []*commitReq) {
	if err := s.repairReadModel(); err != nil {
		finish(batch, err)
		return
	}
	now := s.opts.Clock.Now()
	overlay := newBatchState()
	var pending []pendingUnit
	for _, r := range batch {
		unit, err := s.decide(r.cmds, overlay, now)
		switch {
		case err != nil:
			finish([]*commitReq{r}, err)
		case len(unit.Streams) == 0:
			finish([]*commitReq{r}, nil) // nothing changed: no event
		default:
			pending = append(pending, pendingUnit{r, unit})
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
// the overlay is only updated if the whole unit is valid.
func (s *Store) decide(cmds []command, overlay *batchState, now time.Time) (events.Unit, error) {
	local := newBatchState()
	var unit events.Unit
	for _, c := range cmds {
		key := aggregates.EntityStream(c.def.name, c.id)
		cur, err := s.currentState(key, c, local.entities, overlay.entities)
		if err != nil {
			return events.Unit{}, err
		}
		d, err := decideOne(cur, c, now)
		if err != nil {
			return events.Unit{}, err
		}
		local.entities[key] = d.Next
		if len(d.Events) == 0 {
			continue
		}
		unit.Streams = append(unit.Streams, events.StreamAppend{Stream: d.Stream, ExpectedVersion: d.ExpectedVersion, Events: d.Events})
		fx, err := s.queueEffects(c, d, local, overlay, now)
		if err != nil {
			return events.Unit{}, err
		}
		unit.Streams = append(unit.Streams, fx...)
	}
	overlay.merge(local)
	return unit, nil
}

func decideOne(cur aggregates.EntityState, c command, now time.Time) (aggregates.Decision, error) {
	if c.values == nil {
		return aggregates.DecideRemove(cur, aggregates.Remove{Entity: c.def.name, ID: c.id}, now)
	}
	return aggregates.DecidePersist(cur, aggregates.Persist{Entity: c.def.name, ID: c.id, Values: c.values}, now)
}

func (s *Store) currentState(key string, c command, local, overlay map[string]aggregates.EntityState) (aggregates.EntityState, error) {
	if st, ok := local[key]; ok {
		return st, nil
	}
	if st, ok := overlay[key]; ok {
		return st, nil
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

func (s *Store) appendAndProject(pending []pendingUnit) {
	units := make([]events.Unit, len(pending))
	for i, p := range pending {
		units[i] = p.unit
	}
	err := s.w.RenewIfDue()
	var results []events.UnitResult
	if err == nil {
		results, err = s.w.Append(units...)
	}
	s.stats.LogTxns++
	if err != nil {
		for _, p := range pending {
			finish([]*commitReq{p.req}, fmt.Errorf("append: %w", err))
		}
		return
	}
	failpoint.Inject(failpoint.StoreAfterLogCommit)
	var applied []events.Event
	var ok []*commitReq
	for i, p := range pending {
		if results[i].Err != nil {
			finish([]*commitReq{p.req}, results[i].Err)
			continue
		}
		p.req.res = CommitResult{Commit: results[i].Commit, FirstSeq: results[i].First, LastSeq: results[i].Last,
			Events: int(results[i].Last - results[i].First + 1)}
		applied = append(applied, unitEvents(p.unit)...)
		ok = append(ok, p.req)
		s.stats.Commits++
		s.stats.Events += uint64(p.req.res.Events)
	}
	finish(ok, s.project(applied))
	s.afterCommit(queuedEffects(pending))
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

func (s *Store) project(evs []events.Event) error {
	err := s.proj.Apply(evs)
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
