package drivertest

import (
	"fmt"
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// withDLQ creates a dead-letter queue and a source queue redriving to it.
func (e *env) withDLQ(fifo bool, maxReceiveCount int32) (src, dlq string) {
	attrs := StandardAttributes()
	if fifo {
		attrs = FIFOAttributes()
	}
	dlq = e.queue("dlq", attrs)
	attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: maxReceiveCount}
	return e.queue("src", attrs), dlq
}

var redriveCases = []testCase{
	{Caps: one(capabilities.RedriveDLQ), Name: "moved-after-max-receives", Run: movedAfterMaxReceives, Degraded: asNative(movedAfterMaxReceives)},
	{Caps: one(capabilities.RedriveDLQ), Name: "fifo-next-in-group-delivered", Run: fifoNextInGroup, Degraded: asNative(fifoNextInGroup)},
	{Caps: one(capabilities.RedriveDLQ), Name: "dlq-retention-clock", Run: dlqRetentionClock, Degraded: asNative(dlqRetentionClock)},
	{Caps: one(capabilities.RedriveDLQ), Name: "own-dlq-keeps-messages", Run: ownDLQKeepsMessages, Degraded: asNative(ownDLQKeepsMessages)},
	{Caps: one(capabilities.RedriveMoveTasks), Name: "move-back-to-source", Run: moveBackToSource, Degraded: asNative(moveBackToSource)},
	{Caps: one(capabilities.RedriveMoveTasks), Name: "move-to-destination-visible-only", Run: moveToDestination, Degraded: asNative(moveToDestination)},
	{Caps: one(capabilities.RedriveMoveTasks), Name: "move-back-past-unmovable", Run: moveBackPastUnmovable, Degraded: moveBackStopsAtUnmovable},
}

// atLeastOnce says whether the declaration of id promises only an at-least-once move:
// then the cases check exactly that promise (no message lost, every copy of a message
// with one MessageID, none left in the source) instead of exactly one copy.
func (e *env) atLeastOnce(id capabilities.ID) bool {
	return e.limitValue(id, "move", "atomic") == "at-least-once"
}

// copiesByBody groups msgs by body and fails if two copies of one body differ in
// MessageID: a move may repeat a message, never under another id.
func (e *env) copiesByBody(what string, msgs []drivers.Message) map[string][]drivers.Message {
	e.t.Helper()
	out := map[string][]drivers.Message{}
	for _, m := range msgs {
		if prev := out[m.Body]; len(prev) > 0 && prev[0].MessageID != m.MessageID {
			e.t.Fatalf("%s: two copies of %q with MessageIDs %s and %s", what, m.Body, prev[0].MessageID, m.MessageID)
		}
		out[m.Body] = append(out[m.Body], m)
	}
	return out
}

// expectCopies fails unless copies holds exactly the bodies want, once each for an atomic
// move and at least once for an at-least-once move.
func (e *env) expectCopies(what string, copies map[string][]drivers.Message, atLeastOnce bool, want ...string) {
	e.t.Helper()
	if len(copies) != len(want) {
		e.t.Fatalf("%s: %d distinct messages, want %v", what, len(copies), want)
	}
	for _, b := range want {
		n := len(copies[b])
		if n == 0 || (n > 1 && !atLeastOnce) {
			e.t.Fatalf("%s: %q arrived %d times, want %s", what, b, n, map[bool]string{false: "once", true: "at least once"}[atLeastOnce])
		}
	}
}

func movedAfterMaxReceives(e *env) {
	atLeastOnce := e.atLeastOnce(capabilities.RedriveDLQ)
	src, dlq := e.withDLQ(false, 2)
	sent := e.send(src, 0, msg("poison"))[0]
	second := e.after(10 * time.Second)
	third := second + e.after(10*time.Second)
	e.expectBodies("receive 1", e.receive(src, 0, 1, 10).Messages, "poison")
	e.expectBodies("receive 2", e.receive(src, second, 1, 10).Messages, "poison")
	// The third attempt finds the count equal to maxReceiveCount: the message moves, and
	// the receive says so (-1: the backend dead-letters on its own and cannot count).
	r3 := e.receive(src, third, 1, 10)
	e.expectBodies("receive 3", r3.Messages)
	if n := r3.DeadLettered; n != -1 && (n < 1 || n > 1 && !atLeastOnce) {
		e.t.Fatalf("receive 3: DeadLettered %d, want 1 (the message it moved)", n)
	}
	e.expectStats(src, third, drivers.QueueStats{})
	if !atLeastOnce {
		e.expectStats(dlq, third, drivers.QueueStats{Visible: 1})
	}
	got := e.drain(dlq, third+time.Second)
	e.expectCopies("the DLQ", e.copiesByBody("the DLQ", got), atLeastOnce, "poison")
	for _, m := range got {
		if m.MessageID != sent.MessageID || m.DeadLetterSource != src || m.ReceiveCount != 3 || !e.sameTime(m.FirstReceivedAt, e.base) {
			e.t.Fatalf("DLQ message %s: DeadLetterSource %q ReceiveCount %d FirstReceivedAt %v; want %s, %q, 3 (2 kept + this receive), %v",
				m.MessageID, m.DeadLetterSource, m.ReceiveCount, m.FirstReceivedAt, sent.MessageID, src, e.base)
		}
	}
	e.expectBodies("the source after the move", e.receive(src, third+time.Second, 10, 10).Messages)
}

// ownDLQKeepsMessages: a queue whose RedrivePolicy names itself redrives nowhere
// (sqsrule.RedriveTarget): past maxReceiveCount its message stays and is delivered
// again, its receive count growing.
func ownDLQKeepsMessages(e *env) {
	q := e.standard("own")
	attrs := StandardAttributes()
	attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: q, MaxReceiveCount: 1}
	if err := e.d.SetQueueAttributes(e.ctx, drivers.SetQueueAttributesRequest{Name: q, Attributes: attrs, Now: e.at(0)}); err != nil {
		e.t.Fatalf("SetQueueAttributes with a RedrivePolicy naming the queue: %v", err)
	}
	e.send(q, 0, msg("loop"))
	for i := int32(1); i <= 3; i++ {
		at := time.Duration(i) * time.Millisecond
		got := e.receive(q, at, 10, 30).Messages
		e.expectBodies(fmt.Sprintf("receive %d", i), got, "loop")
		if got[0].ReceiveCount != i || got[0].DeadLetterSource != "" {
			e.t.Fatalf("receive %d: ReceiveCount %d DeadLetterSource %q, want %d and none", i, got[0].ReceiveCount, got[0].DeadLetterSource, i)
		}
		if err := e.change(q, at, got[0].ReceiptHandle, 0); err != nil {
			e.t.Fatalf("receive %d: release: %v", i, err)
		}
	}
}

func fifoNextInGroup(e *env) {
	atLeastOnce := e.atLeastOnce(capabilities.RedriveDLQ)
	src, dlq := e.withDLQ(true, 1)
	sent := e.send(src, 0, fifoMsg("g", "m1"), fifoMsg("g", "m2"))
	second := e.after(10 * time.Second)
	e.expectBodies("receive 1", e.receive(src, 0, 1, 10).Messages, "m1")
	e.expectBodies("receive 2: m1 moves, m2 follows", e.receive(src, second, 1, 10).Messages, "m2")
	got := e.drain(dlq, second+time.Second)
	e.expectCopies("the DLQ", e.copiesByBody("the DLQ", got), atLeastOnce, "m1")
	for _, m := range got {
		if m.MessageGroupID != "g" || !seqPattern.MatchString(m.SequenceNumber) || m.MessageID != sent[0].MessageID {
			e.t.Fatalf("FIFO DLQ message: id %s group %q sequence %q; want id %s, group g", m.MessageID, m.MessageGroupID, m.SequenceNumber, sent[0].MessageID)
		}
		// SQS replaces the deduplication id of a message moved to a FIFO DLQ with its message id.
		if m.MessageDeduplicationID != m.MessageID {
			e.t.Fatalf("FIFO DLQ message: deduplication id %q, want the message id %q", m.MessageDeduplicationID, m.MessageID)
		}
	}
}

func moveBackToSource(e *env) {
	atLeastOnce := e.atLeastOnce(capabilities.RedriveMoveTasks)
	src, dlq := e.withDLQ(false, 1)
	sent := map[string]bool{}
	for _, r := range e.send(src, 0, msg("a"), msg("b"), msg("c")) {
		sent[r.MessageID] = true
	}
	moved := e.after(10 * time.Second)
	now := moved + time.Second
	e.receive(src, 0, 10, 10)
	e.expectBodies("all moved", e.receive(src, moved, 10, 10).Messages)
	e.expectStats(dlq, moved, drivers.QueueStats{Visible: 3})
	res, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: dlq, Now: e.at(now), Limit: 2})
	if err != nil || res.Moved != 2 || !res.More {
		e.t.Fatalf("MoveMessages limit 2: %+v, %v; want 2 moved and More", res, err)
	}
	res, err = e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: dlq, Now: e.at(now), Limit: 2})
	if err != nil || res.Moved != 1 || res.More {
		e.t.Fatalf("MoveMessages again: %+v, %v; want 1 moved, no More", res, err)
	}
	e.expectStats(dlq, now, drivers.QueueStats{})
	got := e.drain(src, now)
	e.expectCopies("the source after the move", e.copiesByBody("the source after the move", got), atLeastOnce, "a", "b", "c")
	for _, m := range got {
		if m.ReceiveCount != 1 || !e.sameTime(m.FirstReceivedAt, e.at(now)) || m.DeadLetterSource != "" {
			e.t.Fatalf("moved message %s: count %d FirstReceivedAt %v source %q; want fresh delivery state", m.Body, m.ReceiveCount, m.FirstReceivedAt, m.DeadLetterSource)
		}
		if m.MessageID == "" || !e.sameTime(m.SentAt, e.at(now)) {
			e.t.Fatalf("moved message %s: MessageID %q SentAt %v; want an id and SentAt %v", m.Body, m.MessageID, m.SentAt, e.at(now))
		}
		// SQS: redriven messages are new messages, with a new id. An at-least-once move
		// promises one id for all copies; keeping the original is how a retried copy
		// keeps it.
		if sent[m.MessageID] && !atLeastOnce {
			e.t.Fatalf("moved message %s kept its MessageID %s; an atomic move gives it a new one", m.Body, m.MessageID)
		}
	}
	e.expectBodies("the DLQ after the move", e.receive(dlq, now, 10, 10).Messages)
}

// moveBackPastUnmovable: messages whose source queue is gone cannot move back; they stay
// in the dead-letter queue and must not hide the movable ones behind them, however many
// of them come first.
func moveBackPastUnmovable(e *env) {
	dlq, kept, now := e.fillPastUnmovable()
	moved, err := e.moveBackInSteps(dlq, now)
	if err != nil {
		e.t.Fatalf("MoveMessages: %v", err)
	}
	e.expectMovedPastUnmovable(dlq, kept, now, moved)
}

// moveBackStopsAtUnmovable is the fallback a degraded declaration may document (its note
// saying so): a move back that meets a message whose source queue is gone stops with
// KindFailedPrecondition, and every message is still in the dead-letter queue or back in
// its source.
func moveBackStopsAtUnmovable(e *env, d capabilities.Declaration) {
	dlq, kept, now := e.fillPastUnmovable()
	moved, err := e.moveBackInSteps(dlq, now)
	if err == nil {
		e.expectMovedPastUnmovable(dlq, kept, now, moved)
		return
	}
	expectKind(e.t, "a move back stopped by a message whose source queue is gone", err, drivers.KindFailedPrecondition)
	if !strings.Contains(d.Note, "source queue is gone") {
		e.t.Fatalf("the move stopped at a message whose source queue is gone (%v), and the declaration's note does not say so: %q", err, d.Note)
	}
	bodies := map[string]bool{}
	for _, m := range append(e.drain(kept, now), e.drain(dlq, now)...) {
		bodies[m.Body] = true
	}
	if len(bodies) != unmovableAhead+3 {
		e.t.Fatalf("after the stopped move %d distinct messages remain of %d", len(bodies), unmovableAhead+3)
	}
}

// unmovableAhead is how many messages whose source queue is gone stand ahead of the
// movable ones: more than a step's window, so a step of 2 must scan past them.
const unmovableAhead = 25

// fillPastUnmovable fills a dead-letter queue with unmovableAhead messages of a queue it
// then deletes, and after them 3 (x, y, z) of a queue that stays; it returns the queues
// and when they are all visible in the dead-letter queue.
func (e *env) fillPastUnmovable() (dlq, kept string, now time.Duration) {
	const unmovable = unmovableAhead
	var gone string
	gone, dlq = e.withDLQ(false, 1)
	attrs := StandardAttributes()
	attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 1}
	kept = e.queue("src", attrs)
	// deadLetter sends bodies to q at start and receives each once; the receives of the
	// next round, a visibility timeout later, move them to the dead-letter queue. It
	// returns when that is done.
	wait := e.after(10 * time.Second)
	deadLetter := func(q string, start time.Duration, bodies ...string) time.Duration {
		var entries []drivers.SendEntry
		for _, b := range bodies {
			entries = append(entries, msg(b))
		}
		for i := 0; i < len(entries); i += 10 {
			e.send(q, start, entries[i:min(i+10, len(entries))]...)
		}
		for got, tries := 0, 0; got < len(entries); tries++ {
			if tries == len(entries) {
				e.t.Fatalf("%s: %d of %d messages received", q, got, len(entries))
			}
			got += len(e.receive(q, start, 10, 10).Messages)
		}
		for i := 0; i < len(entries) && e.stats(q, start+wait) != (drivers.QueueStats{}); i++ {
			if got := e.receive(q, start+wait, 10, 10).Messages; len(got) != 0 {
				e.t.Fatalf("%s: a message delivered after its last receive", q)
			}
		}
		return start + wait
	}
	var old []string
	for i := 0; i < unmovable; i++ {
		old = append(old, "gone-"+string(rune('a'+i)))
	}
	now = deadLetter(kept, deadLetter(gone, 0, old...), "x", "y", "z") + time.Second
	e.expectStats(dlq, now, drivers.QueueStats{Visible: unmovable + 3})
	if err := e.d.DeleteQueue(e.ctx, drivers.DeleteQueueRequest{Name: gone}); err != nil {
		e.t.Fatalf("DeleteQueue %s: %v", gone, err)
	}
	return dlq, kept, now
}

// moveBackInSteps moves dlq's messages back to their sources in steps of 2, as a task
// would, until a step says no movable message is left (at most 5 steps).
func (e *env) moveBackInSteps(dlq string, now time.Duration) (moved int, err error) {
	for i := 0; i < 5; i++ {
		res, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: dlq, Now: e.at(now), Limit: 2})
		moved += res.Moved
		if err != nil || !res.More {
			return moved, err
		}
	}
	return moved, nil
}

func (e *env) expectMovedPastUnmovable(dlq, kept string, now time.Duration, moved int) {
	e.t.Helper()
	if moved != 3 {
		e.t.Fatalf("MoveMessages moved %d of the 3 messages whose source exists, behind %d whose source is gone", moved, unmovableAhead)
	}
	atLeastOnce := e.atLeastOnce(capabilities.RedriveMoveTasks)
	e.expectCopies("the source after the move", e.copiesByBody("the source after the move", e.drain(kept, now)), atLeastOnce, "x", "y", "z")
	e.expectStats(dlq, now, drivers.QueueStats{Visible: unmovableAhead})
}

func moveToDestination(e *env) {
	atLeastOnce := e.atLeastOnce(capabilities.RedriveMoveTasks)
	from, to := e.standard("from"), e.standard("to")
	e.send(from, 0, msg("a"), msg("b"))
	inflight := e.receive(from, 0, 1, 30).Messages[0] // one in flight: not moved
	res, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: from, Destination: to, Now: e.at(time.Second), Limit: 10})
	if err != nil || res.Moved != 1 || res.More {
		e.t.Fatalf("MoveMessages: %+v, %v; want 1 moved", res, err)
	}
	e.expectStats(from, time.Second, drivers.QueueStats{NotVisible: 1})
	if !atLeastOnce {
		e.expectStats(to, time.Second, drivers.QueueStats{Visible: 1})
	}
	other := map[string]string{"a": "b", "b": "a"}[inflight.Body]
	e.expectCopies("the destination", e.copiesByBody("the destination", e.drain(to, time.Second)), atLeastOnce, other)
	_, err = e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: from, Destination: e.name("missing", false), Now: e.at(time.Second), Limit: 10})
	expectKind(e.t, "MoveMessages to a missing queue", err, drivers.KindNotFound)
}

// dlqRetentionClock: a standard message keeps its enqueue time in the DLQ; a FIFO one
// starts anew (SQS).
func dlqRetentionClock(e *env) {
	e.needs(231 * time.Second)
	for _, fifo := range []bool{false, true} {
		attrs := StandardAttributes()
		m := msg("x")
		if fifo {
			attrs = FIFOAttributes()
			m = fifoMsg("g", "x")
		}
		attrs.MessageRetentionPeriod = 120
		dlq := e.queue("dlq", attrs)
		attrs.MessageRetentionPeriod = sqsrule.DefaultMessageRetentionPeriod
		attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 1}
		src := e.queue("src", attrs)
		e.send(src, 0, m)
		e.receive(src, 100*time.Second, 1, 10)
		e.expectBodies("redrive", e.receive(src, 110*time.Second, 1, 10).Messages)
		want := drivers.QueueStats{}
		if fifo {
			want.Visible = 1
		}
		if fifo && e.atLeastOnce(capabilities.RedriveDLQ) {
			// Copies of the one message: at least one, each with its own retention anew.
			if got := e.stats(dlq, 121*time.Second); got.Visible < 1 || got.NotVisible != 0 || got.Delayed != 0 {
				e.t.Fatalf("FIFO DLQ at 121 s: %+v, want at least one visible copy", got)
			}
		} else {
			e.expectStats(dlq, 121*time.Second, want)
		}
		e.expectStats(dlq, 231*time.Second, drivers.QueueStats{})
	}
}
