package postgres_test

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/drivers"
)

// TestPoolMetricsAndPing: the pool's series count the connections a call took, and Ping
// answers while the database does.
func TestPoolMetricsAndPing(t *testing.T) {
	t.Parallel()
	d := openDriver(t, newDatabase(t))
	if err := d.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	createQueue(t, d, "m", stdAttrs())
	send(t, d, "m", epoch, drivers.SendEntry{Body: "x"})
	ms, err := d.Metrics(context.Background())
	if err != nil {
		t.Fatalf("Metrics: %v", err)
	}
	if len(ms) != 7 {
		t.Fatalf("%d pool samples, want 7: %+v", len(ms), ms)
	}
	got := map[string]float64{}
	for _, m := range ms {
		if m.Help == "" || (m.Type != drivers.Gauge && m.Type != drivers.Counter) {
			t.Fatalf("sample %s: help %q, type %q", m.Name, m.Help, m.Type)
		}
		got[m.Name] += m.Value
	}
	if got["anysqs_postgres_pool_max_connections"] != 16 {
		t.Fatalf("max_connections %v, want 16", got["anysqs_postgres_pool_max_connections"])
	}
	if got["anysqs_postgres_pool_acquires_total"] < 2 {
		t.Fatalf("acquires_total %v after a create and a send", got["anysqs_postgres_pool_acquires_total"])
	}
}
