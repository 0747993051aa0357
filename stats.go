package hikoutei

// Stats are counters of the single writer since Open.
type Stats struct {
	Commits uint64 // units committed with at least one event
	Events  uint64 // events appended by commits
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
