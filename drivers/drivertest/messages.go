package drivertest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
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
	{string(capabilities.QueueStandard), "send-receive-delete-roundtrip", func(e *env) {
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
			r.ReceiptHandle == "" || !sameTime(r.SentAt, e.base) || !sameTime(r.FirstReceivedAt, e.at(time.Second)) {
			e.t.Fatalf("received %+v: fields differ from sent %+v (want count 1, SentAt %v, FirstReceivedAt %v)", r, m, e.base, e.at(time.Second))
		}
		checkAttrs(e, "attributes", r.Attributes, m.Attributes)
		checkAttrs(e, "system attributes", r.SystemAttributes, m.SystemAttributes)
		e.mustDelete(q, 2*time.Second, r.ReceiptHandle)
		e.expectStats(q, time.Hour, drivers.QueueStats{})
		empty := e.receive(q, time.Hour, 10, 30)
		e.expectBodies("receive after delete", empty.Messages)
		if !empty.NextVisibleAt.IsZero() {
			e.t.Fatalf("empty queue: NextVisibleAt %v, want zero", empty.NextVisibleAt)
		}
	}},
	{string(capabilities.QueueStandard), "batch-one-result-per-entry", func(e *env) {
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
	{string(capabilities.DelayMessage), "per-message-delay", func(e *env) {
		q := e.standard("q")
		m := msg("late")
		m.DelaySeconds = 10
		e.send(q, 0, m, msg("now"))
		e.expectStats(q, 0, drivers.QueueStats{Visible: 1, Delayed: 1})
		got := e.receive(q, 0, 10, 30)
		e.expectBodies("receive before the delay ends", got.Messages, "now")
		if !sameTime(got.NextVisibleAt, e.at(10*time.Second)) {
			e.t.Fatalf("NextVisibleAt %v, want %v (the delayed message)", got.NextVisibleAt, e.at(10*time.Second))
		}
		e.expectBodies("receive just before the delay ends", e.receive(q, 9999*time.Millisecond, 10, 30).Messages)
		e.expectBodies("receive when the delay ends", e.receive(q, 10*time.Second, 10, 30).Messages, "late")
	}},
	{string(capabilities.DelayQueue), "queue-delay-resolved-by-gateway", func(e *env) {
		attrs := FIFOAttributes()
		attrs.DelaySeconds = 5
		q := e.queue("q", attrs)
		m := fifoMsg("g", "a")
		m.DelaySeconds = 5 // the gateway resolves the queue's delay into each entry
		e.send(q, 0, m)
		e.expectStats(q, time.Second, drivers.QueueStats{Delayed: 1})
		e.expectBodies("receive during the delay", e.receive(q, 4*time.Second, 10, 30).Messages)
		e.expectBodies("receive after the delay", e.receive(q, 5*time.Second, 10, 30).Messages, "a")
	}},
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
	{string(capabilities.VisibilityTimeout), "hidden-until-timeout", func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		first := e.receive(q, 0, 1, 30)
		e.expectBodies("first receive", first.Messages, "a")
		e.expectStats(q, time.Second, drivers.QueueStats{NotVisible: 1})
		got := e.receive(q, 29*time.Second, 1, 30)
		e.expectBodies("receive while in flight", got.Messages)
		if !sameTime(got.NextVisibleAt, e.at(30*time.Second)) {
			e.t.Fatalf("NextVisibleAt %v, want %v (the in-flight message's deadline)", got.NextVisibleAt, e.at(30*time.Second))
		}
		second := e.receive(q, 30*time.Second, 1, 30)
		e.expectBodies("receive after the timeout", second.Messages, "a")
		r := second.Messages[0]
		if r.ReceiveCount != 2 || !sameTime(r.FirstReceivedAt, e.base) || r.ReceiptHandle == first.Messages[0].ReceiptHandle {
			e.t.Fatalf("second receive: count %d FirstReceivedAt %v handle reused %v; want 2, %v, a new handle",
				r.ReceiveCount, r.FirstReceivedAt, r.ReceiptHandle == first.Messages[0].ReceiptHandle, e.base)
		}
	}},
	{string(capabilities.VisibilityMax), "twelve-hours", func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		e.receive(q, 0, 1, 43200)
		e.expectBodies("receive just before 12 h", e.receive(q, 12*time.Hour-time.Second, 1, 30).Messages)
		e.expectBodies("receive at 12 h", e.receive(q, 12*time.Hour, 1, 30).Messages, "a")
	}},
	{string(capabilities.VisibilityMax), "change-capped-twelve-hours-from-receive", func(e *env) {
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
	}},
	{string(capabilities.VisibilityChange), "extend-and-expired", func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		if err := e.change(q, 10*time.Second, h, 60); err != nil {
			e.t.Fatalf("ChangeVisibility: %v", err)
		}
		e.expectBodies("receive at the old deadline", e.receive(q, 30*time.Second, 1, 30).Messages)
		e.expectBodies("receive at the new deadline", e.receive(q, 70*time.Second, 1, 30).Messages, "a")
		expectKind(e.t, "ChangeVisibility with the previous receive's handle", entryErr(e.change(q, 71*time.Second, h, 10)), drivers.KindInvalidReceiptHandle)
		expectKind(e.t, "ChangeVisibility with a forged handle", entryErr(e.change(q, 71*time.Second, "forged", 10)), drivers.KindInvalidReceiptHandle)
	}},
	{string(capabilities.VisibilityChange), "not-inflight-after-expiry", func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		expectKind(e.t, "ChangeVisibility after the timeout passed", entryErr(e.change(q, 31*time.Second, h, 60)), drivers.KindMessageNotInflight)
		e.expectBodies("message is visible", e.receive(q, 31*time.Second, 1, 30).Messages, "a")
	}},
	{string(capabilities.VisibilityRelease), "zero-releases", func(e *env) {
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
	{string(capabilities.ReceiptStale), "standard-stale-delete-is-noop", func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		old := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		cur := e.receive(q, 30*time.Second, 1, 30).Messages[0].ReceiptHandle
		e.mustDelete(q, 31*time.Second, old) // succeeds without effect
		e.expectStats(q, 31*time.Second, drivers.QueueStats{NotVisible: 1})
		e.mustDelete(q, 31*time.Second, cur)
		e.expectStats(q, 31*time.Second, drivers.QueueStats{})
		e.mustDelete(q, 32*time.Second, cur) // deleting twice is fine too
	}},
	{string(capabilities.ReceiptStale), "standard-expired-current-handle-deletes", func(e *env) {
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		e.mustDelete(q, time.Minute, h) // visibility expired, not received again: SQS deletes
		e.expectStats(q, time.Minute, drivers.QueueStats{})
	}},
	{string(capabilities.ReceiptStale), "fifo-expired-handle-fails", func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "a"))
		h := e.receive(q, 0, 1, 30).Messages[0].ReceiptHandle
		out := e.del(q, time.Minute, h)
		expectKind(e.t, "FIFO delete with an expired handle", entryErr(out[0].Err), drivers.KindInvalidReceiptHandle)
		e.expectStats(q, time.Minute, drivers.QueueStats{Visible: 1})
		h2 := e.receive(q, time.Minute, 1, 30).Messages[0].ReceiptHandle
		expectKind(e.t, "FIFO delete with the previous receive's handle", entryErr(e.del(q, time.Minute, h)[0].Err), drivers.KindInvalidReceiptHandle)
		e.mustDelete(q, time.Minute, h2)
	}},
	{string(capabilities.ReceiptStale), "foreign-handles", func(e *env) {
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
