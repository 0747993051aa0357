package hikoutei

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The Store is the real effects.Outbox: every method runs on the single
// writer goroutine and appends fenced events, which the projector turns
// into hk_outbox rows in the same step.
var _ effects.Outbox = (*Store)(nil)

// queueEffects decides the effect.queued events an entity decision causes:
// its row on <E>_System and, when it has user-owned fields, on <E>_Input.
func (s *Store) queueEffects(c command, d aggregates.Decision, local, overlay *batchState, now time.Time) ([]events.StreamAppend, error) {
	if s.sync == nil {
		return nil, nil
	}
	var out []events.StreamAppend
	for _, q := range s.effectsFor(c, d) {
		stream := aggregates.OutboxStream(q.Target.Binding)
		ver, err := s.outboxVersion(stream, local, overlay)
		if err != nil {
			return nil, err
		}
		qd, _, err := aggregates.DecideQueue(ver, q, now)
		if err != nil {
			return nil, err
		}
		local.outbox[stream] = ver + 1
		out = append(out, events.StreamAppend{Stream: qd.Stream, ExpectedVersion: qd.ExpectedVersion, Events: qd.Events})
	}
	return s.onEntityCommit(c, d, out, local, overlay, now) // inbound: I12, I15 (conflicts.go)
}

func (s *Store) outboxVersion(stream string, local, overlay *batchState) (uint64, error) {
	if v, ok := local.outbox[stream]; ok {
		return v, nil
	}
	if v, ok := overlay.outbox[stream]; ok {
		return v, nil
	}
	return s.w.Log().StreamVersion(stream)
}

// effectsFor maps one entity change to row effects.
func (s *Store) effectsFor(c command, d aggregates.Decision) []aggregates.Queue {
	p := d.Events[0].Payload
	removed := d.Events[0].Type == aggregates.TypeEntityRemoved
	created, _ := p["created"].(bool)
	changed, _ := p["fields"].(map[string]any)
	var out []aggregates.Queue
	for _, tab := range []string{layout.SystemTabName(c.def.name), layout.InputTabName(c.def.name)} {
		spec, _ := s.sync.schema.Tab(tab)
		values := rowValues(spec, c, changed, created)
		q := aggregates.Queue{Target: s.target(tab, c.id), Entity: c.def.name, ID: c.id, Values: values}
		switch {
		case spec.Role == layout.RoleInput && !hasUserFields(c.def):
			continue
		case removed:
			q.Op, q.Values = aggregates.OpDelete, nil
		case created:
			q.Op = aggregates.OpAppend
		case len(values) == 0:
			continue
		default:
			q.Op = aggregates.OpUpdate
		}
		out = append(out, q)
	}
	return out
}

// rowValues picks the tab's columns: all of them for a new row, the changed
// ones for an update (the key and anchor never change).
func rowValues(spec layout.TabSpec, c command, changed map[string]any, created bool) map[string]any {
	out := map[string]any{}
	for _, col := range spec.Columns {
		switch {
		case col.Name == layout.AnchorHeader:
		case col.Name == c.def.pk.name:
			if created {
				out[col.Name] = c.id
			}
		case created:
			out[col.Name] = c.values[col.Name]
		default:
			if v, ok := changed[col.Name]; ok {
				out[col.Name] = v
			}
		}
	}
	return out
}

func hasUserFields(d *EntityDef) bool {
	for _, f := range d.fields {
		if f.owner == projector.OwnerUser {
			return true
		}
	}
	return false
}

func (s *Store) target(tab, anchor string) aggregates.Target {
	return aggregates.Target{Spreadsheet: s.sync.opts.Name, Tab: tab, Anchor: anchor, Binding: layout.RowBindingID(tab, anchor)}
}

// onWriter runs fn on the writer goroutine.
func (s *Store) onWriter(fn func() error) error {
	var err error
	if serr := s.send(&commitReq{query: func() { err = fn() }}); serr != nil {
		return serr
	}
	return err
}

// appendDecisions appends the decisions as one unit and projects it (on the
// writer goroutine). Errors: fencing errors (the lease is lost),
// ErrReadModelBehind.
func (s *Store) appendDecisions(ds []aggregates.Decision) error {
	if err := s.repairReadModel(); err != nil {
		return err
	}
	var unit events.Unit
	for _, d := range ds {
		if len(d.Events) > 0 {
			unit.Streams = append(unit.Streams, events.StreamAppend{Stream: d.Stream, ExpectedVersion: d.ExpectedVersion, Events: d.Events})
		}
	}
	if len(unit.Streams) == 0 {
		return nil
	}
	if err := s.w.RenewIfDue(); err != nil {
		return err
	}
	res, err := s.w.Append(unit)
	s.stats.LogTxns++
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return err
	}
	s.stats.Events += res[0].Last - res[0].First + 1
	return s.project(unitEvents(unit))
}

func effectOf(r projector.OutboxRow) aggregates.Effect {
	return aggregates.Effect{ID: r.ID, StreamSeq: r.StreamSeq, Op: r.Op, PayloadHash: r.PayloadHash,
		State: aggregates.EffectState(r.State), ClaimToken: r.ClaimToken, Attempts: r.Attempts, Probes: r.Probes,
		Terminal: r.Terminal, Version: r.Version,
		Target: aggregates.Target{Spreadsheet: r.Spreadsheet, Tab: r.Tab, Anchor: r.Anchor, Binding: r.Binding}}
}

func claimedOf(r projector.OutboxRow, token, expected string) effects.Claimed {
	return effects.Claimed{ID: r.ID, Tab: r.Tab, Anchor: r.Anchor, Binding: r.Binding, Op: r.Op, Values: r.Values,
		PayloadHash: r.PayloadHash, ClaimToken: token, ExpectedHash: expected, StreamSeq: r.StreamSeq, Attempts: r.Attempts}
}

func newClaimToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Now is the store clock (effects.Outbox).
func (s *Store) Now() time.Time { return s.opts.Clock.Now() }

// Renew renews the writer lease before a remote mutation (I04).
func (s *Store) Renew() error { return s.w.Renew() }

// Claim claims up to max claimable heads (effects.Outbox, I07).
func (s *Store) Claim(spreadsheet string, max int) ([]effects.Claimed, error) {
	var out []effects.Claimed
	err := s.onWriter(func() error {
		now := s.opts.Clock.Now()
		rows, err := s.proj.Claimable(spreadsheet, now, max)
		if err != nil {
			return err
		}
		ds := make([]aggregates.Decision, 0, len(rows))
		for _, r := range rows {
			c, d, err := s.claimOne(r, now)
			if err != nil {
				return err
			}
			out, ds = append(out, c), append(ds, d)
		}
		return s.appendDecisions(ds)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) claimOne(r projector.OutboxRow, now time.Time) (effects.Claimed, aggregates.Decision, error) {
	expected := r.ExpectedHash
	if expected == "" && r.Op != aggregates.OpAppend {
		h, _, _, err := s.proj.Visible(r.Binding)
		if err != nil {
			return effects.Claimed{}, aggregates.Decision{}, err
		}
		expected = h
	}
	token := newClaimToken()
	d, err := aggregates.DecideClaim(effectOf(r), true, token, s.w.Lease().Epoch, now)
	r.Attempts++
	return claimedOf(r, token, expected), d, err
}

// DueProbes lists due delivery_uncertain effects (effects.Outbox, I08).
func (s *Store) DueProbes(spreadsheet string, max int) ([]effects.Claimed, error) {
	var out []effects.Claimed
	err := s.onWriter(func() error {
		rows, err := s.proj.InState(spreadsheet, string(aggregates.EffectUncertain), s.opts.Clock.Now(), max)
		for _, r := range rows {
			out = append(out, claimedOf(r, r.ClaimToken, ""))
		}
		return err
	})
	return out, err
}

// Settle records outcomes in one fenced commit (effects.Outbox). Stale
// claims are skipped and reported with aggregates.ErrStaleClaim.
func (s *Store) Settle(settlements []effects.Settlement) error {
	return s.onWriter(func() error {
		now := s.opts.Clock.Now()
		var ds []aggregates.Decision
		var stale []error
		ids := make([]string, len(settlements))
		for i, st := range settlements {
			ids[i] = st.ID
		}
		known, err := s.proj.EffectStates(ids)
		if err != nil {
			return err
		}
		for _, st := range settlements {
			r, ok := known[st.ID]
			if !ok {
				return fmt.Errorf("settle: unknown effect %s", st.ID)
			}
			d, err := s.settleDecision(r, st, now) // inbound: blocked_candidate reconciles (conflicts.go)
			if err != nil {
				stale = append(stale, err)
				continue
			}
			ds = append(ds, d)
		}
		return errors.Join(append(stale, s.appendDecisions(ds))...)
	})
}

// Reschedule records an inconclusive probe (effects.Outbox, I08).
func (s *Store) Reschedule(id, token string, next time.Time, maxProbes int64) error {
	return s.onWriter(func() error {
		r, ok, err := s.proj.Effect(id)
		if err != nil || !ok {
			return errors.Join(err, fmt.Errorf("reschedule: unknown effect %s", id))
		}
		d, err := aggregates.DecideProbeRescheduled(effectOf(r), token, maxProbes, next, s.opts.Clock.Now())
		if err != nil {
			return err
		}
		return s.appendDecisions([]aggregates.Decision{d})
	})
}

// RecoverProcessing turns effects a previous run left in processing into
// delivery_uncertain, due at probeAt (effects.Outbox).
func (s *Store) RecoverProcessing(spreadsheet string, probeAt time.Time) (int, error) {
	n := 0
	err := s.onWriter(func() error {
		rows, err := s.proj.InState(spreadsheet, string(aggregates.EffectProcessing), time.Time{}, 1<<30)
		if err != nil {
			return err
		}
		var ds []aggregates.Decision
		for _, r := range rows {
			d, err := aggregates.DecideSettle(effectOf(r), r.ClaimToken,
				aggregates.Outcome{Kind: "uncertain", Code: "claimed_by_previous_run", RetryAt: probeAt}, s.opts.Clock.Now())
			if err != nil {
				return err
			}
			ds = append(ds, d)
		}
		n = len(ds)
		return s.appendDecisions(ds)
	})
	return n, err
}

// SupersedeTerminal supersedes terminal failed heads, each in the same
// commit as its correction (effects.Outbox, I10): the row is rewritten
// from canonical state, guarded by the hash the failure observed.
func (s *Store) SupersedeTerminal(spreadsheet string, max int) (int, error) {
	n := 0
	err := s.onWriter(func() error {
		rows, err := s.proj.TerminalHeads(spreadsheet, max)
		if err != nil {
			return err
		}
		var ds []aggregates.Decision
		for _, r := range rows {
			more, err := s.supersedeOne(r)
			if err != nil {
				return err
			}
			ds = append(ds, more...)
		}
		n = len(rows)
		return s.appendDecisions(ds)
	})
	return n, err
}

func (s *Store) supersedeOne(r projector.OutboxRow) ([]aggregates.Decision, error) {
	now := s.opts.Clock.Now()
	q, ok, err := s.correction(r)
	if err != nil {
		return nil, err
	}
	replacement := ""
	var ds []aggregates.Decision
	if ok {
		ver, err := s.w.Log().StreamVersion(aggregates.OutboxStream(r.Binding))
		if err != nil {
			return nil, err
		}
		qd, id, err := aggregates.DecideQueue(ver, q, now)
		if err != nil {
			return nil, err
		}
		qd.Events[0].Payload["expected_hash"] = r.ObservedHash
		ds, replacement = append(ds, qd), id
	}
	sd, err := aggregates.DecideSupersede(effectOf(r), replacement, now)
	return append([]aggregates.Decision{sd}, ds...), err
}

// correction builds the effect that makes the row show canonical state
// again; ok is false when nothing needs writing (entity gone, row gone).
func (s *Store) correction(r projector.OutboxRow) (aggregates.Queue, bool, error) {
	vals, exists, err := s.proj.EntityValues(r.Entity, r.EntityID)
	if err != nil {
		return aggregates.Queue{}, false, err
	}
	q := aggregates.Queue{Target: s.target(r.Tab, r.Anchor), Entity: r.Entity, ID: r.EntityID}
	spec, _ := s.sync.schema.Tab(r.Tab)
	switch {
	case !exists && r.ObservedHash == "":
		return q, false, nil
	case !exists:
		q.Op = aggregates.OpDelete
	case r.ObservedHash == "":
		q.Op, q.Values = aggregates.OpAppend, pick(spec, vals)
	default:
		q.Op, q.Values = aggregates.OpUpdate, pick(spec, vals)
	}
	return q, true, nil
}

func pick(spec layout.TabSpec, vals map[string]any) map[string]any {
	out := map[string]any{}
	for _, c := range spec.Columns {
		if v, ok := vals[c.Name]; ok {
			out[c.Name] = v
		}
	}
	return out
}
