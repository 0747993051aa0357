// Package outboxtest is the conformance suite of the effects.Outbox
// contract: every implementation (the engine, internal/engine; the
// in-memory effects.MemOutbox) runs Run and must pass every case. The
// cases are named after the invariants they check (I04, I05, I07, I08,
// I09, I10).
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package outboxtest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Shape is the entity the suite commits: a key and two system-owned
// fields, so that every change of it queues exactly one effect, on its
// System tab row.
var Shape = events.EntityShape{Name: "Gadget", PK: "id", Fields: []events.FieldShape{
	{Name: "name", Kind: events.KindString, Owner: events.OwnerSystem},
	{Name: "size", Kind: events.KindInt, Owner: events.OwnerSystem},
}}

// Layout is the spreadsheet layout of Shape, as the engine derives it.
func Layout() *layout.Schema {
	s, err := layout.NewSchema(layout.Entity{Name: Shape.Name, Fields: []layout.Field{
		{Name: "id", Kind: cell.String, Key: true}, {Name: "name", Kind: cell.String}, {Name: "size", Kind: cell.Int}}})
	if err != nil {
		panic(err)
	}
	return s
}

// Subject is an Outbox under test and the hooks the suite drives it with.
type Subject interface {
	effects.Outbox
	// Spreadsheet is the sync target's name the subject queues effects for.
	Spreadsheet() string
	// Commit changes an entity as an application commit does, sync on:
	// values holds every field's canonical value (the key aside; nil
	// removes the entity), and the row effects of the change are queued
	// in the same commit. It returns their ids in queue order.
	Commit(t *testing.T, entity, id string, values map[string]any) []string
	// Effect returns the effect as the store knows it.
	Effect(t *testing.T, id string) (aggregates.Effect, bool)
	// Displace makes another writer take the store over (I04).
	Displace(t *testing.T)
	// Advance moves the store clock (a manual clock) forward by d.
	Advance(d time.Duration)
}

// Run runs every conformance case, each against a fresh subject.
func Run(t *testing.T, newSubject func(t *testing.T) Subject) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Subject)
	}{
		{"I07_ASecondEffectOfARowWaitsUntilTheFirstSettled", secondEffectWaits},
		{"I07_SettledStatesReleaseTheRow", settledStatesRelease},
		{"I06_AnUpdateAfterALostWriteIsGuardedByTheLastAppliedWrite", lostWriteKeepsTheGuard},
		{"I07_AnUncertainHeadHoldsItsRow", uncertainHeadHolds},
		{"I07_ARecoverableFailedHeadBlocksItsRowUntilRetried", recoverableHeadBlocks},
		{"I07_ATerminalFailedHeadBlocksItsRowUntilSuperseded", terminalHeadBlocks},
		{"I07_ClaimsFollowQueueOrderUpToMax", claimsInQueueOrder},
		{"I04_ADisplacedWriterIsFencedOut", displacedWriter},
		{"I04_StaleClaimTokensAreRejected", staleClaims},
		{"I05_FenceAndDivergenceRecord", fenceAndDivergence},
		{"I08_OnlyDueUncertainEffectsAreProbed", dueProbes},
		{"I08_ProbingIsBoundedThenTerminalTimeout", boundedProbing},
		{"I08_RecoverProcessingMakesLeftoverClaimsUncertain", recoverProcessing},
		{"I09_AReceiptWithAnotherPayloadHashFailsClosed", payloadMismatch},
		{"I10_SupersedeTerminalQueuesACorrectionNeverForARecoverableHead", supersedeTerminal},
		{"I10_ATerminalHeadOfARemovedEntityIsSupersededWithoutAWrite", supersedeRemoved},
		{"QueueUnsyncedSkipsEntitiesWhoseRowsAreQueued", queueUnsynced},
		{"I32_ChangesOfARowMergeIntoItsUnclaimedTailInOrder", coalesceTail},
		{"I32_AClaimedOrSettledEffectIsNeverMergedInto", coalesceNeverClaimed},
		{"I28_RepairRestoresMissingRewritesDriftedAndSkipsRowsInFlight", repairTab},
		{"I28_ARowWrittenAfterTheReadsBaseIsLeftForALaterPass", repairAfterBase},
		{"C06_AMisdirectedWriteIsRequeuedItsDisplacedRowRepairedAndEvidenced", misdirectedWrite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newSubject(t)) })
	}
}

// ---- helpers ----

// commit commits a Gadget and returns the one effect it queued.
func commit(t *testing.T, s Subject, id, name string, size int64) string {
	t.Helper()
	ids := s.Commit(t, Shape.Name, id, map[string]any{"name": name, "size": size})
	if len(ids) != 1 {
		t.Fatalf("commit of %s queued %d effects, want 1: %v", id, len(ids), ids)
	}
	return ids[0]
}

func effect(t *testing.T, s Subject, id string) aggregates.Effect {
	t.Helper()
	fx, ok := s.Effect(t, id)
	if !ok {
		t.Fatalf("effect %s unknown", id)
	}
	return fx
}

func claim(t *testing.T, s Subject, max int) []aggregates.Effect {
	t.Helper()
	c, err := s.Claim(s.Spreadsheet(), max)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return c
}

func ids(fx []aggregates.Effect) []string {
	out := []string{}
	for _, e := range fx {
		out = append(out, e.ID)
	}
	return out
}

// claimExactly claims and fails unless exactly want (in order) is claimed.
func claimExactly(t *testing.T, s Subject, max int, want ...string) []aggregates.Effect {
	t.Helper()
	got := claim(t, s, max)
	if want == nil {
		want = []string{}
	}
	if !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("claimed %v, want %v", ids(got), want)
	}
	return got
}

func settle(t *testing.T, s Subject, fx aggregates.Effect, o aggregates.Outcome) {
	t.Helper()
	if err := s.Settle([]effects.Settlement{{ID: fx.ID, ClaimToken: fx.ClaimToken, Outcome: o}}); err != nil {
		t.Fatalf("settle %s as %s: %v", fx.ID, o.Kind, err)
	}
}

func wantState(t *testing.T, s Subject, id string, state aggregates.EffectState) aggregates.Effect {
	t.Helper()
	fx := effect(t, s, id)
	if fx.State != state {
		t.Fatalf("effect %s is %s (terminal %v, code %q), want %s", id, fx.State, fx.Terminal, fx.LastCode, state)
	}
	return fx
}

func applied(hash string) aggregates.Outcome {
	return aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: hash, Via: "dispatch"}
}

func uncertain(at time.Time) aggregates.Outcome {
	return aggregates.Outcome{Kind: aggregates.OutcomeUncertain, Code: "write_uncertain", RetryAt: at, Via: "dispatch"}
}

func retry(at time.Time) aggregates.Outcome {
	return aggregates.Outcome{Kind: aggregates.OutcomeRetry, Code: "read_unavailable", RetryAt: at, Via: "dispatch"}
}

func terminal(code, observed string) aggregates.Outcome {
	return aggregates.Outcome{Kind: aggregates.OutcomeFailed, Code: code, Terminal: true, WrittenHash: observed, Via: "dispatch"}
}

// ---- I07 ----

func secondEffectWaits(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	fa := effect(t, s, a)
	if fa.State != aggregates.EffectPending {
		t.Fatalf("queued effect is %s, want pending", fa.State)
	}
	c := claimExactly(t, s, 10, a)[0] // claimed: a later change no longer merges into it (I32)
	b := commit(t, s, "g1", "two", 1)
	fb := effect(t, s, b)
	if fb.State != aggregates.EffectPending {
		t.Fatalf("queued effect is %s, want pending", fb.State)
	}
	if fa.Target.Spreadsheet != s.Spreadsheet() || fa.Target.Tab != layout.SystemTabName(Shape.Name) || fa.Target.Anchor != "g1" ||
		fa.Target.Binding != layout.RowBindingID(fa.Target.Tab, "g1") || fb.Target != fa.Target {
		t.Fatalf("targets %+v and %+v", fa.Target, fb.Target)
	}
	if fa.Op != events.OpAppend || fb.Op != events.OpUpdate || fb.StreamSeq != fa.StreamSeq+1 {
		t.Fatalf("ops %s@%d and %s@%d, want append then update at the next stream_sequence", fa.Op, fa.StreamSeq, fb.Op, fb.StreamSeq)
	}
	if want := map[string]any{"id": "g1", "name": "one", "size": int64(1)}; !reflect.DeepEqual(fa.Values, want) {
		t.Fatalf("append values %#v, want %#v", fa.Values, want)
	}
	if want := map[string]any{"name": "two"}; !reflect.DeepEqual(fb.Values, want) {
		t.Fatalf("update values %#v, want only the changed cell %#v", fb.Values, want)
	}
	if c.State != aggregates.EffectProcessing || c.ClaimToken == "" || c.Attempts != 1 || c.PayloadHash != fa.PayloadHash {
		t.Fatalf("claimed %+v", c)
	}
	claimExactly(t, s, 10) // the update waits for the append
	s.Advance(time.Hour)
	claimExactly(t, s, 10)
	settle(t, s, c, applied("hash-after-append"))
	wantState(t, s, a, aggregates.EffectApplied)
	cb := claimExactly(t, s, 10, b)[0]
	if cb.ExpectedHash != "hash-after-append" {
		t.Fatalf("the update is guarded by %q, want the row hash its predecessor wrote (I06)", cb.ExpectedHash)
	}
}

func settledStatesRelease(t *testing.T, s Subject) {
	for i, o := range []struct {
		outcome aggregates.Outcome
		state   aggregates.EffectState
	}{
		{applied("h"), aggregates.EffectApplied},
		{aggregates.Outcome{Kind: aggregates.OutcomeConflict, Code: "row_hash_mismatch", WrittenHash: "edited", Via: "dispatch"}, aggregates.EffectConflict},
	} {
		id := string(rune('p' + i))
		a := commit(t, s, id, "one", 1)
		c := claimExactly(t, s, 10, a)[0]
		b := commit(t, s, id, "two", 1)
		settle(t, s, c, o.outcome)
		if fx := wantState(t, s, a, o.state); !fx.State.Settled() {
			t.Fatalf("%s is not settled", fx.State)
		}
		claimExactly(t, s, 10, b)
	}
}

// lostWriteKeepsTheGuard: a write that met a person's edit (settled as a
// conflict, the edited row's hash observed) leaves the row's guard where
// the store's last applied write left it. The next update, queued (with
// no guard of its own) while the lost write was in flight, is claimed
// guarded by that hash: never by the row the failed guard observed (the
// edit would be overwritten) and never by none.
func lostWriteKeepsTheGuard(t *testing.T, s Subject) {
	settle(t, s, claimExactly(t, s, 10, commit(t, s, "g1", "one", 1))[0], applied("h1"))
	lost := claimExactly(t, s, 10, commit(t, s, "g1", "two", 1))[0]
	next := commit(t, s, "g1", "three", 1)
	if fx := effect(t, s, next); fx.ExpectedHash != "" || fx.Op != events.OpUpdate {
		t.Fatalf("queued %s guarded by %q, want an update guarded at its claim", fx.Op, fx.ExpectedHash)
	}
	settle(t, s, lost, aggregates.Outcome{Kind: aggregates.OutcomeConflict, Code: "row_hash_mismatch", WrittenHash: "edited", Via: "dispatch"})
	if c := claimExactly(t, s, 10, next)[0]; c.ExpectedHash != "h1" {
		t.Fatalf("the update after a lost write is guarded by %q, want the row hash of the last applied write (I06)", c.ExpectedHash)
	}
}

func uncertainHeadHolds(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c := claimExactly(t, s, 10, a)[0]
	commit(t, s, "g1", "two", 1)
	settle(t, s, c, uncertain(s.Now().Add(time.Minute)))
	claimExactly(t, s, 10)
	s.Advance(2 * time.Minute) // the probe is due; only a probe decides, never a claim
	claimExactly(t, s, 10)
	wantState(t, s, a, aggregates.EffectUncertain)
}

func recoverableHeadBlocks(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c0 := claimExactly(t, s, 10, a)[0]
	b := commit(t, s, "g1", "two", 1)
	due := s.Now().Add(time.Minute)
	settle(t, s, c0, retry(due))
	fx := wantState(t, s, a, aggregates.EffectFailed)
	if fx.Terminal || fx.LastCode != "read_unavailable" || !fx.DueAt.Equal(due) {
		t.Fatalf("recoverable failure recorded as %+v", fx)
	}
	claimExactly(t, s, 10) // not due yet, and it holds the row
	s.Advance(time.Minute)
	c := claimExactly(t, s, 10, a)[0] // the retry, never the next effect
	if c.Attempts != 2 || c.ClaimToken == fx.ClaimToken {
		t.Fatalf("retry claim %+v (first token %s)", c, fx.ClaimToken)
	}
	settle(t, s, c, applied("h"))
	claimExactly(t, s, 10, b)
}

func terminalHeadBlocks(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c := claimExactly(t, s, 10, a)[0]
	b := commit(t, s, "g1", "two", 1)
	settle(t, s, c, terminal("row_hash_mismatch", "observed"))
	fx := wantState(t, s, a, aggregates.EffectFailed)
	if !fx.Terminal || fx.LastCode != "row_hash_mismatch" || fx.ObservedHash != "observed" {
		t.Fatalf("terminal failure recorded as %+v", fx)
	}
	claimExactly(t, s, 10)
	s.Advance(24 * time.Hour) // never claimable again, however long
	claimExactly(t, s, 10)
	if n, err := s.SupersedeTerminal(s.Spreadsheet(), 10); err != nil || n != 1 {
		t.Fatalf("supersede: %d, %v", n, err)
	}
	wantState(t, s, a, aggregates.EffectSuperseded)
	// b, queued behind the failure, is folded into the correction (it
	// writes canonical state, b's values included), now the row's head.
	fb := wantState(t, s, b, aggregates.EffectSuperseded)
	corr := aggregates.EffectID(fb.Target.Binding, fb.StreamSeq+1)
	if fx := claimExactly(t, s, 1, corr)[0]; fx.Values["name"] != "two" {
		t.Fatalf("correction %+v does not write canonical state", fx)
	}
}

func claimsInQueueOrder(t *testing.T, s Subject) {
	a1 := commit(t, s, "g1", "one", 1)
	a2 := commit(t, s, "g2", "two", 2)
	a3 := commit(t, s, "g3", "three", 3)
	if c, err := s.Claim("another-spreadsheet", 10); err != nil || len(c) != 0 {
		t.Fatalf("claim of another spreadsheet: %v, %v", ids(c), err)
	}
	wantState(t, s, a1, aggregates.EffectPending)
	claimExactly(t, s, 2, a1, a2)
	claimExactly(t, s, 2, a3)
	claimExactly(t, s, 2)
}

// ---- I04 ----

func displacedWriter(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c := claimExactly(t, s, 10, a)[0] // the old owner holds a claim…
	b := commit(t, s, "g2", "two", 2)
	s.Displace(t) // …and another writer takes the store over
	if err := s.Renew(); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("renewal of a displaced writer: %v, want %v", err, events.ErrStaleWriterFence)
	}
	err := s.Settle([]effects.Settlement{{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: applied("h")}})
	if !errors.Is(err, events.ErrStaleWriterFence) && !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("post-ack bookkeeping of a displaced writer: %v", err)
	}
	wantState(t, s, a, aggregates.EffectProcessing) // left for the new owner to recover
	if got, err := s.Claim(s.Spreadsheet(), 10); !errors.Is(err, events.ErrStaleWriterFence) || len(got) != 0 {
		t.Fatalf("claim of a displaced writer: %v, %v", ids(got), err)
	}
	wantState(t, s, b, aggregates.EffectPending)
	if err := s.RecordDivergence(s.Spreadsheet(), "test"); !errors.Is(err, events.ErrStaleWriterFence) {
		t.Fatalf("divergence record of a displaced writer: %v", err)
	}
}

func staleClaims(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	b := commit(t, s, "g2", "two", 2)
	c := claimExactly(t, s, 10, a, b)
	ca, cb := c[0], c[1]
	err := s.Settle([]effects.Settlement{{ID: a, ClaimToken: "not-the-claim", Outcome: applied("h")}})
	if !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("settlement with a forged token: %v", err)
	}
	wantState(t, s, a, aggregates.EffectProcessing)
	// A stale settlement is rejected; the current ones of the same call are recorded.
	err = s.Settle([]effects.Settlement{{ID: a, ClaimToken: ca.ClaimToken, Outcome: retry(s.Now())},
		{ID: b, ClaimToken: "forged", Outcome: applied("h")}})
	if !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("batch with one stale settlement: %v", err)
	}
	wantState(t, s, a, aggregates.EffectFailed)
	wantState(t, s, b, aggregates.EffectProcessing)
	ca2 := claimExactly(t, s, 10, a)[0]
	if ca2.ClaimToken == ca.ClaimToken {
		t.Fatal("a new claim reused the old token")
	}
	err = s.Settle([]effects.Settlement{{ID: a, ClaimToken: ca.ClaimToken, Outcome: applied("h")}})
	if !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("settlement with the previous claim's token: %v", err)
	}
	wantState(t, s, a, aggregates.EffectProcessing)
	settle(t, s, ca2, applied("h"))
	err = s.Settle([]effects.Settlement{{ID: a, ClaimToken: ca2.ClaimToken, Outcome: applied("h")}})
	if !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("second settlement of a settled claim: %v", err)
	}
	// An unknown effect fails the whole call: nothing of it is recorded.
	if err := s.Settle([]effects.Settlement{{ID: cb.ID, ClaimToken: cb.ClaimToken, Outcome: applied("h")},
		{ID: "fx-no-such-effect", ClaimToken: "t", Outcome: applied("h")}}); err == nil {
		t.Fatal("a settlement of an unknown effect was accepted")
	}
	wantState(t, s, b, aggregates.EffectProcessing)
}

// ---- I05 ----

func fenceAndDivergence(t *testing.T, s Subject) {
	f := s.Fence()
	if f.StoreID == "" || f.Epoch < 1 || f.Token == "" {
		t.Fatalf("fence %+v: every remote mutation needs the store, epoch and token", f)
	}
	before := s.Now()
	s.Advance(time.Minute)
	if got := s.Now().Sub(before); got != time.Minute {
		t.Fatalf("the store clock moved %s, want 1m", got)
	}
	if err := s.RecordDivergence(s.Spreadsheet(), "the spreadsheet authority now names epoch 9"); err != nil {
		t.Fatalf("record divergence: %v", err)
	}
	if err := s.Renew(); err != nil {
		t.Fatalf("renew: %v", err)
	}
}

// ---- I08 ----

func dueProbes(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	b := commit(t, s, "g2", "two", 2)
	c := commit(t, s, "g3", "three", 3)
	cl := claimExactly(t, s, 10, a, b, c)
	probeAt := s.Now().Add(10 * time.Second)
	settle(t, s, cl[0], uncertain(probeAt))
	settle(t, s, cl[1], applied("h"))
	settle(t, s, cl[2], retry(s.Now()))
	fx := wantState(t, s, a, aggregates.EffectUncertain)
	if !fx.DueAt.Equal(probeAt) || fx.ClaimToken != cl[0].ClaimToken || fx.LastCode != "write_uncertain" {
		t.Fatalf("uncertain effect %+v", fx)
	}
	wantProbes := func(want ...string) []aggregates.Effect {
		t.Helper()
		got, err := s.DueProbes(s.Spreadsheet(), 10)
		if want == nil {
			want = []string{}
		}
		if err != nil || !reflect.DeepEqual(ids(got), want) {
			t.Fatalf("due probes %v (%v), want %v", ids(got), err, want)
		}
		return got
	}
	wantProbes()
	s.Advance(9 * time.Second)
	wantProbes()
	s.Advance(time.Second)
	p := wantProbes(a)[0]
	if p.State != aggregates.EffectUncertain || p.ClaimToken != cl[0].ClaimToken {
		t.Fatalf("due probe %+v", p)
	}
	if got, err := s.DueProbes("another-spreadsheet", 10); err != nil || len(got) != 0 {
		t.Fatalf("due probes of another spreadsheet: %v, %v", ids(got), err)
	}
	claimExactly(t, s, 10, c) // the retry is claimable; the uncertain effect is not
	// The probe's evidence settles it: a receipt with its payload proves the write.
	settle(t, s, p, aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: "h", PayloadHash: p.PayloadHash, Via: "probe"})
	wantState(t, s, a, aggregates.EffectApplied)
	wantProbes()
	// No receipt proves it did not land: back on the retry path.
	d := commit(t, s, "g4", "four", 4)
	settle(t, s, claimExactly(t, s, 10, d)[0], uncertain(s.Now()))
	settle(t, s, wantProbes(d)[0], aggregates.Outcome{Kind: aggregates.OutcomeRetry, Code: "probe_not_applied", RetryAt: s.Now(), Via: "probe"})
	if fx := wantState(t, s, d, aggregates.EffectFailed); fx.Terminal {
		t.Fatal("a probe that found no receipt made the effect terminal")
	}
	if c := claimExactly(t, s, 10, d)[0]; c.Attempts != 2 {
		t.Fatalf("re-claim after the probe: attempt %d", c.Attempts)
	}
}

func boundedProbing(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c := claimExactly(t, s, 10, a)[0]
	settle(t, s, c, uncertain(s.Now()))
	if err := s.Reschedule(a, "not-the-claim", s.Now().Add(time.Minute), 3); !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("reschedule with a forged token: %v", err)
	}
	for probes := int64(1); probes <= 2; probes++ {
		next := s.Now().Add(time.Minute)
		if err := s.Reschedule(a, c.ClaimToken, next, 3); err != nil {
			t.Fatalf("reschedule %d: %v", probes, err)
		}
		fx := wantState(t, s, a, aggregates.EffectUncertain)
		if fx.Probes != probes || !fx.DueAt.Equal(next) {
			t.Fatalf("after %d inconclusive probes: probes %d due %s, want due %s", probes, fx.Probes, fx.DueAt, next)
		}
		if got, _ := s.DueProbes(s.Spreadsheet(), 10); len(got) != 0 {
			t.Fatalf("a rescheduled probe is due at once: %v", ids(got))
		}
		s.Advance(time.Minute)
		if got, _ := s.DueProbes(s.Spreadsheet(), 10); !reflect.DeepEqual(ids(got), []string{a}) {
			t.Fatalf("the rescheduled probe is not due: %v", ids(got))
		}
	}
	if err := s.Reschedule(a, c.ClaimToken, s.Now().Add(time.Minute), 3); err != nil {
		t.Fatalf("last reschedule: %v", err)
	}
	fx := wantState(t, s, a, aggregates.EffectFailed)
	if !fx.Terminal || fx.LastCode != aggregates.TerminalUncertainTimeout {
		t.Fatalf("after bounded probing: terminal %v code %q, want terminal %s", fx.Terminal, fx.LastCode, aggregates.TerminalUncertainTimeout)
	}
	if got, _ := s.DueProbes(s.Spreadsheet(), 10); len(got) != 0 {
		t.Fatalf("a timed-out effect is still probed: %v", ids(got))
	}
	commit(t, s, "g1", "two", 1)
	claimExactly(t, s, 10) // the terminal head blocks its row
	if err := s.Reschedule(a, c.ClaimToken, s.Now().Add(time.Minute), 3); !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("reschedule of a failed effect: %v", err)
	}
}

func recoverProcessing(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	b := commit(t, s, "g2", "two", 2)
	c := claimExactly(t, s, 10, a, b)
	settle(t, s, c[1], applied("h"))
	if n, err := s.RecoverProcessing("another-spreadsheet", s.Now()); err != nil || n != 0 {
		t.Fatalf("recover another spreadsheet: %d, %v", n, err)
	}
	probeAt := s.Now().Add(5 * time.Second)
	if n, err := s.RecoverProcessing(s.Spreadsheet(), probeAt); err != nil || n != 1 {
		t.Fatalf("recover: %d, %v", n, err)
	}
	fx := wantState(t, s, a, aggregates.EffectUncertain)
	if !fx.DueAt.Equal(probeAt) || fx.ClaimToken != c[0].ClaimToken || fx.LastCode != "claimed_by_previous_run" {
		t.Fatalf("recovered effect %+v", fx)
	}
	wantState(t, s, b, aggregates.EffectApplied)
	if n, err := s.RecoverProcessing(s.Spreadsheet(), probeAt); err != nil || n != 0 {
		t.Fatalf("second recovery: %d, %v", n, err)
	}
	if got, _ := s.DueProbes(s.Spreadsheet(), 10); len(got) != 0 {
		t.Fatalf("probed before due: %v", ids(got))
	}
	s.Advance(5 * time.Second)
	if got, _ := s.DueProbes(s.Spreadsheet(), 10); !reflect.DeepEqual(ids(got), []string{a}) {
		t.Fatalf("due probes %v, want %s", ids(got), a)
	}
}

// ---- I09 ----

func payloadMismatch(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c := claimExactly(t, s, 10, a)[0]
	settle(t, s, c, uncertain(s.Now()))
	settle(t, s, c, aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: "h", PayloadHash: "xxh64:0000000000000000", Via: "probe"})
	fx := wantState(t, s, a, aggregates.EffectFailed)
	if !fx.Terminal || fx.LastCode != aggregates.ErrEffectPayloadMismatch.Error() {
		t.Fatalf("a receipt with another payload settled as terminal %v code %q", fx.Terminal, fx.LastCode)
	}
	commit(t, s, "g1", "two", 1)
	b := commit(t, s, "g2", "two", 2)
	cb := claimExactly(t, s, 10, b)[0] // g1 stays blocked behind its failed head
	settle(t, s, cb, aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: "h", PayloadHash: cb.PayloadHash, Via: "dispatch"})
	wantState(t, s, b, aggregates.EffectApplied)
}

// ---- I10 ----

func supersedeTerminal(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	settle(t, s, claimExactly(t, s, 10, a)[0], applied("h1"))
	b := commit(t, s, "g1", "two", 2)
	settle(t, s, claimExactly(t, s, 10, b)[0], terminal("row_hash_mismatch", "vandalised"))
	r := commit(t, s, "g2", "kept", 7)
	settle(t, s, claimExactly(t, s, 10, r)[0], retry(s.Now().Add(time.Hour)))
	if n, err := s.SupersedeTerminal(s.Spreadsheet(), 10); err != nil || n != 1 {
		t.Fatalf("supersede: %d, %v", n, err)
	}
	fb := wantState(t, s, b, aggregates.EffectSuperseded)
	if fr := wantState(t, s, r, aggregates.EffectFailed); fr.Terminal {
		t.Fatal("the recoverable failure became terminal")
	}
	corr := aggregates.EffectID(fb.Target.Binding, fb.StreamSeq+1)
	fx := wantState(t, s, corr, aggregates.EffectPending)
	want := map[string]any{"id": "g1", "name": "two", "size": int64(2)}
	if fx.Target != fb.Target || fx.StreamSeq != fb.StreamSeq+1 || fx.Op != events.OpUpdate || !reflect.DeepEqual(fx.Values, want) ||
		fx.ExpectedHash != "vandalised" {
		t.Fatalf("correction %+v: want an update of the row to %v guarded by the observed hash", fx, want)
	}
	if c := claimExactly(t, s, 10, corr)[0]; c.ExpectedHash != "vandalised" {
		t.Fatalf("claimed correction guarded by %q", c.ExpectedHash)
	}
	if n, err := s.SupersedeTerminal(s.Spreadsheet(), 10); err != nil || n != 0 {
		t.Fatalf("second supersede: %d, %v", n, err)
	}
	wantState(t, s, r, aggregates.EffectFailed)
}

func supersedeRemoved(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	settle(t, s, claimExactly(t, s, 10, a)[0], terminal("anchor_exists", ""))
	del := s.Commit(t, Shape.Name, "g1", nil)
	if len(del) != 1 {
		t.Fatalf("removal queued %v", del)
	}
	fd := effect(t, s, del[0])
	if fd.Op != events.OpDelete || fd.Values != nil {
		t.Fatalf("removal queued %+v", fd)
	}
	if n, err := s.SupersedeTerminal(s.Spreadsheet(), 10); err != nil || n != 1 {
		t.Fatalf("supersede: %d, %v", n, err)
	}
	wantState(t, s, a, aggregates.EffectSuperseded)
	if fx, ok := s.Effect(t, aggregates.EffectID(fd.Target.Binding, fd.StreamSeq+1)); ok {
		t.Fatalf("a correction was queued for a removed entity whose row was never seen: %+v", fx)
	}
	claimExactly(t, s, 10, del[0])
}

func queueUnsynced(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	b := commit(t, s, "g2", "two", 2)
	if n, err := s.QueueUnsynced(s.Spreadsheet(), 10); err != nil || n != 0 {
		t.Fatalf("queue unsynced: %d, %v", n, err)
	}
	claimExactly(t, s, 10, a, b)
}

// repairTab: a row the tab lost is re-appended, a drifted row rewritten
// guarded by the hash read, a row still in flight left alone, and a
// second pass over the same read queues nothing more for rows in flight.
func repairTab(t *testing.T, s Subject) {
	tab := layout.SystemTabName(Shape.Name)
	for _, id := range []string{"g1", "g2"} {
		settle(t, s, claimExactly(t, s, 10, commit(t, s, id, "n", 1))[0], applied("h-"+id))
	}
	inFlight := commit(t, s, "g3", "pending", 3)
	seen := aggregates.SeenTab{Tab: tab, Rows: []aggregates.SeenRow{{Anchor: "g2", Hash: "edited"}}}
	rep, err := s.Repair(s.Spreadsheet(), repairBase(t, s), seen)
	if err != nil || rep.Missing != 1 || rep.Drifted != 1 || rep.Queued != 2 {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	got := claim(t, s, 10)
	byAnchor := map[string]aggregates.Effect{}
	for _, fx := range got {
		byAnchor[fx.Target.Anchor] = fx
	}
	if a, u := byAnchor["g1"], byAnchor["g2"]; a.Op != events.OpAppend || u.Op != events.OpUpdate || u.ExpectedHash != "edited" ||
		byAnchor["g3"].ID != inFlight || len(got) != 3 {
		t.Fatalf("claimed after repair: %+v", got)
	}
	if rep, err := s.Repair(s.Spreadsheet(), repairBase(t, s), seen); err != nil || rep.Queued != 0 {
		t.Fatalf("a second pass over rows in flight queued %d (%v)", rep.Queued, err)
	}
}

// repairAfterBase: a pass reads g1 and g2 (a person edited g2), then an
// update of g1 is written and settles before the store compares. The
// read shows g1 as it was: g1 is left for a later pass (no correction,
// not divergent) while g2 is rewritten. A pass whose base follows the
// update compares g1 and rewrites it, guarded by the row read.
func repairAfterBase(t *testing.T, s Subject) {
	tab := layout.SystemTabName(Shape.Name)
	for _, id := range []string{"g1", "g2"} {
		settle(t, s, claimExactly(t, s, 10, commit(t, s, id, "n", 1))[0], applied("h-"+id))
	}
	base := repairBase(t, s)
	seen := aggregates.SeenTab{Tab: tab, Rows: []aggregates.SeenRow{{Anchor: "g1", Hash: "h-g1"}, {Anchor: "g2", Hash: "edited"}}}
	settle(t, s, claimExactly(t, s, 10, commit(t, s, "g1", "renamed", 1))[0], applied("h-g1-renamed"))
	rep, err := s.Repair(s.Spreadsheet(), base, seen)
	if err != nil || rep.Drifted != 1 || rep.Diverged() != 1 || rep.Queued != 1 {
		t.Fatalf("repair of a read older than g1's write: %+v, %v; want g2 drifted and rewritten, g1 left", rep, err)
	}
	if got := claim(t, s, 10); len(got) != 1 || got[0].Target.Anchor != "g2" || got[0].ExpectedHash != "edited" {
		t.Fatalf("claimed after repair: %+v, want g2's rewrite only", got)
	}
	rep, err = s.Repair(s.Spreadsheet(), repairBase(t, s), seen) // g2's rewrite is in flight
	if err != nil || rep.Drifted != 1 || rep.Queued != 1 {
		t.Fatalf("a later pass over g1 showing its old row: %+v, %v; want it drifted and rewritten", rep, err)
	}
	if got := claim(t, s, 10); len(got) != 1 || got[0].Target.Anchor != "g1" || got[0].Op != events.OpUpdate || got[0].ExpectedHash != "h-g1" {
		t.Fatalf("claimed after the later pass: %+v, want g1's rewrite guarded by the row read", got)
	}
}

func repairBase(t *testing.T, s Subject) uint64 {
	t.Helper()
	base, err := s.RepairBase()
	if err != nil {
		t.Fatalf("repair base: %v", err)
	}
	return base
}

// ---- C06 ----

// misdirectedWrite: g1's update landed on g2's row. In one settlement the
// update is superseded by a re-queue of g1's cells (behind g1's later
// effects: I07), g2's overwritten cell gets a repair from its record,
// guarded by the row as the write left it, and a stale claim is refused.
func misdirectedWrite(t *testing.T, s Subject) {
	a1, b1 := commit(t, s, "g1", "one", 1), commit(t, s, "g2", "two", 2)
	for _, c := range claimExactly(t, s, 10, a1, b1) {
		settle(t, s, c, applied("h-"+c.Target.Anchor))
	}
	a2 := commit(t, s, "g1", "one", 9)
	c := claimExactly(t, s, 10, a2)[0]
	a3 := commit(t, s, "g1", "uno", 9) // queued while a2 is in flight
	md := &aggregates.Misdirected{SheetRow: 2, DisplacedAnchor: "g2", Columns: []string{"size"}, RowHash: "g2-shows-9"}
	stale := []effects.Settlement{{ID: c.ID, ClaimToken: "not-the-claim", Outcome: aggregates.Outcome{Kind: aggregates.OutcomeMisdirected, Misdirected: md}}}
	if err := s.Settle(stale); !errors.Is(err, aggregates.ErrStaleClaim) {
		t.Fatalf("stale misdirected settlement: %v", err)
	}
	settle(t, s, c, aggregates.Outcome{Kind: aggregates.OutcomeMisdirected, Code: aggregates.CodeWriteMisdirected, Misdirected: md, Via: "dispatch"})
	fa := wantState(t, s, a2, aggregates.EffectSuperseded)
	requeue := wantState(t, s, aggregates.EffectID(fa.Target.Binding, fa.StreamSeq+2), aggregates.EffectPending)
	if requeue.Op != events.OpUpdate || !reflect.DeepEqual(requeue.Values, map[string]any{"size": int64(9)}) || requeue.ExpectedHash != "" {
		t.Fatalf("re-queued %+v", requeue)
	}
	b := effect(t, s, b1)
	repair := wantState(t, s, aggregates.EffectID(b.Target.Binding, b.StreamSeq+1), aggregates.EffectPending)
	if repair.Op != events.OpUpdate || !reflect.DeepEqual(repair.Values, map[string]any{"size": int64(2)}) || repair.ExpectedHash != "g2-shows-9" {
		t.Fatalf("repair %+v", repair)
	}
	got := claimExactly(t, s, 10, a3, repair.ID)
	if got[0].ExpectedHash != "h-g1" {
		t.Fatalf("a3 guarded by %q, want g1's last applied write", got[0].ExpectedHash)
	}
}

// ---- I32 ----

func coalesceTail(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	b := commit(t, s, "g2", "other", 9)
	if a2 := commit(t, s, "g1", "two", 2); a2 != a {
		t.Fatalf("a change of a row with an unclaimed append queued %s, want it merged into %s", a2, a)
	}
	fa := wantState(t, s, a, aggregates.EffectPending)
	if want := map[string]any{"id": "g1", "name": "two", "size": int64(2)}; fa.Op != events.OpAppend || !reflect.DeepEqual(fa.Values, want) || fa.StreamSeq != 1 {
		t.Fatalf("merged effect %s@%d %#v, want one append of %#v", fa.Op, fa.StreamSeq, fa.Values, want)
	}
	// Queue order stays: the merged effect keeps its place before g2's.
	settle(t, s, claimExactly(t, s, 1, a)[0], applied("h1"))
	settle(t, s, claimExactly(t, s, 1, b)[0], applied("h2"))
	u := commit(t, s, "g1", "three", 2)
	if u2 := commit(t, s, "g1", "three", 3); u2 != u {
		t.Fatalf("a second update queued %s, want it merged into %s", u2, u)
	}
	if fu := effect(t, s, u); fu.Op != events.OpUpdate || !reflect.DeepEqual(fu.Values, map[string]any{"name": "three", "size": int64(3)}) {
		t.Fatalf("merged update %s %#v, want the union of the changed cells, later ones winning", fu.Op, fu.Values)
	}
	if d := s.Commit(t, Shape.Name, "g1", nil); len(d) != 1 || d[0] != u {
		t.Fatalf("a delete after a queued update queued %v, want it merged into %s", d, u)
	}
	c := claimExactly(t, s, 10, u)[0]
	if c.Op != events.OpDelete || c.Values != nil || c.ExpectedHash != "h1" {
		t.Fatalf("claimed %s %#v guarded by %q, want a delete guarded by the row's last applied hash (I06)", c.Op, c.Values, c.ExpectedHash)
	}
}

func coalesceNeverClaimed(t *testing.T, s Subject) {
	a := commit(t, s, "g1", "one", 1)
	c := claimExactly(t, s, 10, a)[0]
	b := commit(t, s, "g1", "two", 1)
	if b == a || effect(t, s, a).PayloadHash != c.PayloadHash {
		t.Fatal("a change merged into a claimed effect")
	}
	settle(t, s, c, retry(s.Now())) // back on the retry path: still never merged into
	if b2 := commit(t, s, "g1", "three", 1); b2 != b {
		t.Fatalf("the pending tail %s did not take the change (queued %s)", b, b2)
	}
	settle(t, s, claimExactly(t, s, 10, a)[0], applied("h"))
	cb := claimExactly(t, s, 10, b)[0]
	settle(t, s, cb, applied("h2"))
	if n := commit(t, s, "g1", "four", 1); n == b {
		t.Fatal("a change merged into an applied effect")
	}
}
