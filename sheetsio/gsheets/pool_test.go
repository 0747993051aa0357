package gsheets

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// The choice of an account: the one in the pool with the most tokens of
// the request's class; equals take turns from start; none in the pool
// is -1.
func TestChooseAccount(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name  string
		cs    []candidate
		start int
		want  int
	}{
		{"one account", []candidate{{in: true, tokens: 0}}, 0, 0},
		{"most tokens wins", []candidate{{true, 1}, {true, 4}, {true, 2}}, 0, 1},
		{"waiters count against an account", []candidate{{true, -3}, {true, -1}}, 0, 1},
		{"out of the pool is never chosen", []candidate{{true, 1}, {false, 9}}, 1, 0},
		{"equals: the first from start", []candidate{{true, 2}, {true, 2}, {true, 2}}, 1, 1},
		{"equals wrap around", []candidate{{true, 2}, {false, 5}, {true, 2}}, 1, 2},
		{"unpaced accounts take turns", []candidate{{true, inf}, {true, inf}}, 1, 1},
		{"none in the pool", []candidate{{false, 1}, {false, 1}}, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := choose(c.cs, c.start); got != c.want {
				t.Fatalf("choose(%v, %d) = %d, want %d", c.cs, c.start, got, c.want)
			}
		})
	}
}

// tokens are the emulator callers (bearer tokens) of a two-account pool.
var tokens = []string{"sa-0-token", "sa-1-token"}

// withPool makes the harness's provider a pool of the accounts tokens.
func withPool(tokens ...string) func(*Config) {
	return func(c *Config) {
		c.HTTPClient = emulator.Caller(tokens[0])
		for _, tok := range tokens[1:] {
			c.Pool = append(c.Pool, Account{HTTPClient: emulator.Caller(tok)})
		}
	}
}

// callerService is the raw client of one caller, for spending its quota
// behind the provider's back.
func (h *harness) callerService(token string) *sheets.Service {
	h.t.Helper()
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(h.srv.URL+"/"), option.WithHTTPClient(emulator.Caller(token)))
	if err != nil {
		h.t.Fatal(err)
	}
	return svc
}

// A 429 slows the budget of the account whose quota is exhausted, not
// the other's: reads go on at the other account's full rate.
func TestPoolA429SlowsOnlyItsAccount(t *testing.T) {
	clock := &manualClock{now: time.Unix(0, 0)}
	h := newHarness(t, emulator.Options{AutoCreate: true, Quota: &emulator.Quota{ReadsPerUser: 4, Window: time.Hour}, Clock: clock},
		withPool(tokens...), func(c *Config) {
			c.Pacing = Pacing{ReadInterval: time.Millisecond, WriteInterval: time.Millisecond, Burst: 100}
		})
	spent := h.callerService(tokens[0])
	for range 4 { // account 0's quota, spent by another program of the same user
		if _, err := spent.Spreadsheets.Get(testSheetID).Fields("spreadsheetId").Do(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if err := h.p.Check(context.Background(), testSheetID); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	q := h.p.QuotaBudget()
	if len(q.Accounts) != 2 {
		t.Fatalf("accounts %+v, want 2", q.Accounts)
	}
	a0, a1 := q.Accounts[0], q.Accounts[1]
	if a0.ReadThrottled == 0 || a0.ReadRate >= a0.ReadCeiling {
		t.Fatalf("account 0 (its quota spent): %+v, want its read budget cut by a 429", a0)
	}
	if a1.ReadThrottled != 0 || a1.ReadRate != 1000 || a1.WriteRate != 1000 {
		t.Fatalf("account 1: %+v, want untouched at 1000 a second", a1)
	}
	if q.ReadCeiling != 2000 || q.ReadRate != a0.ReadRate+a1.ReadRate || q.ReadThrottled != a0.ReadThrottled {
		t.Fatalf("the pool's budget %+v is not the sum of its accounts'", q)
	}
}

// manualClock is an emulator clock that moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// A revoked account (401) is taken out of the pool at its first refusal
// and the other carries its reads and writes: nothing fails. When the
// account left is refused too, it carries the refusal as a single
// account does.
func TestPoolRevokedAccountLeavesThePool(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true}, withPool(tokens...))
	w := h.provision(testSchema(t))
	h.emu.Revoke(tokens[1])
	sent := h.emu.CallerCounters(tokens[1])
	for i := range 4 {
		if err := h.p.Check(context.Background(), testSheetID); err != nil {
			t.Fatalf("read %d with account 1 revoked: %v", i, err)
		}
		k := string(rune('a' + i))
		h.wantStatus(h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", k, partValues(k, 1))}}), 0, sheetsio.StatusApplied)
	}
	q := h.p.QuotaBudget()
	if q.Accounts[1].Out != sheetsio.CodeCredentialsRejected || q.Accounts[1].OutSince.IsZero() || q.Accounts[0].Out != "" {
		t.Fatalf("accounts %+v, want account 1 out with credentials_rejected", q.Accounts)
	}
	if got := h.emu.CallerCounters(tokens[1]); got.Reads+got.Writes != sent.Reads+sent.Writes+1 {
		t.Fatalf("the revoked account was sent %+v requests, want its one refusal", got)
	}
	if rows := h.values("Part_System"); len(rows) != 5 {
		t.Fatalf("%d rows on the tab, want the header and 4", len(rows))
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"account":1`) || !strings.Contains(logs, "credentials_rejected") {
		t.Fatalf("the account's removal is not logged by index: %s", logs)
	}
	for _, secret := range append(tokens, testSheetID) {
		if strings.Contains(logs, secret) {
			t.Fatalf("logs carry %q", secret)
		}
	}
	h.emu.Unshare(testSheetID, tokens[0])
	err := h.p.Check(context.Background(), testSheetID)
	if !errors.Is(err, sheetsio.ErrPermissionDenied) || h.p.QuotaBudget().Accounts[0].Out != "" {
		t.Fatalf("the last account refused: %v, %+v; want permission denied as for one account, still in the pool", err, h.p.QuotaBudget().Accounts)
	}
}

// An account a spreadsheet is not shared with leaves the pool, and is
// tried again once Readmit passed: shared meanwhile, it is back.
func TestPoolUnsharedAccountIsTriedAgain(t *testing.T) {
	now := fixedNow
	var mu sync.Mutex
	h := newHarness(t, emulator.Options{AutoCreate: true}, withPool(tokens...), func(c *Config) {
		c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		c.Readmit = time.Minute
	})
	h.emu.Unshare(testSheetID, tokens[1])
	for i := range 3 {
		if err := h.p.Check(context.Background(), testSheetID); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if a := h.p.QuotaBudget().Accounts[1]; a.Out != sheetsio.CodePermissionDenied || !a.OutSince.Equal(fixedNow) {
		t.Fatalf("account 1 %+v, want out with sheet_permission_denied", a)
	}
	h.emu.Share(testSheetID, tokens[1])
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	before := h.emu.CallerCounters(tokens[1]).Reads
	for i := range 4 {
		if err := h.p.Check(context.Background(), testSheetID); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if a := h.p.QuotaBudget().Accounts[1]; a.Out != "" || h.emu.CallerCounters(tokens[1]).Reads == before {
		t.Fatalf("account 1 %+v after it was shared and tried again, want back in the pool", a)
	}
}

// Unpaced accounts take turns: reads and writes spread over the pool,
// each class apart.
func TestPoolSpreadsRequests(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true}, withPool(tokens...))
	w := h.provision(testSchema(t))
	for i := range 6 {
		k := string(rune('a' + i))
		h.wantStatus(h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", k, partValues(k, 1))}}), 0, sheetsio.StatusApplied)
	}
	for _, tok := range tokens {
		if c := h.emu.CallerCounters(tok); c.Reads < 1 || c.Writes < 3 {
			t.Fatalf("caller %s sent %+v: the pool does not spread its reads and writes", tok[:4], c)
		}
	}
}

// Choosing an account is a query: the pool's next choice stays the same
// however often it is asked (a wait for headroom asks without sending)
// until a request takes its turn (use). A choice whose turn another
// request took meanwhile is refused, so requests that chose together
// still take turns; reads and writes take turns apart.
func TestPoolNextIsAQueryAndUseTakesTheTurn(t *testing.T) {
	unpaced := func(i int) *account {
		return &account{index: i, read: ratelimit.NewBudget(-1, 0, nil), write: ratelimit.NewBudget(-1, 0, nil)}
	}
	p := &pool{accts: []*account{unpaced(0), unpaced(1)}}
	now := time.Unix(0, 0)
	first, again := p.next(classRead, now), p.next(classRead, now)
	if first != again {
		t.Fatalf("two queries chose %+v then %+v", first, again)
	}
	if !p.use(first) {
		t.Fatal("the first request could not take its turn")
	}
	if p.use(again) {
		t.Fatal("a second request took the turn the first took")
	}
	if next := p.next(classRead, now); next.a == first.a {
		t.Fatalf("after a turn taken the next read chose account %d again", next.a.index)
	}
	if w := p.next(classWrite, now); w.a != first.a {
		t.Fatalf("a read's turn moved the writes' to account %d", w.a.index)
	}
	one := &pool{accts: []*account{unpaced(0)}}
	if ch := one.next(classRead, now); ch.a != one.accts[0] || !one.use(ch) || !one.use(ch) {
		t.Fatal("a pool of one account: always it, its turn always free")
	}
}
