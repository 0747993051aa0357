package engine_test

import (
	"errors"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/projector"
)

// activeQuarantineID is the id of anchor's active quarantine record on the
// Part Input tab.
func activeQuarantineID(t *testing.T, x *synced, anchor string) string {
	t.Helper()
	id := ""
	x.readModel(func(p *projector.Projector) error {
		st := p.Conn().Prep("SELECT quarantine_id FROM hk_quarantine WHERE tab = ? AND anchor = ? AND active = 1")
		defer st.Reset()
		st.BindText(1, partInput)
		st.BindText(2, anchor)
		for {
			row, err := st.Step()
			if err != nil || !row {
				return err
			}
			id = st.ColumnText(0)
		}
	})
	if id == "" {
		t.Fatalf("no active quarantine for %s", anchor)
	}
	return id
}

// A person's quarantined edit (text in a number column) dismissed — over
// the running store's channel, as `quarantine dismiss` sends it — is
// replaced by canonical state, and the evidence clears at the next poll;
// dismissing it again is refused.
func TestQuarantineDismissRewritesTheRowToCanonicalAndTheEvidenceClears(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	x.typeIn("2", "qty", "lots")
	x.poll()
	id := activeQuarantineID(t, x, "2")
	var res admin.DismissResponse
	if err := admin.Call(ctx, x.Dir(), admin.OpQuarantineDismiss, admin.DismissRequest{QuarantineID: id}, &res); err != nil || !res.Queued {
		t.Fatalf("dismiss: %+v %v", res, err)
	}
	x.drain()
	if got := x.cellOf(partInput, "2", "qty"); got != "2" {
		t.Fatalf("the dismissed cell shows %q, want the canonical 2", got)
	}
	x.poll()
	if q := x.quarantine(partInput)["2"]; len(q) != 0 {
		t.Fatalf("evidence still active after the dismissal: %v", q)
	}
	if err := x.DismissQuarantine(ctx, id); !errors.Is(err, hikoutei.ErrQuarantineNotDismissable) {
		t.Fatalf("dismissing a cleared record: %v", err)
	}
	err := admin.Call(ctx, x.Dir(), admin.OpQuarantineDismiss, admin.DismissRequest{QuarantineID: id}, &res)
	if !errors.Is(err, hikoutei.ErrQuarantineNotDismissable) || !strings.Contains(err.Error(), "no longer active") {
		t.Fatalf("dismissing a cleared record through the channel does not say why: %v", err)
	}
	if err := x.DismissQuarantine(ctx, "nope"); !errors.Is(err, hikoutei.ErrQuarantineNotFound) {
		t.Fatalf("an unknown record: %v", err)
	}
}
