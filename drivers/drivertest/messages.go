package drivertest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func fmtList(s []string) string { return fmt.Sprintf("%q", s) }

func fmtMap(m map[string]string) string {
	if len(m) == 0 {
		return "map[]"
	}
	return fmt.Sprint(m)
}

func fmtAttrs(a drivers.QueueAttributes) string {
	rp := "none"
	if a.RedrivePolicy != nil {
		rp = fmt.Sprintf("%+v", *a.RedrivePolicy)
	}
	a.RedrivePolicy = nil
	return fmt.Sprintf("%+v redrive=%s", a, rp)
}

var messageCases = []testCase{
	{Caps: one(capabilities.QueueStandard), Name: "send-receive-delete-roundtrip", Run: func(e *env) {
		q := e.standard("q")
		m := msg("hello, world \u00e9\U0001F600")
		m.SenderID = "AIDAEXAMPLE"
		m.Attributes = map[string]drivers.MessageAttribute{
			"s": {DataType: "String", StringValue: "v"},
			"n": {DataType: "Number.int", StringValue: "42"},
			"b": {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 255}},
		}
		m.SystemAttributes = map[string]drivers.MessageAttribute{"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-abc"}}
		res := e.send(q, 0, m)
		if res[0].MessageID != m.MessageID || res[0].Duplicate || res[0].SequenceNumber != "" {
			e.t.Fatalf("send result %+v: want MessageID %s, not duplicate, no sequence number", res[0], m.MessageID)
		}
		got := e.receive(q, time.Second, 10, 30)
		if len(got.Messages) != 1 {
			e.t.Fatalf("receive: %d messages, want 1", len(got.Messages))
		}
		r := got.Messages[0]
		if r.MessageID != m.MessageID || r.Body != m.Body || r.SenderID != m.SenderID || r.ReceiveCount != 1 ||
			r.ReceiptHandle == "" || !e.sameTime(r.SentAt, e.base) || !e.sameTime(r.FirstReceivedAt, e.at(time.Second)) {
			e.t.Fatalf("received %+v: fields differ from sent %+v (want count 1, SentAt %v, FirstReceivedAt %v)", r, m, e.base, e.at(time.Second))
		}
		checkAttrs(e, "attributes", r.Attributes, m.Attributes)
		checkAttrs(e, "system attributes", r.SystemAttributes, m.SystemAttributes)
		e.mustDelete(q, 2*time.Second, r.ReceiptHandle)
		// Past the deadline the receive set: a deleted message does not come back.
		e.expectStats(q, e.after(31*time.Second), drivers.QueueStats{})
		empty := e.receive(q, e.after(31*time.Second), 10, 30)
		e.expectBodies("receive after delete", empty.Messages)
		if !empty.NextVisibleAt.IsZero() {
			e.t.Fatalf("empty queue: NextVisibleAt %v, want zero", empty.NextVisibleAt)
		}
	}},
	{Caps: one(capabilities.QueueStandard), Name: "batch-one-result-per-entry", Run: func(e *env) {
		q := e.standard("q")
		var entries []drivers.SendEntry
		for i := range 10 {
			entries = append(entries, msg(fmt.Sprintf("m%d", i)))
		}
		res := e.send(q, 0, entries...)
		for i, r := range res {
			if r.MessageID != entries[i].MessageID {
				e.t.Fatalf("entry %d: MessageID %s, want %s", i, r.MessageID, entries[i].MessageID)
			}
		}
		got := e.receive(q, 0, 10, 30)
		if len(got.Messages) != 10 {
			e.t.Fatalf("receive 10: got %d", len(got.Messages))
		}
		// A batch with a bad handle between good ones: each entry has its own outcome.
		handles := []string{got.Messages[0].ReceiptHandle, "not-a-receipt-handle", got.Messages[1].ReceiptHandle}
		out := e.del(q, 0, handles...)
		if out[0].Err != nil || out[2].Err != nil {
			e.t.Fatalf("delete batch: good handles failed: %v, %v", out[0].Err, out[2].Err)
		}
		expectKind(e.t, "delete batch: forged handle", entryErr(out[1].Err), drivers.KindInvalidReceiptHandle)
		e.expectStats(q, 0, drivers.QueueStats{NotVisible: 8})
	}},
	{Caps: one(capabilities.MessageMaxSize), Name: "largest-body-round-trips", Run: largestBody, Degraded: asNative(largestBody)},
	{Caps: one(capabilities.DelayMessage), Name: "per-message-delay", Run: func(e *env) {
		q := e.standard("q")
		m := msg("late")
		m.DelaySeconds = 10
		e.send(q, 0, m, msg("now"))
		e.expectStats(q, 0, drivers.QueueStats{Visible: 1, Delayed: 1})
		e.expectBodies("receive before the delay ends", e.receive(q, 0, 10, 30).Messages, "now")
		got := e.receive(q, 0, 10, 30)
		e.expectBodies("receive again before the delay ends", got.Messages)
		if !e.sameTime(got.NextVisibleAt, e.stamp(10*time.Second)) {
			e.t.Fatalf("NextVisibleAt %v, want %v (the delayed message)", got.NextVisibleAt, e.stamp(10*time.Second))
		}
		e.expectBodies("receive just before the delay ends", e.receive(q, e.before(10*time.Second), 10, 30).Messages)
		e.expectBodies("receive when the delay ends", e.receive(q, e.after(10*time.Second), 10, 30).Messages, "late")
	}},
	{Caps: one(capabilities.DelayQueue), Name: "queue-delay-resolved-by-gateway", Run: func(e *env) {
		attrs := FIFOAttributes()
		attrs.DelaySeconds = 5
		q := e.queue("q", attrs)
		m := fifoMsg("g", "a")
		m.DelaySeconds = 5 // the gateway resolves the queue's delay into each entry
		e.send(q, 0, m)
		e.expectStats(q, time.Second, drivers.QueueStats{Delayed: 1})
		e.expectBodies("receive during the delay", e.receive(q, e.before(5*time.Second), 10, 30).Messages)
		e.expectBodies("receive after the delay", e.receive(q, e.after(5*time.Second), 10, 30).Messages, "a")
	}},
}

// largestBody round-trips a body of the declared message.max-size max_bytes (SQS: 1 MiB);
// the gateway rejects larger ones before the driver.
func largestBody(e *env) {
	n := e.limit(capabilities.MessageMaxSize, "max_bytes", sqsrule.MaxMessageSize)
	attrs := StandardAttributes()
	attrs.MaximumMessageSize = int32(n)
	q := e.queue("q", attrs)
	body := strings.Repeat("abcdefghij", n/10+1)[:n]
	e.send(q, 0, msg(body))
	got := e.receive(q, time.Second, 1, 30)
	if len(got.Messages) != 1 || got.Messages[0].Body != body {
		e.t.Fatalf("a %d-byte body (the declared max_bytes) did not round-trip", n)
	}
}

// longestTimeout keeps a message hidden for the declared visibility.max max_seconds
// (SQS: 12 hours) and releases it after.
func longestTimeout(e *env) {
	max := time.Duration(e.limit(capabilities.VisibilityMax, "max_seconds", sqsrule.MaxVisibilityTimeout)) * time.Second
	e.needs(e.after(max))
	q := e.standard("q")
	e.send(q, 0, msg("a"))
	e.receive(q, 0, 1, int32(max/time.Second))
	e.expectBodies("receive just before max_seconds", e.receive(q, e.before(max), 1, 30).Messages)
	e.expectBodies("receive at max_seconds", e.receive(q, e.after(max), 1, 30).Messages, "a")
}

func checkAttrs(e *env, what string, got, want map[string]drivers.MessageAttribute) {
	e.t.Helper()
	if len(got) != len(want) {
		e.t.Fatalf("%s: got %d, want %d (%v)", what, len(got), len(want), got)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.DataType != w.DataType || g.StringValue != w.StringValue || !bytes.Equal(g.BinaryValue, w.BinaryValue) {
			e.t.Fatalf("%s %q: got %+v, want %+v", what, k, g, w)
		}
	}
}

var visibilityCases = []testCase{
	{Caps: one(capabilities.VisibilityTimeout), Name: "hidden-until-timeout", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		first := e.receive(q, 0, 1, 30)
		e.expectBodies("first receive", first.Messages, "a")
		e.expectStats(q, time.Second, drivers.QueueStats{NotVisible: 1})
		got := e.receive(q, e.before(30*time.Second), 1, 30)
		e.expectBodies("receive while in flight", got.Messages)
		if !e.sameTime(got.NextVisibleAt, e.stamp(30*time.Second)) {
			e.t.Fatalf("NextVisibleAt %v, want %v (the in-flight message's deadline)", got.NextVisibleAt, e.stamp(30*time.Second))
		}
		second := e.receive(q, e.after(30*time.Second), 1, 30)
		e.expectBodies("receive after the timeout", second.Messages, "a")
		r := second.Messages[0]
		if r.ReceiveCount != 2 || !e.sameTime(r.FirstReceivedAt, e.base) || r.ReceiptHandle == first.Messages[0].ReceiptHandle {
			e.t.Fatalf("second receive: count %d FirstReceivedAt %v handle reused %v; want 2, %v, a new handle",
				r.ReceiveCount, r.FirstReceivedAt, r.ReceiptHandle == first.Messages[0].ReceiptHandle, e.base)
		}
	}},
	{Caps: one(capabilities.RedeliveryOrder), Name: "returned-before-newer", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("old"))
		e.send(q, time.Second, msg("new"))
		first := e.receive(q, time.Second, 1, 30)
		e.expectBodies("first receive", first.Messages, "old")
		if err := e.change(q, 2*time.Second, first.Messages[0].ReceiptHandle, 0); err != nil {
			e.t.Fatalf("release old: %v", err)
		}
		again := e.receive(q, 2*time.Second, 1, 30)
		e.expectBodies("released: old before the newer message", again.Messages, "old")
		// Its timeout ends: old comes back before new again.
		e.expectBodies("after old's timeout", e.receive(q, e.after(32*time.Second), 10, 30).Messages, "old", "new")
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// Order is whatever the backend gives; nothing is lost.
		q := e.standard("q")
		e.send(q, 0, msg("old"))
		e.send(q, time.Second, msg("new"))
		first := e.receive(q, time.Second, 1, 30)
		if len(first.Messages) != 1 {
			e.t.Fatalf("first receive: got %v, want one message", bodies(first.Messages))
		}
		if err := e.change(q, 2*time.Second, first.Messages[0].ReceiptHandle, 0); err != nil {
			e.t.Fatalf("release %s: %v", first.Messages[0].Body, err)
		}
		got := e.drain(q, 2*time.Second)
		if b := bodies(got); len(b) != 2 || fmtList(slices.Sorted(slices.Values(b))) != fmtList([]string{"new", "old"}) {
			e.t.Fatalf("after the release received %v, want old and new once each", b)
		}
	}},
	{Caps: one(capabilities.VisibilityMax), Name: "twelve-hours", Run: longestTimeout, Degraded: asNative(longestTimeout)},
	{Caps: one(capabilities.VisibilityMax), Name: "change-capped-twelve-hours-from-receive", Run: func(e *env) {
		e.needs(13 * time.Hour)
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 7200).Messages[0].ReceiptHandle
		if err := e.change(q, time.Hour, h, 11*3600); err != nil {
			e.t.Fatalf("ChangeVisibility to exactly 12 h after the receive: %v", err)
		}
		expectKind(e.t, "ChangeVisibility past 12 h after the receive", entryErr(e.change(q, 2*time.Hour, h, 11*3600)), drivers.KindInvalidArgument)
		// Nothing changed: the deadline is still 12 h after the receive.
		e.expectBodies("receive just before 12 h", e.receive(q, 12*time.Hour-time.Second, 1, 30).Messages)
		got := e.receive(q, 12*time.Hour, 1, 7200)
		e.expectBodies("receive at 12 h", got.Messages, "a")
		// A new receive restarts the 12 hours.
		if err := e.change(q, 13*time.Hour, got.Messages[0].ReceiptHandle, 11*3600); err != nil {
			e.t.Fatalf("ChangeVisibility within 12 h of the second receive: %v", err)
		}
	}, Degraded: func(e *env, d capabilities.Declaration) {
		// Locks of at most max_seconds: the 12-hour cap is the gateway's to keep (it
		// rejects or clamps longer timeouts); the driver honours a change up to the limit.
		max := e.limit(capabilities.VisibilityMax, "max_seconds", sqsrule.MaxVisibilityTimeout)
		e.needs(time.Duration(max)*time.Second + e.after(time.Second))
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 1).Messages[0].ReceiptHandle
		if err := e.change(q, 0, h, int32(max)); err != nil {
			e.t.Fatalf("ChangeVisibility to the declared max_seconds %d: %v", max, err)
		}
		limit := time.Duration(max) * time.Second
		e.expectBodies("receive just before max_seconds", e.receive(q, e.before(limit), 1, 30).Messages)
		e.expectBodies("receive at max_seconds", e.receive(q, e.after(limit), 1, 30).Messages, "a")
	}},
	{Caps: one(capabilities.VisibilityChange), Name: "extend-and-expired", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 10).Messages[0].ReceiptHandle
		if err := e.change(q, 2*time.Second, h, 20); err != nil {
			e.t.Fatalf("ChangeVisibility: %v", err)
		}
		e.expectBodies("receive at the old deadline", e.receive(q, e.after(10*time.Second), 1, 30).Messages)
		e.expectBodies("receive at the new deadline", e.receive(q, e.after(22*time.Second), 1, 30).Messages, "a")
		later := e.after(22*time.Second) + time.Second
		expectKind(e.t, "ChangeVisibility with a forged handle", entryErr(e.change(q, later, "forged", 10)), drivers.KindInvalidReceiptHandle)
	}},
	{Caps: one(capabilities.VisibilityRelease), Name: "zero-releases", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		if err := e.change(q, time.Second, h, 0); err != nil {
			e.t.Fatalf("ChangeVisibility 0: %v", err)
		}
		e.expectStats(q, time.Second, drivers.QueueStats{Visible: 1})
		got := e.receive(q, time.Second, 1, 30)
		e.expectBodies("receive after release", got.Messages, "a")
		if got.Messages[0].ReceiveCount != 2 {
			e.t.Fatalf("receive count %d, want 2", got.Messages[0].ReceiveCount)
		}
	}},
}

var receiptCases = []testCase{
	{Caps: one(capabilities.ReceiptStale), Name: "standard-stale-delete-is-noop", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		old := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		again := e.after(30 * time.Second)
		cur := e.receive(q, again, 1, 30).Messages[0].ReceiptHandle
		e.mustDelete(q, again+time.Second, old) // succeeds without effect
		e.expectStats(q, again+time.Second, drivers.QueueStats{NotVisible: 1})
		e.mustDelete(q, again+time.Second, cur)
		e.expectStats(q, again+time.Second, drivers.QueueStats{})
		e.mustDelete(q, again+2*time.Second, cur) // deleting twice is fine too
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "standard-expired-current-handle-deletes", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		past := e.after(31 * time.Second)
		e.mustDelete(q, past, h) // visibility expired, not received again: SQS deletes
		e.expectStats(q, past, drivers.QueueStats{})
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// A broker's lock ends with the visibility timeout: the delete succeeds without
		// effect, and the message is received again.
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		past := e.after(31 * time.Second)
		e.mustDelete(q, past, h)
		e.expectBodies("receive after the delete with the expired handle", e.receive(q, past, 1, 30).Messages, "a")
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "fifo-expired-handle-fails", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		past := e.after(31 * time.Second)
		out := e.del(q, past, h)
		expectKind(e.t, "FIFO delete with an expired handle", entryErr(out[0].Err), drivers.KindStaleReceiptHandle)
		e.expectStats(q, past, drivers.QueueStats{Visible: 1})
		h2 := e.receive(q, past, 1, 30).Messages[0].ReceiptHandle
		expectKind(e.t, "FIFO delete with the previous receive's handle", entryErr(e.del(q, past, h)[0].Err), drivers.KindStaleReceiptHandle)
		e.mustDelete(q, past, h2)
		expectKind(e.t, "FIFO delete of a deleted message", entryErr(e.del(q, past, h2)[0].Err), drivers.KindStaleReceiptHandle)
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "standard-change-after-expiry-applies", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 2).Messages[0].ReceiptHandle
		past := e.after(3 * time.Second)
		if err := e.change(q, past, h, 5); err != nil { // nobody received it since: SQS applies the change
			e.t.Fatalf("ChangeVisibility with the current handle after its timeout passed: %v", err)
		}
		e.expectStats(q, past, drivers.QueueStats{NotVisible: 1})
		e.expectBodies("receive before the new deadline", e.receive(q, past+e.before(5*time.Second), 1, 30).Messages)
		e.expectBodies("receive after the new deadline", e.receive(q, past+e.after(5*time.Second), 1, 30).Messages, "a")
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// The handle's lock ended with its timeout: the change fails and changes nothing.
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 2).Messages[0].ReceiptHandle
		past := e.after(3 * time.Second)
		expectKind(e.t, "ChangeVisibility after the timeout passed", entryErr(e.change(q, past, h, 60)), drivers.KindStaleReceiptHandle)
		e.expectBodies("message is visible", e.receive(q, past, 1, 30).Messages, "a")
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "standard-older-handle-changes-visibility", Run: func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		old := e.receive(q, 0, 1, 2).Messages[0].ReceiptHandle
		again := e.after(3 * time.Second)
		e.receive(q, again, 1, 300)
		if err := e.change(q, again, old, 0); err != nil { // SQS applies it to the message
			e.t.Fatalf("ChangeVisibility 0 with the previous receive's handle: %v", err)
		}
		got := e.receive(q, again, 1, 30).Messages
		e.expectBodies("receive after the release by the older handle", got, "a")
		if got[0].ReceiveCount != 3 {
			e.t.Fatalf("receive count %d, want 3", got[0].ReceiveCount)
		}
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// The older handle names no lock: the change fails and the later receive keeps it.
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		old := e.receive(q, 0, 1, 2).Messages[0].ReceiptHandle
		again := e.after(3 * time.Second)
		e.receive(q, again, 1, 300)
		expectKind(e.t, "ChangeVisibility 0 with the previous receive's handle", entryErr(e.change(q, again, old, 0)), drivers.KindStaleReceiptHandle)
		e.expectStats(q, again, drivers.QueueStats{NotVisible: 1})
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "change-after-delete-is-stale", Run: func(e *env) {
		for _, c := range []struct {
			q string
			m drivers.SendEntry
		}{{e.standard("s"), msg("a")}, {e.fifo("f"), fifoMsg("g", "a")}} {
			q := c.q
			e.send(q, 0, c.m)
			h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
			e.mustDelete(q, time.Second, h)
			expectKind(e.t, "ChangeVisibility of a deleted message in "+q, entryErr(e.change(q, time.Second, h, 10)), drivers.KindStaleReceiptHandle)
			e.expectStats(q, time.Second, drivers.QueueStats{})
		}
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "fifo-change-with-expired-handle-is-stale", Run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "a"))
		h := e.receive(q, 0, 1, 2).Messages[0].ReceiptHandle
		past := e.after(3 * time.Second)
		expectKind(e.t, "FIFO ChangeVisibility after the timeout passed", entryErr(e.change(q, past, h, 60)), drivers.KindStaleReceiptHandle)
		e.expectStats(q, past, drivers.QueueStats{Visible: 1})
		e.receive(q, past, 1, 300)
		expectKind(e.t, "FIFO ChangeVisibility with the previous receive's handle", entryErr(e.change(q, past, h, 0)), drivers.KindStaleReceiptHandle)
		e.expectStats(q, past, drivers.QueueStats{NotVisible: 1})
	}},
	{Caps: one(capabilities.ReceiptStale), Name: "foreign-handles", Run: func(e *env) {
		q1, q2 := e.standard("a"), e.standard("b")
		e.send(q1, 0, msg("a"))
		h := e.receive(q1, 0, 1, 30).Messages[0].ReceiptHandle
		for _, bad := range []string{"", "x", "AQEB" + h, h[:len(h)-2], h + "A"} {
			expectKind(e.t, fmt.Sprintf("delete with handle %q", bad), entryErr(e.del(q1, 0, bad)[0].Err), drivers.KindInvalidReceiptHandle)
		}
		expectKind(e.t, "delete with another queue's handle", entryErr(e.del(q2, 0, h)[0].Err), drivers.KindInvalidReceiptHandle)
		expectKind(e.t, "change visibility with another queue's handle", entryErr(e.change(q2, 0, h, 5)), drivers.KindInvalidReceiptHandle)
		e.expectStats(q1, 0, drivers.QueueStats{NotVisible: 1})
	}},
}
