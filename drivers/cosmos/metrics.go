package cosmos

import (
	"context"
	"sort"
	"sync"

	"github.com/anysqs/anysqs/drivers"
)

// ruMetrics adds up the request units Cosmos charged, by driver operation (the SQS
// operation the gateway called), with the request and 429 counts behind them.
type ruMetrics struct {
	mu       sync.Mutex
	ru       map[string]float64
	requests map[string]float64
	throttle map[string]float64
}

func newRUMetrics() *ruMetrics {
	return &ruMetrics{ru: map[string]float64{}, requests: map[string]float64{}, throttle: map[string]float64{}}
}

func (m *ruMetrics) add(op string, ru float64, throttled bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ru[op] += ru
	m.requests[op]++
	if throttled {
		m.throttle[op]++
	}
}

// RequestUnits returns the RU charged so far per operation, for tests and explain output.
func (d *Driver) RequestUnits() map[string]float64 {
	d.metrics.mu.Lock()
	defer d.metrics.mu.Unlock()
	out := make(map[string]float64, len(d.metrics.ru))
	for k, v := range d.metrics.ru {
		out[k] = v
	}
	return out
}

// Metrics reports the RU charged, requests made and 429s met, per operation.
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	m := d.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	ops := make([]string, 0, len(m.requests))
	for op := range m.requests {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var out []drivers.Metric
	for _, op := range ops {
		l := []drivers.Label{{Name: "operation", Value: op}}
		out = append(out,
			drivers.Metric{Name: "anysqs_cosmos_request_units_total", Type: drivers.Counter, Labels: l, Value: m.ru[op],
				Help: "Request units Cosmos DB charged (x-ms-request-charge), by driver operation."},
			drivers.Metric{Name: "anysqs_cosmos_requests_total", Type: drivers.Counter, Labels: l, Value: m.requests[op],
				Help: "Cosmos DB requests made, by driver operation, retries included."},
			drivers.Metric{Name: "anysqs_cosmos_throttled_total", Type: drivers.Counter, Labels: l, Value: m.throttle[op],
				Help: "Cosmos DB requests answered 429 (request rate too large), by driver operation."})
	}
	return out, nil
}
