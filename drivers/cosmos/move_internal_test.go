package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testenv"
)

// moveTestDriver opens a driver on a container of its own on the emulator.
func moveTestDriver(t *testing.T) *Driver {
	t.Helper()
	e := testenv.CosmosEmulator(t)
	o := Options{Endpoint: e.Endpoint, Key: e.Key, Database: "anysqs-test", Container: "mv" + newID(),
		CreateContainer: true, InsecureSkipVerify: true, QueryReads: e.QueryReads, BatchPartitionKeys: e.BatchPartitionKeys}
	d, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = DropContainer(context.Background(), o) })
	return d
}

// TestMoveRetriedAfterCrash: a move that stopped after writing the copy (the gateway
// died before deleting the source) is retried by the next MoveMessages; the message
// then exists once in the destination, under its MessageId, and not in the source.
func TestMoveRetriedAfterCrash(t *testing.T) {
	ctx := context.Background()
	d := moveTestDriver(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, fifo := range []bool{false, true} {
		attrs := drivers.QueueAttributes{MessageRetentionPeriod: 3600, VisibilityTimeout: 30}
		suffix := ""
		if fifo {
			attrs.FifoQueue, attrs.DeduplicationScope, suffix = true, "queue", ".fifo"
		}
		src, dst := "src"+newID()[:6]+suffix, "dst"+newID()[:6]+suffix
		for _, n := range []string{src, dst} {
			if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: n, Attributes: attrs, CreatedAt: now}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: src, Now: now, Entries: []drivers.SendEntry{
			{EntryID: "1", MessageID: "mid-1", Body: "b", MessageGroupID: "g", MessageDeduplicationID: "d"}}}); err != nil {
			t.Fatal(err)
		}
		sq, _, _ := d.loadQueue(ctx, "test", src)
		dq, _, _ := d.loadQueue(ctx, "test", dst)
		var m msgDoc
		if _, found, err := d.readItem(ctx, "test", sq.pk(), msgItemID("mid-1"), &m); err != nil || !found {
			t.Fatalf("read source message: %v %v", found, err)
		}
		// The first step of a move, then the "crash".
		n := m
		n.PK, n.ETag, n.Gen, n.Vis = dq.pk(), "", dq.Gen, ms(now)
		if err := d.writeCopy(ctx, "test", dq, n, now); err != nil {
			t.Fatal(err)
		}
		res, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: src, Destination: dst, Now: now, Limit: 10})
		if err != nil || res.Moved != 1 {
			t.Fatalf("retried MoveMessages: %+v, %v; want 1 moved", res, err)
		}
		for _, c := range []struct {
			q    queueDoc
			want int
		}{{sq, 0}, {dq, 1}} {
			q, want := c.q, c.want
			items, err := d.query(ctx, "test", q.pk(), "SELECT c.mid FROM c WHERE c.kind = 'msg'", nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != want {
				t.Fatalf("fifo=%v: %s holds %d messages after the retried move, want %d", fifo, q.Name, len(items), want)
			}
			if want == 1 {
				var v struct {
					MID string `json:"mid"`
				}
				_ = json.Unmarshal(items[0], &v)
				if v.MID != "mid-1" {
					t.Fatalf("the moved message is %q, want mid-1", v.MID)
				}
			}
		}
	}
}

// TestMoveCountsOnlyWhatLeftTheSource: a message whose source item changed between the
// move's read and its delete (412: a receive claimed it) stays in the source, and one
// already deleted (404) was not taken out by this call: neither counts as moved, though
// both were copied (at least once).
func TestMoveCountsOnlyWhatLeftTheSource(t *testing.T) {
	ctx := context.Background()
	d := moveTestDriver(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	attrs := drivers.QueueAttributes{MessageRetentionPeriod: 3600, VisibilityTimeout: 30}
	src, dst := "src"+newID()[:6], "dst"+newID()[:6]
	for _, n := range []string{src, dst} {
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: n, Attributes: attrs, CreatedAt: now}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: src, Now: now, Entries: []drivers.SendEntry{
		{EntryID: "1", MessageID: "changed", Body: "b"}, {EntryID: "2", MessageID: "deleted", Body: "b"},
		{EntryID: "3", MessageID: "moved", Body: "b"}}}); err != nil {
		t.Fatal(err)
	}
	sq, _, _ := d.loadQueue(ctx, "test", src)
	moveCopied = func(m msgDoc) {
		switch m.MID {
		case "changed": // a new ETag, as a claim would give it
			var cur msgDoc
			if _, _, err := d.readItem(ctx, "test", sq.pk(), m.ID, &cur); err != nil {
				t.Error(err)
			}
			cur.ETag, cur.Recv = "", cur.Recv+1
			if err := d.upsert(ctx, "test", sq.pk(), cur); err != nil {
				t.Error(err)
			}
		case "deleted":
			if err := d.remove(ctx, "test", sq.pk(), m.ID, ""); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { moveCopied = nil })
	res, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: src, Destination: dst, Now: now, Limit: 10})
	if err != nil || res.Moved != 1 {
		t.Fatalf("MoveMessages = %+v, %v; want 1 moved (the others' deletes found them changed or gone)", res, err)
	}
	for _, c := range []struct {
		q    string
		want []string
	}{{src, []string{"changed"}}, {dst, []string{"changed", "deleted", "moved"}}} {
		q, _, _ := d.loadQueue(ctx, "test", c.q)
		items, err := d.query(ctx, "test", q.pk(), "SELECT c.mid FROM c WHERE c.kind = 'msg' ORDER BY c.mid", nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			var v struct {
				MID string `json:"mid"`
			}
			_ = json.Unmarshal(it, &v)
			got = append(got, v.MID)
		}
		if !slices.Equal(got, c.want) {
			t.Fatalf("%s holds %v after the move, want %v", c.q, got, c.want)
		}
	}
}

// TestMoveBackPastUnmovable: messages whose source queue is gone come first in the
// dead-letter queue (enqueued earlier), more of them than a window holds; steps of 2
// still find and move the 3 behind them, and the last says no more remain.
func TestMoveBackPastUnmovable(t *testing.T) {
	ctx := context.Background()
	d := moveTestDriver(t)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	attrs := drivers.QueueAttributes{MessageRetentionPeriod: 3600, VisibilityTimeout: 1}
	dlq, gone, kept := "dlq"+newID()[:6], "gone"+newID()[:6], "kept"+newID()[:6]
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: dlq, Attributes: attrs, CreatedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 1}
	deadLetter := func(q string, at time.Time, n int) {
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q, Attributes: attrs, CreatedAt: t0}}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i += 10 {
			var es []drivers.SendEntry
			for j := i; j < min(i+10, n); j++ {
				es = append(es, drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: fmt.Sprintf("%s-%d", q, j), Body: "b"})
			}
			if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: q, Now: at, Entries: es}); err != nil {
				t.Fatal(err)
			}
		}
		// A first receive of each, then receives after its visibility timeout dead-letter them.
		for _, when := range []time.Time{at, at.Add(2 * time.Second)} {
			for got := 0; got < n; {
				r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: q, Now: when, MaxMessages: 10, VisibilityTimeout: 1})
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Messages) == 0 {
					break
				}
				got += len(r.Messages)
			}
		}
	}
	deadLetter(gone, t0, 25)
	deadLetter(kept, t0.Add(time.Minute), 3)
	now := t0.Add(2 * time.Minute)
	if st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: dlq, Now: now}); err != nil || st.Visible != 28 {
		t.Fatalf("the DLQ before the move: %+v, %v; want 28 visible", st, err)
	}
	if err := d.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: gone, Now: now}); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for i := 0; ; i++ {
		res, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: dlq, Now: now, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		moved += res.Moved
		if !res.More {
			break
		}
		if i == 4 {
			t.Fatalf("MoveMessages still says more after 5 steps, %d moved", moved)
		}
	}
	if moved != 3 {
		t.Fatalf("moved %d of the 3 messages whose source exists, behind 25 whose source is gone", moved)
	}
	for q, want := range map[string]int64{dlq: 25, kept: 3} {
		if st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: q, Now: now}); err != nil || st.Visible != want {
			t.Fatalf("%s after the move: %+v, %v; want %d visible", q, st, err, want)
		}
	}
}
