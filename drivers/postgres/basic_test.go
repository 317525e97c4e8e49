package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

func TestStandardRoundTrip(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	ctx := context.Background()
	createQueue(t, d, "q1", stdAttrs())
	attrs := map[string]drivers.MessageAttribute{
		"s": {DataType: "String", StringValue: "v"},
		"b": {DataType: "Binary.custom", BinaryValue: []byte{0, 1, 2, 255}},
	}
	sent := send(t, d, "q1", epoch, drivers.SendEntry{Body: "hello", Attributes: attrs, SenderID: "AID"},
		drivers.SendEntry{Body: "later", DelaySeconds: 60})
	r := receive(t, d, "q1", epoch, 10, 30)
	if len(r.Messages) != 1 {
		t.Fatalf("got %d messages, want 1 (the other is delayed)", len(r.Messages))
	}
	m := r.Messages[0]
	if m.Body != "hello" || m.MessageID != sent.Entries[0].MessageID || m.ReceiveCount != 1 || m.SenderID != "AID" ||
		!m.SentAt.Equal(epoch) || !m.FirstReceivedAt.Equal(epoch) || m.SequenceNumber != "" {
		t.Fatalf("message %+v", m)
	}
	if m.Attributes["b"].DataType != "Binary.custom" || string(m.Attributes["b"].BinaryValue) != "\x00\x01\x02\xff" ||
		m.Attributes["s"].StringValue != "v" {
		t.Fatalf("attributes %+v", m.Attributes)
	}
	if !r.NextVisibleAt.Equal(epoch.Add(30 * time.Second)) {
		t.Fatalf("NextVisibleAt %v, want %v", r.NextVisibleAt, epoch.Add(30*time.Second))
	}
	st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q1", Now: epoch})
	if err != nil || !st.OldestSentAt.Equal(epoch) || counts(st) != (drivers.QueueStats{Visible: 0, NotVisible: 1, Delayed: 1}) {
		t.Fatalf("stats %+v %v", st, err)
	}
	// Hidden until the timeout passes, then received again with a new handle.
	if r2 := receive(t, d, "q1", epoch.Add(29*time.Second), 10, 30); len(r2.Messages) != 0 {
		t.Fatalf("received %v during visibility timeout", bodies(r2.Messages))
	}
	r3 := receive(t, d, "q1", epoch.Add(30*time.Second), 1, 30)
	if len(r3.Messages) != 1 || r3.Messages[0].ReceiveCount != 2 || r3.Messages[0].ReceiptHandle == m.ReceiptHandle ||
		!r3.Messages[0].FirstReceivedAt.Equal(epoch) {
		t.Fatalf("second receive %+v", r3.Messages)
	}
	// The stale handle succeeds without effect; a forged one fails; the current one deletes.
	now := epoch.Add(31 * time.Second)
	if res := del(t, d, "q1", now, m.ReceiptHandle, "forged"); res.Entries[0].Err != nil ||
		drivers.KindOf(res.Entries[1].Err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("delete results %+v", res.Entries)
	}
	if st, _ := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q1", Now: now}); st.NotVisible != 1 {
		t.Fatalf("stale handle deleted the message: %+v", st)
	}
	if res := del(t, d, "q1", now, r3.Messages[0].ReceiptHandle); res.Entries[0].Err != nil {
		t.Fatal(res.Entries[0].Err)
	}
	if st, _ := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q1", Now: now}); counts(st) != (drivers.QueueStats{Delayed: 1}) {
		t.Fatalf("after delete %+v", st)
	}
	if r := receive(t, d, "q1", epoch.Add(60*time.Second), 10, 30); len(r.Messages) != 1 || r.Messages[0].Body != "later" {
		t.Fatalf("delayed message %+v", r.Messages)
	}
}

func TestQueueLifecycle(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	ctx := context.Background()
	a := stdAttrs()
	a.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 3}
	res, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "b", Attributes: a,
		Tags: map[string]string{"k": "v"}, CreatedAt: epoch, LastModified: epoch}})
	if err != nil || res.Existed || res.Queue.Attributes.RedrivePolicy.MaxReceiveCount != 3 || res.Queue.Tags["k"] != "v" {
		t.Fatalf("create %+v %v", res, err)
	}
	res, err = d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "b", Attributes: stdAttrs()}})
	if err != nil || !res.Existed || res.Queue.Attributes.RedrivePolicy == nil {
		t.Fatalf("second create must return the stored queue: %+v %v", res, err)
	}
	for _, n := range []string{"a", "ab", "c", "B"} {
		createQueue(t, d, n, stdAttrs())
	}
	l, err := d.ListQueues(ctx, drivers.ListQueuesRequest{Prefix: "a"})
	if err != nil || len(l.Queues) != 2 || l.More {
		t.Fatalf("list prefix a: %+v %v", l, err)
	}
	l, err = d.ListQueues(ctx, drivers.ListQueuesRequest{After: "B", Limit: 2})
	if err != nil || len(l.Queues) != 2 || l.Queues[0].Name != "a" || l.Queues[1].Name != "ab" || !l.More {
		t.Fatalf("list page: %+v %v", l, err)
	}
	if err := d.UpdateQueueTags(ctx, drivers.UpdateQueueTagsRequest{Name: "b", Set: map[string]string{"x": "1"},
		Remove: []string{"k"}}); err != nil {
		t.Fatal(err)
	}
	a.VisibilityTimeout = 99
	later := epoch.Add(time.Hour)
	if err := d.SetQueueAttributes(ctx, drivers.SetQueueAttributesRequest{Name: "b", Attributes: a, Now: later}); err != nil {
		t.Fatal(err)
	}
	q, err := d.GetQueue(ctx, drivers.GetQueueRequest{Name: "b"})
	if err != nil || q.Attributes.VisibilityTimeout != 99 || !q.LastModified.Equal(later) || len(q.Tags) != 1 || q.Tags["x"] != "1" {
		t.Fatalf("get %+v %v", q, err)
	}
	send(t, d, "b", epoch, drivers.SendEntry{Body: "x"})
	if err := d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: "b", Now: epoch}); err != nil {
		t.Fatal(err)
	}
	if err := d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: "b", Now: epoch.Add(59 * time.Second)}); drivers.KindOf(err) != drivers.KindPurgeInProgress {
		t.Fatalf("second purge: %v", err)
	}
	if err := d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: "b", Now: epoch.Add(60 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, d, "b", epoch, 10, 30); len(r.Messages) != 0 {
		t.Fatal("purged message received")
	}
	if err := d.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"get":    func() error { _, err := d.GetQueue(ctx, drivers.GetQueueRequest{Name: "b"}); return err }(),
		"delete": d.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: "b"}),
		"send": func() error {
			_, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "b", Now: epoch,
				Entries: []drivers.SendEntry{{EntryID: "1", MessageID: "x", Body: "x"}}})
			return err
		}(),
		"receive": func() error {
			_, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "b", Now: epoch, MaxMessages: 1})
			return err
		}(),
		"stats": func() error {
			_, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "b", Now: epoch})
			return err
		}(),
	} {
		if drivers.KindOf(err) != drivers.KindNotFound {
			t.Errorf("%s on deleted queue: %v, want NotFound", name, err)
		}
	}
	desc, err := d.Describe(ctx)
	if err != nil || desc.Name != "postgres" || desc.ServiceVersion == "" || len(desc.Capabilities) == 0 {
		t.Fatalf("describe %+v %v", desc, err)
	}
}

func TestChangeVisibility(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	ctx := context.Background()
	createQueue(t, d, "q", stdAttrs())
	send(t, d, "q", epoch, drivers.SendEntry{Body: "a"})
	m := receive(t, d, "q", epoch, 1, 30).Messages[0]
	change := func(now time.Time, h string, vt int32) *drivers.Error {
		res, err := d.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: "q", Now: now,
			Entries: []drivers.ChangeVisibilityEntry{{EntryID: "1", ReceiptHandle: h, VisibilityTimeout: vt}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Entries[0].Err
	}
	if err := change(epoch.Add(10*time.Second), m.ReceiptHandle, 100); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, d, "q", epoch.Add(100*time.Second), 1, 30); len(r.Messages) != 0 {
		t.Fatal("extended message received early")
	}
	if err := change(epoch.Add(20*time.Second), m.ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	// Released, and nobody received it since: on a standard queue the change applies,
	// as in SQS.
	if err := change(epoch.Add(21*time.Second), m.ReceiptHandle, 5); err != nil {
		t.Fatalf("change after release: %v", err)
	}
	if r := receive(t, d, "q", epoch.Add(25*time.Second), 1, 30); len(r.Messages) != 0 {
		t.Fatal("message hidden again by the change received early")
	}
	m2 := receive(t, d, "q", epoch.Add(26*time.Second), 1, 30).Messages[0]
	// So does a superseded handle: it names the message, received again since.
	if err := change(epoch.Add(27*time.Second), m.ReceiptHandle, 5); err != nil {
		t.Fatalf("change with superseded handle: %v", err)
	}
	if err := change(epoch.Add(27*time.Second), "garbage", 5); drivers.KindOf(err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("change with forged handle: %v", err)
	}
	if err := change(epoch.Add(27*time.Second), m2.ReceiptHandle, 5); err != nil {
		t.Fatal(err)
	}
}

func TestFIFOOrderAndGroups(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	createQueue(t, d, "f.fifo", fifoAttrs())
	var entries []drivers.SendEntry
	for i, g := range []string{"A", "B", "A", "B", "A"} {
		entries = append(entries, drivers.SendEntry{Body: g + itoa(i), MessageGroupID: g, MessageDeduplicationID: "d" + itoa(i)})
	}
	res := send(t, d, "f.fifo", epoch, entries...)
	var seqs []string
	for _, e := range res.Entries {
		seqs = append(seqs, e.SequenceNumber)
	}
	if !slices.IsSortedFunc(seqs, func(a, b string) int { return len(a)*1000 - len(b)*1000 + cmpStr(a, b) }) || seqs[0] == "" {
		t.Fatalf("sequence numbers not increasing: %v", seqs)
	}
	// A receive takes as much of one group as it can before the next.
	r := receive(t, d, "f.fifo", epoch, 2, 30)
	if got := bodies(r.Messages); !slices.Equal(got, []string{"A0", "A2"}) {
		t.Fatalf("first receive %v", got)
	}
	if r.Messages[0].SequenceNumber != seqs[0] || r.Messages[0].MessageDeduplicationID != "d0" {
		t.Fatalf("fifo fields %+v", r.Messages[0])
	}
	if r2 := receive(t, d, "f.fifo", epoch, 10, 30); !slices.Equal(bodies(r2.Messages), []string{"B1", "B3"}) {
		t.Fatalf("second receive %v, want group B (A's head is in flight)", bodies(r2.Messages))
	}
	// A2 is now A's head and in flight: nothing to deliver.
	del(t, d, "f.fifo", epoch, r.Messages[0].ReceiptHandle)
	if r3 := receive(t, d, "f.fifo", epoch, 10, 30); len(r3.Messages) != 0 {
		t.Fatalf("received %v while every group's head is in flight", bodies(r3.Messages))
	}
	// FIFO handles expire with the visibility timeout.
	if res := del(t, d, "f.fifo", epoch.Add(31*time.Second), r.Messages[1].ReceiptHandle); drivers.KindOf(res.Entries[0].Err) != drivers.KindStaleReceiptHandle {
		t.Fatalf("expired FIFO handle: %+v", res.Entries[0])
	}
	// After the timeout both groups came back at once: group by group, in group order.
	r4 := receive(t, d, "f.fifo", epoch.Add(31*time.Second), 10, 30)
	if got := bodies(r4.Messages); !slices.Equal(got, []string{"A2", "A4", "B1", "B3"}) {
		t.Fatalf("after timeout: %v", got)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestFIFODeduplication(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	createQueue(t, d, "q.fifo", fifoAttrs())
	g := fifoAttrs()
	g.DeduplicationScope = "messageGroup"
	createQueue(t, d, "g.fifo", g)
	first := send(t, d, "q.fifo", epoch, drivers.SendEntry{Body: "1", MessageGroupID: "a", MessageDeduplicationID: "x"}).Entries[0]
	dup := send(t, d, "q.fifo", epoch.Add(4*time.Minute), drivers.SendEntry{Body: "2", MessageGroupID: "b", MessageDeduplicationID: "x"},
		drivers.SendEntry{Body: "3", MessageGroupID: "b", MessageDeduplicationID: "x"}).Entries
	for _, e := range dup {
		if !e.Duplicate || e.MessageID != first.MessageID || e.SequenceNumber != first.SequenceNumber {
			t.Fatalf("duplicate %+v, original %+v", e, first)
		}
	}
	after := send(t, d, "q.fifo", epoch.Add(5*time.Minute), drivers.SendEntry{Body: "4", MessageGroupID: "a", MessageDeduplicationID: "x"}).Entries[0]
	if after.Duplicate || after.MessageID == first.MessageID {
		t.Fatalf("send after the window deduplicated: %+v", after)
	}
	if got := bodies(receive(t, d, "q.fifo", epoch.Add(5*time.Minute), 10, 30).Messages); !slices.Equal(got, []string{"1", "4"}) {
		t.Fatalf("queue scope received %v", got)
	}
	send(t, d, "g.fifo", epoch, drivers.SendEntry{Body: "1", MessageGroupID: "a", MessageDeduplicationID: "x"},
		drivers.SendEntry{Body: "2", MessageGroupID: "b", MessageDeduplicationID: "x"})
	if e := send(t, d, "g.fifo", epoch, drivers.SendEntry{Body: "3", MessageGroupID: "a", MessageDeduplicationID: "x"}).Entries[0]; !e.Duplicate {
		t.Fatal("same group, same id: not deduplicated")
	}
	if got := bodies(receive(t, d, "g.fifo", epoch, 10, 30).Messages); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("group scope received %v", got)
	}
}

func TestRedriveAndMove(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	ctx := context.Background()
	for _, fifo := range []bool{false, true} {
		src, dlq, a := "src", "dlq", stdAttrs()
		if fifo {
			src, dlq, a = "src.fifo", "dlq.fifo", fifoAttrs()
		}
		createQueue(t, d, dlq, a)
		a.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 2}
		createQueue(t, d, src, a)
		send(t, d, src, epoch, drivers.SendEntry{Body: "poison", MessageGroupID: "g", MessageDeduplicationID: "p"})
		if fifo { // the group's next message is blocked behind the poison one until it moves
			send(t, d, src, epoch, drivers.SendEntry{Body: "next", MessageGroupID: "g", MessageDeduplicationID: "n"})
		}
		now := epoch
		for i := 1; i <= 2; i++ {
			r := receive(t, d, src, now, 1, 10)
			if len(r.Messages) != 1 || r.Messages[0].Body != "poison" || r.Messages[0].ReceiveCount != int32(i) {
				t.Fatalf("fifo=%v receive %d: %+v", fifo, i, r.Messages)
			}
			now = now.Add(10 * time.Second)
		}
		// Third attempt: moved to the DLQ instead of delivered.
		r := receive(t, d, src, now, 1, 10)
		if got := bodies(r.Messages); fifo && !slices.Equal(got, []string{"next"}) || !fifo && slices.Contains(got, "poison") {
			t.Fatalf("fifo=%v after maxReceiveCount: %v", fifo, got)
		}
		dr := receive(t, d, dlq, now, 10, 10)
		if len(dr.Messages) != 1 || dr.Messages[0].Body != "poison" || dr.Messages[0].DeadLetterSource != src ||
			dr.Messages[0].ReceiveCount != 3 {
			t.Fatalf("fifo=%v dlq: %+v", fifo, dr.Messages)
		}
		now = now.Add(10 * time.Second)
		mv, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: dlq, Now: now, Limit: 10})
		if err != nil || mv.Moved != 1 || mv.More {
			t.Fatalf("fifo=%v move back: %+v %v", fifo, mv, err)
		}
		back := receive(t, d, src, now.Add(time.Minute), 10, 10)
		if !slices.Contains(bodies(back.Messages), "poison") {
			t.Fatalf("fifo=%v moved message not back in source: %v", fifo, bodies(back.Messages))
		}
		for _, m := range back.Messages {
			if m.Body == "poison" && (m.ReceiveCount != 1 || m.DeadLetterSource != "") {
				t.Fatalf("moved message has stale delivery state: %+v", m)
			}
		}
	}
}

func TestReceiveAttemptReplay(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	ctx := context.Background()
	createQueue(t, d, "q.fifo", fifoAttrs())
	send(t, d, "q.fifo", epoch, drivers.SendEntry{Body: "1", MessageGroupID: "g", MessageDeduplicationID: "1"},
		drivers.SendEntry{Body: "2", MessageGroupID: "h", MessageDeduplicationID: "2"})
	recv := func(now time.Time, attempt string) drivers.ReceiveMessagesResult {
		r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q.fifo", Now: now, MaxMessages: 10,
			VisibilityTimeout: 30, ReceiveRequestAttemptID: attempt})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := recv(epoch, "att")
	again := recv(epoch.Add(10*time.Second), "att")
	if len(first.Messages) != 2 || len(again.Messages) != 2 {
		t.Fatalf("first %v, replay %v", bodies(first.Messages), bodies(again.Messages))
	}
	for i := range first.Messages {
		if first.Messages[i].ReceiptHandle != again.Messages[i].ReceiptHandle {
			t.Fatal("replay returned other receipt handles")
		}
	}
	// Once a message is no longer in flight under its handle, the id acts as a new receive.
	del(t, d, "q.fifo", epoch.Add(11*time.Second), first.Messages[0].ReceiptHandle)
	if r := recv(epoch.Add(12*time.Second), "att"); len(r.Messages) != 0 {
		t.Fatalf("after delete the attempt id must act as a new receive: %v", bodies(r.Messages))
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	ctx := context.Background()
	a := stdAttrs()
	a.MessageRetentionPeriod = 60
	createQueue(t, d, "q", a)
	for i := 0; i < 5; i++ {
		send(t, d, "q", epoch, drivers.SendEntry{Body: "old"})
	}
	send(t, d, "q", epoch.Add(30*time.Second), drivers.SendEntry{Body: "new"})
	now := epoch.Add(60 * time.Second)
	if got := bodies(receive(t, d, "q", now, 10, 0).Messages); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("expired messages received: %v", got)
	}
	total := 0
	for {
		res, err := d.Sweep(ctx, drivers.SweepRequest{Now: now, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted > 2 {
			t.Fatalf("sweep deleted %d, limit 2", res.Deleted)
		}
		total += res.Deleted
		if !res.More {
			break
		}
	}
	if total != 5 {
		t.Fatalf("swept %d, want 5", total)
	}
	st, _ := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q", Now: now})
	if st.Visible != 1 {
		t.Fatalf("stats after sweep %+v", st)
	}
}

// counts is st without the oldest message's time.
func counts(st drivers.QueueStats) drivers.QueueStats {
	st.OldestSentAt = time.Time{}
	return st
}
