package postgres

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Collector returns the Prometheus collector of the driver's connection pool
// (drivers.MetricsCollector): how many connections are busy, and how often and how long
// requests waited for one, which is where an undersized max_conns shows first.
func (d *Driver) Collector() prometheus.Collector { return poolCollector{d} }

type poolCollector struct{ d *Driver }

var (
	poolConns = prometheus.NewDesc("anysqs_postgres_pool_connections",
		"Pool connections by state: acquired (running a statement), idle, constructing.", []string{"state"}, nil)
	poolMax = prometheus.NewDesc("anysqs_postgres_pool_max_connections",
		"The pool's max_conns.", nil, nil)
	poolAcquires = prometheus.NewDesc("anysqs_postgres_pool_acquires_total",
		"Connections acquired from the pool.", nil, nil)
	poolWaits = prometheus.NewDesc("anysqs_postgres_pool_empty_acquires_total",
		"Acquires that found no idle connection and waited for one (or for a new one).", nil, nil)
	poolWait = prometheus.NewDesc("anysqs_postgres_pool_acquire_seconds_total",
		"Time spent acquiring connections.", nil, nil)
)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConns, poolMax, poolAcquires, poolWaits, poolWait} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.d.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(st.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(st.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(st.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(st.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWait, prometheus.CounterValue, st.AcquireDuration().Seconds())
}
