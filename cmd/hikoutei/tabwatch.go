package main

import (
	"context"
	"log/slog"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// tabWatchEvery is how often serve looks at the tabs' sync health to say
// when one is blocked and when it recovers.
const tabWatchEvery = 15 * time.Second

// tabWatch remembers which tabs were blocked, and why, to log the
// changes: a tab that became blocked (WARN, with the reason code) and one
// that was unblocked (INFO). Tab names and codes only.
type tabWatch struct {
	log     *slog.Logger
	blocked map[string]hikoutei.SyncReason
}

func newTabWatch(log *slog.Logger) *tabWatch {
	return &tabWatch{log: log, blocked: map[string]hikoutei.SyncReason{}}
}

// step compares h with what the previous step saw (nil: no sync health
// now, nothing changes).
func (w *tabWatch) step(h *hikoutei.SyncHealth) {
	if h == nil {
		return
	}
	seen := map[string]bool{}
	for _, t := range h.Tabs {
		seen[t.Tab] = true
		was, wasBlocked := w.blocked[t.Tab]
		switch {
		case t.State == hikoutei.SyncBlocked && (!wasBlocked || was != t.Reason):
			w.log.Warn("sync: tab blocked", "tab", t.Tab, "reason", string(t.Reason))
			w.blocked[t.Tab] = t.Reason
		case t.State != hikoutei.SyncBlocked && wasBlocked:
			w.log.Info("sync recovered: tab unblocked", "tab", t.Tab, "was", string(was), "state", string(t.State))
			delete(w.blocked, t.Tab)
		}
	}
	for tab := range w.blocked {
		if !seen[tab] {
			delete(w.blocked, tab)
		}
	}
}

// run steps every tabWatchEvery over the health of the store cur
// returns, until ctx ends.
func (w *tabWatch) run(ctx context.Context, cur current) {
	t := time.NewTicker(tabWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.step(cur.Health().SyncHealth)
		}
	}
}
