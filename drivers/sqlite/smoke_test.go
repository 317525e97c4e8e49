package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: sqlite.MemoryDataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	desc, err := d.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := capabilities.Validate(desc.Capabilities); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: drivers.QueueAttributes{MessageRetentionPeriod: 345600}}}); err != nil {
		t.Fatal(err)
	}
	s, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now, Entries: []drivers.SendEntry{{EntryID: "a", MessageID: "m1", Body: "hi"}}})
	if err != nil || s.Entries[0].Err != nil {
		t.Fatal(err, s)
	}
	r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil || len(r.Messages) != 1 {
		t.Fatal(err, r)
	}
	del, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "q", Now: now, Entries: []drivers.DeleteEntry{{EntryID: "x", ReceiptHandle: r.Messages[0].ReceiptHandle}}})
	if err != nil || del.Entries[0].Err != nil {
		t.Fatal(err, del)
	}
	st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q", Now: now})
	if err != nil || st != (drivers.QueueStats{}) {
		t.Fatal(err, st)
	}
}
