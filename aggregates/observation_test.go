package aggregates

import (
	"errors"
	"testing"
	"time"
)

func TestClassifyFieldC04BlankOnlyOverNonEmpty(t *testing.T) {
	const blank, a, b, s = "h(nil)", "h(A)", "h(B)", "h(S)"
	for _, tc := range []struct {
		name                       string
		observed, shown, canonical string
		known                      bool
		want                       Verdict
	}{
		{"converged", b, s, b, true, Unchanged},
		{"edit over shown canonical", a, b, b, true, Edit},
		{"blank over non-empty shown", blank, b, b, true, Edit},
		{"blank over blank", blank, blank, blank, true, Unchanged},
		{"stale: sheet still shows the old write", s, s, b, true, Stale},
		{"both changed (I11)", a, s, b, true, Conflict},
		{"no confirmed baseline (I14)", a, "", b, false, Conflict},
	} {
		if got := ClassifyField(tc.observed, tc.shown, tc.canonical, tc.known); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestI13_DecideAcknowledgeFence(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := ConflictState{ID: "cf1", Open: true, Field: "qty", CanonicalRevision: 2, CandidateHash: "h", CandidateEpoch: 3, VisibleHash: "v", Version: 1}
	ok := Acknowledge{ConflictID: "cf1", CanonicalRevision: 2, CandidateHash: "h", CandidateEpoch: 3}
	d, err := DecideAcknowledge(c, 2, ok, now)
	if err != nil || len(d.Events) != 2 || d.Events[0].Type != TypeAckRequested || d.Events[1].Type != TypeAckApplied || d.ExpectedVersion != 1 {
		t.Fatalf("applied: %+v %v", d, err)
	}
	for name, tc := range map[string]struct {
		c    ConflictState
		rev  uint64
		cmd  Acknowledge
		want error
		typ  string
	}{
		"revision moved":  {c, 3, ok, ErrAckStale, TypeAckStale},
		"other candidate": {c, 2, Acknowledge{ConflictID: "cf1", CanonicalRevision: 2, CandidateHash: "x", CandidateEpoch: 3}, ErrAckStale, TypeAckStale},
		"old epoch (ABA)": {c, 2, Acknowledge{ConflictID: "cf1", CanonicalRevision: 2, CandidateHash: "h", CandidateEpoch: 2}, ErrAckStale, TypeAckStale},
		"resolved":        {ConflictState{ID: "cf1", VisibleHash: "v"}, 2, ok, ErrAckRejected, TypeAckRejected},
		"legacy (I14)":    {ConflictState{ID: "cf1", Open: true, Field: "qty", CandidateHash: "h", CandidateEpoch: 3}, 2, ok, ErrAckRejected, TypeAckRejected},
	} {
		d, err := DecideAcknowledge(tc.c, tc.rev, tc.cmd, now)
		if !errors.Is(err, tc.want) || len(d.Events) != 2 || d.Events[1].Type != tc.typ {
			t.Errorf("%s: %v %+v", name, err, d.Events)
		}
	}
}

func TestI12_ResolvesOnCommitOnlyOnAStrictlyHigherRevisionOfTheField(t *testing.T) {
	c := ConflictState{ID: "cf1", Open: true, Field: "qty", CanonicalRevision: 2, VisibleHash: "v"}
	if ResolvesOnCommit(c, "qty", 2) || ResolvesOnCommit(c, "name", 9) || !ResolvesOnCommit(c, "qty", 3) {
		t.Fatal("implicit system-wins on the wrong commit")
	}
	c.VisibleHash = ""
	if ResolvesOnCommit(c, "qty", 3) {
		t.Fatal("a legacy conflict resolved (I14)")
	}
}

func TestConflictAndQuarantineIDsAreDeterministic(t *testing.T) {
	if ConflictID("b", "f", 0) != ConflictID("b", "f", 0) || ConflictID("b", "f", 0) == ConflictID("b", "f", 1) {
		t.Fatal("conflict ids must be stable per epoch and differ across epochs (no ABA)")
	}
	if QuarantineID("t", "a", "h", "r") != QuarantineID("t", "a", "h", "r") || QuarantineID("t", "a", "h", "r") == QuarantineID("t", "a", "h2", "r") {
		t.Fatal("quarantine ids")
	}
}

func TestDecideBlockedNeedsTheCurrentClaim(t *testing.T) {
	e := Effect{ID: "fx1", State: EffectProcessing, ClaimToken: "tok", Version: 2}
	d, err := DecideBlocked(e, "tok", "", time.Time{})
	if err != nil || d.Events[0].Type != TypeEffectBlocked || d.ExpectedVersion != 2 {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := DecideBlocked(e, "other", "", time.Time{}); !errors.Is(err, ErrStaleClaim) {
		t.Fatalf("stale claim: %v", err)
	}
}
