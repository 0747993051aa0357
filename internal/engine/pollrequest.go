package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
)

// PollVia names how RequestPoll reached the pollers.
type PollVia string

// How a poll request travels.
const (
	// PollViaNATS: published on the store's wake.poll subject, which its
	// own pollers subscribe to (a hint the bus drops while NATS is
	// unreachable; the pollers' timers still run).
	PollViaNATS PollVia = "nats"
	// PollViaInProcess: handed to the pollers' wake-up channel directly.
	PollViaInProcess PollVia = "in_process"
)

// RequestPoll asks the store's pollers to poll the Input tabs now: the
// hint `hikoutei poll` gives over NATS, for a caller in process or on
// the administrative channel. It never waits: a request while one is
// pending merges with it. Errors: ErrSyncNotConfigured when the store
// runs without sync (or its pollers take hints from elsewhere).
func (e *Engine) RequestPoll() (PollVia, error) { return e.RequestPollHint(wakehook.AllTabs) }

// RequestPollHint is RequestPoll for the tabs h names (the wake hook's
// wakes name the sheet a person edited): in process, the poller of a
// store without routes then reads only those tabs (effects.PollNamed);
// over NATS, or with routes, every tab is polled. Errors: as RequestPoll.
func (e *Engine) RequestPollHint(h wakehook.Hint) (PollVia, error) {
	via, err := e.PollVia()
	switch via {
	case PollViaNATS:
		e.nats.bus.WakePoll()
	case PollViaInProcess:
		e.sync.named.add(h)
		select {
		case e.sync.pollHint <- struct{}{}:
		default: // a request is already pending
		}
	}
	return via, err
}

// pollNames carries what the pending in-process poll requests named to
// the poller: added before the request is signalled, taken by the poll
// it wakes. Safe for concurrent use.
type pollNames struct {
	mu sync.Mutex
	h  wakehook.Hint
}

// add merges h into what the pending requests name.
func (n *pollNames) add(h wakehook.Hint) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.h = wakehook.Merge(n.h, h)
}

// take returns the sheetIds the pending requests named and forgets them:
// nil when one named every tab or none named anything.
func (n *pollNames) take() []int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	h := n.h
	n.h = wakehook.Hint{}
	if h.All {
		return nil
	}
	return h.Sheets
}

// PollVia says how RequestPoll would reach the pollers, without asking
// them to poll. Errors: as RequestPoll.
func (e *Engine) PollVia() (PollVia, error) {
	switch {
	case e.sync == nil:
		return "", fmt.Errorf("%w: the store runs without sync: nothing polls a sheet", ErrSyncNotConfigured)
	case e.nats != nil:
		return PollViaNATS, nil
	case e.sync.pollHint != nil:
		return PollViaInProcess, nil
	}
	return "", fmt.Errorf("%w: the store's pollers take no wake-ups", ErrSyncNotConfigured)
}

// Reasons a poll request starts no poll (WakeReady), besides the
// SyncReason codes of a stopped sync.
const (
	pollNoSync        = "sync_not_configured" // the store runs without sync, or its pollers take no wake-ups
	pollManual        = "sync_manual"         // SyncOptions.Manual: the caller runs the workers
	pollStandby       = "standby"             // a warm standby: it polls once it takes over
	pollPollerStopped = "poller_stopped"      // the poller returned (its error is logged); the dispatcher may run
	pollStoreClosed   = "store_closed"
)

// WakeReady says whether a poll request (RequestPoll, a wake) starts a
// poll: nil when the store is the active writer and its poller runs (or
// is about to: provisioning, not failed so far); else
// wakehook.ErrStandby (a standby, or a writer another displaced) or
// wakehook.ErrSyncNotRunning, with a snake_case reason (a SyncReason
// such as sheets_unreachable, or one of the constants above). From local
// state only, never waits.
func (e *Engine) WakeReady() *wakehook.NotReady {
	switch {
	case e.isClosed():
		return notRunning(pollStoreClosed)
	case e.Role() == RoleStandby:
		return &wakehook.NotReady{Code: wakehook.ErrStandby, Reason: pollStandby}
	case e.sync == nil:
		return notRunning(pollNoSync)
	case e.sync.cfg.Manual:
		return notRunning(pollManual)
	}
	if _, err := e.PollVia(); err != nil {
		return notRunning(pollNoSync)
	}
	e.sync.mu.Lock()
	stopped, provisioned := e.sync.stopped, e.sync.disp != nil
	e.sync.mu.Unlock()
	r := stoppedReason(stopped)
	if r == "" && !provisioned {
		// Still provisioning: the poller polls once it starts, unless
		// provisioning fails (its reason, e.g. sheets_unreachable).
		r = e.unprovisionedReason(e.sync.provisioning())
	}
	switch {
	case r == ReasonDisplaced || e.EndErr() != nil:
		return &wakehook.NotReady{Code: wakehook.ErrStandby, Reason: string(ReasonDisplaced)}
	case r != "":
		return notRunning(string(r))
	case e.sync.pollEnded.Load():
		return notRunning(pollPollerStopped)
	}
	return nil
}

func notRunning(reason string) *wakehook.NotReady {
	return &wakehook.NotReady{Code: wakehook.ErrSyncNotRunning, Reason: reason}
}

// SyncPoll answers admin.OpSyncPoll.
func (b AdminBackend) SyncPoll(ctx context.Context, _ admin.PollRequest) (admin.PollResponse, error) {
	if err := ctx.Err(); err != nil {
		return admin.PollResponse{}, err
	}
	via, err := b.E.RequestPoll()
	return admin.PollResponse{Via: string(via)}, err
}

// SyncHealth answers admin.OpSyncHealth: the store's live sync health,
// one target per spreadsheet (the default's, then each route's), with
// its workers' notes (what status cannot read from the read model
// alone).
func (b AdminBackend) SyncHealth(ctx context.Context, _ struct{}) (admin.SyncHealthResponse, error) {
	if err := ctx.Err(); err != nil {
		return admin.SyncHealthResponse{}, err
	}
	h, err := b.E.SyncHealth()
	if err != nil || h == nil {
		return admin.SyncHealthResponse{}, err
	}
	resp := admin.SyncHealthResponse{Sync: true, Targets: []admin.SyncHealth{wireHealth(h)}}
	routes, err := b.E.RouteHealth() // each routed spreadsheet, a target of its own
	for _, r := range routes {
		resp.Targets = append(resp.Targets, wireHealth(r))
	}
	return resp, err
}

// wireHealth is h as the administrative channel carries it.
func wireHealth(h *SyncHealth) admin.SyncHealth {
	out := admin.SyncHealth{Spreadsheet: h.Spreadsheet, State: string(h.State), Reason: string(h.Reason), Pending: h.Pending,
		OldestPending: h.OldestPending, Diverged: h.Diverged, LastReconcile: h.LastReconcile, DivergedBound: h.DivergedBound,
		Tabs: make([]admin.TabHealth, 0, len(h.Tabs))}
	for _, t := range h.Tabs {
		out.Tabs = append(out.Tabs, admin.TabHealth{Tab: t.Tab, State: string(t.State), Reason: string(t.Reason), Pending: t.Pending,
			OldestPending: t.OldestPending, Diverged: t.Diverged, DivergedSince: t.DivergedSince, LastReconcile: t.LastReconcile,
			OverBound: t.OverBound, Retired: t.Retired, Notice: string(t.Notice)})
	}
	for _, w := range h.Warnings {
		out.Warnings = append(out.Warnings, admin.SyncWarning{Reason: string(w.Reason), Detail: w.Detail, Since: w.Since, At: w.At})
	}
	if c := h.Capacity; c != nil {
		out.Capacity = &admin.Capacity{Cells: c.Cells, Limit: c.Limit, At: c.At, GrowthKnown: c.GrowthKnown, PerDay: c.PerDay,
			FullAt: c.FullAt, Since: c.Since}
	}
	return out
}

// HealthOfWire is the inverse of the channel's encoding: what a client
// of admin.OpSyncHealth shows.
func HealthOfWire(w admin.SyncHealth) SyncHealth {
	h := SyncHealth{Spreadsheet: w.Spreadsheet, State: SyncState(w.State), Reason: SyncReason(w.Reason), Pending: w.Pending,
		OldestPending: w.OldestPending, Diverged: w.Diverged, LastReconcile: w.LastReconcile, DivergedBound: w.DivergedBound}
	for _, t := range w.Tabs {
		h.Tabs = append(h.Tabs, TabHealth{Tab: t.Tab, State: SyncState(t.State), Reason: SyncReason(t.Reason), Pending: t.Pending,
			OldestPending: t.OldestPending, Diverged: t.Diverged, DivergedSince: t.DivergedSince, LastReconcile: t.LastReconcile,
			OverBound: t.OverBound, Retired: t.Retired, Notice: SyncReason(t.Notice)})
	}
	for _, x := range w.Warnings {
		h.Warnings = append(h.Warnings, SyncWarning{Reason: SyncReason(x.Reason), Detail: x.Detail, Since: x.Since, At: x.At})
	}
	if c := w.Capacity; c != nil {
		h.Capacity = &SpreadsheetCapacity{Cells: c.Cells, Limit: c.Limit, At: c.At, GrowthKnown: c.GrowthKnown, PerDay: c.PerDay,
			FullAt: c.FullAt, Since: c.Since}
	}
	return h
}
