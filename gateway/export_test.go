package gateway

// SetOnWait installs a hook called each time a long poll starts waiting, so black-box
// tests can act (send, advance the clock) exactly when a receive is parked.
func SetOnWait(s *Server, f func(queue string)) { s.onWait = f }
