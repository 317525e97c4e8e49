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
