package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

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
	if len(ms) != 8 {
		t.Fatalf("%d samples, want 8: %+v", len(ms), ms)
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
	if got["anysqs_postgres_oldest_transaction_seconds"] != 0 {
		t.Fatalf("oldest transaction %v s with none open", got["anysqs_postgres_oldest_transaction_seconds"])
	}
}

// TestOldestTransactionMetric: a transaction left open on the database shows in
// anysqs_postgres_oldest_transaction_seconds until it ends.
func TestOldestTransactionMetric(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	oldest := func() float64 {
		t.Helper()
		ms, err := d.Metrics(context.Background())
		if err != nil {
			t.Fatalf("Metrics: %v", err)
		}
		for _, m := range ms {
			if m.Name == "anysqs_postgres_oldest_transaction_seconds" {
				return m.Value
			}
		}
		t.Fatalf("no anysqs_postgres_oldest_transaction_seconds in %+v", ms)
		return 0
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT txid_current()`); err != nil {
		t.Fatal(err)
	}
	if age := oldest(); age <= 0 {
		t.Fatalf("oldest transaction %v s with one held open", age)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if age := oldest(); age != 0 {
		t.Fatalf("oldest transaction %v s after the rollback", age)
	}
}
