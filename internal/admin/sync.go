package admin

import "time"

// Sync ops: what the serving store knows about its sync workers, and a
// request for them to act now.
const (
	// OpSyncHealth answers the store's live sync health (read-only):
	// what its /healthz shows, per tab (SyncHealthResponse).
	OpSyncHealth Op = "sync.health"
	// OpSyncPoll asks the store's pollers to poll the Input tabs now
	// (PollResponse): the same hint as NATS wake.poll, delivered in
	// process.
	OpSyncPoll Op = "sync.poll"
)

// SyncHealthResponse answers OpSyncHealth. Sync is false when the store
// runs without sync (Targets is then empty).
type SyncHealthResponse struct {
	Sync    bool         `json:"sync"`
	Targets []SyncHealth `json:"targets,omitempty"`
}

// SyncHealth is one spreadsheet's sync health (never its id): the
// store's SyncHealth on the wire. Durations are nanoseconds; a zero time
// is "none".
type SyncHealth struct {
	Spreadsheet   string        `json:"spreadsheet"`
	State         string        `json:"state"`
	Reason        string        `json:"reason,omitempty"`
	Pending       int64         `json:"pending"`
	OldestPending time.Duration `json:"oldest_pending_ns"`
	Diverged      int           `json:"diverged_rows"`
	LastReconcile time.Time     `json:"last_reconcile"`
	DivergedBound time.Duration `json:"diverged_bound_ns"`
	Tabs          []TabHealth   `json:"tabs"`
	// Warnings and Capacity are absent from an older store's answer.
	Warnings []SyncWarning `json:"warnings,omitempty"`
	Capacity *Capacity     `json:"capacity,omitempty"`
}

// SyncWarning is one sync health warning on the wire.
type SyncWarning struct {
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
	Since  time.Time `json:"since"`
	At     time.Time `json:"at"`
}

// Capacity is how full the spreadsheet's grid is, on the wire.
type Capacity struct {
	Cells       int64     `json:"cells"`
	Limit       int64     `json:"limit"`
	At          time.Time `json:"at"`
	GrowthKnown bool      `json:"growth_known"`
	PerDay      float64   `json:"cells_per_day"`
	FullAt      time.Time `json:"full_at"`
	Since       time.Time `json:"since"`
}

// TabHealth is one tab's sync health on the wire.
type TabHealth struct {
	Tab           string        `json:"tab"`
	State         string        `json:"state"`
	Reason        string        `json:"reason,omitempty"`
	Pending       int64         `json:"pending"`
	OldestPending time.Duration `json:"oldest_pending_ns"`
	Diverged      int           `json:"diverged_rows"`
	DivergedSince time.Time     `json:"diverged_since"`
	LastReconcile time.Time     `json:"last_reconcile"`
	OverBound     bool          `json:"diverged_over_bound"`
	Retired       []string      `json:"retired,omitempty"`
	Notice        string        `json:"notice,omitempty"`
}

// PollRequest is OpSyncPoll's body (empty).
type PollRequest struct{}

// PollResponse reports OpSyncPoll: Via names how the hint reached the
// pollers ("nats": published on the store's wake.poll subject, which its
// own pollers subscribe to; "in_process").
type PollResponse struct {
	Via string `json:"via"`
}
