package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

func groupRows(t *testing.T, dsn string) int {
	t.Helper()
	return count(t, dsn, `SELECT count(*) FROM anysqs.fifo_groups`)
}

func infiniteGroups(t *testing.T, dsn string) int {
	t.Helper()
	return count(t, dsn, `SELECT count(*) FROM anysqs.fifo_groups WHERE ready_at = 'infinity'`)
}

// connect opens a connection of its own to dsn, beside the driver's pool.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// count runs a count(*) query on its own connection.
func count(t *testing.T, dsn, query string) int {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFIFOGroupsMigration turns a database back into schema version 1 with FIFO
// messages queued, reopens it, and finds every message delivered in group order after
// migration 2 built fifo_groups from them.
func TestFIFOGroupsMigration(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	createQueue(t, d, "m.fifo", fifoAttrs())
	for i := 0; i < 6; i++ {
		send(t, d, "m.fifo", epoch, drivers.SendEntry{Body: fmt.Sprint(i), MessageGroupID: fmt.Sprintf("g%d", i%2),
			MessageDeduplicationID: fmt.Sprint(i)})
	}
	d.Close()
	execSQL(t, dsn, `DROP TABLE anysqs.fifo_groups, anysqs.watches, anysqs.move_tasks, anysqs.deleted_queues, anysqs.receipt_key, anysqs.fair_time;
		DROP FUNCTION anysqs.watched;
		DELETE FROM anysqs.schema_version WHERE version > 1`)

	d = openDriver(t, dsn)
	if n := groupRows(t, dsn); n != 2 {
		t.Fatalf("fifo_groups rows after migration: %d, want 2", n)
	}
	next := map[string]int{"g0": 0, "g1": 1}
	for got := 0; got < 6; {
		r := receive(t, d, "m.fifo", epoch, 10, 30)
		if len(r.Messages) == 0 {
			t.Fatalf("nothing received after %d of 6 messages", got)
		}
		for _, m := range r.Messages {
			if m.Body != fmt.Sprint(next[m.MessageGroupID]) {
				t.Fatalf("group %s: got %s, want %d", m.MessageGroupID, m.Body, next[m.MessageGroupID])
			}
			next[m.MessageGroupID] += 2
			del(t, d, "m.fifo", epoch, m.ReceiptHandle)
			got++
		}
	}
	// A claim that finds a group without messages drops its row.
	if r := receive(t, d, "m.fifo", epoch, 10, 30); len(r.Messages) != 0 {
		t.Fatalf("received %d messages from an empty queue", len(r.Messages))
	}
	if n := groupRows(t, dsn); n != 0 {
		t.Fatalf("fifo_groups rows after the queue emptied: %d, want 0", n)
	}
}

// TestFIFOGroupReadyAfterDelete: a group whose in-flight message is deleted, with a
// later message sent while it was in flight, is claimable at once, while the group
// stays blocked as long as any of its messages is in flight.
func TestFIFOGroupReadyAfterDelete(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	createQueue(t, d, "r.fifo", fifoAttrs())
	send(t, d, "r.fifo", epoch, drivers.SendEntry{Body: "a", MessageGroupID: "g", MessageDeduplicationID: "a"},
		drivers.SendEntry{Body: "b", MessageGroupID: "g", MessageDeduplicationID: "b"})
	r := receive(t, d, "r.fifo", epoch, 10, 30)
	if got := bodies(r.Messages); len(got) != 2 {
		t.Fatalf("received %v, want a and b", got)
	}
	send(t, d, "r.fifo", epoch, drivers.SendEntry{Body: "c", MessageGroupID: "g", MessageDeduplicationID: "c"})
	if got := bodies(receive(t, d, "r.fifo", epoch, 10, 30).Messages); len(got) != 0 {
		t.Fatalf("received %v while the group is in flight", got)
	}
	del(t, d, "r.fifo", epoch, r.Messages[0].ReceiptHandle)
	if got := bodies(receive(t, d, "r.fifo", epoch, 10, 30).Messages); len(got) != 0 {
		t.Fatalf("received %v while b is in flight", got)
	}
	del(t, d, "r.fifo", epoch, r.Messages[1].ReceiptHandle)
	if got := bodies(receive(t, d, "r.fifo", epoch, 10, 30).Messages); len(got) != 1 || got[0] != "c" {
		t.Fatalf("received %v after deleting a and b, want [c]", got)
	}
}

// TestSweepExpiredGroups: a group whose messages all expired keeps a fifo_groups row
// (ready_at infinity) until the sweep has removed its messages; the sweep then drops
// the row too, and a later send to the group starts it afresh.
func TestSweepExpiredGroups(t *testing.T) {
	t.Parallel()
	dsn, d := expiringFIFO(t, "e.fifo")
	send(t, d, "e.fifo", epoch, drivers.SendEntry{Body: "old", MessageGroupID: "old", MessageDeduplicationID: "1"})
	send(t, d, "e.fifo", epoch.Add(30*time.Second), drivers.SendEntry{Body: "live", MessageGroupID: "live",
		MessageDeduplicationID: "2"})
	now := epoch.Add(61 * time.Second)
	if got := bodies(receive(t, d, "e.fifo", now, 10, 30).Messages); !slices.Equal(got, []string{"live"}) {
		t.Fatalf("received %v, want [live]", got)
	}
	if n := infiniteGroups(t, dsn); n != 1 {
		t.Fatalf("groups at ready_at infinity after the claim: %d, want 1 (the expired group)", n)
	}
	res, err := d.Sweep(context.Background(), drivers.SweepRequest{Now: now, Limit: 10})
	if err != nil || res.Deleted != 1 {
		t.Fatalf("sweep: %+v, %v; want 1 message deleted", res, err)
	}
	if n := groupRows(t, dsn); n != 1 {
		t.Fatalf("fifo_groups rows after the sweep: %d, want 1 (the live group)", n)
	}
	send(t, d, "e.fifo", now, drivers.SendEntry{Body: "again", MessageGroupID: "old", MessageDeduplicationID: "3"})
	if got := bodies(receive(t, d, "e.fifo", now, 10, 30).Messages); !slices.Equal(got, []string{"again"}) {
		t.Fatalf("received %v after a new send to the swept group, want [again]", got)
	}
}

// TestSweepGroupsRacingSend: a send into an expired group that has written the group's
// row but not yet committed when the sweep reaches that row keeps the row: the sweep
// waits for it and then finds a newer row version, which it must not delete.
func TestSweepGroupsRacingSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := expiringFIFO(t, "race.fifo")
	send(t, d, "race.fifo", epoch, drivers.SendEntry{Body: "old", MessageGroupID: "g", MessageDeduplicationID: "1"})
	now := epoch.Add(61 * time.Second)
	receive(t, d, "race.fifo", now, 10, 30) // the claim sets the group to infinity
	if _, err := d.Sweep(ctx, drivers.SweepRequest{Now: now, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if n := groupRows(t, dsn); n != 0 {
		t.Fatalf("fifo_groups rows after the first sweep: %d, want 0", n)
	}
	// The group expires again, and this time its row stays until a sweep that a send
	// into the group overtakes.
	send(t, d, "race.fifo", now, drivers.SendEntry{Body: "old2", MessageGroupID: "g", MessageDeduplicationID: "2"})
	later := now.Add(61 * time.Second)
	receive(t, d, "race.fifo", later, 10, 30)
	execSQL(t, dsn, `DELETE FROM anysqs.messages`)
	if n := infiniteGroups(t, dsn); n != 1 {
		t.Fatalf("groups at infinity: %d, want 1", n)
	}

	conn := connect(t, dsn)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What a send does first: the group's row, to a finite ready_at.
	if _, err := tx.Exec(ctx, `INSERT INTO anysqs.fifo_groups (queue_id, group_id, ready_at)
		SELECT id, 'g', $1 FROM anysqs.queues WHERE name = 'race.fifo'
		ON CONFLICT (queue_id, group_id) DO UPDATE SET ready_at = excluded.ready_at`, later); err != nil {
		t.Fatal(err)
	}
	swept := sweepUntilBlocked(t, dsn, d, later)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	if n := groupRows(t, dsn); n != 1 {
		t.Fatalf("fifo_groups rows after the sweep met the send's row: %d, want 1", n)
	}
}

// TestSweepGroupsLockOrder: a writer holding the row of group "B" and then taking the row
// of group "a" (byte order, as sends take them) does not deadlock with a sweep of both
// empty groups, whose rows lie the other way round on disk: the sweep takes rows in the
// writers' order, so it waits at "B" without holding "a".
func TestSweepGroupsLockOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := expiringFIFO(t, "order.fifo")
	for i, g := range []string{"a", "B"} { // "a"'s row first on disk
		send(t, d, "order.fifo", epoch, drivers.SendEntry{Body: g, MessageGroupID: g, MessageDeduplicationID: fmt.Sprint(i)})
	}
	now := epoch.Add(61 * time.Second)
	receive(t, d, "order.fifo", now, 10, 30) // both groups expire: their rows go to infinity
	if n := infiniteGroups(t, dsn); n != 2 {
		t.Fatalf("groups at infinity: %d, want 2", n)
	}
	execSQL(t, dsn, `DELETE FROM anysqs.messages`)

	conn := connect(t, dsn)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	write := func(g string) error {
		_, err := tx.Exec(ctx, `UPDATE anysqs.fifo_groups SET ready_at = $1 WHERE group_id = $2`, now, g)
		return err
	}
	if err := write("B"); err != nil {
		t.Fatal(err)
	}
	swept := sweepUntilBlocked(t, dsn, d, now)
	if err := write("a"); err != nil {
		t.Fatalf("the writer's second row: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-swept; err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if n := groupRows(t, dsn); n != 2 {
		t.Fatalf("fifo_groups rows after the sweep met the writer: %d, want both kept", n)
	}
}

// sweepUntilBlocked starts a sweep at now and returns once it waits for a row lock, with
// the channel that will carry its result.
func sweepUntilBlocked(t *testing.T, dsn string, d *postgres.Driver, now time.Time) <-chan error {
	t.Helper()
	swept := make(chan error, 1)
	go func() {
		_, err := d.Sweep(context.Background(), drivers.SweepRequest{Now: now, Limit: 10})
		swept <- err
	}()
	waitForLockWait(t, dsn)
	return swept
}

// expiringFIFO opens a driver on a new database with a FIFO queue that keeps messages
// for 60 s.
func expiringFIFO(t *testing.T, queue string) (string, *postgres.Driver) {
	t.Helper()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	a := fifoAttrs()
	a.MessageRetentionPeriod = 60
	createQueue(t, d, queue, a)
	return dsn, d
}

// execSQL runs sql on its own connection.
func execSQL(t *testing.T, dsn, sql string) {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// waitForLockWait returns once some session of dsn's database waits for a lock.
func waitForLockWait(t *testing.T, dsn string) {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	for i := 0; ; i++ {
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if i == 10000 {
			t.Fatal("the sweep never waited for the send's row lock")
		}
		time.Sleep(time.Millisecond)
	}
}
