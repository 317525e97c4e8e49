package spanner

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testenv"
)

// emulatorDatabase returns the options of a fresh database on the emulator, named
// prefix and random hex; it skips the test when there is no emulator, except under
// CI=true.
func emulatorDatabase(t *testing.T, prefix string) Options {
	t.Helper()
	return Options{Project: "anysqs-test", Instance: "anysqs", Database: testenv.SpannerDatabase(t, "anysqs-test", "anysqs", prefix)}
}

// TestCommittedFromDurableState checks the reads that decide a send whose commit
// outcome is unknown: committed when its rows (standard) or deduplication records (FIFO)
// are there and name its messages, not committed otherwise.
func TestCommittedFromDurableState(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, emulatorDatabase(t, "u"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	for _, name := range []string{"q", "q.fifo"} {
		a := drivers.QueueAttributes{FifoQueue: name == "q.fifo", MessageRetentionPeriod: 345600}
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: a, CreatedAt: now}}); err != nil {
			t.Fatal(err)
		}
	}

	std := drivers.SendMessagesRequest{Name: "q", Now: now, Entries: []drivers.SendEntry{{EntryID: "0", MessageID: "m1", Body: "b"}}}
	if _, err := d.SendMessages(ctx, std); err != nil {
		t.Fatal(err)
	}
	sent, _ := newMessage("q", now, std.Entries[0])
	other, _ := newMessage("q", now, drivers.SendEntry{MessageID: "m2", Body: "b"})
	if !d.committedStandard(ctx, []msgRow{sent}) {
		t.Error("a stored standard message is not recognised as committed")
	}
	if d.committedStandard(ctx, []msgRow{sent, other}) {
		t.Error("a send with a message that is not stored is taken as committed")
	}

	fifo := drivers.SendMessagesRequest{Name: "q.fifo", Now: now, Entries: []drivers.SendEntry{
		{EntryID: "0", MessageID: "f1", Body: "b", MessageGroupID: "g", MessageDeduplicationID: "d1"}}}
	res, err := d.SendMessages(ctx, fifo)
	if err != nil {
		t.Fatal(err)
	}
	if !d.committedFIFO(ctx, fifo, res) {
		t.Error("a stored FIFO message is not recognised as committed from its dedup record")
	}
	// The same deduplication id under another MessageId is a different send, whose commit
	// did not happen; retried, it is a duplicate of the stored one.
	retry := fifo
	retry.Entries = []drivers.SendEntry{fifo.Entries[0]}
	retry.Entries[0].MessageID = "f2"
	if d.committedFIFO(ctx, retry, res) {
		t.Error("a dedup record naming another message is taken as this send's commit")
	}
	again, err := d.SendMessages(ctx, retry)
	if err != nil {
		t.Fatal(err)
	}
	if r := again.Entries[0]; !r.Duplicate || r.MessageID != "f1" || r.SequenceNumber != res.Entries[0].SequenceNumber {
		t.Errorf("retried FIFO send answered %+v, want a duplicate of %+v", r, res.Entries[0])
	}
}

func TestErrorKinds(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		err     error
		kind    drivers.Kind
		unknown bool
	}{
		{status.Error(codes.Aborted, "aborted"), drivers.KindAborted, false},
		{status.Error(codes.FailedPrecondition, "Invalid transaction ID. Transaction ID must be >= 7"), drivers.KindAborted, false},
		{status.Error(codes.FailedPrecondition, "something else"), drivers.KindInternal, false},
		{status.Error(codes.Unavailable, "down"), drivers.KindUnavailable, true},
		{status.Error(codes.DeadlineExceeded, "slow"), drivers.KindUnavailable, true},
		{status.Error(codes.ResourceExhausted, "quota"), drivers.KindThrottled, false},
	} {
		if k := drivers.KindOf(mapErr(ctx, c.err, "x")); k != c.kind {
			t.Errorf("%v: kind %v, want %v", c.err, k, c.kind)
		}
		if u := outcomeUnknown(ctx, mapErr(ctx, c.err, "x")); u != c.unknown {
			t.Errorf("%v: outcome unknown %v, want %v", c.err, u, c.unknown)
		}
	}
}

// TestSweepIdleGroups checks that the sweep drops the row of a FIFO group left empty for
// groupIdle, keeps a busy one, and that the group numbers upwards when it is used again.
func TestSweepIdleGroups(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, emulatorDatabase(t, "g"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	a := drivers.QueueAttributes{FifoQueue: true, MessageRetentionPeriod: 1209600}
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q.fifo", Attributes: a, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	send := func(at time.Time, group, id string) string {
		t.Helper()
		res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q.fifo", Now: at, Entries: []drivers.SendEntry{
			{EntryID: "0", MessageID: id, Body: id, MessageGroupID: group, MessageDeduplicationID: id}}})
		if err != nil || res.Entries[0].Err != nil {
			t.Fatal(err, res)
		}
		return res.Entries[0].SequenceNumber
	}
	first := send(now, "empty", "e1")
	send(now, "full", "f1")
	r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q.fifo", Now: now, MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Messages {
		if m.MessageGroupID == "empty" {
			if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "q.fifo", Now: now,
				Entries: []drivers.DeleteEntry{{EntryID: "0", ReceiptHandle: m.ReceiptHandle}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	later := now.Add(groupIdle + time.Minute)
	if _, err := d.Sweep(ctx, drivers.SweepRequest{Now: later, Limit: 100}); err != nil {
		t.Fatal(err)
	}
	tx, done := d.snapshot(ctx)
	empty, err1 := readGroup(ctx, tx, "q.fifo", "empty")
	full, err2 := readGroup(ctx, tx, "q.fifo", "full")
	done()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if empty.exists || !full.exists {
		t.Fatalf("after the sweep the empty group's row exists %v, the one with a message %v; want false, true", empty.exists, full.exists)
	}
	if again := send(later, "empty", "e2"); again <= first {
		t.Fatalf("the group used again numbered %s after %s", again, first)
	}
}

// TestPurgedBeforeDeleted checks that messages committed before a purge's commit are
// never returned or counted, even while their rows are still there (the partitioned
// delete has not reached them, or failed), and that later ones are.
func TestPurgedBeforeDeleted(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, emulatorDatabase(t, "p"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	for _, name := range []string{"q", "q.fifo"} {
		a := drivers.QueueAttributes{FifoQueue: name == "q.fifo", MessageRetentionPeriod: 345600}
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: a, CreatedAt: now}}); err != nil {
			t.Fatal(err)
		}
		send := func(id string) {
			t.Helper()
			e := drivers.SendEntry{EntryID: "0", MessageID: id, Body: id}
			if a.FifoQueue {
				e.MessageGroupID, e.MessageDeduplicationID = "g", id
			}
			if res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: []drivers.SendEntry{e}}); err != nil || res.Entries[0].Err != nil {
				t.Fatal(err, res)
			}
		}
		send("old")
		// What a purge's transaction records, without its delete.
		if err := d.rw(ctx, "mark", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
			return tx.BufferWrite([]*spanner.Mutation{spanner.Update("Queues", []string{"QueueName", "PurgeCommitted"},
				[]any{name, spanner.CommitTimestamp})})
		}); err != nil {
			t.Fatal(err)
		}
		if st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: name, Now: now}); err != nil || st.Visible != 0 {
			t.Fatalf("%s: counts %+v (%v) after the purge mark, want none visible", name, st, err)
		}
		send("new")
		r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 30})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) != 1 || r.Messages[0].Body != "new" {
			t.Fatalf("%s: received %d messages (%+v), want only the one sent after the purge", name, len(r.Messages), r.Messages)
		}
	}
}
