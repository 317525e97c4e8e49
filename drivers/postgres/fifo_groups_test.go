package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

func groupRows(t *testing.T, dsn string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM anysqs.fifo_groups`).Scan(&n); err != nil {
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
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `DROP TABLE anysqs.fifo_groups, anysqs.watches; DROP FUNCTION anysqs.watched;
		DELETE FROM anysqs.schema_version WHERE version > 1`); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())

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
