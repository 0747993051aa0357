package engine

import (
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
)

// activityEvery is how often the store says, at INFO, what its sync
// workers did: at most one line per kind (per tab for the backfill) in
// that time. What happened in between is summed into the next line.
const activityEvery = 15 * time.Second

// activity says at INFO what the sync workers do, rate-limited: the
// backfill's progress per tab, and people's edits taken in (accepted,
// conflicts, quarantined; only when some were). Its lines carry counts
// and tab names, never a value, a key or a spreadsheet id.
type activity struct {
	log   *slog.Logger
	limit *ratelimit.Limiter

	mu       sync.Mutex
	inbound  aggregates.ObserveStats // since the last inbound line
	passes   int                     // poll passes since the last inbound line
	backfill map[string]*tabBackfill // by tab
}

// tabBackfill is the progress of the rows queued for a tab the
// spreadsheet never received.
type tabBackfill struct {
	queued, written int64
	done            bool
}

func newActivity(log *slog.Logger, now func() time.Time) *activity {
	return &activity{log: log, limit: ratelimit.New(activityEvery, now), backfill: map[string]*tabBackfill{}}
}

// observed adds one poll pass's outcome; a line says what the passes
// since the last one took in, when they took in anything.
func (a *activity) observed(st aggregates.ObserveStats) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inbound.Add(st)
	a.passes++
	in := a.inbound
	if in.Accepted+in.Candidates+in.Quarantined == 0 {
		a.passes = 0 // nothing to say: passes that took nothing in are not counted
		return
	}
	if !a.limit.Allow("inbound") {
		return
	}
	a.log.Info("people's edits taken in", "accepted", in.Accepted, "conflicts", in.Candidates,
		"quarantined", in.Quarantined, "passes", a.passes)
	a.inbound, a.passes = aggregates.ObserveStats{}, 0
}

// queued adds the rows the backfill queued for each tab.
func (a *activity) queued(byTab map[string]int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tab := range sortedKeys(byTab) {
		b := a.backfill[tab]
		if b == nil || b.done {
			b = &tabBackfill{}
			a.backfill[tab] = b
		}
		b.queued += byTab[tab]
		a.sayBackfill(tab, b)
	}
}

// written adds the rows written to each tab; while a backfill of the
// tab runs, a line says how far it is, and one when it is done.
func (a *activity) written(byTab map[string]int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	tabs := make([]string, 0, len(byTab))
	for tab := range byTab {
		tabs = append(tabs, tab)
	}
	sort.Strings(tabs)
	for _, tab := range tabs {
		b := a.backfill[tab]
		if b == nil || b.done {
			continue
		}
		b.written = min(b.written+byTab[tab], b.queued)
		a.sayBackfill(tab, b)
	}
}

func (a *activity) sayBackfill(tab string, b *tabBackfill) {
	if b.written >= b.queued {
		b.done = true
		a.limit.Forget("backfill " + tab)
		a.log.Info("backfill: rows written to the spreadsheet", "tab", tab, "written", b.written, "total", b.queued, "done", true)
		return
	}
	if a.limit.Allow("backfill " + tab) {
		a.log.Info("backfill: rows written to the spreadsheet", "tab", tab, "written", b.written, "total", b.queued)
	}
}
