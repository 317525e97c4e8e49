package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestVacuumOnSweep: with VacuumOnSweep a whole sweep pass ends with a VACUUM of the
// driver's tables (their last_vacuum is set), which also clears the autovacuum warning;
// without it, a sweep vacuums nothing.
func TestVacuumOnSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, on := range []bool{false, true} {
		dsn := newDatabase(t)
		d, err := postgres.Open(ctx, postgres.Options{DSN: dsn, VacuumOnSweep: on})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		createQueue(t, d, "q", stdAttrs())
		send(t, d, "q", epoch, drivers.SendEntry{Body: "a"})
		m := receive(t, d, "q", epoch, 1, 30).Messages
		if len(m) != 1 {
			t.Fatalf("received %d messages, want 1", len(m))
		}
		del(t, d, "q", epoch, m[0].ReceiptHandle)
		if _, err := d.Sweep(ctx, drivers.SweepRequest{Now: epoch.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var vacuumed bool
		if err := conn.QueryRow(ctx, `SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables
			WHERE schemaname = 'anysqs' AND relname = 'messages'`).Scan(&vacuumed); err != nil {
			t.Fatal(err)
		}
		if vacuumed != on {
			t.Errorf("VacuumOnSweep %v: messages vacuumed %v", on, vacuumed)
		}
		desc, err := d.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range desc.Warnings {
			if on && strings.Contains(w, "autovacuum is off") {
				t.Errorf("VacuumOnSweep set, still warned: %s", w)
			}
		}
	}
}
