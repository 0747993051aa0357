package gsheets

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
)

// Defaults. DefaultInterval paces each request class to 60 starts per minute,
// Google's per-user quota. DefaultMaxBatchBytes is 8 MiB, under the 10 MiB
// (10,485,760 bytes) Google accepts in one request body (400 "Request
// payload size exceeds the limit"; a body refused for its size is split,
// sendSplitting). Google recommends 2 MB for speed, a measure taken on
// values: a row of ours costs its appendCells or updateCells objects
// besides its values, five to six times the bytes of the same row as raw
// values.batchUpdate sends it (TestBodyBytesPerRow), so a 2 MB body of
// ours carried a fifth of the rows of a raw 2 MB one and spent the write
// budget (one request a second) five times as fast. 8 MiB carry 63-80 %
// of the rows of a raw 2 MB body.
const (
	DefaultInterval    = time.Second
	DefaultBurst       = 5
	DefaultReadReserve = 2
	// backgroundSpacing is how many read intervals apart the reads of
	// scheduled passes start while the read budget is busy
	// (sheetsio.PriorityBackground).
	backgroundSpacing = 3
	// quotaMargin is added to the per-minute window of each budget: two
	// requests a minute apart at the start may arrive closer together.
	quotaMargin             = 500 * time.Millisecond
	DefaultMaxBatchBytes    = 8 << 20
	DefaultMaxBatchRequests = 5000
	DefaultBackoffInitial   = 500 * time.Millisecond
	DefaultBackoffMax       = 32 * time.Second
	DefaultReadAttempts     = 8
	DefaultRequestTimeout   = 90 * time.Second
)

// Pacing sets the minimum interval between request starts per class and the
// burst allowed. An interval of 0 means "use the default"; a negative
// interval disables pacing (tests). ReadReserve is how many read tokens
// of the burst are kept for urgent reads (sheetsio.PriorityUrgent: the
// polls a wake starts): other reads start only while more are left, and
// urgent ones start ahead of them. 0 means DefaultReadReserve, negative
// none; at most Burst-1.
type Pacing struct {
	ReadInterval  time.Duration
	WriteInterval time.Duration
	Burst         int
	ReadReserve   int
}

// Backoff bounds read retries: delay n (from 0) is min(Max, Initial·2^n)
// with equal jitter (half fixed, half random), raised to the server's
// Retry-After when that is longer; at most Attempts tries in total.
type Backoff struct {
	Initial  time.Duration
	Max      time.Duration
	Attempts int
}

// Config configures a Provider. Exactly one way to reach Sheets is used:
// Endpoint without CredentialsFile means an unauthenticated emulator;
// CredentialsFile is a service-account JSON file (Endpoint optional).
// HTTPClient, when set, carries requests (it must add auth itself if the
// endpoint needs it). Logger receives diagnostics only (never ids, credentials
// or payloads); nil discards them. Now, Sleep and Jitter are injectable for
// tests; nil uses the wall clock, a context-aware timer and math/rand.
// RequestTimeout bounds each HTTP attempt (a write that times out is
// Uncertain); 0 means DefaultRequestTimeout. The package reads no
// environment variable: the caller configures it (the store maps
// HIKOUTEI_SYNC_RATE_LIMIT_INTERVAL_MS onto Pacing).
type Config struct {
	Endpoint        string
	CredentialsFile string
	HTTPClient      *http.Client
	// Pool adds Google users to the default one above (a pool of service
	// accounts): Google's quota is per user, so each brings its own 60
	// reads and 60 writes a minute. Each account has its own read and
	// write budget (Pacing), and each request takes the account with the
	// most headroom in its class; a 429 slows that account only. An
	// account Google refuses (401, a revoked key; 403, a spreadsheet not
	// shared with it) is taken out of the pool and the others carry on
	// (QuotaBudget.Accounts says which, by index); the last one left
	// carries the refusal as a single account does. Share every
	// spreadsheet with every account. Empty: one account, as before.
	Pool []Account
	// Readmit is how long an account out of the pool for a spreadsheet
	// not shared with it waits before a request tries it again (0:
	// DefaultReadmit; negative: never).
	Readmit          time.Duration
	Logger           *slog.Logger
	Pacing           Pacing
	Backoff          Backoff
	MaxBatchBytes    int
	MaxBatchRequests int
	RequestTimeout   time.Duration
	// TrustTTL is how long a verified tab header and authority let a
	// batch of first-send appends skip the preflight read (see
	// Op.FirstSend), and how long the rows a read showed of a System tab
	// let a batch of updates of them skip it (knownrows.go); 0 means
	// DefaultTrustTTL, negative always reads.
	TrustTTL time.Duration
	Now      func() time.Time
	Sleep    func(ctx context.Context, d time.Duration) error
	Jitter   func() float64
}

// Account is one more Google user of a pool (Config.Pool): a
// service-account JSON key file, or for an emulator an HTTPClient that
// identifies the account itself (as Config.HTTPClient does for the
// default account).
type Account struct {
	CredentialsFile string
	HTTPClient      *http.Client
}

func (c Config) withDefaults() Config {
	if c.Readmit == 0 {
		c.Readmit = DefaultReadmit
	}
	if c.Pacing.ReadInterval == 0 {
		c.Pacing.ReadInterval = DefaultInterval
	}
	if c.Pacing.WriteInterval == 0 {
		c.Pacing.WriteInterval = DefaultInterval
	}
	if c.Pacing.Burst <= 0 {
		c.Pacing.Burst = DefaultBurst
	}
	if c.Pacing.ReadReserve == 0 {
		c.Pacing.ReadReserve = DefaultReadReserve
	}
	c.Backoff = c.Backoff.withDefaults()
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.TrustTTL == 0 {
		c.TrustTTL = DefaultTrustTTL
	}
	if c.MaxBatchRequests <= 0 {
		c.MaxBatchRequests = DefaultMaxBatchRequests
	}
	return c.withHooks()
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoffInitial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Attempts <= 0 {
		b.Attempts = DefaultReadAttempts
	}
	return b
}

func (c Config) withHooks() Config {
	if c.Logger == nil {
		c.Logger = discard
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = ratelimit.Sleep
	}
	if c.Jitter == nil {
		c.Jitter = rand.Float64
	}
	return c
}
