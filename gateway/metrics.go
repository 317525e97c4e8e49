package gateway

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the gateway's Prometheus series, registered when Config.Metrics is set. A
// nil *metrics records nothing. The series of each known action are resolved once, so a
// request costs two atomic adds and no label hashing.
type metrics struct {
	requests  *prometheus.CounterVec // action, outcome ("ok", the SQS error code, or "ClientGone")
	ok        map[string]prometheus.Counter
	durations map[string]prometheus.Observer
	longPolls prometheus.Observer
	decisions *prometheus.CounterVec // capability, outcome ("degrade" or "reject")
}

// otherAction labels requests naming no action of the table, so clients cannot create
// series at will.
const otherAction = "other"

func newMetrics(reg prometheus.Registerer, s *Server) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anysqs_requests_total",
			Help: "SQS API requests by action and outcome: ok, the SQS error code returned, or ClientGone (the client left before the answer).",
		}, []string{"action", "outcome"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anysqs_capability_decisions_total",
			Help: "Requests that used a capability the backend only degrades, by capability and outcome (degrade or reject).",
		}, []string{"capability", "outcome"}),
		ok:        map[string]prometheus.Counter{},
		durations: map[string]prometheus.Observer{},
	}
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "anysqs_request_duration_seconds",
		Help:    "Time to answer SQS API requests, by action; receives that long-polled are in anysqs_long_poll_duration_seconds instead.",
		Buckets: []float64{.00025, .0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"action"})
	longPolls := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "anysqs_long_poll_duration_seconds",
		Help:    "Time to answer ReceiveMessage calls that long-polled (wait time above 0).",
		Buckets: []float64{.001, .01, .1, .5, 1, 2, 5, 10, 15, 20, 21},
	})
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "anysqs_long_polls_waiting",
		Help: "Long polls waiting for messages now.",
	}, func() float64 { return float64(s.waiters.count()) })
	ready := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "anysqs_backend_ready",
		Help: "1 when the backend answers a ping within 2 s at scrape time (what /readyz checks), else 0.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
		defer cancel()
		if s.Ready(ctx) != nil {
			return 0
		}
		return 1
	})
	collectors := []prometheus.Collector{m.requests, m.decisions, duration, longPolls, waiting, ready}
	for _, b := range s.backends {
		c := driverCollector{driver: b.driver, log: s.log.Warn}
		if s.routed() {
			c.backend = b.name
		}
		collectors = append(collectors, c)
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.longPolls = longPolls
	for name := range s.actions {
		m.ok[name] = m.requests.WithLabelValues(name, "ok")
		m.durations[name] = duration.WithLabelValues(name)
	}
	m.durations[otherAction] = duration.WithLabelValues(otherAction)
	return m, nil
}

// record counts one request of action (as the client named it) that took d.
func (m *metrics) record(action string, c *call, err error, d time.Duration) {
	if m == nil {
		return
	}
	obs, known := m.durations[action]
	if !known {
		action, obs = otherAction, m.durations[otherAction]
	}
	if c != nil && c.longPoll {
		m.longPolls.Observe(d.Seconds())
	} else {
		obs.Observe(d.Seconds())
	}
	switch {
	case err == nil:
		m.ok[action].Inc()
	case err == errClientGone:
		m.requests.WithLabelValues(action, "ClientGone").Inc()
	default:
		m.requests.WithLabelValues(action, string(toSQSError(err).Code)).Inc()
	}
	if c != nil && c.trace != nil {
		for _, dec := range c.trace.Decisions() {
			switch {
			case dec.Reject:
				m.decisions.WithLabelValues(string(dec.ID), "reject").Inc()
			case dec.Degrade:
				m.decisions.WithLabelValues(string(dec.ID), "degrade").Inc()
			}
		}
	}
}
