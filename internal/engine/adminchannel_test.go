package engine_test

import (
	"errors"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// TestAcknowledgeSystemThroughTheAdministrativeChannelWhileTheStoreRuns
// sends acknowledge_system, as the CLI does, to a running synced store over
// its socket: a stale fence is refused with its code and outcome, the
// current fence resolves the conflict in the running store, a replay is
// rejected.
func TestAcknowledgeSystemThroughTheAdministrativeChannelWhileTheStoreRuns(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	var st admin.StatusResponse
	mustT(t, admin.Call(ctx, x.Dir(), admin.OpStatus, nil, &st))
	if st.OpenConflicts != 1 || st.LogHead == 0 || st.Protocol != admin.Version {
		t.Fatalf("status %+v", st)
	}
	req := admin.AckRequest{ConflictID: c.ID, CanonicalRevision: c.CanonicalRevision + 1, CandidateHash: c.CandidateHash, CandidateEpoch: c.CandidateEpoch}
	var res admin.AckResponse
	if err := admin.Call(ctx, x.Dir(), admin.OpConflictAck, req, &res); !errors.Is(err, hikoutei.ErrAckStale) || res.Outcome != string(hikoutei.AckStale) {
		t.Fatalf("stale fence: %+v %v", res, err)
	}
	req.CanonicalRevision = c.CanonicalRevision
	if err := admin.Call(ctx, x.Dir(), admin.OpConflictAck, req, &res); err != nil || res.Outcome != string(hikoutei.AckApplied) || res.ReconcileEffect == "" {
		t.Fatalf("ack: %+v %v", res, err)
	}
	if open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen); len(open) != 0 {
		t.Fatalf("still open in the running store: %+v", open)
	}
	if err := admin.Call(ctx, x.Dir(), admin.OpConflictAck, req, &res); !errors.Is(err, hikoutei.ErrAckRejected) {
		t.Fatalf("replayed ack: %v", err)
	}
	x.drain()
	if got := x.cellOf(partInput, "1", "qty"); got != "5" {
		t.Fatalf("the reconcile queued over the channel did not land: qty %s", got)
	}
}

// TestI30_UseSheetThroughTheAdministrativeChannelWhileTheStoreRuns: a
// person's "use the sheet's value", sent as `conflicts resolve
// --use-sheet` does, commits the sheet's value in the running store with
// the CLI as actor; a retry with the same command id changes nothing.
func TestI30_UseSheetThroughTheAdministrativeChannelWhileTheStoreRuns(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	req := admin.ResolveRequest{ConflictID: c.ID, Resolution: string(hikoutei.UseSheet), CommandID: "cli-1"}
	var res admin.AckResponse
	if err := admin.Call(ctx, x.Dir(), admin.OpConflictResolve, req, &res); err != nil || res.Outcome != string(hikoutei.AckApplied) {
		t.Fatalf("use-sheet: %+v %v", res, err)
	}
	if got := x.part("1").Qty; got != 9 {
		t.Fatalf("the sheet's value was not committed: qty %d", got)
	}
	head := x.head()
	if err := admin.Call(ctx, x.Dir(), admin.OpConflictResolve, req, &res); err != nil || x.head() != head {
		t.Fatalf("a retry with the same command id: %+v %v, %d new events", res, err, x.head()-head)
	}
	x.drain()
	if got := x.cellOf(partInput, "1", "qty"); got != "9" {
		t.Fatalf("the Input row shows qty %s after use-sheet", got)
	}
}
