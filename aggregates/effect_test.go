package aggregates

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

func TestI07_SettledStatesAreExactlyAppliedSupersededConflictBlocked(t *testing.T) {
	want := map[EffectState]bool{EffectApplied: true, EffectSuperseded: true, EffectConflict: true, EffectBlocked: true}
	seen := map[EffectState]bool{}
	for _, s := range EffectStates {
		if seen[s] {
			t.Fatalf("EffectStates lists %s twice", s)
		}
		seen[s] = true
		if s.Settled() != want[s] {
			t.Errorf("%s.Settled() = %v, want %v", s, s.Settled(), want[s])
		}
	}
	if len(EffectStates) != 8 {
		t.Fatalf("EffectStates has %d states, want the 8 of the state machine", len(EffectStates))
	}
	// A failed effect (even terminal) holds its row: reconciliation must supersede it.
	if EffectFailed.Settled() || EffectPending.Settled() || EffectProcessing.Settled() || EffectUncertain.Settled() {
		t.Fatal("failed, pending, processing and delivery_uncertain must hold the row's stream")
	}
	if EffectState("bogus").Settled() {
		t.Fatal("an unknown state must not count as settled")
	}
}

func TestI07_UnsettledIsTheComplementOfSettledOverEffectStates(t *testing.T) {
	un := Unsettled()
	want := []EffectState{EffectPending, EffectProcessing, EffectUncertain, EffectFailed}
	if !reflect.DeepEqual(un, want) {
		t.Fatalf("Unsettled() = %v, want %v (state machine order)", un, want)
	}
	for _, s := range EffectStates {
		if slices.Contains(un, s) == s.Settled() {
			t.Errorf("%s: in Unsettled() = %v but Settled() = %v", s, slices.Contains(un, s), s.Settled())
		}
	}
	for _, s := range un {
		if !slices.Contains(EffectStates, s) {
			t.Errorf("Unsettled() lists %s, not a state", s)
		}
	}
}

func TestI07_ClaimableHeadsOnlyTheLowestUnsettledEffectOfARow(t *testing.T) {
	fx := func(anchor string, seq, queued uint64, s EffectState) Effect {
		e := effect(anchor, seq, s)
		e.QueuedSeq = queued
		return e
	}
	notDue := fx("E", 1, 50, EffectPending)
	notDue.DueAt = later
	retry := fx("D", 1, 40, EffectFailed)
	retry.DueAt = now
	terminal := fx("C", 1, 30, EffectFailed)
	terminal.Terminal = true
	all := []Effect{
		// A: seq 1 applied, seq 2 and 3 pending → head is seq 2 (listed after seq 3 on purpose).
		fx("A", 3, 12, EffectPending), fx("A", 1, 10, EffectApplied), fx("A", 2, 11, EffectPending),
		// B: seq 1 still processing → seq 2 waits.
		fx("B", 1, 20, EffectProcessing), fx("B", 2, 21, EffectPending),
		// C: a terminal failed head wedges the row (I10) until superseded.
		terminal, fx("C", 2, 31, EffectPending),
		// D: a recoverable failed head that is due is on the retry path.
		retry, fx("D", 2, 41, EffectPending),
		// E: a head not yet due holds the row; seq 2 (due) must not jump it.
		notDue, fx("E", 2, 51, EffectPending),
		// F: delivery_uncertain: only a probe decides it.
		fx("F", 1, 60, EffectUncertain), fx("F", 2, 61, EffectPending),
		// G: every settled state releases the next stream_sequence.
		fx("G", 1, 70, EffectSuperseded), fx("G", 2, 71, EffectConflict), fx("G", 3, 72, EffectBlocked), fx("G", 4, 73, EffectPending),
		// H: a lone pending effect queued before all the others.
		fx("H", 1, 5, EffectPending),
	}
	got := ClaimableHeads(all, now, 100)
	var ids []string
	for _, e := range got {
		ids = append(ids, e.Target.Anchor+"#"+string(rune('0'+e.StreamSeq)))
	}
	want := []string{"H#1", "A#2", "D#1", "G#4"} // queue order
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("claimable heads %v, want %v", ids, want)
	}
	if got := ClaimableHeads(all, now, 2); len(got) != 2 || got[0].Target.Anchor != "H" || got[1].Target.Anchor != "A" {
		t.Fatalf("max 2 gave %v", got)
	}
	if got := ClaimableHeads(all, now, 0); len(got) != 0 {
		t.Fatalf("max 0 gave %v", got)
	}
	// Once E's head is due it is claimable; its seq 2 still is not.
	if got := ClaimableHeads([]Effect{notDue, fx("E", 2, 51, EffectPending)}, later, 10); len(got) != 1 || got[0].StreamSeq != 1 {
		t.Fatalf("E at its due time: %v", got)
	}
}

func TestI07_NextStreamSequenceClaimableExactlyWhenTheHeadSettled(t *testing.T) {
	for _, s := range EffectStates {
		head := effect("A", 1, s)
		head.QueuedSeq = 1
		next := effect("A", 2, EffectPending)
		next.QueuedSeq = 2
		got := ClaimableHeads([]Effect{next, head}, now, 10)
		nextClaimable := slices.ContainsFunc(got, func(e Effect) bool { return e.StreamSeq == 2 })
		if nextClaimable != s.Settled() {
			t.Errorf("head %s: next claimable = %v, want %v", s, nextClaimable, s.Settled())
		}
		if len(got) > 1 {
			t.Errorf("head %s: two effects of one row claimable: %v", s, got)
		}
	}
}

func TestEffectClaimableIsPendingOrRecoverablyFailedAndDue(t *testing.T) {
	for _, tc := range []struct {
		state    EffectState
		terminal bool
		due      time.Time
		want     bool
	}{
		{EffectPending, false, time.Time{}, true},
		{EffectPending, false, now, true},
		{EffectPending, false, later, false},
		{EffectFailed, false, now, true},
		{EffectFailed, false, later, false},
		{EffectFailed, true, now, false},
		{EffectProcessing, false, now, false},
		{EffectUncertain, false, now, false},
		{EffectApplied, false, now, false},
		{EffectSuperseded, false, now, false},
		{EffectConflict, false, now, false},
		{EffectBlocked, false, now, false},
	} {
		e := effect("A", 1, tc.state)
		e.Terminal, e.DueAt = tc.terminal, tc.due
		if got := e.Claimable(now); got != tc.want {
			t.Errorf("%s terminal=%v due=%v: Claimable = %v, want %v", tc.state, tc.terminal, tc.due, got, tc.want)
		}
	}
}

func TestDecideClaimRecordsTokenAttemptAndEpoch(t *testing.T) {
	e := effect("A", 1, EffectPending)
	e.Attempts, e.Version = 2, 4
	d, err := DecideClaim(e, "tok-1", 9, now)
	if err != nil {
		t.Fatal(err)
	}
	if d.Stream != events.EffectStream(e.ID) || d.ExpectedVersion != 4 || len(d.Events) != 1 || !d.Events[0].At.Equal(now) {
		t.Fatalf("decision %+v", d)
	}
	want := events.EffectClaimed{EffectID: e.ID, ClaimToken: "tok-1", Attempt: 3, Epoch: 9}
	if p := d.Events[0].Payload; p != want {
		t.Fatalf("payload %+v, want %+v", p, want)
	}
	retry := effect("A", 1, EffectFailed)
	if _, err := DecideClaim(retry, "tok-2", 9, now); err != nil {
		t.Fatalf("a recoverable failed effect is on the retry path: %v", err)
	}
}

func TestI10_DecideClaimRefusesTerminalAndInFlightEffects(t *testing.T) {
	for _, s := range []EffectState{EffectProcessing, EffectUncertain, EffectApplied, EffectSuperseded, EffectConflict, EffectBlocked} {
		if _, err := DecideClaim(effect("A", 1, s), "t", 1, now); !errors.Is(err, ErrEffectNotClaimable) {
			t.Errorf("claim of a %s effect: %v, want ErrEffectNotClaimable", s, err)
		}
	}
	term := effect("A", 1, EffectFailed)
	term.Terminal = true
	if _, err := DecideClaim(term, "t", 1, now); !errors.Is(err, ErrEffectNotClaimable) {
		t.Fatalf("a terminal failed head must never be claimable: %v", err)
	}
	if term.Claimable(now) {
		t.Fatal("terminal failed effect reported claimable")
	}
}

func TestDecideQueueDeterministicIDAndNextStreamSequence(t *testing.T) {
	tg := sheetWithInput.Target(sysTab, "GKA")
	q := Queue{Target: tg, Op: events.OpUpdate, Values: map[string]any{"name": "Goroka", "alt": int64(5282)}, Entity: "Airport",
		ID: "GKA", ExpectedHash: "guard"}
	d, id, err := DecideQueue(6, q, now)
	if err != nil {
		t.Fatal(err)
	}
	if id != EffectID(tg.Binding, 7) || d.Stream != events.OutboxStream(tg.Binding) || d.ExpectedVersion != 6 || len(d.Events) != 1 {
		t.Fatalf("decision %+v id %s", d, id)
	}
	p := d.Events[0].Payload.(events.EffectQueued)
	if p.EffectID != id || p.StreamSequence != 7 || p.Binding != tg.Binding || p.Tab != sysTab || p.Anchor != "GKA" ||
		p.Spreadsheet != "ops" || p.Op != events.OpUpdate || !reflect.DeepEqual(p.Values, q.Values) || p.Entity != "Airport" ||
		p.ID != "GKA" || p.ExpectedHash != "guard" || p.PayloadHash == "" {
		t.Fatalf("payload %+v", p)
	}
	d2, id2, _ := DecideQueue(6, q, now)
	b1, _ := events.MarshalRecord(d.Events[0])
	b2, _ := events.MarshalRecord(d2.Events[0])
	if id2 != id || string(b1) != string(b2) {
		t.Fatal("the same queue decision gave another id or record")
	}
	if _, other, _ := DecideQueue(7, q, now); other == id {
		t.Fatal("another stream_sequence must give another id")
	}
	q2 := q
	q2.Target = sheetWithInput.Target(inTab, "GKA")
	if _, other, _ := DecideQueue(6, q2, now); other == id {
		t.Fatal("another binding must give another id")
	}
}

func TestI09_PayloadHashCoversTheWriteNotTheSpreadsheetName(t *testing.T) {
	base := Queue{Target: sheetWithInput.Target(sysTab, "GKA"), Op: events.OpUpdate, Values: map[string]any{"name": "Café"},
		Entity: "Airport", ID: "GKA"}
	hash := func(q Queue) string {
		t.Helper()
		d, _, err := DecideQueue(0, q, now)
		if err != nil {
			t.Fatal(err)
		}
		return d.Events[0].Payload.(events.EffectQueued).PayloadHash
	}
	h := hash(base)
	renamed := base
	renamed.Target.Spreadsheet = "ops-renamed"
	if hash(renamed) != h {
		t.Fatal("the payload hash must not depend on the sync target's spreadsheet name")
	}
	nfd := base
	nfd.Values = map[string]any{"name": "Cafe\u0301"}
	if hash(nfd) != h {
		t.Fatal("equal values (NFC and NFD) must hash equal")
	}
	for name, mut := range map[string]func(*Queue){
		"values": func(q *Queue) { q.Values = map[string]any{"name": "Goroka Airport"} },
		"op":     func(q *Queue) { q.Op = events.OpAppend },
		"tab":    func(q *Queue) { q.Target.Tab = inTab },
		"anchor": func(q *Queue) { q.Target.Anchor = "LAE" },
	} {
		q := base
		mut(&q)
		if hash(q) == h {
			t.Errorf("changing %s kept the payload hash: a retry could not detect another payload", name)
		}
	}
	del := base
	del.Op, del.Values = events.OpDelete, nil
	d, _, err := DecideQueue(0, del, now)
	if err != nil || d.Events[0].Payload.(events.EffectQueued).Values != nil {
		t.Fatalf("delete: %+v %v", d, err)
	}
}

func TestDecideQueueRejectsValueWithoutCanonicalForm(t *testing.T) {
	q := Queue{Target: sheetWithInput.Target(sysTab, "GKA"), Op: events.OpUpdate, Values: map[string]any{"lat": math.Inf(1)}}
	if _, _, err := DecideQueue(0, q, now); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("err = %v, want ErrInvalidValue", err)
	}
}

func TestDecideSettleMapsEveryOutcome(t *testing.T) {
	e := claimed("A", "tok")
	e.PayloadHash = "ph"
	for _, tc := range []struct {
		o    Outcome
		want events.Payload
	}{
		{Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "dispatch", PayloadHash: "ph"},
			events.EffectApplied{EffectID: e.ID, ClaimToken: "tok", WrittenHash: "w", Via: "dispatch"}},
		{Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "dispatch"}, // no receipt hash: nothing to compare
			events.EffectApplied{EffectID: e.ID, ClaimToken: "tok", WrittenHash: "w", Via: "dispatch"}},
		{Outcome{Kind: OutcomeUncertain, Code: "timeout", RetryAt: later.In(time.FixedZone("X", 3600))},
			events.EffectUncertain{EffectID: e.ID, ClaimToken: "tok", Code: "timeout", ProbeAt: later.UTC()}},
		{Outcome{Kind: OutcomeConflict, Code: "row_changed", WrittenHash: "seen"},
			events.EffectConflict{EffectID: e.ID, ClaimToken: "tok", Code: "row_changed", ObservedHash: "seen"}},
		{Outcome{Kind: OutcomeRetry, Code: "quota", RetryAt: later},
			events.EffectFailed{EffectID: e.ID, ClaimToken: "tok", Code: "quota", RetryAt: later.UTC()}},
		{Outcome{Kind: OutcomeFailed, Code: "invalid_range", Terminal: true, WrittenHash: "seen"},
			events.EffectFailed{EffectID: e.ID, ClaimToken: "tok", Code: "invalid_range", Terminal: true, ObservedHash: "seen"}},
	} {
		d, err := decideSettle(e, "tok", tc.o, now)
		if err != nil {
			t.Fatalf("%s: %v", tc.o.Kind, err)
		}
		if d.Stream != events.EffectStream(e.ID) || d.ExpectedVersion != e.Version || len(d.Events) != 1 {
			t.Fatalf("%s: decision %+v", tc.o.Kind, d)
		}
		if got := d.Events[0].Payload; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.o.Kind, got, tc.want)
		}
	}
	// A probe settles a delivery_uncertain effect with the same claim.
	u := e
	u.State = EffectUncertain
	d, err := decideSettle(u, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "probe", PayloadHash: "ph"}, now)
	if err != nil || d.Events[0].Type() != events.TypeEffectApplied {
		t.Fatalf("probe settle: %+v %v", d, err)
	}
}

func TestI09_AReceiptWithAnotherPayloadHashFailsClosed(t *testing.T) {
	e := claimed("A", "tok")
	e.PayloadHash = "ph-mine"
	d, err := decideSettle(e, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "probe", PayloadHash: "ph-other"}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := events.EffectFailed{EffectID: e.ID, ClaimToken: "tok", Code: ErrEffectPayloadMismatch.Error(), Terminal: true}
	if got := d.Events[0].Payload; !reflect.DeepEqual(got, want) {
		t.Fatalf("mismatched receipt settled as %+v, want %+v", got, want)
	}
	if got := foldEffect(t, e, d); got.Claimable(later) || got.State.Settled() {
		t.Fatal("a payload mismatch must leave a terminal, unclaimable head for reconciliation")
	}
	// Same id, same payload hash: the retry is safe and applies.
	ok, err := decideSettle(e, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "probe", PayloadHash: "ph-mine"}, now)
	if err != nil || ok.Events[0].Type() != events.TypeEffectApplied {
		t.Fatalf("matching receipt: %+v %v", ok, err)
	}
	// Same queue inputs give the same id and payload hash: a replayed log re-queues the same effect.
	q := Queue{Target: sheetWithInput.Target(sysTab, "A"), Op: events.OpUpdate, Values: map[string]any{"name": "x"}}
	d1, id1, _ := DecideQueue(3, q, now)
	d2, id2, _ := DecideQueue(3, q, later)
	if id1 != id2 || d1.Events[0].Payload.(events.EffectQueued).PayloadHash != d2.Events[0].Payload.(events.EffectQueued).PayloadHash {
		t.Fatal("replayed queue decision gave another id or payload hash")
	}
}

func TestI04_SettlingWithAStaleClaimTokenIsRejected(t *testing.T) {
	// Old owner claimed with t1; a new owner recovered the effect, its
	// probe sent it back to the retry path and it was claimed again with t2.
	e := effect("A", 1, EffectPending)
	e = foldEffect(t, e, must(DecideClaim(e, "t1", 1, now)))
	e = foldEffect(t, e, must(DecideRecovered(e, later, now)))
	e = foldEffect(t, e, must(decideSettle(e, "t1", Outcome{Kind: OutcomeRetry, Code: "not_found", RetryAt: now, Via: "probe"}, now)))
	e = foldEffect(t, e, must(DecideClaim(e, "t2", 2, now)))
	if e.State != EffectProcessing || e.ClaimToken != "t2" || e.Attempts != 2 {
		t.Fatalf("setup: %+v", e)
	}
	applied := Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "dispatch"}
	if _, err := decideSettle(e, "t1", applied, now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("post-ack bookkeeping of the displaced claim: %v, want ErrStaleClaim", err)
	}
	if _, err := DecideOutcome(e, "t1", Outcome{Kind: OutcomeConflict}, true, now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("DecideOutcome with a stale token: %v", err)
	}
	if _, err := decideBlocked(e, "t1", "", now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("decideBlocked with a stale token: %v", err)
	}
	if _, err := decideSettle(e, "t2", applied, now); err != nil {
		t.Fatalf("the current claim settles: %v", err)
	}
	// A claim that already settled is not current, even with its own token.
	for _, s := range []EffectState{EffectPending, EffectApplied, EffectFailed, EffectSuperseded, EffectConflict, EffectBlocked} {
		done := e
		done.State = s
		if _, err := decideSettle(done, "t2", applied, now); !errors.Is(err, ErrStaleClaim) {
			t.Errorf("settle of a %s effect: %v, want ErrStaleClaim", s, err)
		}
	}
	u := e
	u.State = EffectUncertain
	if _, err := DecideProbeRescheduled(u, "t1", 5, later, now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("probe reschedule with a stale token: %v", err)
	}
}

func TestI08_ProbingIsBoundedThenTerminalTimeout(t *testing.T) {
	const maxProbes = 3
	e := claimed("A", "tok")
	e = foldEffect(t, e, must(decideSettle(e, "tok", Outcome{Kind: OutcomeUncertain, Code: "timeout", RetryAt: later}, now)))
	if e.State != EffectUncertain || e.Claimable(later) {
		t.Fatalf("a timeout must leave delivery_uncertain, never claimable: %+v", e)
	}
	zone := time.FixedZone("PGT", 10*3600)
	for i := int64(1); i < maxProbes; i++ {
		next := later.Add(time.Duration(i) * time.Minute).In(zone)
		d := must(DecideProbeRescheduled(e, "tok", maxProbes, next, now))
		want := events.EffectProbeScheduled{EffectID: e.ID, ClaimToken: "tok", Probes: i, ProbeAt: next.UTC()}
		if got := d.Events[0].Payload; !reflect.DeepEqual(got, want) {
			t.Fatalf("inconclusive probe %d: %+v, want %+v", i, got, want)
		}
		e = foldEffect(t, e, d)
		if e.State != EffectUncertain {
			t.Fatalf("probe %d left %s", i, e.State)
		}
	}
	d := must(DecideProbeRescheduled(e, "tok", maxProbes, later, now))
	want := events.EffectFailed{EffectID: e.ID, ClaimToken: "tok", Code: TerminalUncertainTimeout, Terminal: true}
	if got := d.Events[0].Payload; !reflect.DeepEqual(got, want) {
		t.Fatalf("probe %d (the bound): %+v, want terminal %+v", maxProbes, got, want)
	}
	e = foldEffect(t, e, d)
	if e.Claimable(later.Add(time.Hour)) || e.State.Settled() {
		t.Fatal("a timed-out effect must be a terminal, unclaimable head")
	}
	if _, err := DecideProbeRescheduled(e, "tok", maxProbes, later, now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("probing a failed effect: %v, want ErrStaleClaim", err)
	}
	if _, err := DecideProbeRescheduled(claimed("A", "tok"), "tok", maxProbes, later, now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("probing a processing effect: %v, want ErrStaleClaim", err)
	}
}

func TestI08_ARunLeftProcessingBecomesDeliveryUncertainWithADueProbe(t *testing.T) {
	e := claimed("A", "tok")
	d, err := DecideRecovered(e, later, now)
	if err != nil {
		t.Fatal(err)
	}
	want := events.EffectUncertain{EffectID: e.ID, ClaimToken: "tok", Code: "claimed_by_previous_run", ProbeAt: later}
	if got := d.Events[0].Payload; !reflect.DeepEqual(got, want) || d.ExpectedVersion != e.Version {
		t.Fatalf("recovered as %+v, want %+v", got, want)
	}
	if _, err := DecideRecovered(effect("A", 1, EffectPending), later, now); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("recovering a pending effect: %v", err)
	}
}

func TestI13_GuardFailureOfAReconcileIsBlockedCandidateNeverConflict(t *testing.T) {
	e := claimed("A", "tok")
	guardMiss := Outcome{Kind: OutcomeConflict, Code: "row_changed", WrittenHash: "seen"}
	d, err := DecideOutcome(e, "tok", guardMiss, true, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (events.EffectBlocked{EffectID: e.ID, ClaimToken: "tok", Code: "row_changed"}); d.Events[0].Payload != want {
		t.Fatalf("reconcile guard miss: %+v, want %+v", d.Events[0].Payload, want)
	}
	if got := foldEffect(t, e, d); got.State != EffectBlocked || !got.State.Settled() {
		t.Fatalf("blocked_candidate must settle the row's stream: %+v", got)
	}
	d, _ = DecideOutcome(e, "tok", guardMiss, false, now)
	if want := (events.EffectConflict{EffectID: e.ID, ClaimToken: "tok", Code: "row_changed", ObservedHash: "seen"}); d.Events[0].Payload != want {
		t.Fatalf("ordinary guard miss: %+v, want %+v", d.Events[0].Payload, want)
	}
	d, _ = DecideOutcome(e, "tok", Outcome{Kind: OutcomeApplied, WrittenHash: "w", Via: "dispatch"}, true, now)
	if d.Events[0].Type() != events.TypeEffectApplied {
		t.Fatalf("an applied reconcile: %s", d.Events[0].Type())
	}
	d, _ = decideBlocked(e, "tok", "", now)
	if d.Events[0].Payload.(events.EffectBlocked).Code != "candidate_row_changed" {
		t.Fatalf("default blocked code: %+v", d.Events[0].Payload)
	}
}

func TestOutcomeTroubled(t *testing.T) {
	for k, want := range map[OutcomeKind]bool{OutcomeApplied: false, OutcomeConflict: false, OutcomeUncertain: true,
		OutcomeFailed: true, OutcomeRetry: true} {
		if got := (Outcome{Kind: k}).Troubled(); got != want {
			t.Errorf("%s: Troubled = %v, want %v", k, got, want)
		}
	}
}

func must(d Decision, err error) Decision {
	if err != nil {
		panic(err)
	}
	return d
}
