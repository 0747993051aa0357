package emulator

import (
	"context"
	"math/rand"
	"sort"
	"sync"
	"time"
)

// Clock tells the emulator the time. Inject a fake in tests so the quota
// window moves without sleeping.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

// Now returns the wall-clock time.
func (systemClock) Now() time.Time { return time.Now() }

// Latency adds delay to every API request: PerRequest once, plus
// PerCellWritten for each cell a write request carries. Zero = no delay.
type Latency struct {
	PerRequest     time.Duration
	PerCellWritten time.Duration
}

// GoogleLatency is a preset resembling Google: 150 ms per request plus
// 20 µs per written cell.
func GoogleLatency() Latency {
	return Latency{PerRequest: 150 * time.Millisecond, PerCellWritten: 20 * time.Microsecond}
}

// Options configure an Emulator. The zero value is a plain, fast emulator
// with no latency, no quota and no faults.
type Options struct {
	// AutoCreate creates an unknown spreadsheet id on first use as a fresh
	// Google spreadsheet (tab "Sheet1", sheetId 0, 1000 × 26, en_US, Etc/GMT).
	AutoCreate bool
	// Latency delays each API request (see GoogleLatency).
	Latency Latency
	// Quota enables Google's per-minute request quotas when non-nil.
	Quota *Quota
	// Clock drives the quota window; nil means the system clock.
	Clock Clock
	// MaxRequestBytes rejects larger request bodies as Google rejects a
	// body over GoogleMaxRequestBytes (400 INVALID_ARGUMENT "Request
	// payload size exceeds the limit: N bytes."); 0 = no limit.
	MaxRequestBytes int64
	// Seed seeds the RNG of random fault campaigns (see SetFaultRates).
	Seed int64
	// AllowedHosts are host names, besides localhost, *.localhost and
	// loopback or local IPs, that requests may carry in their Host header
	// (e.g. a container's service name). Any other Host is refused with
	// 403 (ErrForeignHost): a page that rebinds its DNS name to this
	// address cannot use the emulator.
	AllowedHosts []string
	// Sleep waits for latency; nil waits on a timer or the request context.
	// Tests inject it to observe delays without waiting.
	Sleep func(ctx context.Context, d time.Duration)
	// Observe, when set, sees every access to cells in order (see
	// Observer): a lab's journal of what the API and people did.
	Observe Observer
	// EditTrigger, when set, is called after each person's edit of cell
	// values, as an installable onEdit trigger calls out (see EditTrigger).
	EditTrigger *EditTrigger
}

// Counters are the API requests received for one spreadsheet. Reads are
// spreadsheets.get/getByDataFilter, values.get/batchGet/batchGetByDataFilter
// and developerMetadata get/search; Writes are spreadsheets.batchUpdate,
// sheets.copyTo and values update/batchUpdate/append/clear/batchClear (and
// their ByDataFilter forms). Every received request counts, including ones
// answered by a fault or a quota error. Person edits never count.
type Counters struct {
	Reads  int64
	Writes int64
}

// Emulator is a fake Google Sheets API server. Safe for concurrent use.
type Emulator struct {
	opts  Options
	clock Clock

	mu    sync.Mutex // guards books
	books map[string]*book

	ctl      sync.Mutex // guards counters, faults, quota, rng, denied, callers, trigger
	counters map[string]*Counters
	denied   map[string]bool
	unshared map[string]bool      // spreadsheet id + NUL + caller: not shared with that caller
	revoked  map[string]bool      // callers whose credentials are refused
	callers  map[string]*Counters // requests by caller (bearer token)
	script   []Fault
	rates    FaultRates
	rng      *rand.Rand
	quota    *quotaState
	trigger  *EditTrigger
	calls    sync.WaitGroup // edit trigger calls under way
}

// New returns an Emulator configured by opts.
func New(opts Options) *Emulator {
	e := &Emulator{opts: opts, clock: opts.Clock, books: map[string]*book{}, counters: map[string]*Counters{}, denied: map[string]bool{},
		unshared: map[string]bool{}, revoked: map[string]bool{}, callers: map[string]*Counters{}, trigger: opts.EditTrigger}
	if e.clock == nil {
		e.clock = systemClock{}
	}
	e.rng = rand.New(rand.NewSource(opts.Seed))
	if opts.Quota != nil {
		e.quota = newQuotaState(*opts.Quota)
	}
	return e
}

// CreateSpreadsheet adds an empty spreadsheet with the given id and title
// (one tab "Sheet1", sheetId 0, 1000 × 26). Errors: ErrExists if the id is
// taken, ErrInvalidArgument for an empty id.
func (e *Emulator) CreateSpreadsheet(id, title string) error {
	if id == "" {
		return errorf(ErrInvalidArgument, "spreadsheet id must not be empty")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.books[id]; ok {
		return errorf(ErrExists, "spreadsheet already exists")
	}
	e.books[id] = newBook(id, title)
	return nil
}

// SpreadsheetIDs lists the ids of all spreadsheets, sorted.
func (e *Emulator) SpreadsheetIDs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]string, 0, len(e.books))
	for id := range e.books {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Counters returns the request counts for one spreadsheet (zero if none).
func (e *Emulator) Counters(spreadsheetID string) Counters {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if c, ok := e.counters[spreadsheetID]; ok {
		return *c
	}
	return Counters{}
}

// ResetCounters zeroes the request counts of every spreadsheet.
func (e *Emulator) ResetCounters() {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.counters = map[string]*Counters{}
}

func (e *Emulator) count(id string, write bool) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	c := e.counters[id]
	if c == nil {
		c = &Counters{}
		e.counters[id] = c
	}
	if write {
		c.Writes++
	} else {
		c.Reads++
	}
}

// withBook runs fn on the spreadsheet under the state lock, creating it
// first when AutoCreate is on. Unknown ids give ErrNotFound.
func (e *Emulator) withBook(id string, fn func(b *book) error) error {
	return e.inBook(id, false, fn)
}

// inBook is withBook for an API request (person false) or a person's act.
func (e *Emulator) inBook(id string, person bool, fn func(b *book) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.books[id]
	if !ok {
		if !e.opts.AutoCreate {
			return errorf(ErrNotFound, "Requested entity was not found.")
		}
		b = newBook(id, "")
		e.books[id] = b
	}
	before := e.shownTabs(b)
	e.startTap(b)
	err := fn(b)
	e.report(id, person, before, b)
	return err
}

// mutateBook applies fn to a copy of the spreadsheet and keeps the copy only
// if fn succeeds, so a failing batch changes nothing.
func (e *Emulator) mutateBook(id string, fn func(b *book) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.books[id]
	if !ok {
		if !e.opts.AutoCreate {
			return errorf(ErrNotFound, "Requested entity was not found.")
		}
		b = newBook(id, "")
		e.books[id] = b
	}
	before := e.shownTabs(b)
	c := b.clone()
	e.startTap(c)
	if err := fn(c); err != nil {
		c.tap = nil
		return err
	}
	e.books[id] = c
	e.report(id, false, before, c)
	return nil
}
