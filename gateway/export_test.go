package gateway

import (
	"context"
	"strings"
	"time"
)

// SetOnWait installs a hook called each time a long poll starts waiting, so black-box
// tests can act (send, advance the clock) exactly when a receive is parked.
func SetOnWait(s *Server, f func(queue string)) { s.onWait = f }

// SetOnSweepArmed installs a hook called each time the next retention sweep is scheduled.
func SetOnSweepArmed(s *Server, f func()) {
	s.sweepMu.Lock()
	s.onSweepArmed = f
	s.sweepMu.Unlock()
}

// Watch takes a watch on queue until deadline, as a long poll about to wait does.
func Watch(s *Server, queue string, deadline time.Time) (bool, error) {
	return s.watch(context.Background(), queue, deadline)
}

// Watched is the number of queues this instance remembers watching.
func Watched(s *Server) int {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	return len(s.watched)
}

// CollectQueueMetrics runs one collection of the per-queue gauges now.
func CollectQueueMetrics(s *Server) error { return s.qm.collect(context.Background()) }

// BackendNames lists s's backends with their routes: "name:glob,glob" separated by
// spaces, "(default)" for the default route.
func BackendNames(s *Server) string {
	var parts []string
	for _, b := range s.Backends() {
		qs := b.Queues
		if b.Default {
			qs = append(qs, "(default)")
		}
		parts = append(parts, b.Name+":"+strings.Join(qs, ","))
	}
	return strings.Join(parts, " ")
}
