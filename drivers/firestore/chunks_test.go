package firestore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/firestore"
)

// TestChunkedMessageLifecycle follows a message too big for one Firestore document (a
// 1 MiB body less its 50 KB binary attribute, 1 MiB in all as SQS counts it) through
// send, receive, redrive to a FIFO dead-letter queue, a move back, expiry and Sweep:
// body and attributes come back intact everywhere, and no chunk document outlives its
// message.
func TestChunkedMessageLifecycle(t *testing.T) {
	o := testOptions(t)
	d := openDriver(t, o)
	defer d.Close()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	create := func(name string, a drivers.QueueAttributes) {
		a.MaximumMessageSize = 1048576
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: a, CreatedAt: now, LastModified: now}}); err != nil {
			t.Fatal(err)
		}
	}
	dlqAttrs := drivertest.FIFOAttributes()
	create("dlq.fifo", dlqAttrs)
	src := drivertest.FIFOAttributes()
	src.MessageRetentionPeriod = 600
	src.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "dlq.fifo", MaxReceiveCount: 1}
	create("src.fifo", src)

	bin := bytes.Repeat([]byte{0, 1, 2, 0xff}, 50_000/4)
	body := strings.Repeat("0123456789é", 1048576/12)[:1048576-len(bin)-len("big")-len("Binary")-3]
	want := func(what string, m drivers.Message) {
		t.Helper()
		if m.Body != body || !bytes.Equal(m.Attributes["big"].BinaryValue, bin) || m.Attributes["big"].DataType != "Binary" {
			t.Fatalf("%s: body of %d bytes (want %d), attribute of %d bytes", what, len(m.Body), len(body), len(m.Attributes["big"].BinaryValue))
		}
	}
	res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "src.fifo", Now: now, Entries: []drivers.SendEntry{{
		EntryID: "e", MessageID: "big-1", Body: body, MessageGroupID: "g", MessageDeduplicationID: "x",
		Attributes: map[string]drivers.MessageAttribute{"big": {DataType: "Binary", BinaryValue: bin}}}}})
	if err != nil || res.Entries[0].Err != nil {
		t.Fatalf("send: %v %v", err, res.Entries)
	}
	if n := countChunks(t, o); n != 2 {
		t.Fatalf("the message is stored in %d chunk documents, want 2", n)
	}
	receive := func(q string, s int) []drivers.Message {
		t.Helper()
		r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: q, Now: at(s), MaxMessages: 10, VisibilityTimeout: 5})
		if err != nil {
			t.Fatal(err)
		}
		return r.Messages
	}
	got := receive("src.fifo", 1)
	if len(got) != 1 {
		t.Fatalf("first receive: %d messages", len(got))
	}
	want("received", got[0])
	// maxReceiveCount 1: the next receive moves it to the DLQ, chunks and all.
	if got := receive("src.fifo", 10); len(got) != 0 {
		t.Fatalf("second receive returned %d messages; want the move to the DLQ", len(got))
	}
	got = receive("dlq.fifo", 11)
	if len(got) != 1 || got[0].DeadLetterSource != "src.fifo" {
		t.Fatalf("the DLQ holds %+v", got)
	}
	want("from the DLQ", got[0])
	// Back to the source with a move task's step, then expired and swept there.
	if r, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: "dlq.fifo", Now: at(20), Limit: 10}); err != nil || r.Moved != 1 {
		t.Fatalf("move back: %+v %v", r, err)
	}
	if got = receive("src.fifo", 21); len(got) != 1 {
		t.Fatalf("moved back: %d messages", len(got))
	}
	want("moved back", got[0])
	for {
		r, err := d.Sweep(ctx, drivers.SweepRequest{Now: at(700), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !r.More {
			break
		}
	}
	if n := countChunks(t, o); n != 0 {
		t.Fatalf("%d chunk documents left after the message expired and was swept", n)
	}
	// And a delete removes a message's chunks at once.
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "dlq.fifo", Now: at(700), Entries: []drivers.SendEntry{{
		EntryID: "e", MessageID: "big-2", Body: body, MessageGroupID: "g", MessageDeduplicationID: "y"}}}); err != nil {
		t.Fatal(err)
	}
	got = receive("dlq.fifo", 701)
	if len(got) != 1 || got[0].Body != body {
		t.Fatalf("second message: %d received", len(got))
	}
	if r, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "dlq.fifo", Now: at(702),
		Entries: []drivers.DeleteEntry{{EntryID: "d", ReceiptHandle: got[0].ReceiptHandle}}}); err != nil || r.Entries[0].Err != nil {
		t.Fatalf("delete: %v %v", err, r)
	}
	if n := countChunks(t, o); n != 0 {
		t.Fatalf("%d chunk documents left after the delete", n)
	}
}

// countChunks counts the chunk documents under every store of the storage.
func countChunks(t *testing.T, o firestore.Options) int {
	t.Helper()
	n, err := firestore.CountChunks(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
