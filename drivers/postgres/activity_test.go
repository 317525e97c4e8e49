package postgres_test

import (
	"context"
	"slices"
	"strings"
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

// watch asks for notification of sends to queue until an hour past epoch.
func watch(t *testing.T, d *postgres.Driver, queue string) {
	t.Helper()
	if err := d.WatchActivity(context.Background(), drivers.WatchActivityRequest{Name: queue,
		Until: epoch.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func TestAwaitActivityAcrossInstances(t *testing.T) {
	t.Parallel()
	awaitActivityAcrossInstances(t, newDatabase(t))
}

// awaitActivityAcrossInstances checks, with two drivers on dsn, that what one does wakes
// the other's AwaitActivity.
func awaitActivityAcrossInstances(t *testing.T, dsn string) {
	a, b := openDriver(t, dsn), openDriver(t, dsn)
	createQueue(t, a, "q", stdAttrs())
	watch(t, b, "q")

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
	watch(t, a, "r") // any instance's watch serves every instance
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

// TestSendsNotifyWatchedQueuesOnly sends to a queue nobody watches, then to one somebody
// does: notifications keep their order, so the first result naming the watched queue
// would have named the other before or with it, had its send notified.
func TestSendsNotifyWatchedQueuesOnly(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a, b := openDriver(t, dsn), openDriver(t, dsn)
	for _, q := range []string{"quiet", "w", "quiet.fifo", "w.fifo"} {
		if strings.HasSuffix(q, ".fifo") {
			createQueue(t, a, q, fifoAttrs())
		} else {
			createQueue(t, a, q, stdAttrs())
		}
	}
	watch(t, b, "w")
	watch(t, b, "w.fifo")
	// A watch that has expired by the send's time does not count.
	if err := b.WatchActivity(context.Background(), drivers.WatchActivityRequest{Name: "quiet", Until: epoch}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ quiet, watched string }{{"quiet", "w"}, {"quiet.fifo", "w.fifo"}} {
		for _, q := range []string{c.quiet, c.watched} {
			e := drivers.SendEntry{Body: "x"}
			if strings.HasSuffix(q, ".fifo") {
				e.MessageGroupID, e.MessageDeduplicationID = "g", "1"
			}
			send(t, a, q, epoch, e)
		}
		for {
			q := await(t, b)
			if slices.Contains(q, c.quiet) {
				t.Fatalf("a send to unwatched %s notified: %v", c.quiet, q)
			}
			if slices.Contains(q, c.watched) {
				break
			}
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
