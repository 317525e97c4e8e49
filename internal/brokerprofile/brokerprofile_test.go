package brokerprofile_test

import (
	"context"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/internal/brokerprofile"
)

func TestDescribeIsConsistent(t *testing.T) {
	d, err := brokerprofile.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	desc, err := d.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := capabilities.Validate(desc.Capabilities); err != nil {
		t.Fatal(err)
	}
	if err := desc.Check(); err != nil {
		t.Fatal(err)
	}
	if desc.Clock != drivers.ClockService || desc.ReceiptScope != drivers.ReceiptInstance {
		t.Fatalf("clock %s, receipt scope %s", desc.Clock, desc.ReceiptScope)
	}
	for _, c := range desc.Capabilities {
		if c.Level != capabilities.Native && c.Note == "" {
			t.Errorf("%s is %s without a note saying what differs", c.ID, c.Level)
		}
	}
}

// A handle issued before the data directory was opened again is another instance's lock.
func TestHandleOfAnotherInstanceFails(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	a, err := brokerprofile.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := a.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q",
		Attributes: drivertest.StandardAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now,
		Entries: []drivers.SendEntry{{EntryID: "e", MessageID: "m1", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := a.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 1, VisibilityTimeout: 30})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(got.Messages))
	}
	a.Close()
	b, err := brokerprofile.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := b.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "q", Now: now,
		Entries: []drivers.DeleteEntry{{EntryID: "d", ReceiptHandle: got.Messages[0].ReceiptHandle}}})
	if err != nil || drivers.KindOf(res.Entries[0].Err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("delete through another instance: %v, %+v; want KindInvalidReceiptHandle", err, res.Entries)
	}
}

// A move retried after a crash between its copy and its delete leaves a duplicate under
// the same MessageID in the destination, and nothing in the source: at-least-once.
func TestMoveRetriedAfterCrashKeepsMessageID(t *testing.T) {
	ctx := context.Background()
	d, err := brokerprofile.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	for _, q := range []string{"from", "to"} {
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q,
			Attributes: drivertest.StandardAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
			t.Fatal(err)
		}
	}
	m := drivers.SendEntry{EntryID: "e", MessageID: "m1", Body: "x"}
	for _, q := range []string{"from", "to"} { // "to": the copy the crashed move made
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: q, Now: now, Entries: []drivers.SendEntry{m}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: "from", Destination: "to", Now: now, Limit: 10})
	if err != nil || res.Moved != 1 || res.More {
		t.Fatalf("retried move: %+v, %v", res, err)
	}
	got, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "to", Now: now, MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil || len(got.Messages) != 2 || got.Messages[0].MessageID != "m1" || got.Messages[1].MessageID != "m1" {
		t.Fatalf("destination: %+v, %v; want two copies of m1", got.Messages, err)
	}
	if s, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "from", Now: now}); err != nil || s != (drivers.QueueStats{}) {
		t.Fatalf("source after the move: %+v, %v; want empty", s, err)
	}
}

// A visibility change beyond the lock fails its own entry; the batch's other entries
// apply, as the contract has batches fail per entry.
func TestLockTooLongFailsItsEntryOnly(t *testing.T) {
	ctx := context.Background()
	d, err := brokerprofile.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q",
		Attributes: drivertest.StandardAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now, Entries: []drivers.SendEntry{
		{EntryID: "a", MessageID: "m1", Body: "x"}, {EntryID: "b", MessageID: "m2", Body: "y"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 2, VisibilityTimeout: 30})
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("receive: %v, %d messages", err, len(got.Messages))
	}
	res, err := d.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: "q", Now: now, Entries: []drivers.ChangeVisibilityEntry{
		{EntryID: "long", ReceiptHandle: got.Messages[0].ReceiptHandle, VisibilityTimeout: brokerprofile.LockSeconds + 1},
		{EntryID: "zero", ReceiptHandle: got.Messages[1].ReceiptHandle, VisibilityTimeout: 0}}})
	if err != nil {
		t.Fatalf("ChangeVisibility: %v; a too-long entry must fail alone", err)
	}
	if len(res.Entries) != 2 || drivers.KindOf(entryErr(res.Entries[0].Err)) != drivers.KindInvalidArgument || res.Entries[1].Err != nil {
		t.Fatalf("entries %+v: want the first InvalidArgument, the second applied", res.Entries)
	}
	again, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 2, VisibilityTimeout: 30})
	if err != nil || len(again.Messages) != 1 || again.Messages[0].MessageID != "m2" {
		t.Fatalf("after the change: %v, %+v; want m2 visible again, m1 still locked", err, again.Messages)
	}
}

func entryErr(e *drivers.Error) error {
	if e == nil {
		return nil
	}
	return e
}
