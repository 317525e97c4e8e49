package gateway

// SetOnWait installs a hook called each time a long poll starts waiting, so black-box
// tests can act (send, advance the clock) exactly when a receive is parked.
func SetOnWait(s *Server, f func(queue string)) { s.onWait = f }

// SetOnSweepArmed installs a hook called each time the next retention sweep is scheduled.
func SetOnSweepArmed(s *Server, f func()) {
	s.sweepMu.Lock()
	s.onSweepArmed = f
	s.sweepMu.Unlock()
}
