package effects_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// poolTokens are the emulator callers (bearer tokens) of a pool of
// service accounts.
var poolTokens = []string{"sa-0-token", "sa-1-token"}

// pooled makes a provider configuration a pool of the accounts tokens.
func pooled(tokens ...string) func(*gsheets.Config) {
	return func(c *gsheets.Config) {
		c.HTTPClient = emulator.Caller(tokens[0])
		for _, tok := range tokens[1:] {
			c.Pool = append(c.Pool, gsheets.Account{HTTPClient: emulator.Caller(tok)})
		}
	}
}

// poolRun is a dispatcher writing one tab's rows round after round
// through a provider of a pool, against an emulator that enforces a
// per-user quota whose window never slides (its clock stands still).
type poolRun struct {
	emu  *emulator.Emulator
	prov *gsheets.Provider
	ob   *effects.MemOutbox
	disp *effects.Dispatcher
}

const poolRows = 3

func newPoolRun(t *testing.T, quota int, tokens []string) *poolRun {
	t.Helper()
	ctx := context.Background()
	clock := events.NewManualClock(t0)
	emu := emulator.New(emulator.Options{AutoCreate: true, Clock: clock,
		Quota: &emulator.Quota{ReadsPerUser: quota, WritesPerUser: quota, Window: time.Hour}})
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	cfg := gsheets.Config{Endpoint: srv.URL, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff: gsheets.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2}, RequestTimeout: 5 * time.Second, Now: clock.Now,
		Sleep:    func(ctx context.Context, _ time.Duration) error { return ctx.Err() }, // a 429's Retry-After is the window's hour
		TrustTTL: -1}                                                                    // every pass reads first (no kept rows), so the rounds spend both quotas
	pooled(tokens...)(&cfg)
	prov, err := gsheets.New(ctx, cfg)
	must(t, err)
	schema, err := layout.NewSchema(layout.Entity{Name: "E0", Fields: []layout.Field{{Name: "id", Kind: cell.String, Key: true},
		{Name: "name", Kind: cell.String}}})
	must(t, err)
	wb, err := prov.Provision(ctx, sheetID, schema)
	must(t, err)
	ob := effects.NewMemOutbox(effects.MemOutboxConfig{Clock: clock, Fence: testFence, Schema: schema})
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: prov, Workbook: wb, Outbox: ob, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), AuthorityTTL: testTTL, Workers: 1})
	must(t, err)
	must(t, disp.ClaimAuthority(ctx))
	return &poolRun{emu: emu, prov: prov, ob: ob, disp: disp}
}

// round commits a new version of every row and runs one pass (its
// failure, a 429 after the retries, is the quota speaking: not fatal).
func (r *poolRun) round(t *testing.T, v int) {
	t.Helper()
	for i := range poolRows {
		_, err := r.ob.Commit("E0", fmt.Sprintf("row-E0-%03d", i), map[string]any{"name": "v" + strconv.Itoa(v)})
		must(t, err)
	}
	_, _ = r.disp.Pass(context.Background())
}

// applied reports whether every effect was applied.
func (r *poolRun) applied() bool {
	for _, fx := range r.ob.Effects() {
		if fx.State != aggregates.EffectApplied {
			return false
		}
	}
	return true
}

// throttled counts the 429s the provider was answered.
func (r *poolRun) throttled() uint64 {
	q := r.prov.QuotaBudget()
	return q.ReadThrottled + q.WriteThrottled
}

// shows checks every row shows version v.
func (r *poolRun) shows(t *testing.T, v int) {
	t.Helper()
	rows, err := r.emu.Person(sheetID).Displayed("E0_System")
	must(t, err)
	want := map[string]bool{}
	for i := range poolRows {
		want[fmt.Sprintf("row-E0-%03d", i)] = true
	}
	for _, row := range rows[1:] {
		if len(row) >= 2 && want[row[0]] && row[1] == "v"+strconv.Itoa(v) {
			delete(want, row[0])
		}
	}
	if len(want) > 0 {
		t.Fatalf("rows not at v%d: %v (tab %v)", v, want, rows)
	}
}

// Two accounts read and write more than one account's per-user quota
// allows (in a window that never slides) and converge without a 429;
// one account given the same work is answered 429 and does not.
func TestPoolTwoAccountsOutrunOneAccountsQuota(t *testing.T) {
	const quota, rounds = 10, 14
	one := newPoolRun(t, quota, poolTokens[:1])
	for v := 1; v <= rounds; v++ {
		one.round(t, v)
	}
	if one.applied() || one.throttled() == 0 {
		t.Fatalf("one account did the work (applied %v, %d 429s): it does not exceed one account's quota", one.applied(), one.throttled())
	}
	two := newPoolRun(t, quota, poolTokens)
	for v := 1; v <= rounds; v++ {
		two.round(t, v)
	}
	if !two.applied() || two.throttled() != 0 {
		t.Fatalf("two accounts: applied %v, %d 429s; want every effect applied without a 429", two.applied(), two.throttled())
	}
	two.shows(t, rounds)
	total := two.emu.Counters(sheetID)
	if total.Reads <= quota || total.Writes <= quota {
		t.Fatalf("%+v requests in all: not more than one account's quota of %d", total, quota)
	}
	for _, tok := range poolTokens {
		if c := two.emu.CallerCounters(tok); c.Reads > quota || c.Writes > quota {
			t.Fatalf("one account sent %+v, past its quota of %d", c, quota)
		}
	}
	t.Logf("two accounts: %d reads and %d writes against a per-user quota of %d each", total.Reads, total.Writes, quota)
}

// An account revoked mid-run leaves the pool at its first refusal; the
// other carries on and nothing is lost: every row shows its last version.
func TestPoolAccountRevokedMidRunLosesNothing(t *testing.T) {
	const rounds = 8
	r := newPoolRun(t, 0, poolTokens)
	for v := 1; v <= rounds; v++ {
		if v == rounds/2 {
			r.emu.Revoke(poolTokens[1])
		}
		r.round(t, v)
	}
	if !r.applied() {
		t.Fatalf("effects left unapplied with one account revoked: %v", r.ob.Effects())
	}
	r.shows(t, rounds)
	q := r.prov.QuotaBudget()
	if q.Accounts[1].Out != sheetsio.CodeCredentialsRejected || q.Accounts[0].Out != "" {
		t.Fatalf("accounts %+v, want account 1 out with credentials_rejected", q.Accounts)
	}
	if w := r.emu.CallerCounters(poolTokens[0]).Writes; w < rounds/2 {
		t.Fatalf("account 0 wrote %d times, want it to carry the rounds after the revocation", w)
	}
}
