package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// await calls AwaitActivity with a generous bound; the bound only keeps a broken
// implementation from hanging the test, it is not a latency assertion.
func await(t *testing.T, d drivers.Driver) []string {
	t.Helper()
	res, err := d.AwaitActivity(context.Background(), drivers.AwaitActivityRequest{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Supported {
		t.Fatal("AwaitActivity not supported")
	}
	return res.Queues
}

// awaitQueue waits until AwaitActivity names queue; earlier names (own writes) are skipped.
func awaitQueue(t *testing.T, d drivers.Driver, queue string) {
	t.Helper()
	for i := 0; i < 10; i++ {
		if q := await(t, d); slices.Contains(q, queue) {
			return
		}
	}
	t.Fatalf("AwaitActivity never named %s", queue)
}

func TestAwaitActivityAcrossInstances(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a, b := openDriver(t, dsn), openDriver(t, dsn)
	createQueue(t, a, "q", stdAttrs())

	// A waiter blocked on B wakes for a send through A.
	got := make(chan []string, 1)
	go func() {
		res, err := b.AwaitActivity(context.Background(), drivers.AwaitActivityRequest{Timeout: time.Minute})
		if err != nil {
			t.Error(err)
		}
		got <- res.Queues
	}()
	send(t, a, "q", epoch, drivers.SendEntry{Body: "x"})
	if q := <-got; !slices.Equal(q, []string{"q"}) {
		t.Fatalf("woken with %v, want [q]", q)
	}

	// A notification that arrives while nobody waits is kept for the next call.
	createQueue(t, a, "r", stdAttrs())
	send(t, a, "r", epoch, drivers.SendEntry{Body: "y"})
	awaitQueue(t, b, "r")

	// Releasing a message (visibility 0) and a redrive to a DLQ notify too.
	m := receive(t, a, "q", epoch, 1, 30).Messages[0]
	if _, err := a.ChangeVisibility(context.Background(), drivers.ChangeVisibilityRequest{Name: "q", Now: epoch,
		Entries: []drivers.ChangeVisibilityEntry{{EntryID: "1", ReceiptHandle: m.ReceiptHandle}}}); err != nil {
		t.Fatal(err)
	}
	awaitQueue(t, b, "q")
	attrs := stdAttrs()
	attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "r", MaxReceiveCount: 1}
	createQueue(t, a, "s", attrs)
	send(t, a, "s", epoch, drivers.SendEntry{Body: "z"})
	receive(t, a, "s", epoch, 1, 0)
	receive(t, a, "s", epoch, 1, 0) // moves z to r
	awaitQueue(t, b, "r")

	// With nothing pending, a zero timeout returns at once and empty.
	for {
		res, err := b.AwaitActivity(context.Background(), drivers.AwaitActivityRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Queues) == 0 {
			break
		}
	}
}

func TestAwaitActivityNotifyInTransaction(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, NotifyInTransaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := openDriver(t, dsn)
	createQueue(t, a, "q", stdAttrs())
	createQueue(t, a, "q.fifo", fifoAttrs())
	send(t, a, "q", epoch, drivers.SendEntry{Body: "x"})
	awaitQueue(t, b, "q")
	send(t, a, "q.fifo", epoch, drivers.SendEntry{Body: "x", MessageGroupID: "g", MessageDeduplicationID: "1"})
	awaitQueue(t, b, "q.fifo")
}
