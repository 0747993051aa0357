package hikoutei

// Stats are counters of the single writer since Open.
type Stats struct {
	Commits uint64 // units committed with at least one event
	Events  uint64 // events appended (commits and the workers' decisions)
	LogTxns uint64 // log transactions (group commits) that carried them
}

// Stats returns the writer's counters.
func (s *Store) Stats() Stats {
	var st Stats
	if err := s.send(&commitReq{query: func() { st = s.stats }}); err != nil {
		return Stats{}
	}
	return st
}

// OutboxCounts returns the number of effects per outbox state (pending,
// processing, delivery_uncertain, applied, failed, superseded, conflict,
// blocked_candidate).
func (s *Store) OutboxCounts() (map[string]int64, error) {
	var c map[string]int64
	err := s.onWriter(func() (err error) { c, err = s.proj.OutboxCounts(); return err })
	return c, err
}

// LeaseInfo is the part of the writer lease safe to show (no token).
type LeaseInfo struct {
	Role     string
	WriterID string
	Epoch    uint64
}

// LeaseInfo returns the lease this store holds, without its token.
func (s *Store) LeaseInfo() LeaseInfo {
	l := s.w.Lease()
	return LeaseInfo{Role: l.Role, WriterID: l.WriterID, Epoch: l.Epoch}
}

// DispatcherCounters are the sync dispatcher's totals by kind (empty when
// sync is off or not provisioned yet).
type DispatcherCounters map[string]int64

// DispatcherCounters returns the dispatcher's running totals.
func (s *Store) DispatcherCounters() DispatcherCounters {
	d := s.Dispatcher()
	if d == nil {
		return DispatcherCounters{}
	}
	c := &d.C
	return DispatcherCounters{"passes": c.Passes.Load(), "dispatches": c.Dispatches.Load(), "claimed": c.Claimed.Load(),
		"applied": c.Applied.Load(), "uncertain": c.Uncertain.Load(), "failed": c.Failed.Load(), "retried": c.Retried.Load(),
		"conflicts": c.Conflicts.Load(), "probes": c.Probes.Load(), "superseded": c.Superseded.Load(), "backfilled": c.Backfilled.Load()}
}
