package observe

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// HealthReport is the health JSON (docs/sync.md "Sync health"): local, sync and
// mirror are "ok" or the error's text, each with its stable code when
// not ok; sync_health is the spreadsheet's sync health by tab.
type HealthReport struct {
	Status     string `json:"status"` // "ok" (HTTP 200) or "failing" (HTTP 503)
	Local      string `json:"local"`
	LocalCode  string `json:"local_code,omitempty"`
	Sync       string `json:"sync"`
	SyncCode   string `json:"sync_code,omitempty"`
	Mirror     string `json:"mirror"`
	MirrorCode string `json:"mirror_code,omitempty"`
	Integrity  string `json:"integrity,omitempty"`
	// Admin is why the administrative channel cannot accept now (absent
	// while it can), with its code (admin_accept_failed).
	Admin     string `json:"admin,omitempty"`
	AdminCode string `json:"admin_code,omitempty"`
	// Disk is why the filesystem holding the store is filling or full
	// (absent while it has room), with its code (disk_filling, disk_full)
	// and, at the store's growth, when it fills.
	Disk       string     `json:"disk,omitempty"`
	DiskCode   string     `json:"disk_code,omitempty"`
	DiskFullAt *time.Time `json:"disk_full_at,omitempty"`
	// Keys is why the key file of personal values fails (absent while
	// every sealed value opens), with its code (personal_keys_lost,
	// personal_key_file; docs/erasure.md).
	Keys     string `json:"keys,omitempty"`
	KeysCode string `json:"keys_code,omitempty"`
	// Adoption is why an adoption of a tab stopped before it kept the tab
	// (absent when none), with its code (adopt_interrupted; docs/adopt.md).
	// It does not fail health: commits and sync go on.
	Adoption     string `json:"adoption,omitempty"`
	AdoptionCode string `json:"adoption_code,omitempty"`
	// SetAside says the store directory keeps read models the store set
	// aside (absent when none), with its code (read_model_set_aside), how
	// many, their bytes and the oldest's time. It does not fail health.
	SetAside     string `json:"set_aside,omitempty"`
	SetAsideCode string `json:"set_aside_code,omitempty"`
	// Retention is the retention policy's state (absent without one):
	// on, failing (with the failure and its code retention_failing) or
	// not_running (a replicated store, with the reason).
	Retention *RetentionReport `json:"retention,omitempty"`
	// Segments is why the last read or write of a sealed segment could
	// not reach the store holding them (absent while it answers), with
	// its code (segment_store_unavailable), or that a segment the log
	// vouches for is not in the store's list (segment_missing, naming the
	// file). It does not fail health: commits go on.
	Segments     string            `json:"segments,omitempty"`
	SegmentsCode string            `json:"segments_code,omitempty"`
	MirrorLag    *MirrorLagReport  `json:"mirror_lag,omitempty"`  // with the mirror on
	NATSListen   string            `json:"nats_listen,omitempty"` // how serve's NATS listener is protected
	SyncHealth   *SyncHealthReport `json:"sync_health,omitempty"`
	// SyncRoutes is each routed spreadsheet's sync health
	// (SyncOptions.Routes), named by its sync target, never its id.
	SyncRoutes  []*SyncHealthReport `json:"sync_routes,omitempty"`
	Replication *ReplicationReport  `json:"replication,omitempty"`
}

// RetentionReport is the retention policy's state and its seals since
// the store opened.
type RetentionReport struct {
	State       string     `json:"state"`
	Reason      string     `json:"reason,omitempty"`
	Error       string     `json:"error,omitempty"`
	Code        string     `json:"code,omitempty"`
	Seals       uint64     `json:"seals"`
	Failures    uint64     `json:"failures"`
	LastSealAt  *time.Time `json:"last_seal_at,omitempty"`
	SealedBelow uint64     `json:"sealed_below,omitempty"`
}

// retentionReport is r as a RetentionReport (nil without a policy).
func retentionReport(r *hikoutei.RetentionHealth, err error) *RetentionReport {
	if r == nil || r.State == hikoutei.RetentionOff {
		return nil
	}
	out := &RetentionReport{State: string(r.State), Reason: r.Reason, Seals: r.Seals, Failures: r.Failures,
		LastSealAt: timeOrNil(r.LastSealAt), SealedBelow: r.SealedBelow}
	if err != nil {
		out.Error, out.Code = err.Error(), hikoutei.ErrorCode(err)
	}
	return out
}

// MirrorLagReport is how far the NATS event mirror trails the log:
// mirror is "ok" until the oldest record it does not hold has waited
// bound_seconds (then nats_mirror_behind).
type MirrorLagReport struct {
	Mirrored     uint64  `json:"mirrored"`
	LogHead      uint64  `json:"log_head"`
	Records      uint64  `json:"records"`
	Seconds      float64 `json:"seconds"`
	BoundSeconds float64 `json:"bound_seconds"`
}

// SyncHealthReport is one spreadsheet's sync health (never its id:
// spreadsheet is the sync target's key).
type SyncHealthReport struct {
	Spreadsheet          string            `json:"spreadsheet"`
	State                string            `json:"state"`
	Reason               string            `json:"reason,omitempty"`
	Pending              int64             `json:"pending"`
	OldestPendingSeconds float64           `json:"oldest_pending_seconds"`
	DivergedRows         int               `json:"diverged_rows"`
	LastReconcile        *time.Time        `json:"last_reconcile,omitempty"`
	DivergedBoundSeconds float64           `json:"diverged_bound_seconds,omitempty"`
	Tabs                 []TabHealthReport `json:"tabs"`
	// Warnings do not fail health, e.g. chain_head_ahead or
	// spreadsheet_capacity.
	Warnings []SyncWarningReport `json:"warnings,omitempty"`
	// Capacity is how full the spreadsheet's grid is (absent before the
	// running store read its tabs' sizes, or from the read model alone).
	Capacity *CapacityReport `json:"capacity,omitempty"`
	// Quota is the provider's request budget (absent for a provider that
	// does not report one).
	Quota *QuotaReport `json:"quota,omitempty"`
}

// QuotaReport is a provider's request budget: the rates its reads and
// writes may start at now and are configured for, requests a second (0:
// unpaced), and the 429s each class was answered since it was built.
type QuotaReport struct {
	ReadRate       float64 `json:"read_rate"`
	WriteRate      float64 `json:"write_rate"`
	ReadCeiling    float64 `json:"read_ceiling"`
	WriteCeiling   float64 `json:"write_ceiling"`
	ReadThrottled  uint64  `json:"read_throttled"`
	WriteThrottled uint64  `json:"write_throttled"`
	// Accounts are each account's budget, by its index in the provider's
	// pool of service accounts (never its e-mail or key).
	Accounts []QuotaAccountReport `json:"accounts,omitempty"`
}

// QuotaAccountReport is one account's request budget; out is the code
// Google refused it with (absent: in the pool), since out_since.
type QuotaAccountReport struct {
	Account        int        `json:"account"`
	ReadRate       float64    `json:"read_rate"`
	WriteRate      float64    `json:"write_rate"`
	ReadCeiling    float64    `json:"read_ceiling"`
	WriteCeiling   float64    `json:"write_ceiling"`
	ReadThrottled  uint64     `json:"read_throttled"`
	WriteThrottled uint64     `json:"write_throttled"`
	Out            string     `json:"out,omitempty"`
	OutSince       *time.Time `json:"out_since,omitempty"`
}

// CapacityReport is how full a spreadsheet's grid is: cells (rows ×
// columns of every tab, filled or not) of limit, at the newest read;
// growth in cells a day when known; full_at the date it fills at that
// growth (absent when growth is unknown or not positive).
type CapacityReport struct {
	Cells       int64      `json:"cells"`
	Limit       int64      `json:"limit"`
	Percent     float64    `json:"percent"`
	At          time.Time  `json:"at"`
	GrowthKnown bool       `json:"growth_known"`
	PerDay      float64    `json:"cells_per_day"`
	FullAt      *time.Time `json:"full_at,omitempty"`
}

// SyncWarningReport is one sync health warning: its reason code, what was
// found, when first and last.
type SyncWarningReport struct {
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
	Since  time.Time `json:"since"`
	At     time.Time `json:"at"`
}

// TabHealthReport is one tab's sync health.
type TabHealthReport struct {
	Tab                  string     `json:"tab"`
	State                string     `json:"state"`
	Reason               string     `json:"reason,omitempty"`
	Pending              int64      `json:"pending"`
	OldestPendingSeconds float64    `json:"oldest_pending_seconds"`
	DivergedRows         int        `json:"diverged_rows"`
	DivergedSince        *time.Time `json:"diverged_since,omitempty"`
	LastReconcile        *time.Time `json:"last_reconcile,omitempty"`
	DivergedOverBound    bool       `json:"diverged_over_bound,omitempty"`
	// Codes counts the last failure codes of the tab's waiting effects.
	Codes map[string]int64 `json:"codes,omitempty"`
	// Retired names the columns a change of the entities' shape kept
	// after the anchor ("<field> (retired)": people's values never
	// imported); Notice is then column_retired.
	Retired []string `json:"retired,omitempty"`
	Notice  string   `json:"notice,omitempty"`
}

// ReplicationReport is a replicated store's role: primary, standby or
// fenced; epoch the lease epoch; head the last stream commit it holds;
// sealed_through the last record its sealed segments hold; stream_first
// the first commit the stream held when it last looked (the ones before
// were sealed and purged); purge the last purge's failure.
type ReplicationReport struct {
	Role          string `json:"role"`
	Store         string `json:"store"`
	Epoch         uint64 `json:"epoch"`
	Head          uint64 `json:"head"`
	SealedThrough uint64 `json:"sealed_through,omitempty"`
	StreamFirst   uint64 `json:"stream_first,omitempty"`
	Purge         string `json:"purge,omitempty"`
}

// HealthSource is what HealthHandler reads; a *hikoutei.Store is one.
type HealthSource interface{ Health() hikoutei.Health }

// HealthHandler answers every request with src's health as JSON
// (HealthReport) from local state only: 200 when healthy, 503 when not
// (see Failing). It never waits on the network.
func HealthHandler(src HealthSource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { WriteHealth(w, Report(src.Health())) })
}

// WriteHealth writes r as JSON, with 200 when r.Status is "ok", else 503.
func WriteHealth(w http.ResponseWriter, r HealthReport) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Status == "ok" {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(r)
}

// Failing reports whether h fails health: the store cannot commit (a
// standby, which serves reads while its primary commits, does not fail),
// or sync is blocked (e.g. credentials_rejected) or diverged past its
// bound, or the disk holding the store is full (disk_full), or the key
// file cannot open the personal values the store holds
// (personal_keys_lost, personal_key_file). Sync behind,
// mirror failures and a disk that is filling (disk_filling) do not fail
// it: none stops local commits.
func Failing(h hikoutei.Health) bool {
	if errors.Is(h.Disk, hikoutei.ErrDiskFull) || h.Keys != nil {
		return true
	}
	if errors.Is(h.Local, hikoutei.ErrStandby) {
		return false
	}
	return h.Local != nil || h.SyncHealth.Failing() || slices.ContainsFunc(h.SyncRoutes, (*hikoutei.SyncHealth).Failing)
}

// Report is h as a HealthReport.
func Report(h hikoutei.Health) HealthReport {
	r := HealthReport{Status: "ok", Local: errText(h.Local), LocalCode: hikoutei.ErrorCode(h.Local), Sync: errText(h.Sync),
		SyncCode: hikoutei.ErrorCode(h.Sync), Mirror: errText(h.Mirror), MirrorCode: hikoutei.ErrorCode(h.Mirror),
		SyncHealth: SyncReport(h.SyncHealth), Replication: replicationReport(h.Replication),
		Retention: retentionReport(h.RetentionStatus, h.Retention)}
	for _, rh := range h.SyncRoutes {
		r.SyncRoutes = append(r.SyncRoutes, SyncReport(rh))
	}
	if h.Integrity != nil {
		r.Integrity = h.Integrity.Error()
	}
	if h.Admin != nil {
		r.Admin, r.AdminCode = h.Admin.Error(), hikoutei.ErrorCode(h.Admin)
	}
	if h.Keys != nil {
		r.Keys, r.KeysCode = h.Keys.Error(), hikoutei.ErrorCode(h.Keys)
	}
	if h.Adoption != nil {
		r.Adoption, r.AdoptionCode = h.Adoption.Error(), hikoutei.ErrorCode(h.Adoption)
	}
	if h.SetAside != nil {
		r.SetAside, r.SetAsideCode = h.SetAside.Error(), hikoutei.ErrorCode(h.SetAside)
	}
	if h.Disk != nil {
		r.Disk, r.DiskCode = h.Disk.Error(), hikoutei.ErrorCode(h.Disk)
		if h.DiskUsage != nil {
			r.DiskFullAt = timeOrNil(h.DiskUsage.FullAt)
		}
	}
	if h.Segments != nil {
		r.Segments, r.SegmentsCode = h.Segments.Error(), hikoutei.ErrorCode(h.Segments)
	}
	if l := h.MirrorLag; l != nil {
		r.MirrorLag = &MirrorLagReport{Mirrored: l.Mirrored, LogHead: l.LogHead, Records: l.Records, Seconds: l.Age.Seconds(),
			BoundSeconds: l.Bound.Seconds()}
	}
	if Failing(h) {
		r.Status = "failing"
	}
	return r
}

// SyncReport is h as a SyncHealthReport (nil for nil).
func SyncReport(h *hikoutei.SyncHealth) *SyncHealthReport {
	if h == nil {
		return nil
	}
	out := &SyncHealthReport{Spreadsheet: h.Spreadsheet, State: string(h.State), Reason: string(h.Reason), Pending: h.Pending,
		OldestPendingSeconds: h.OldestPending.Seconds(), DivergedRows: h.Diverged, LastReconcile: timeOrNil(h.LastReconcile),
		DivergedBoundSeconds: h.DivergedBound.Seconds(), Tabs: []TabHealthReport{}}
	for _, w := range h.Warnings {
		out.Warnings = append(out.Warnings, SyncWarningReport{Reason: string(w.Reason), Detail: w.Detail, Since: w.Since.UTC(), At: w.At.UTC()})
	}
	if c := h.Capacity; c != nil && c.Limit > 0 {
		out.Capacity = &CapacityReport{Cells: c.Cells, Limit: c.Limit, Percent: float64(c.Cells*1000/c.Limit) / 10, At: c.At.UTC(),
			GrowthKnown: c.GrowthKnown, PerDay: c.PerDay, FullAt: timeOrNil(c.FullAt)}
	}
	if q := h.Quota; q != nil {
		out.Quota = quotaReport(q)
	}
	for _, t := range h.Tabs {
		out.Tabs = append(out.Tabs, TabHealthReport{Tab: t.Tab, State: string(t.State), Reason: string(t.Reason), Pending: t.Pending,
			OldestPendingSeconds: t.OldestPending.Seconds(), DivergedRows: t.Diverged, DivergedSince: timeOrNil(t.DivergedSince),
			LastReconcile: timeOrNil(t.LastReconcile), DivergedOverBound: t.OverBound, Retired: t.Retired, Notice: string(t.Notice), Codes: t.Codes})
	}
	return out
}

// quotaReport is the provider's budget, each account's with it.
func quotaReport(q *hikoutei.QuotaBudget) *QuotaReport {
	out := &QuotaReport{ReadRate: q.ReadRate, WriteRate: q.WriteRate, ReadCeiling: q.ReadCeiling, WriteCeiling: q.WriteCeiling,
		ReadThrottled: q.ReadThrottled, WriteThrottled: q.WriteThrottled}
	for _, a := range q.Accounts {
		out.Accounts = append(out.Accounts, QuotaAccountReport{Account: a.Index, ReadRate: a.ReadRate, WriteRate: a.WriteRate,
			ReadCeiling: a.ReadCeiling, WriteCeiling: a.WriteCeiling, ReadThrottled: a.ReadThrottled, WriteThrottled: a.WriteThrottled,
			Out: a.Out, OutSince: timeOrNil(a.OutSince)})
	}
	return out
}

func replicationReport(r *hikoutei.ReplicationHealth) *ReplicationReport {
	if r == nil {
		return nil
	}
	rep := &ReplicationReport{Role: string(r.Role), Store: r.Store, Epoch: r.Epoch, Head: r.Head,
		SealedThrough: r.SealedThrough, StreamFirst: r.StreamFirst}
	if r.Purge != nil {
		rep.Purge = r.Purge.Error()
	}
	return rep
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
