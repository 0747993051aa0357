package engine_test

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// Member has a personal e-mail (erased with its subject, the member) and
// a system-owned team.
type Member struct {
	ID    string `hikoutei:"id,pk"`
	Email string `hikoutei:"email,personal"`
	Team  string `hikoutei:"team"`
}

const memberSystem = "Member_System"

// heldRead stands between the provider and the emulator. Armed, it lets
// the emulator serve the next values read (values:batchGetByDataFilter)
// at once and holds the answer back until release is closed: the store
// can write and settle rows between a pass's read and its comparison.
type heldRead struct {
	mu      sync.Mutex
	armed   bool
	served  chan struct{} // closed once the held read was served
	release chan struct{}
}

func (h *heldRead) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.served, h.release = true, make(chan struct{}), make(chan struct{})
}

func (h *heldRead) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		hold := h.armed && strings.HasSuffix(r.URL.Path, "/values:batchGetByDataFilter")
		h.armed = h.armed && !hold
		served, release := h.served, h.release
		h.mu.Unlock()
		if !hold {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		close(served)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// openMembers opens a store of members m-1, m-2 and m-3 (team red),
// synced, whose sheet's values reads a heldRead can hold.
func openMembers(t *testing.T) (*synced, *heldRead) {
	t.Helper()
	h := &heldRead{}
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), h.wrap, plainProvider)
	x := openSyncedOn(t, t.TempDir(), sheet, nil, []hikoutei.EntityDef{hikoutei.Entity[Member]("Member")})
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		commit(t, x.Store, &Member{ID: id, Email: id + ".person@example.invalid", Team: "red"})
	}
	x.drain()
	return x, h
}

// racedPass runs an anti-entropy pass whose values read h holds while
// between runs: what between does lands after the pass read the tabs
// and before the store compares what it read.
func (x *synced) racedPass(h *heldRead, between func()) map[string]aggregates.RepairReport {
	x.t.Helper()
	h.arm()
	type result struct {
		reps map[string]aggregates.RepairReport
		err  error
	}
	done := make(chan result, 1)
	go func() {
		reps, err := x.disp.AntiEntropy(ctx)
		done <- result{reps, err}
	}()
	select {
	case <-h.served:
	case r := <-done:
		x.t.Fatalf("the pass ended before its read was held: %v, %v", r.reps, r.err)
	}
	func() {
		defer close(h.release)
		between()
	}()
	r := <-done
	mustT(x.t, r.err)
	return r.reps
}

// pendingAnchors are the anchors of the effects waiting to be claimed.
func (x *synced) pendingAnchors() []string {
	var out []string
	for _, fx := range x.inState(aggregates.EffectPending, 100) {
		out = append(out, fx.Target.Anchor)
	}
	return out
}

// TestI28_ARowWrittenAfterAPassReadItIsLeftForALaterPass: a pass reads
// the Member tab (a person edited m-3's team); before the store compares
// the read, the store writes m-2 (an application's update, or the
// erasure of m-2's e-mail) and that write settles. The read shows m-2 as
// it was, which is no divergence: m-2 gets no correction and is not
// counted, while m-3 is rewritten and counted (health says 1 row). A
// later pass compares m-2 with a fresh read as any row.
func TestI28_ARowWrittenAfterAPassReadItIsLeftForALaterPass(t *testing.T) {
	for name, tc := range map[string]struct {
		write             func(x *synced)
		column, want, was string // the cell of m-2 the write changes, from was to want
	}{
		"update": {func(x *synced) {
			commit(x.t, x.Store, &Member{ID: "m-2", Email: "m-2.person@example.invalid", Team: "green"})
		}, "team", "green", "red"},
		"erasure": {func(x *synced) {
			_, err := x.Erase(ctx, "m-2")
			mustT(x.t, err)
		}, "email", hikoutei.Erased, "m-2.person@example.invalid"},
	} {
		t.Run(name, func(t *testing.T) {
			x, held := openMembers(t)
			mustT(t, x.sheet.Person().Type(memberSystem, x.cellRef(memberSystem, "m-3", "team"), "vandalised"))
			reps := x.racedPass(held, func() {
				tc.write(x)
				x.drain()
			})
			if r := reps[memberSystem]; r.Drifted != 1 || r.Diverged() != 1 || r.Queued != 1 {
				t.Fatalf("the pass that read m-2 before its write: %+v, want m-3 drifted and rewritten only", r)
			}
			if got := x.pendingAnchors(); len(got) != 1 || got[0] != "m-3" {
				t.Fatalf("corrections queued for %v, want m-3's only", got)
			}
			if tab := tabOf(t, x.Health().SyncHealth, memberSystem); tab.Diverged != 1 {
				t.Fatalf("health after the pass: %+v, want 1 diverged row", tab)
			}
			x.drain()
			if x.cellOf(memberSystem, "m-2", tc.column) != tc.want || x.cellOf(memberSystem, "m-3", "team") != "red" {
				t.Fatalf("after the corrections: m-2 %v, m-3 %v", x.rowOf(memberSystem, "m-2"), x.rowOf(memberSystem, "m-3"))
			}
			mustT(t, x.sheet.Person().Type(memberSystem, x.cellRef(memberSystem, "m-2", tc.column), tc.was))
			reps, err := x.disp.AntiEntropy(ctx)
			mustT(t, err)
			if r := reps[memberSystem]; r.Drifted != 1 || r.Queued != 1 {
				t.Fatalf("a later pass over m-2 showing its old %s: %+v, want it drifted and rewritten", tc.column, r)
			}
			x.drain()
			if got := x.cellOf(memberSystem, "m-2", tc.column); got != tc.want {
				t.Fatalf("m-2's %s after the later pass: %q", tc.column, got)
			}
		})
	}
}

// TestI28_APassThatLeftARowForLaterIsNeitherRememberedNorKept: a pass
// that left m-2 for later (written after its read) queued nothing, but
// is no clean pass: it keeps no read (KnownRepair), and when a person
// types m-2's old team back — the sheet then shows what that pass read,
// at the same checkpoint — the next pass compares m-2 and rewrites it.
// A kept read serves no pass whose base is behind the read model.
func TestI28_APassThatLeftARowForLaterIsNeitherRememberedNorKept(t *testing.T) {
	x, held := openMembers(t)
	reps := x.racedPass(held, func() {
		commit(t, x.Store, &Member{ID: "m-2", Email: "m-2.person@example.invalid", Team: "green"})
		x.drain()
	})
	if r := reps[memberSystem]; r.Diverged() != 0 || r.Queued != 0 {
		t.Fatalf("the pass that read m-2 before its write: %+v", r)
	}
	if b, err := x.e.KnownRepairOf(memberSystem); err != nil || !b.IsZero() {
		t.Fatalf("a pass that left a row for later kept its read: %v, %v", b, err)
	}
	x.overtypedAndRewritten(memberSystem, "m-2", "team", "red", "green") // the read the last pass left it in

	base := x.e.Checkpoint() // a pass's base, behind the next write
	commit(t, x.Store, &Member{ID: "m-1", Email: "m-1.person@example.invalid", Team: "blue"})
	x.drain()
	reps, err := x.disp.AntiEntropy(ctx)
	mustT(t, err)
	body, err := x.e.KnownRepairOf(memberSystem)
	mustT(t, err)
	if reps[memberSystem].Diverged() != 0 || body.IsZero() {
		t.Fatalf("an undamaged pass: %+v, kept read %v", reps, body)
	}
	if _, err := x.e.RepairUndecoded(memberSystem, base, body); !errors.Is(err, effects.ErrReadUndecoded) {
		t.Fatalf("the kept read served a pass whose base is behind the read model: %v", err)
	}
	if _, err := x.e.RepairUndecoded(memberSystem, x.e.Checkpoint(), body); err != nil {
		t.Fatalf("the kept read at the read model's checkpoint: %v", err)
	}
}
