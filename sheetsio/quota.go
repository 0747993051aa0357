package sheetsio

import (
	"context"
	"sync/atomic"
	"time"
)

// QuotaBudget is the state of a client's request budgets: Google's quota
// is per user, 60 reads and 60 writes a minute by default, and every
// worker of the user (each dispatcher, poller and reconciliation of every
// store sharing the client) waits on the same two budgets of that user
// (a client may hold a pool of users, each with its own). A 429 slows
// the whole budget of its class and user (multiplicative decrease) and
// successes bring it back to its ceiling (additive increase).
type QuotaBudget struct {
	// ReadRate and WriteRate are the current rates, requests a second
	// (0: unpaced).
	ReadRate, WriteRate float64
	// ReadCeiling and WriteCeiling are the configured rates (0: unpaced).
	ReadCeiling, WriteCeiling float64
	// ReadThrottled and WriteThrottled count the 429s answered to reads
	// and writes since the client was built.
	ReadThrottled, WriteThrottled uint64
	// Accounts are the budgets of each Google user of the client (a pool
	// of service accounts, gsheets.Config.Pool; one for a single
	// account), by their index in the pool. The rates and ceilings
	// above are the sums over the accounts in the pool, the 429s the
	// sums over all of them.
	Accounts []AccountBudget
}

// AccountBudget is one account's request budgets. Index is the
// account's place in the pool (0: the default credentials), its only
// label: never its e-mail or key.
type AccountBudget struct {
	Index                         int
	ReadRate, WriteRate           float64
	ReadCeiling, WriteCeiling     float64
	ReadThrottled, WriteThrottled uint64
	// Out is why the account was taken out of the pool (""; in it):
	// credentials_rejected (Google refused its key) or
	// permission_denied (the spreadsheet is not shared with it), since
	// OutSince. The others carry its requests.
	Out      string
	OutSince time.Time
}

// QuotaReporter is a Client that reports its request budgets
// (gsheets.Provider is one). It never waits.
type QuotaReporter interface {
	QuotaBudget() QuotaBudget
	// Headroom is how many requests of each class could start now
	// without waiting for the budget (the dispatcher fans a batch out
	// over at most that many parallel requests).
	Headroom() int
}

// LaneGate is a Client that says whether a pass may go out in parallel
// lanes (gsheets.Provider is one). Each lane checks the spreadsheet's
// capacity on its own read, so lanes that each fit could pass the limit
// together: a gate lets them run together only while the whole pass fits.
type LaneGate interface {
	FansOut(w *Workbook, b Batch) bool
}

// LaneDispatcher is a Client that sends a pass's lanes (batches over
// disjoint tabs sharing one fence) on one preflight read: the ranges every
// lane must read go out in one read request, then each lane plans against
// its part of it and sends its own batchUpdate, in parallel (gsheets.Provider
// is one). A pass of n lanes then costs one read instead of n. Results come
// back in the order of lanes, each as Client.Dispatch would return it.
type LaneDispatcher interface {
	DispatchLanes(ctx context.Context, w *Workbook, lanes []Batch) []LaneResult
}

// LaneResult is one lane's outcome in a LaneDispatcher's answer: Err is
// non-nil only when the lane wrote nothing (a failed shared read fails
// every lane that needed it).
type LaneResult struct {
	Result *DispatchResult
	Err    error
}

// ReadPacer is a Client whose reads wait on a shared budget and that
// lets a worker wait for its turn before deciding what its read carries
// (gsheets.Provider is one): the dispatcher waits here before it claims,
// so the effects committed while it waits ride in the pass it then sends
// instead of waiting for the next one.
type ReadPacer interface {
	// AwaitRead blocks until a read of normal priority could start now
	// (it takes no token), or ctx ends.
	AwaitRead(ctx context.Context) error
}

// KnownRows is a Client that may send a dispatch of updates without a
// preflight read while what it last verified of the spreadsheet is fresh
// (gsheets.Provider: the authority and the rows of the System tabs it
// read, within Config.TrustTTL, kept current with its own verified
// writes). The dispatcher then waits for the write's turn, not a read's,
// before it claims: a pass that reads nothing does not queue behind the
// woken polls' reads.
type KnownRows interface {
	// RowsKnown reports whether the authority showed exactly f within the
	// trust window and the rows of some tab are kept, so a pass of
	// updates may go without a read (the dispatch still reads when its
	// batch needs more).
	RowsKnown(w *Workbook, f Fence) bool
	// AwaitWrite blocks until a write could start now (it takes no
	// token), or ctx ends.
	AwaitWrite(ctx context.Context) error
}

// BlindAppends is a Client that may send a pass of first-send appends
// without a preflight read while the headers and the authority it last
// verified are fresh (gsheets.Provider: blind appends within
// Config.TrustTTL; provisioning verifies the tabs it created). The
// dispatcher then waits for the write's turn, not a read's, before it
// claims, while its last dispatch read nothing (the first after
// provisioning included): a pass of new rows does not wait for the read
// budget that provisioning or the polls spent, and a batch that needs a
// read after all reads as any other.
type BlindAppends interface {
	// AppendsKnown reports whether the authority showed exactly f and
	// the header of some tab that takes appends validated within the
	// trust window, so first-send appends to it may go without a read.
	AppendsKnown(w *Workbook, f Fence) bool
	// AwaitWrite blocks until a write could start now (it takes no
	// token), or ctx ends.
	AwaitWrite(ctx context.Context) error
}

// Priority is a read's place in a client's read budget (gsheets.Provider
// queues reads by it), carried by its context (WithReadPriority).
type Priority int

// Read priorities, lowest rank first: a context's mark is the highest
// given (ReadPriority).
const (
	// PriorityNormal reads wait their turn and leave the budget's reserve
	// to urgent ones: an unmarked context's.
	PriorityNormal Priority = iota
	// PriorityBackground reads are a scheduled pass's (the dispatcher's
	// reconciliation marks its own): a client with a read budget spaces
	// them out while the budget is busy, so they come one at a time
	// between the dispatcher's reads instead of in a burst that stalls it.
	PriorityBackground
	// PriorityUrgent reads take the reserve the budget keeps and start
	// ahead of every other read waiting: the poller marks the polls a
	// wake starts (a person's edit waits on them).
	PriorityUrgent
)

// String returns "normal", "background" or "urgent".
func (p Priority) String() string {
	switch p {
	case PriorityBackground:
		return "background"
	case PriorityUrgent:
		return "urgent"
	}
	return "normal"
}

// priorityKey is the context key of a read priority.
type priorityKey struct{}

// turnKey is the context key of a read turn (WithReadTurn).
type turnKey struct{}

// readTurn is a read turn a worker waited for; taken by its first read.
type readTurn struct{ taken atomic.Bool }

// WithReadTurn marks ctx as a worker's that has just waited for its read
// turn (ReadPacer.AwaitRead): the first read made with ctx is the one
// the turn was for, and a client with a read budget starts it on one
// token, the reserve's included, instead of waiting again for a token
// another read took in between. Later reads of ctx wait as unmarked
// ones do.
func WithReadTurn(ctx context.Context) context.Context {
	return context.WithValue(ctx, turnKey{}, &readTurn{})
}

// TakeReadTurn reports whether ctx carries a read turn (WithReadTurn)
// that no read has taken yet, and takes it: true once.
func TakeReadTurn(ctx context.Context) bool {
	t, _ := ctx.Value(turnKey{}).(*readTurn)
	return t != nil && t.taken.CompareAndSwap(false, true)
}

// WithReadPriority marks ctx's reads with p, unless ctx carries a higher
// one: an urgent read stays urgent inside a background pass, whichever
// was marked first.
func WithReadPriority(ctx context.Context, p Priority) context.Context {
	if p <= ReadPriority(ctx) {
		return ctx
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// ReadPriority is the priority of ctx's reads (WithReadPriority):
// PriorityNormal when unmarked.
func ReadPriority(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}
