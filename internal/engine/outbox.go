package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The engine is the real effects.Outbox: every method runs on the single
// writer goroutine, reads the state its decision needs, and appends the
// decided events, which the projector turns into hk_outbox rows in the
// same step.
var _ effects.Outbox = (*Engine)(nil)

// Now is the store clock (effects.Outbox).
func (e *Engine) Now() time.Time { return e.cfg.Clock.Now() }

// Renew renews the writer lease before a remote mutation (I04).
func (e *Engine) Renew() error { return e.writer().Renew() }

// Fence is the writer identity mirrored into the spreadsheet authority
// (I05): the store id, the lease epoch, and a digest of the fencing token
// (the token itself never leaves the store).
func (e *Engine) Fence() sheetsio.Fence {
	l := e.writer().Lease()
	sum := sha256.Sum256([]byte(l.Token))
	return sheetsio.Fence{StoreID: e.writer().Log().StoreID(), Epoch: int64(l.Epoch), Token: hex.EncodeToString(sum[:12])}
}

// Claim claims up to max claimable heads (effects.Outbox, I07).
func (e *Engine) Claim(spreadsheet string, max int) ([]aggregates.Effect, error) {
	var out []aggregates.Effect
	err := e.onWriter(func() error {
		now := e.cfg.Clock.Now()
		heads, err := e.proj.Claimable(spreadsheet, now, max)
		if err != nil {
			return err
		}
		heads = slices.DeleteFunc(heads, func(fx aggregates.Effect) bool { return e.Migrating(fx.Target.Tab) })
		token := newClaimToken()
		if len(heads) > 0 {
			out = make([]aggregates.Effect, 0, len(heads))
		}
		claims := make([]aggregates.Decided, 0, len(heads))
		for _, fx := range heads {
			c, d, err := e.claimOne(fx, token, now)
			if err != nil {
				return err
			}
			out = append(out, c)
			claims = append(claims, aggregates.Decided{Effect: fx, Decision: d})
		}
		return e.commitBatched(claims, nil, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claimOne decides the claim of fx and returns it as claimed: with its new
// token and the row hash its write is guarded by (I06).
func (e *Engine) claimOne(fx aggregates.Effect, token string, now time.Time) (aggregates.Effect, aggregates.Decision, error) {
	if fx.ExpectedHash == "" && fx.Op != events.OpAppend {
		h, _, _, _, err := e.proj.Visible(fx.Target.Binding)
		if err != nil {
			return fx, aggregates.Decision{}, err
		}
		fx.ExpectedHash = h
	}
	d, err := aggregates.DecideClaim(fx, token, e.writer().Lease().Epoch, now)
	fx.ClaimToken, fx.Attempts, fx.State = token, fx.Attempts+1, aggregates.EffectProcessing
	values, terr := e.translated(fx) // queued under an older declaration: in the tab's current layout
	fx.Values = values
	if terr == nil {
		fx, terr = e.shownEffect(fx) // what people read: personal values opened
	}
	return fx, d, errors.Join(err, terr)
}

func newClaimToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// commitBatched commits decisions about single effects compactly
// (aggregates.Batched: claims and applied outcomes as batch events on the
// dispatch stream), after the changes in also, in one fenced commit.
func (e *Engine) commitBatched(items []aggregates.Decided, also *aggregates.Changes, now time.Time) error {
	b := newBatchState(nil)
	ch, err := aggregates.Batched(items, func(stream string) (uint64, error) { return e.version(stream, b) }, now)
	if err != nil {
		return err
	}
	if also != nil {
		ch.Merge(*also)
	}
	return e.commitWorker(ch, now)
}

// DueProbes lists due delivery_uncertain effects (effects.Outbox, I08).
func (e *Engine) DueProbes(spreadsheet string, max int) ([]aggregates.Effect, error) {
	var out []aggregates.Effect
	err := e.onWriter(func() (err error) {
		out, err = e.proj.Due(spreadsheet, aggregates.EffectUncertain, e.cfg.Clock.Now(), max)
		for i := range out {
			if err == nil {
				out[i], err = e.shownEffect(out[i]) // compared with what the write sent
			}
		}
		return err
	})
	return out, err
}

// Settle records outcomes in one fenced commit (effects.Outbox). Stale
// claims are skipped and reported with aggregates.ErrStaleClaim.
func (e *Engine) Settle(settlements []effects.Settlement) error {
	return e.onWriter(func() error {
		now := e.cfg.Clock.Now()
		ids := make([]string, len(settlements))
		for i, st := range settlements {
			ids[i] = st.ID
		}
		known, err := e.proj.EffectStates(ids)
		if err != nil {
			return err
		}
		var ch aggregates.Changes
		var stale []error
		var misdirected []effects.Settlement
		settled := make([]aggregates.Decided, 0, len(settlements))
		for _, st := range settlements {
			fx, ok := known[st.ID]
			if !ok {
				return fmt.Errorf("settle: unknown effect %s", st.ID)
			}
			if st.Outcome.Kind == aggregates.OutcomeMisdirected {
				misdirected = append(misdirected, st)
				continue
			}
			d, err := e.settleOne(fx, st, now)
			if err != nil {
				stale = append(stale, err)
				continue
			}
			settled = append(settled, aggregates.Decided{Effect: fx, Decision: d})
		}
		bad, err := e.settleMisdirected(&ch, misdirected, known, now)
		if err != nil {
			return err
		}
		stale = append(stale, bad...)
		err = e.commitBatched(settled, &ch, now)
		if err == nil {
			e.act.written(appliedByTab(settled, settlements))
		}
		return errors.Join(append(stale, err)...)
	})
}

// appliedByTab counts the settled effects whose write landed, by tab.
func appliedByTab(settled []aggregates.Decided, settlements []effects.Settlement) map[string]int64 {
	applied := map[string]bool{}
	for _, st := range settlements {
		if st.Outcome.Kind == aggregates.OutcomeApplied {
			applied[st.ID] = true
		}
	}
	out := map[string]int64{}
	for _, d := range settled {
		if applied[d.Effect.ID] {
			out[d.Effect.Target.Tab]++
		}
	}
	return out
}

// settleOne decides one settlement: a guard failure of an
// acknowledge_system row reconcile is blocked_candidate (I13).
func (e *Engine) settleOne(fx aggregates.Effect, st effects.Settlement, now time.Time) (aggregates.Decision, error) {
	reconcile := false
	if st.Outcome.Kind == aggregates.OutcomeConflict {
		var err error
		if reconcile, err = e.proj.IsReconcile(fx.ID); err != nil {
			return aggregates.Decision{}, err
		}
	}
	return aggregates.DecideOutcome(fx, st.ClaimToken, st.Outcome, reconcile, now)
}

// Reschedule records an inconclusive probe (effects.Outbox, I08).
func (e *Engine) Reschedule(id, token string, next time.Time, maxProbes int64) error {
	return e.onWriter(func() error {
		fx, ok, err := e.proj.Effect(id)
		if err != nil || !ok {
			return errors.Join(err, fmt.Errorf("reschedule: unknown effect %s", id))
		}
		now := e.cfg.Clock.Now()
		d, err := aggregates.DecideProbeRescheduled(fx, token, maxProbes, next, now)
		if err != nil {
			return err
		}
		var ch aggregates.Changes
		ch.AddDecision(d)
		return e.commitWorker(ch, now)
	})
}

// RecoverProcessing turns effects a previous run left in processing into
// delivery_uncertain, due at probeAt (effects.Outbox).
func (e *Engine) RecoverProcessing(spreadsheet string, probeAt time.Time) (int, error) {
	n := 0
	err := e.onWriter(func() error {
		left, err := e.proj.Due(spreadsheet, aggregates.EffectProcessing, time.Time{}, 1<<30)
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		for _, fx := range left {
			d, err := aggregates.DecideRecovered(fx, probeAt, now)
			if err != nil {
				return err
			}
			ch.AddDecision(d)
		}
		n = len(left)
		return e.commitWorker(ch, now)
	})
	return n, err
}

// SupersedeTerminal supersedes terminal failed heads, each in the same
// commit as its correction (effects.Outbox, I10).
func (e *Engine) SupersedeTerminal(spreadsheet string, max int) (int, error) {
	n := 0
	err := e.onWriter(func() error {
		heads, err := e.proj.TerminalHeads(spreadsheet, max)
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		b := newBatchState(nil)
		var ch aggregates.Changes
		folded := map[string]bool{}
		for _, fx := range heads {
			if err := e.supersedeOne(&ch, fx, b, folded, now); err != nil {
				return err
			}
		}
		n = len(heads)
		return e.commitWorker(ch, now)
	})
	return n, err
}

// supersedeOne adds the supersede of fx and its correction (queued at its
// row's next stream_sequence, so the supersede names it), folding into
// the correction the pending effects behind fx (folded: their ids).
func (e *Engine) supersedeOne(ch *aggregates.Changes, fx aggregates.Effect, b *batchState, folded map[string]bool, now time.Time) error {
	q, write, err := e.correction(fx)
	if err != nil {
		return err
	}
	replacement := ""
	var qd aggregates.Decision
	if write {
		stream := events.OutboxStream(fx.Target.Binding)
		v, err := e.version(stream, b)
		if err != nil {
			return err
		}
		if qd, replacement, err = aggregates.DecideQueue(v, q, now); err != nil {
			return err
		}
		b.setVersion(stream, v+1)
	}
	sd, err := aggregates.DecideSupersede(fx, replacement, now)
	if err != nil {
		return err
	}
	ch.AddDecision(sd)
	if err := e.fold(ch, fx, replacement, folded, now); err != nil {
		return err
	}
	ch.AddDecision(qd)
	return nil
}

// correction decides the write that makes fx's row canonical again: an
// entity row shows the entity's values; a Sync_Conflicts row shows what
// the row's effects wrote, the conflict's latest state
// (aggregates.ConflictRowCorrection). write is false when there is
// nothing to write, or nothing the store may write: a tab of an entity the
// declaration no longer has is not the store's any more (its failed
// write is superseded alone, never holding the other tabs' corrections
// back).
func (e *Engine) correction(fx aggregates.Effect) (aggregates.Queue, bool, error) {
	if _, declared := e.sheet.Schema.Tab(fx.Target.Tab); !declared {
		return aggregates.Queue{}, false, nil
	}
	if fx.Target.Tab == e.sheet.ConflictsTab() {
		rowFx, err := e.proj.RowEffects(fx.Target.Spreadsheet, fx.Target.Binding)
		if err != nil {
			return aggregates.Queue{}, false, err
		}
		q, write := aggregates.ConflictRowCorrection(fx, rowFx, layout.ConflictResolution)
		return q, write, nil
	}
	vals, exists, err := e.proj.EntityValues(fx.Entity, fx.EntityID)
	if err != nil {
		return aggregates.Queue{}, false, err
	}
	q, write := aggregates.Correction(fx, vals, exists, e.sheet.Columns(fx.Target.Tab))
	return q, write, nil
}

// fold supersedes the pending effects behind fx on its row by fx's
// correction (decideFold, in aggregates), each once per unit.
func (e *Engine) fold(ch *aggregates.Changes, fx aggregates.Effect, replacement string, folded map[string]bool, now time.Time) error {
	if replacement == "" {
		return nil
	}
	behind, err := e.proj.PendingBehind(fx.Target.Spreadsheet, fx.Target.Binding, fx.StreamSeq)
	if err != nil {
		return err
	}
	return aggregates.FoldBehind(ch, behind, fx, replacement, folded, now)
}

// rowTabs names the tabs that show rows of entity (System, Input).
func (e *Engine) rowTabs(entity string) []string {
	var out []string
	for _, t := range e.sheet.RowTabs(entity) {
		out = append(out, t.Tab)
	}
	return out
}

// RecordDivergence appends sync.diverged for spreadsheet (effects.Outbox).
func (e *Engine) RecordDivergence(spreadsheet, reason string) error {
	return e.onWriter(func() error {
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		ch.AddDecision(aggregates.DecideDivergence(spreadsheet, reason, now))
		return e.commitWorker(ch, now)
	})
}

// QueueUnsynced queues the rows of up to max existing entities the
// spreadsheet was never told about: entities committed while sync was off
// or before this spreadsheet was configured (effects.Outbox; part of
// reconciliation: an entity with any queued effect is skipped, so missing
// rows are re-projected, never duplicated). The search reads the entities
// written since the last one that found them all told (unsynced.go).
func (e *Engine) QueueUnsynced(spreadsheet string, max int) (int, error) {
	n := 0
	err := e.onWriter(func() error {
		// The entities never queued are the read model's alone: none at
		// the last pass, none while the checkpoint has not moved.
		k := passKey{kind: passUnsynced, spreadsheet: spreadsheet}
		m := e.mark(0, [32]byte{}, true)
		if _, same := e.same(k, m); same {
			return e.commitWorker(aggregates.Changes{}, e.cfg.Clock.Now())
		}
		s, err := e.searchUnsynced(spreadsheet, max)
		if err != nil {
			return err
		}
		if len(s.refs) == 0 {
			defer e.remember(k, m)
		}
		ch, all, err := e.unsyncedEffects(s.refs)
		if err != nil {
			return err
		}
		n = len(s.refs)
		if err := e.commitWorker(ch, e.cfg.Clock.Now()); err != nil {
			return err
		}
		e.toldAt(spreadsheet, s, all && len(s.refs) < max)
		byTab := map[string]int64{}
		for _, q := range ch.Queue {
			byTab[q.Target.Tab]++
		}
		e.act.queued(byTab)
		return nil
	})
	return n, err
}

// unsyncedEffects are the effects that project each of refs on its tab;
// all is false when a ref queues none (its entity has no row to read).
func (e *Engine) unsyncedEffects(refs []projector.EntityRef) (ch aggregates.Changes, all bool, err error) {
	all = true
	for _, r := range refs {
		vals, ok, err := e.proj.EntityValues(r.Entity, r.ID)
		if err != nil {
			return ch, false, err
		}
		queued := false
		if ok {
			shape, _ := e.reg.Shape(r.Entity)
			created := events.EntityPersisted{Entity: r.Entity, ID: r.ID, Created: true, Fields: vals}
			for _, q := range aggregates.RowEffects(e.sheet, r.Entity, r.ID, shape.PK, created) {
				if q.Target.Tab == r.Tab {
					ch.Queue, queued = append(ch.Queue, q), true
				}
			}
		}
		all = all && queued
	}
	return ch, all, nil
}
