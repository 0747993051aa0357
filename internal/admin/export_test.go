package admin

// SetPeerUID makes the server admit only uid (tests of the refusal path).
func (s *Server) SetPeerUID(uid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uid = uid
}

// Active is the number of connections being served.
func (s *Server) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// Closing reports whether Close began.
func (s *Server) Closing() bool { return s.isClosing() }
