package gateway

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/drivers"
)

// driverCollector exports the series a driver reports as plain data (drivers.Metric), so
// that no Prometheus type crosses the driver seam. It is an unchecked collector: what a
// driver reports may change between scrapes, so it describes nothing up front.
type driverCollector struct {
	driver drivers.Driver
	// backend, on a routed gateway, labels each series with the backend's name, so two
	// backends of one driver report apart.
	backend string
	log     func(msg string, args ...any)
}

// driverMetricsTimeout bounds one scrape's call to the driver.
const driverMetricsTimeout = 2 * time.Second

func (driverCollector) Describe(chan<- *prometheus.Desc) {}

func (c driverCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), driverMetricsTimeout)
	defer cancel()
	ms, err := c.driver.Metrics(ctx)
	if err != nil {
		c.log("driver metrics failed", "err", err)
		return
	}
	descs := map[string]*prometheus.Desc{}
	for _, m := range ms {
		names := make([]string, len(m.Labels))
		values := make([]string, len(m.Labels))
		for i, l := range m.Labels {
			names[i], values[i] = l.Name, l.Value
		}
		d := descs[m.Name]
		if d == nil {
			var constant prometheus.Labels
			if c.backend != "" {
				constant = prometheus.Labels{"backend": c.backend}
			}
			d = prometheus.NewDesc(m.Name, m.Help, names, constant)
			descs[m.Name] = d
		}
		vt := prometheus.GaugeValue
		if m.Type == drivers.Counter {
			vt = prometheus.CounterValue
		}
		pm, err := prometheus.NewConstMetric(d, vt, m.Value, values...)
		if err != nil {
			c.log("driver metric rejected", "metric", m.Name, "err", err)
			continue
		}
		ch <- pm
	}
}
