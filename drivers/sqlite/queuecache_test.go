package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

// TestMessageOperationsSeeQueueChanges checks that sends, receives and deletes, which
// keep queue rows in memory, see every change to a queue as soon as it is made.
func TestMessageOperationsSeeQueueChanges(t *testing.T) {
	for _, dir := range []string{sqlite.MemoryDataDir, t.TempDir()} {
		t.Run(map[bool]string{true: "memory", false: "file"}[dir == sqlite.MemoryDataDir], func(t *testing.T) {
			testQueueChanges(t, openT(t, dir))
		})
	}
}

func testQueueChanges(t *testing.T, d *sqlite.Driver) {
	defer d.Close()
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	create := func(name string, at time.Time) {
		t.Helper()
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: drivertest.StandardAttributes(), CreatedAt: at}}); err != nil {
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
	}
	send := func(name, id string, at time.Time) error {
		_, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: at,
			Entries: []drivers.SendEntry{{EntryID: "e", MessageID: id, Body: id}}})
		return err
	}
	receive := func(name string, at time.Time) []drivers.Message {
		t.Helper()
		res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: at, MaxMessages: 10, VisibilityTimeout: 1})
		if err != nil {
			t.Fatalf("ReceiveMessages %s: %v", name, err)
		}
		return res.Messages
	}
	setAttrs := func(name string, a drivers.QueueAttributes, at time.Time) {
		t.Helper()
		if err := d.SetQueueAttributes(ctx, drivers.SetQueueAttributesRequest{Name: name, Attributes: a, Now: at}); err != nil {
			t.Fatalf("SetQueueAttributes %s: %v", name, err)
		}
	}

	create("q", t0)
	create("dlq", t0)
	if err := send("q", "m1", t0); err != nil {
		t.Fatal(err)
	}
	if got := receive("q", t0); len(got) != 1 { // the queue's row is now held in memory
		t.Fatalf("first receive: %d messages, want 1", len(got))
	}

	// A redrive policy set now applies to the next receive: m1 has been received once.
	a := drivertest.StandardAttributes()
	a.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}
	setAttrs("q", a, t0.Add(time.Second))
	if got := receive("q", t0.Add(2*time.Second)); len(got) != 0 {
		t.Fatalf("receive after the redrive policy: %d messages, want 0 (m1 moved to dlq)", len(got))
	}
	if got := receive("dlq", t0.Add(2*time.Second)); len(got) != 1 || got[0].MessageID != "m1" {
		t.Fatalf("dead-letter queue holds %v, want m1", got)
	}

	// A shorter retention period applies to messages already in the queue.
	if err := send("q", "m2", t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	a.RedrivePolicy = nil
	a.MessageRetentionPeriod = 60
	setAttrs("q", a, t0.Add(4*time.Second))
	if got := receive("q", t0.Add(2*time.Minute)); len(got) != 0 {
		t.Fatalf("receive past the new retention period: %d messages, want 0", len(got))
	}

	// A deleted queue takes no more messages, and a queue made again under its name is a
	// new queue.
	if err := d.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: "q", Now: t0.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := send("q", "m3", t0.Add(3*time.Minute)); drivers.KindOf(err) != drivers.KindNotFound {
		t.Fatalf("send to the deleted queue: %v, want NotFound", err)
	}
	later := t0.Add(3*time.Minute + drivers.QueueNameReuseDelay + time.Second)
	create("q", later)
	if err := send("q", "m4", later); err != nil {
		t.Fatal(err)
	}
	if got := receive("q", later); len(got) != 1 || got[0].MessageID != "m4" {
		t.Fatalf("the new queue holds %v, want m4 only", got)
	}
}
