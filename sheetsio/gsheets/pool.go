package gsheets

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// DefaultReadmit is how long an account taken out of the pool because a
// spreadsheet was not shared with it (sheet_permission_denied) stays out
// before one request tries it again: sharing the spreadsheet with it
// later brings it back without a restart. An account whose credentials
// Google refused stays out until the provider is built again.
const DefaultReadmit = 10 * time.Minute

// account is one Google user of the provider (a service account): its
// clients and its two quota budgets, Google's quota being per user.
type account struct {
	index       int
	email       string // the address to share the spreadsheet with; never logged
	svc         *sheets.Service
	hc          *http.Client // the same authorised client, for streamed reads
	read, write *ratelimit.Budget
	out         atomic.Pointer[outOfPool] // nil: in the pool
}

// outOfPool is why and since when an account is out of the pool.
type outOfPool struct {
	code string // sheetsio.CodeCredentialsRejected or sheetsio.CodePermissionDenied
	at   time.Time
}

// requestClass is the quota class of a request.
type requestClass int

const (
	classRead requestClass = iota
	classWrite
)

// budget is the account's budget of class c.
func (a *account) budget(c requestClass) *ratelimit.Budget {
	if c == classWrite {
		return a.write
	}
	return a.read
}

// candidate is what the choice of an account sees of one.
type candidate struct {
	in     bool    // in the pool, or back on trial
	tokens float64 // its budget's tokens of the request's class (+Inf unpaced)
}

// choose is the account a request takes: the candidate in the pool with
// the most tokens of the request's class; among equals the first at or
// after start, so that accounts with equal headroom (unpaced ones) take
// turns. -1 when none is in the pool.
func choose(cs []candidate, start int) int {
	best := -1
	for k := range cs {
		i := (start + k) % len(cs)
		if cs[i].in && (best < 0 || cs[i].tokens > cs[best].tokens) {
			best = i
		}
	}
	return best
}

// pool is the provider's accounts, in the order configured (account 0 is
// Config.CredentialsFile / Config.HTTPClient, then Config.Pool).
type pool struct {
	accts   []*account
	turn    [2]atomic.Uint64 // by class: reads and writes take turns apart
	mu      sync.Mutex       // serialises taking accounts out
	readmit time.Duration
}

// choice is the account a request of class c would take, and the turn
// it would take it at (0: a pool of one account, which takes no turns).
type choice struct {
	a     *account
	class requestClass
	turn  uint64
}

// next is the account the next request of class c would take at now: a
// query, which moves no turn (a wait for headroom that sends nothing asks
// it too). A request that goes out with it takes its turn (use).
func (p *pool) next(c requestClass, now time.Time) choice {
	if len(p.accts) == 1 {
		return choice{a: p.accts[0], class: c}
	}
	turn := p.turn[c].Load() + 1
	return choice{a: p.pick(c, now, turn), class: c, turn: turn}
}

// use takes ch's turn for the request that goes out with ch.a, so that
// the next request of its class moves on. It reports false when another
// request took that turn since ch was chosen: choose again (next), so
// that requests choosing together still take turns.
func (p *pool) use(ch choice) bool {
	return ch.turn == 0 || p.turn[ch.class].CompareAndSwap(ch.turn-1, ch.turn)
}

// take is the account a request of class c goes out with at now: the
// pool's next choice, its turn taken (use).
func (p *pool) take(c requestClass, now time.Time) *account {
	for {
		if ch := p.next(c, now); p.use(ch) {
			return ch.a
		}
	}
}

// pick chooses among the accounts for class c at now, turn breaking ties.
func (p *pool) pick(c requestClass, now time.Time, turn uint64) *account {
	cs := make([]candidate, len(p.accts))
	for i, a := range p.accts {
		cs[i] = candidate{in: a.eligible(now, p.readmit), tokens: a.budget(c).Tokens()}
	}
	i := choose(cs, int(turn%uint64(len(cs))))
	if i < 0 { // every account out, on trial later: the first carries the refusal
		i = 0
	}
	return p.accts[i]
}

// eligible reports whether a may take requests at now: in the pool, or
// out because a spreadsheet was not shared with it for readmit or more.
func (a *account) eligible(now time.Time, readmit time.Duration) bool {
	o := a.out.Load()
	return o == nil || o.code == sheetsio.CodePermissionDenied && readmit > 0 && now.Sub(o.at) >= readmit
}

// takeOut takes a out of the pool for code at now, unless it is the last
// account in it: the last one carries its refusals as a single account
// does. An account already out (on trial) is out again from now. It
// reports whether a is out (the request may go to another account).
func (p *pool) takeOut(a *account, code string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.out.Load() == nil && p.inPool() <= 1 {
		return false
	}
	a.out.Store(&outOfPool{code: code, at: now})
	return true
}

// inPool counts the accounts in the pool.
func (p *pool) inPool() int {
	n := 0
	for _, a := range p.accts {
		if a.out.Load() == nil {
			n++
		}
	}
	return n
}

// refusal is the code with which Google refused an account (its
// credentials, or the spreadsheet not shared with it), "" for any other
// outcome: a refused request was not carried out, so another account may
// send it again.
func refusal(err error) string {
	switch {
	case err == nil:
		return ""
	case credentialsRejected(err):
		return sheetsio.CodeCredentialsRejected
	case statusOf(err) == http.StatusForbidden:
		return sheetsio.CodePermissionDenied
	}
	return ""
}

// refused takes a out of the pool when err is Google refusing it and
// another account is left, and reports whether it did: the request then
// goes to another account at once. It logs the account's index and the
// code, never its e-mail.
func (p *Provider) refused(a *account, err error) bool {
	code := refusal(err)
	if code == "" || len(p.pool.accts) == 1 || !p.pool.takeOut(a, code, p.cfg.Now()) {
		return false
	}
	p.logger().Warn("sheets account out of the pool: the others carry its requests", "account", a.index, "code", code,
		"in_pool", p.pool.inPool())
	return true
}

// answered notes a request of a that Google carried out: an account on
// trial is back in the pool.
func (p *Provider) answered(a *account) {
	if a.out.Load() == nil {
		return
	}
	p.pool.mu.Lock()
	a.out.Store(nil)
	p.pool.mu.Unlock()
	p.logger().Info("sheets account back in the pool", "account", a.index)
}

type accountKey struct{}

// withAccount is ctx carrying the account its request goes out with.
func withAccount(ctx context.Context, a *account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// accountOf is the account of ctx's request (account 0 outside one).
func (p *Provider) accountOf(ctx context.Context) *account {
	if a, ok := ctx.Value(accountKey{}).(*account); ok {
		return a
	}
	return p.pool.accts[0]
}

// svcOf is the Sheets client of ctx's account.
func (p *Provider) svcOf(ctx context.Context) *sheets.Service { return p.accountOf(ctx).svc }

// httpOf is the authorised HTTP client of ctx's account.
func (p *Provider) httpOf(ctx context.Context) *http.Client { return p.accountOf(ctx).hc }
