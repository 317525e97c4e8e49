package postgres

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// Metrics reports the driver's connection pool: how many connections are busy, and how
// often and how long requests waited for one, which is where an undersized max_conns
// shows first.
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	st := d.pool.Stat()
	conns := func(state string, n int32) drivers.Metric {
		return drivers.Metric{Name: "anysqs_postgres_pool_connections", Type: drivers.Gauge,
			Help:   "Pool connections by state: acquired (running a statement), idle, constructing.",
			Labels: []drivers.Label{{Name: "state", Value: state}}, Value: float64(n)}
	}
	return []drivers.Metric{
		conns("acquired", st.AcquiredConns()),
		conns("idle", st.IdleConns()),
		conns("constructing", st.ConstructingConns()),
		{Name: "anysqs_postgres_pool_max_connections", Type: drivers.Gauge,
			Help: "The pool's max_conns.", Value: float64(st.MaxConns())},
		{Name: "anysqs_postgres_pool_acquires_total", Type: drivers.Counter,
			Help: "Connections acquired from the pool.", Value: float64(st.AcquireCount())},
		{Name: "anysqs_postgres_pool_empty_acquires_total", Type: drivers.Counter,
			Help:  "Acquires that found no idle connection and waited for one (or for a new one).",
			Value: float64(st.EmptyAcquireCount())},
		{Name: "anysqs_postgres_pool_acquire_seconds_total", Type: drivers.Counter,
			Help: "Time spent acquiring connections.", Value: st.AcquireDuration().Seconds()},
	}, nil
}
