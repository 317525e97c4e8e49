package cosmos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testenv"
)

// TestBlockedGroupDoesNotFillWindow: a group with a message in flight and more waiting
// than one receive reads must not hide the other groups' messages.
func TestBlockedGroupDoesNotFillWindow(t *testing.T) {
	e := testenv.CosmosEmulator(t)
	ctx := context.Background()
	o := Options{Endpoint: e.Endpoint, Key: e.Key, Database: "anysqs-test", Container: "bw" + newID(), CreateContainer: true,
		InsecureSkipVerify: true, QueryReads: e.QueryReads, BatchPartitionKeys: e.BatchPartitionKeys}
	d, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = DropContainer(context.Background(), o) })
	d.fifoWindow = 4
	now := time.Now().UTC().Truncate(time.Millisecond)
	name := "blocked-" + newID()[:6] + ".fifo"
	attrs := drivers.QueueAttributes{FifoQueue: true, DeduplicationScope: "queue", MessageRetentionPeriod: 3600, VisibilityTimeout: 30}
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	var entries []drivers.SendEntry
	for i := 0; i < 8; i++ {
		entries = append(entries, drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: fmt.Sprintf("a%d-%s", i, newID()[:4]), Body: fmt.Sprintf("a%d", i), MessageGroupID: "A", MessageDeduplicationID: fmt.Sprintf("a%d", i)})
	}
	entries = append(entries, drivers.SendEntry{EntryID: "b", MessageID: "b0-" + newID()[:4], Body: "b0", MessageGroupID: "B", MessageDeduplicationID: "b0"})
	for i := 0; i < len(entries); i += 10 {
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: entries[i:min(i+10, len(entries))]}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 1, VisibilityTimeout: 60})
	if err != nil || len(first.Messages) != 1 || first.Messages[0].Body != "a0" {
		t.Fatalf("first receive: %+v, %v; want a0", first.Messages, err)
	}
	next, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 60})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Messages) != 1 || next.Messages[0].Body != "b0" {
		var got []string
		for _, m := range next.Messages {
			got = append(got, m.Body)
		}
		t.Fatalf("with A blocked and its 8 messages past the 4-message window: got %v, want [b0]", got)
	}
}
