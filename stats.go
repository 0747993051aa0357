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
