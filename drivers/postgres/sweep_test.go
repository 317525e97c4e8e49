package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestSweepOneAtATime holds the sweep lock as another gateway would: Sweep then does
// nothing, and sweeps once the lock is free.
func TestSweepOneAtATime(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	ctx := context.Background()
	a := stdAttrs()
	a.MessageRetentionPeriod = 60
	createQueue(t, d, "q", a)
	send(t, d, "q", epoch, drivers.SendEntry{Body: "old"})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	class, key := postgres.SweepLockKey("anysqs")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, class, key); err != nil {
		t.Fatal(err)
	}
	now := epoch.Add(time.Hour)
	if res, err := d.Sweep(ctx, drivers.SweepRequest{Now: now, Limit: 10}); err != nil || res.Deleted != 0 {
		t.Fatalf("sweep while another instance sweeps: %+v, %v; want nothing done", res, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, class, key); err != nil {
		t.Fatal(err)
	}
	if res, err := d.Sweep(ctx, drivers.SweepRequest{Now: now, Limit: 10}); err != nil || res.Deleted != 1 {
		t.Fatalf("sweep: %+v, %v; want 1 deleted", res, err)
	}
}

// TestHandleOfAnotherQueue: a well-formed handle issued for another queue is not valid here.
func TestHandleOfAnotherQueue(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	createQueue(t, d, "a", stdAttrs())
	createQueue(t, d, "b", stdAttrs())
	send(t, d, "a", epoch, drivers.SendEntry{Body: "x"})
	h := receive(t, d, "a", epoch, 1, 30).Messages[0].ReceiptHandle
	if res := del(t, d, "b", epoch, h); drivers.KindOf(res.Entries[0].Err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("delete in b with a's handle: %+v", res.Entries[0])
	}
	if res := del(t, d, "a", epoch, h); res.Entries[0].Err != nil {
		t.Fatal(res.Entries[0].Err)
	}
	if st, _ := d.QueueStats(context.Background(), drivers.QueueStatsRequest{Name: "a", Now: epoch}); st != (drivers.QueueStats{}) {
		t.Fatalf("a after delete: %+v", st)
	}
}
