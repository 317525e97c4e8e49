package drivertest

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

var seqPattern = regexp.MustCompile(`^[0-9]{20}$`)

var fifoCases = []testCase{
	{Caps: one(capabilities.FIFOOrdering), Name: "group-order", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("B", "b1"), fifoMsg("A", "a2"))
		e.send(q, time.Second, fifoMsg("B", "b2"), fifoMsg("A", "a3"))
		got := e.receive(q, 2*time.Second, 10, 30)
		var a, b []string
		for _, m := range got.Messages {
			if m.MessageGroupID == "A" {
				a = append(a, m.Body)
			} else {
				b = append(b, m.Body)
			}
		}
		if fmtList(a) != fmtList([]string{"a1", "a2", "a3"}) || fmtList(b) != fmtList([]string{"b1", "b2"}) {
			e.t.Fatalf("per-group order: A %v, B %v", a, b)
		}
	}},
	{Caps: one(capabilities.FIFOOrdering), Name: "drained-groups-hide-no-other", Run: func(e *env) {
		// More drained groups than a receive looks at (every driver bounds its
		// candidates), then one more group: the drained ones must not hide it for good.
		// A receive may come back empty while a driver tidies drained groups (as an SQS
		// short poll may), so each phase has a bound on receives, not a single one.
		q := e.fifo("q")
		const drained = 40
		for g := 0; g < drained; g += 10 {
			var batch []drivers.SendEntry
			for i := g; i < g+10; i++ {
				batch = append(batch, fifoMsg(fmt.Sprint("g", i), fmt.Sprint("m", i)))
			}
			e.send(q, 0, batch...)
		}
		for i, receives := 0, 0; i < drained; receives++ {
			if receives == drained {
				e.t.Fatalf("%d receives drained %d of %d groups: drained groups hide the others", receives, i, drained)
			}
			var handles []string
			for _, m := range e.receive(q, time.Second, 10, 30).Messages {
				handles = append(handles, m.ReceiptHandle)
			}
			if len(handles) > 0 {
				e.del(q, time.Second, handles...)
				i += len(handles)
			}
		}
		e.send(q, 2*time.Second, fifoMsg("late", "left"))
		for receives := 0; ; receives++ {
			if receives == drained {
				e.t.Fatalf("%d receives after the drain found nothing: the drained groups hide the one left", receives)
			}
			if got := e.receive(q, 3*time.Second, 1, 30).Messages; len(got) > 0 {
				e.expectBodies("the one group with a message", got, "left")
				break
			}
		}
	}},
	{Caps: one(capabilities.FIFOOrdering), Name: "inflight-blocks-group", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("A", "a2"), fifoMsg("B", "b1"), fifoMsg("B", "b2"))
		first := e.receive(q, 0, 1, 30)
		e.expectBodies("first receive", first.Messages, "a1")
		second := e.receive(q, 0, 1, 30)
		e.expectBodies("second receive: group A is blocked by a1", second.Messages, "b1")
		e.expectBodies("third receive: both groups blocked", e.receive(q, time.Second, 10, 30).Messages)
		e.mustDelete(q, 2*time.Second, first.Messages[0].ReceiptHandle)
		e.expectBodies("after deleting a1", e.receive(q, 2*time.Second, 10, 30).Messages, "a2")
		// b1's visibility expires: b1 comes back before b2.
		e.expectBodies("after b1's timeout", e.receive(q, e.after(30*time.Second), 1, 30).Messages, "b1")
	}},
	{Caps: one(capabilities.FIFOOrdering), Name: "released-later-waits-for-earlier", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("A", "a2"), fifoMsg("A", "a3"))
		got := e.receive(q, 0, 2, 30)
		e.expectBodies("receive two", got.Messages, "a1", "a2")
		if err := e.change(q, time.Second, got.Messages[1].ReceiptHandle, 0); err != nil {
			e.t.Fatalf("release a2: %v", err)
		}
		e.expectBodies("a1 is still in flight: a2 waits", e.receive(q, time.Second, 10, 30).Messages)
		e.mustDelete(q, 2*time.Second, got.Messages[0].ReceiptHandle)
		e.expectBodies("after deleting a1", e.receive(q, 2*time.Second, 10, 30).Messages, "a2", "a3")
	}},
	{Caps: one(capabilities.FIFOGroupRelease), Name: "released-first-while-later-in-flight", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("A", "a2"), fifoMsg("A", "a3"))
		got := e.receive(q, 0, 2, 30)
		e.expectBodies("receive two", got.Messages, "a1", "a2")
		if err := e.change(q, time.Second, got.Messages[0].ReceiptHandle, 0); err != nil {
			e.t.Fatalf("release a1: %v", err)
		}
		again := e.receive(q, time.Second, 10, 30)
		e.expectBodies("a1 released, a2 in flight: a1 again, a3 still waits", again.Messages, "a1")
		e.mustDelete(q, 2*time.Second, got.Messages[1].ReceiptHandle)
		e.expectBodies("a2 deleted, a1 in flight again", e.receive(q, 2*time.Second, 10, 30).Messages)
		e.mustDelete(q, 3*time.Second, again.Messages[0].ReceiptHandle)
		e.expectBodies("group free again", e.receive(q, 3*time.Second, 10, 30).Messages, "a3")
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// The whole group waits until none of its messages is in flight.
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("A", "a2"), fifoMsg("A", "a3"))
		got := e.receive(q, 0, 2, 30)
		e.expectBodies("receive two", got.Messages, "a1", "a2")
		if err := e.change(q, time.Second, got.Messages[0].ReceiptHandle, 0); err != nil {
			e.t.Fatalf("release a1: %v", err)
		}
		e.expectBodies("a2 is still in flight: the group stays blocked", e.receive(q, time.Second, 10, 30).Messages)
		e.mustDelete(q, 2*time.Second, got.Messages[1].ReceiptHandle)
		e.expectBodies("group free again", e.receive(q, 2*time.Second, 10, 30).Messages, "a1", "a3")
	}},
	{Caps: one(capabilities.FIFOGroupRelease), Name: "batch-takes-one-group-before-the-next", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("B", "b1"), fifoMsg("A", "a2"), fifoMsg("B", "b2"), fifoMsg("A", "a3"))
		e.expectBodies("one receive of 10", e.receive(q, time.Second, 10, 30).Messages, "a1", "a2", "a3", "b1", "b2")
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("B", "b1"), fifoMsg("A", "a2"), fifoMsg("B", "b2"), fifoMsg("A", "a3"))
		expectGroupOrder(e, e.drain(q, time.Second), map[string][]string{"A": {"a1", "a2", "a3"}, "B": {"b1", "b2"}})
	}},
	{Caps: one(capabilities.FIFOGroupRelease), Name: "returned-group-after-waiting-groups", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"))
		e.expectBodies("first receive", e.receive(q, 0, 1, 30).Messages, "a1")
		e.send(q, time.Second, fifoMsg("B", "b1"))
		e.expectBodies("after a1's timeout: B waited since its send, A since now",
			e.receive(q, e.after(30*time.Second), 10, 30).Messages, "b1", "a1")
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"))
		e.expectBodies("first receive", e.receive(q, 0, 1, 30).Messages, "a1")
		e.send(q, time.Second, fifoMsg("B", "b1"))
		expectGroupOrder(e, e.drain(q, e.after(30*time.Second)), map[string][]string{"A": {"a1"}, "B": {"b1"}})
	}},
	{Caps: one(capabilities.FIFOGroupBatch), Name: "several-of-one-group", Run: severalOfOneGroup, Degraded: asNative(severalOfOneGroup)},
	{Caps: one(capabilities.FIFOSequenceNumber), Name: "increasing-within-group-20-digits", Run: func(e *env) {
		// SQS promises sequence numbers that increase within a message group; nothing
		// across groups, which a backend partitioned by group cannot order.
		q := e.fifo("q")
		sends := []drivers.SendEntry{fifoMsg("A", "1"), fifoMsg("B", "2")}
		res := e.send(q, 0, sends...)
		sends = append(sends, fifoMsg("A", "3"), fifoMsg("B", "4"))
		res = append(res, e.send(q, time.Second, sends[2:]...)...)
		last := map[string]uint64{}
		for i, r := range res {
			if !seqPattern.MatchString(r.SequenceNumber) {
				e.t.Fatalf("entry %d: sequence number %q is not 20 decimal digits", i, r.SequenceNumber)
			}
			n, _ := strconv.ParseUint(r.SequenceNumber, 10, 64)
			g := sends[i].MessageGroupID
			if n <= last[g] {
				e.t.Fatalf("entry %d: sequence number %s does not increase within group %s", i, r.SequenceNumber, g)
			}
			last[g] = n
		}
		got := e.receive(q, 2*time.Second, 10, 30)
		for _, m := range got.Messages {
			for _, r := range res {
				if r.MessageID == m.MessageID && r.SequenceNumber != m.SequenceNumber {
					e.t.Fatalf("received %s with sequence number %s, sent with %s", m.MessageID, m.SequenceNumber, r.SequenceNumber)
				}
			}
		}
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// No sequence number on send (a broker assigns it when it stores the message);
		// a send that returns one returns the received message's, and received messages
		// carry 20-digit numbers that increase within their group.
		q := e.fifo("q")
		sends := []drivers.SendEntry{fifoMsg("A", "1"), fifoMsg("B", "2"), fifoMsg("A", "3"), fifoMsg("B", "4")}
		res := e.send(q, 0, sends...)
		got := e.receive(q, time.Second, 10, 30)
		if len(got.Messages) != len(sends) {
			e.t.Fatalf("receive: got %v, want the %d messages sent", bodies(got.Messages), len(sends))
		}
		last := map[string]uint64{}
		for _, m := range got.Messages {
			if !seqPattern.MatchString(m.SequenceNumber) {
				e.t.Fatalf("received %s with sequence number %q, not 20 decimal digits", m.Body, m.SequenceNumber)
			}
			n, _ := strconv.ParseUint(m.SequenceNumber, 10, 64)
			if n <= last[m.MessageGroupID] {
				e.t.Fatalf("sequence number %s of %s does not increase within group %s", m.SequenceNumber, m.Body, m.MessageGroupID)
			}
			last[m.MessageGroupID] = n
			for _, r := range res {
				if r.MessageID == m.MessageID && r.SequenceNumber != "" && r.SequenceNumber != m.SequenceNumber {
					e.t.Fatalf("received %s with sequence number %s, sent with %s", m.MessageID, m.SequenceNumber, r.SequenceNumber)
				}
			}
		}
	}},
	{Caps: one(capabilities.FIFODedupEcho), Name: "duplicate-returns-original", Run: func(e *env) {
		e.needs(4 * time.Minute)
		q := e.fifo("q")
		orig := e.send(q, 0, fifoMsg("g", "x"))[0]
		dup := fifoMsg("g", "x")
		res := e.send(q, 4*time.Minute, dup)[0]
		if !res.Duplicate || res.MessageID != orig.MessageID || res.SequenceNumber != orig.SequenceNumber {
			e.t.Fatalf("duplicate send: %+v, want Duplicate with MessageID %s SequenceNumber %s", res, orig.MessageID, orig.SequenceNumber)
		}
		e.expectStats(q, 4*time.Minute, drivers.QueueStats{Visible: 1})
	}},
	{Caps: one(capabilities.FIFODedupExplicit), Name: "window-five-minutes", Run: func(e *env) {
		e.needs(6 * time.Minute)
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "x"))
		if r := e.send(q, 5*time.Minute-time.Second, fifoMsg("g", "x"))[0]; !r.Duplicate {
			e.t.Fatalf("send within 5 minutes was not a duplicate")
		}
		if r := e.send(q, 5*time.Minute+time.Second, fifoMsg("g", "x"))[0]; r.Duplicate {
			e.t.Fatalf("send after 5 minutes was a duplicate")
		}
		e.expectStats(q, 6*time.Minute, drivers.QueueStats{Visible: 2})
	}},
	{Caps: one(capabilities.FIFODedupExplicit), Name: "duplicate-within-one-batch", Run: func(e *env) {
		q := e.fifo("q")
		res := e.send(q, 0, fifoMsg("g", "x"), fifoMsg("g", "x"))
		if res[0].Duplicate || !res[1].Duplicate || res[1].MessageID != res[0].MessageID {
			e.t.Fatalf("batch with a repeated deduplication id: %+v", res)
		}
	}},
	{Caps: one(capabilities.FIFODedupExplicit), Name: "survives-delete", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "x"))
		e.mustDelete(q, time.Second, e.receive(q, time.Second, 1, 30).Messages[0].ReceiptHandle)
		if r := e.send(q, 2*time.Second, fifoMsg("g", "x"))[0]; !r.Duplicate {
			e.t.Fatalf("send after the original was deleted, within 5 minutes, was not a duplicate")
		}
	}},
	{Caps: one(capabilities.FIFODedupExplicit), Name: "forgotten-with-deleted-queue", Run: func(e *env) {
		e.needs(e.after(drivers.QueueNameReuseDelay + time.Second))
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "x"))
		if err := e.d.DeleteQueue(e.ctx, drivers.DeleteQueueRequest{Name: q, Now: e.at(0)}); err != nil {
			e.t.Fatalf("DeleteQueue: %v", err)
		}
		// Within the deduplication window, once the name may be used again.
		again := e.after(drivers.QueueNameReuseDelay + time.Second)
		if _, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q, Attributes: FIFOAttributes(), CreatedAt: e.at(again), LastModified: e.at(again)}}); err != nil {
			e.t.Fatalf("CreateQueue again: %v", err)
		}
		if r := e.send(q, again, fifoMsg("g", "x"))[0]; r.Duplicate {
			e.t.Fatalf("send to a recreated queue was a duplicate of a message of the deleted one")
		}
	}},
	{Caps: one(capabilities.FIFODedupScopeGroup), Name: "scope-message-group", Run: func(e *env) {
		attrs := FIFOAttributes()
		attrs.DeduplicationScope = "messageGroup"
		attrs.FifoThroughputLimit = "perMessageGroupId"
		qg := e.queue("group", attrs)
		e.send(qg, 0, fifoMsg("A", "x"))
		if r := e.send(qg, time.Second, fifoMsg("B", "x"))[0]; r.Duplicate {
			e.t.Fatalf("scope messageGroup: same id in another group was a duplicate")
		}
		if r := e.send(qg, time.Second, fifoMsg("A", "x"))[0]; !r.Duplicate {
			e.t.Fatalf("scope messageGroup: same id in the same group was not a duplicate")
		}
		qq := e.fifo("queue")
		e.send(qq, 0, fifoMsg("A", "x"))
		if r := e.send(qq, time.Second, fifoMsg("B", "x"))[0]; !r.Duplicate {
			e.t.Fatalf("scope queue: same id in another group was not a duplicate")
		}
	}},
	{Caps: one(capabilities.FIFOReceiveAttempt), Name: "replay-same-handles", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"), fifoMsg("A", "a2"), fifoMsg("B", "b1"))
		first := e.receiveAttempt(q, 0, 2, 30, "att-1")
		if len(first.Messages) != 2 {
			e.t.Fatalf("first receive: %d messages, want 2", len(first.Messages))
		}
		again := e.receiveAttempt(q, 10*time.Second, 2, 30, "att-1")
		if len(again.Messages) != len(first.Messages) {
			e.t.Fatalf("replay: %d messages, want %d", len(again.Messages), len(first.Messages))
		}
		for i := range first.Messages {
			f, a := first.Messages[i], again.Messages[i]
			if f.MessageID != a.MessageID || f.ReceiptHandle != a.ReceiptHandle || a.ReceiveCount != f.ReceiveCount {
				e.t.Fatalf("replay message %d: %s/%d, want %s/%d with the same handle", i, a.MessageID, a.ReceiveCount, f.MessageID, f.ReceiveCount)
			}
		}
		// After the messages left flight, the same attempt id is a new receive.
		e.mustDelete(q, 11*time.Second, first.Messages[0].ReceiptHandle)
		next := e.receiveAttempt(q, 12*time.Second, 10, 30, "att-1")
		for _, m := range next.Messages {
			if m.MessageID == first.Messages[0].MessageID {
				e.t.Fatalf("replay returned a deleted message")
			}
		}
		// A different attempt id is always a new receive.
		other := e.receiveAttempt(q, 12*time.Second, 10, 30, "att-2")
		for _, m := range other.Messages {
			for _, n := range next.Messages {
				if m.MessageID == n.MessageID {
					e.t.Fatalf("another attempt id returned in-flight message %s", m.MessageID)
				}
			}
		}
	}},
	{Caps: one(capabilities.FIFOReceiveAttempt), Name: "expired-attempt-is-new-receive", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("A", "a1"))
		first := e.receiveAttempt(q, 0, 1, 600, "att")
		e.expectBodies("first", first.Messages, "a1")
		late := e.receiveAttempt(q, 5*time.Minute+time.Second, 1, 600, "att")
		e.expectBodies("same attempt id after five minutes: a new receive finds the group blocked", late.Messages)
	}},
}

// severalOfOneGroup: one receive returns up to the declared fifo.group-batch
// max_messages (SQS: 10) messages of one group, in order.
func severalOfOneGroup(e *env) {
	q := e.fifo("q")
	var entries []drivers.SendEntry
	var want []string
	max := e.limit(capabilities.FIFOGroupBatch, "max_messages", 10)
	for i := range 5 {
		entries = append(entries, fifoMsg("G", fmt.Sprintf("g%d", i)))
		if i < max {
			want = append(want, fmt.Sprintf("g%d", i))
		}
	}
	e.send(q, 0, entries...)
	e.expectBodies("one receive", e.receive(q, 0, 10, 30).Messages, want...)
}

// expectGroupOrder checks that msgs hold exactly want's messages, each group's in order.
func expectGroupOrder(e *env, msgs []drivers.Message, want map[string][]string) {
	e.t.Helper()
	got := map[string][]string{}
	for _, m := range msgs {
		got[m.MessageGroupID] = append(got[m.MessageGroupID], m.Body)
	}
	if len(got) != len(want) {
		e.t.Fatalf("received %v, want the groups %v", bodies(msgs), want)
	}
	for g, w := range want {
		if fmtList(got[g]) != fmtList(w) {
			e.t.Fatalf("group %s: received %v, want %v (all: %v)", g, got[g], w, bodies(msgs))
		}
	}
}
