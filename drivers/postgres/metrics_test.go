package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

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
	want := `
# HELP anysqs_postgres_pool_max_connections The pool's max_conns.
# TYPE anysqs_postgres_pool_max_connections gauge
anysqs_postgres_pool_max_connections 16
`
	if err := testutil.CollectAndCompare(d.Collector(), strings.NewReader(want), "anysqs_postgres_pool_max_connections"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(d.Collector()); n != 7 {
		t.Fatalf("%d pool series, want 7", n)
	}
	// A pedantic registry also checks that the collector describes what it collects.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(d.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "anysqs_postgres_pool_acquires_total" {
			if got := mf.GetMetric()[0].GetCounter().GetValue(); got < 2 {
				t.Fatalf("acquires_total %v after a create and a send", got)
			}
			return
		}
	}
	t.Fatal("no anysqs_postgres_pool_acquires_total")
}
