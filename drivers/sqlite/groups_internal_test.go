package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// TestFIFOGroupHeadsFollowEveryPath runs random sends, receives, deletes, releases,
// redrives, moves, purges and sweeps on FIFO queues and checks after each step that the
// trigger-kept fifo_groups table (each group's head and the head's visibility) equals
// the groups computed from the messages.
func TestFIFOGroupHeadsFollowEveryPath(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: MemoryDataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	attrs := drivers.QueueAttributes{FifoQueue: true, DeduplicationScope: "queue", MessageRetentionPeriod: 600, VisibilityTimeout: 30}
	for _, name := range []string{"dlq.fifo", "src.fifo"} {
		a := attrs
		if name == "src.fifo" {
			a.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "dlq.fifo", MaxReceiveCount: 2}
		}
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: a}}); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Unix(1_800_000_000, 0)
	var handles []string
	n := 0
	for step := range 400 {
		now = now.Add(time.Duration(rng.IntN(20)) * time.Second)
		var op string
		switch r := rng.IntN(100); {
		case r < 35:
			op = "send"
			var entries []drivers.SendEntry
			for range 1 + rng.IntN(5) {
				n++
				entries = append(entries, drivers.SendEntry{EntryID: fmt.Sprint(n), MessageID: fmt.Sprint("m", n), Body: "b",
					MessageGroupID: fmt.Sprint("g", rng.IntN(4)), MessageDeduplicationID: fmt.Sprint("d", n)})
			}
			_, err = d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "src.fifo", Now: now, Entries: entries})
		case r < 65:
			op = "receive"
			var res drivers.ReceiveMessagesResult
			res, err = d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "src.fifo", Now: now, MaxMessages: 1 + rng.IntN(10), VisibilityTimeout: 30})
			for _, m := range res.Messages {
				handles = append(handles, m.ReceiptHandle)
			}
		case r < 85 && len(handles) > 0:
			op = "delete"
			i := rng.IntN(len(handles))
			_, err = d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "src.fifo", Now: now, Entries: []drivers.DeleteEntry{{EntryID: "x", ReceiptHandle: handles[i]}}})
			handles = append(handles[:i], handles[i+1:]...)
		case r < 90 && len(handles) > 0:
			op = "release"
			_, err = d.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: "src.fifo", Now: now,
				Entries: []drivers.ChangeVisibilityEntry{{EntryID: "x", ReceiptHandle: handles[rng.IntN(len(handles))]}}})
		case r < 94:
			op = "move"
			_, err = d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: "dlq.fifo", Now: now, Limit: 1 + rng.IntN(5)})
		case r < 96:
			op = "purge"
			err = d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: "dlq.fifo", Now: now})
			if drivers.KindOf(err) == drivers.KindPurgeInProgress {
				err = nil
			}
		default:
			op = "sweep"
			_, err = d.Sweep(ctx, drivers.SweepRequest{Now: now, Limit: 1 + rng.IntN(10)})
		}
		if err != nil {
			t.Fatalf("step %d %s: %v", step, op, err)
		}
		checkGroups(t, d, fmt.Sprintf("step %d %s", step, op))
	}
}

func checkGroups(t *testing.T, d *Driver, what string) {
	t.Helper()
	const kept = `SELECT queue_id, group_id, head_seq, head_visible_at FROM fifo_groups`
	const truth = `SELECT m.queue_id, m.group_id, m.seq, m.visible_at FROM messages m WHERE m.seq > 0
		AND m.seq = (SELECT MIN(h.seq) FROM messages h WHERE h.queue_id = m.queue_id AND h.group_id = m.group_id)`
	for _, q := range []string{kept + " EXCEPT " + truth, truth + " EXCEPT " + kept} {
		var diff int
		if err := d.wconn.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM (`+q+`)`).Scan(&diff); err != nil {
			t.Fatal(err)
		}
		if diff != 0 {
			t.Fatalf("%s: fifo_groups differs from the messages in %d rows (%s)", what, diff, q)
		}
	}
}
