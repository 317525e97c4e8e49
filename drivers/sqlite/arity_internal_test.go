package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestBatchesBeyondTen: the driver contract does not bound a batch at SQS's ten entries;
// sends, claims and deletes of more rows build their statements on demand.
func TestBatchesBeyondTen(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: MemoryDataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Unix(1_800_000_000, 0)
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: drivertest.StandardAttributes()}}); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var entries []drivers.SendEntry
	for i := range n {
		entries = append(entries, drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: fmt.Sprint("m", i), Body: "b"})
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now, Entries: entries}); err != nil {
		t.Fatalf("send %d: %v", n, err)
	}
	res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: n, VisibilityTimeout: 30})
	if err != nil || len(res.Messages) != n {
		t.Fatalf("receive %d: got %d, %v", n, len(res.Messages), err)
	}
	var dels []drivers.DeleteEntry
	for i, m := range res.Messages {
		dels = append(dels, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
	}
	if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "q", Now: now, Entries: dels}); err != nil {
		t.Fatalf("delete %d: %v", n, err)
	}
	if st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q", Now: now}); err != nil || st != (drivers.QueueStats{}) {
		t.Fatalf("after deleting all %d: %+v, %v", n, st, err)
	}
}
