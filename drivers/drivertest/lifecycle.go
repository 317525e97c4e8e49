package drivertest

import (
	"fmt"
	"sync"
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
	{capability: string(capabilities.RedriveDLQ), name: "moved-after-max-receives", run: movedAfterMaxReceives, degraded: asNative(movedAfterMaxReceives)},
	{capability: string(capabilities.RedriveDLQ), name: "fifo-next-in-group-delivered", run: fifoNextInGroup, degraded: asNative(fifoNextInGroup)},
	{capability: string(capabilities.RedriveDLQ), name: "dlq-retention-clock", run: dlqRetentionClock, degraded: asNative(dlqRetentionClock)},
	{capability: string(capabilities.RedriveMoveTasks), name: "move-back-to-source", run: moveBackToSource, degraded: asNative(moveBackToSource)},
	{capability: string(capabilities.RedriveMoveTasks), name: "move-to-destination-visible-only", run: moveToDestination, degraded: asNative(moveToDestination)},
}

// atLeastOnce says whether the declaration of id promises only an at-least-once move:
// then the cases check exactly that promise (no message lost, every copy of a message
// with one MessageID, none left in the source) instead of exactly one copy.
func (e *env) atLeastOnce(id capabilities.ID) bool {
	return e.limitValue(id, "move", "atomic") == "at-least-once"
}

// drain receives every message of q at case time at, each once (a long timeout), and
// deletes none.
func (e *env) drain(q string, at time.Duration) []drivers.Message {
	e.t.Helper()
	var all []drivers.Message
	for i := 0; ; i++ {
		got := e.receive(q, at, 10, 300)
		if len(got.Messages) == 0 || i > 100 {
			return all
		}
		all = append(all, got.Messages...)
	}
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
	// The third attempt finds the count equal to maxReceiveCount: the message moves.
	e.expectBodies("receive 3", e.receive(src, third, 1, 10).Messages)
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

var purgeStatsSweepCases = []testCase{
	{capability: string(capabilities.QueuePurge), name: "sixty-second-rule", run: func(e *env) {
		e.needs(61 * time.Second)
		q := e.standard("q")
		e.send(q, 0, msg("a"), msg("b"))
		e.receive(q, 0, 1, 30)
		if err := e.d.PurgeQueue(e.ctx, drivers.PurgeQueueRequest{Name: q, Now: e.at(time.Second)}); err != nil {
			e.t.Fatalf("PurgeQueue: %v", err)
		}
		e.expectStats(q, time.Second, drivers.QueueStats{})
		e.send(q, 2*time.Second, msg("c"))
		err := e.d.PurgeQueue(e.ctx, drivers.PurgeQueueRequest{Name: q, Now: e.at(60 * time.Second)})
		expectKind(e.t, "second purge within 60 s", err, drivers.KindPurgeInProgress)
		e.expectStats(q, 60*time.Second, drivers.QueueStats{Visible: 1})
		if err := e.d.PurgeQueue(e.ctx, drivers.PurgeQueueRequest{Name: q, Now: e.at(61 * time.Second)}); err != nil {
			e.t.Fatalf("purge after 60 s: %v", err)
		}
		e.expectStats(q, 61*time.Second, drivers.QueueStats{})
	}},
	{capability: string(capabilities.QueuePurge), name: "purge-forgets-deduplication", run: func(e *env) {
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "a"))
		if err := e.d.PurgeQueue(e.ctx, drivers.PurgeQueueRequest{Name: q, Now: e.at(time.Second)}); err != nil {
			e.t.Fatalf("PurgeQueue: %v", err)
		}
		// As in SQS, the deduplication id used before the purge is free again.
		if r := e.send(q, 2*time.Second, fifoMsg("g", "a")); r[0].Duplicate {
			e.t.Fatalf("send after the purge was taken for a duplicate of one before it")
		}
		e.expectBodies("receive after the purge", e.receive(q, 2*time.Second, 10, 30).Messages, "a")
	}, degraded: func(e *env, _ capabilities.Declaration) {
		// The backend keeps its deduplication history through a purge: the same id is
		// still a duplicate, and nothing is delivered.
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "a"))
		if err := e.d.PurgeQueue(e.ctx, drivers.PurgeQueueRequest{Name: q, Now: e.at(time.Second)}); err != nil {
			e.t.Fatalf("PurgeQueue: %v", err)
		}
		e.send(q, 2*time.Second, fifoMsg("g", "a"))
		e.expectBodies("receive after the purge", e.receive(q, 2*time.Second, 10, 1).Messages)
	}},
	{capability: string(capabilities.CountsApprox), name: "three-states", run: threeStates, degraded: asNative(threeStates)},
	{capability: string(capabilities.RetentionPeriod), name: "expired-never-delivered-and-swept", run: func(e *env) {
		e.needs(62 * time.Second)
		attrs := StandardAttributes()
		attrs.MessageRetentionPeriod = 60
		q := e.queue("q", attrs)
		e.send(q, 0, msg("old1"), msg("old2"), msg("old3"))
		e.send(q, 30*time.Second, msg("young"))
		e.expectBodies("after retention, before any sweep", e.receive(q, 61*time.Second, 10, 1).Messages, "young")
		if e.limitValue(capabilities.RetentionPeriod, "sweep", "driver") == "ttl" {
			// The backend's TTL deletes them; Sweep may find nothing. Counts leave them out
			// once the TTL ran, which may take a while on the service's clock.
			if _, err := e.d.Sweep(e.ctx, drivers.SweepRequest{Now: e.at(62 * time.Second), Limit: 100}); err != nil {
				e.t.Fatalf("Sweep: %v", err)
			}
			e.expectBodies("with the TTL", e.receive(q, 62*time.Second, 10, 1).Messages, "young")
			for end := time.Now().Add(serviceWaitBudget); e.stats(q, 62*time.Second) != (drivers.QueueStats{NotVisible: 1}) && time.Now().Before(end); {
				time.Sleep(100 * time.Millisecond) // no event says that a backend's TTL ran
			}
			e.expectStats(q, 62*time.Second, drivers.QueueStats{NotVisible: 1})
			return
		}
		// Sweep in bounded passes; storage may be shared, so only this queue is checked.
		res, err := e.d.Sweep(e.ctx, drivers.SweepRequest{Now: e.at(62 * time.Second), Limit: 1})
		if err != nil || res.Deleted != 1 || !res.More {
			e.t.Fatalf("Sweep limit 1: %+v, %v; want 1 deleted and More", res, err)
		}
		for i := 0; res.More; i++ {
			if i > 10000 {
				e.t.Fatalf("Sweep keeps saying More")
			}
			if res, err = e.d.Sweep(e.ctx, drivers.SweepRequest{Now: e.at(62 * time.Second), Limit: 100}); err != nil {
				e.t.Fatalf("Sweep: %v", err)
			}
		}
		e.expectStats(q, 62*time.Second, drivers.QueueStats{Visible: 1})
		e.expectBodies("after the sweep", e.receive(q, 62*time.Second, 10, 1).Messages, "young")
	}},
	{capability: string(capabilities.RetentionPeriod), name: "shortened-retention-applies-to-queued-messages", run: func(e *env) {
		e.needs(61 * time.Second)
		q := e.standard("q")
		e.send(q, 0, msg("a"))
		attrs := StandardAttributes()
		attrs.MessageRetentionPeriod = 60
		if err := e.d.SetQueueAttributes(e.ctx, drivers.SetQueueAttributesRequest{Name: q, Attributes: attrs, Now: e.at(time.Second)}); err != nil {
			e.t.Fatalf("SetQueueAttributes: %v", err)
		}
		e.expectStats(q, 59*time.Second, drivers.QueueStats{Visible: 1})
		e.expectBodies("after the shortened retention", e.receive(q, 61*time.Second, 10, 30).Messages)
		e.expectStats(q, 61*time.Second, drivers.QueueStats{})
	}},
	{capability: string(capabilities.RetentionPeriod), name: "sweep-forgets-dedup-after-window", run: func(e *env) {
		e.needs(6 * time.Minute)
		q := e.fifo("q")
		e.send(q, 0, fifoMsg("g", "x"))
		for i := 0; ; i++ {
			res, err := e.d.Sweep(e.ctx, drivers.SweepRequest{Now: e.at(6 * time.Minute), Limit: 100})
			if err != nil {
				e.t.Fatalf("Sweep: %v", err)
			}
			if !res.More || i > 10000 {
				break
			}
		}
		if r := e.send(q, 6*time.Minute, fifoMsg("g", "x"))[0]; r.Duplicate {
			e.t.Fatalf("send after the window and a sweep was a duplicate")
		}
		e.expectStats(q, 6*time.Minute, drivers.QueueStats{Visible: 2})
	}},
}

var concurrencyCases = []testCase{
	{capability: string(capabilities.QueueStandard), name: "concurrent-receivers-exactly-once", run: func(e *env) {
		q := e.standard("q")
		const total = 60
		for i := 0; i < total; i += 10 {
			var batch []drivers.SendEntry
			for j := i; j < i+10; j++ {
				batch = append(batch, msg(fmt.Sprintf("m%d", j)))
			}
			e.send(q, 0, batch...)
		}
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
			errs = make(chan error, 8)
		)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					// Every receiver uses the same Now and a long timeout: nothing can come back,
					// so a message seen twice means two receives claimed it.
					res, err := e.d.ReceiveMessages(e.ctx, drivers.ReceiveMessagesRequest{Name: q, Now: e.at(time.Second),
						MaxMessages: 1 + w%3*4, VisibilityTimeout: 300})
					if err != nil {
						errs <- err
						return
					}
					if len(res.Messages) == 0 {
						return
					}
					handles := make([]drivers.DeleteEntry, len(res.Messages))
					mu.Lock()
					for i, m := range res.Messages {
						seen[m.Body]++
						handles[i] = drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle}
					}
					mu.Unlock()
					del, err := e.d.DeleteMessages(e.ctx, drivers.DeleteMessagesRequest{Name: q, Now: e.at(2 * time.Second), Entries: handles})
					if err != nil {
						errs <- err
						return
					}
					for _, r := range del.Entries {
						if r.Err != nil {
							errs <- r.Err
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			e.t.Fatalf("worker: %v", err)
		}
		if len(seen) != total {
			e.t.Fatalf("received %d distinct messages, want %d", len(seen), total)
		}
		for body, n := range seen {
			if n != 1 {
				e.t.Fatalf("message %s received %d times", body, n)
			}
		}
		// At the deletes' time: a message claimed but not deleted would count as in flight.
		e.expectStats(q, 3*time.Second, drivers.QueueStats{})
	}},
	{capability: string(capabilities.FIFOOrdering), name: "concurrent-receivers-keep-group-order", run: func(e *env) {
		q := e.fifo("q")
		const groups, perGroup = 4, 10
		for i := range perGroup {
			var batch []drivers.SendEntry
			for g := range groups {
				batch = append(batch, fifoMsg(fmt.Sprintf("g%d", g), fmt.Sprintf("g%d-%02d", g, i)))
			}
			e.send(q, 0, batch...)
		}
		var (
			mu    sync.Mutex
			order = map[string][]string{}
			wg    sync.WaitGroup
			errs  = make(chan error, 4)
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for idle := 0; idle < 3; {
					res, err := e.d.ReceiveMessages(e.ctx, drivers.ReceiveMessagesRequest{Name: q, Now: e.at(time.Second), MaxMessages: 3, VisibilityTimeout: 300})
					if err != nil {
						errs <- err
						return
					}
					if len(res.Messages) == 0 {
						idle++ // another worker may still hold a group; look again a few times
						continue
					}
					idle = 0
					handles := make([]drivers.DeleteEntry, len(res.Messages))
					mu.Lock()
					for i, m := range res.Messages {
						order[m.MessageGroupID] = append(order[m.MessageGroupID], m.Body)
						handles[i] = drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle}
					}
					mu.Unlock()
					if _, err := e.d.DeleteMessages(e.ctx, drivers.DeleteMessagesRequest{Name: q, Now: e.at(2 * time.Second), Entries: handles}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			e.t.Fatalf("worker: %v", err)
		}
		// Drain whatever the workers left when they gave up, then check each group's order.
		for {
			res := e.receive(q, 3*time.Second, 10, 300)
			if len(res.Messages) == 0 {
				break
			}
			for _, m := range res.Messages {
				order[m.MessageGroupID] = append(order[m.MessageGroupID], m.Body)
				e.mustDelete(q, 3*time.Second, m.ReceiptHandle)
			}
		}
		for g := range groups {
			got := order[fmt.Sprintf("g%d", g)]
			if len(got) != perGroup {
				e.t.Fatalf("group g%d: %d messages, want %d", g, len(got), perGroup)
			}
			for i, b := range got {
				if want := fmt.Sprintf("g%d-%02d", g, i); b != want {
					e.t.Fatalf("group g%d out of order: %v", g, got)
				}
			}
		}
	}},
}

var restartCases = []testCase{
	{capability: string(capabilities.ReceiptDurable), name: "messages-and-handles-survive-restart", run: func(e *env) {
		survivesRestart(e, true)
	}, degraded: func(e *env, _ capabilities.Declaration) {
		// Instance-scoped handles die with the instance; messages and FIFO state do not.
		survivesRestart(e, e.description.ReceiptScope != drivers.ReceiptInstance)
	}},
	{capability: string(capabilities.ReceiptDurable), name: "handle-through-another-instance", run: func(e *env) {
		handleThroughAnotherInstance(e, true)
	}, degraded: func(e *env, _ capabilities.Declaration) {
		handleThroughAnotherInstance(e, e.description.ReceiptScope != drivers.ReceiptInstance)
	}},
}

// survivesRestart checks what outlives a restart: messages, deduplication and sequence
// numbers always; in-flight handles when handlesSurvive (storage-scoped receipts), else
// they fail with KindInvalidReceiptHandle, change nothing, and the message reappears
// when its visibility ends.
func survivesRestart(e *env, handlesSurvive bool) {
	q := e.standard("q")
	f := e.fifo("f")
	e.send(q, 0, msg("kept"), msg("inflight"))
	seq1 := e.send(f, 0, fifoMsg("g", "f1"))[0].SequenceNumber
	vis := int32(60)
	if !handlesSurvive {
		vis = 5 // the case waits for it to end
	}
	h := e.receive(q, 0, 1, vis).Messages[0]
	e.restart()
	e.expectStatsHeldElsewhere(q, time.Second, drivers.QueueStats{Visible: 1, NotVisible: 1})
	if handlesSurvive {
		// The handle issued before the restart still works and still changes visibility.
		if err := e.change(q, time.Second, h.ReceiptHandle, 120); err != nil {
			e.t.Fatalf("ChangeVisibility after restart: %v", err)
		}
		e.mustDelete(q, 2*time.Second, h.ReceiptHandle)
		got := e.receive(q, 2*time.Second, 10, 30)
		if len(got.Messages) != 1 || got.Messages[0].MessageID == h.MessageID {
			e.t.Fatalf("after restart: got %v, want the other message only", bodies(got.Messages))
		}
	} else {
		expectStaleInstanceHandle(e, q, h, time.Second, time.Duration(vis)*time.Second)
	}
	// FIFO state: deduplication and the sequence counter carry over.
	echo, _ := e.description.Declaration(capabilities.FIFODedupEcho)
	seq, _ := e.description.Declaration(capabilities.FIFOSequenceNumber)
	if echo.Level != capabilities.Native || seq.Level != capabilities.Native {
		// The duplicate is dropped, whatever its send reports (a broker that drops
		// duplicates silently does not say so after a restart).
		e.send(f, e.after(6*time.Second), fifoMsg("g", "f1"), fifoMsg("g", "f2"))
		e.expectBodies("FIFO queue after restart and a duplicate send", e.drain(f, e.after(6*time.Second)), "f1", "f2")
		return
	}
	if r := e.send(f, e.after(6*time.Second), fifoMsg("g", "f1"))[0]; !r.Duplicate || r.SequenceNumber != seq1 {
		e.t.Fatalf("dedup after restart: %+v, want duplicate of %s", r, seq1)
	}
	if r := e.send(f, e.after(6*time.Second), fifoMsg("g", "f2"))[0]; r.SequenceNumber <= seq1 {
		e.t.Fatalf("sequence after restart %s, want > %s", r.SequenceNumber, seq1)
	}
}

// expectStatsHeldElsewhere is expectStats for a queue with messages that another driver
// instance holds in flight: with approximate counts a broker may count those as visible
// (its counts do not say who holds a lock), so only their sum is held to want.
func (e *env) expectStatsHeldElsewhere(q string, at time.Duration, want drivers.QueueStats) {
	e.t.Helper()
	if e.limitValue(capabilities.CountsApprox, "accuracy", "exact") != "approximate" {
		e.expectStats(q, at, want)
		return
	}
	sum := func(s drivers.QueueStats) drivers.QueueStats {
		return drivers.QueueStats{Visible: s.Visible + s.NotVisible, Delayed: s.Delayed}
	}
	got := e.stats(q, at)
	for end := time.Now().Add(countsSettle); sum(got) != sum(want) && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond) // no event says that a backend's counts caught up
		got = e.stats(q, at)
	}
	if sum(got) != sum(want) {
		e.t.Fatalf("QueueStats %s at +%v: got %+v, want %+v (visible and in flight may be counted together)", q, at, got, want)
	}
}

// expectStaleInstanceHandle checks that h, issued by another instance, fails to delete
// and to change visibility at case time at, that nothing changed, and that the message is
// received again once its visibility (ending at case time end) is over.
func expectStaleInstanceHandle(e *env, q string, h drivers.Message, at, end time.Duration) {
	e.t.Helper()
	expectKind(e.t, "DeleteMessages with another instance's handle", entryErr(e.del(q, at, h.ReceiptHandle)[0].Err), drivers.KindInvalidReceiptHandle)
	expectKind(e.t, "ChangeVisibility with another instance's handle", entryErr(e.change(q, at, h.ReceiptHandle, 0)), drivers.KindInvalidReceiptHandle)
	e.expectStatsHeldElsewhere(q, at, drivers.QueueStats{Visible: 1, NotVisible: 1})
	got := e.drain(q, e.after(end))
	if len(got) != 2 || (got[0].MessageID != h.MessageID && got[1].MessageID != h.MessageID) {
		e.t.Fatalf("after the visibility ended: got %v, want both messages, %s among them", bodies(got), h.Body)
	}
}

// handleThroughAnotherInstance presents a handle to a second driver instance on the
// same storage: open beside the first if the harness can, else after a restart.
func handleThroughAnotherInstance(e *env, works bool) {
	q := e.standard("q")
	e.send(q, 0, msg("other"), msg("inflight"))
	h := e.receive(q, 0, 1, 5).Messages[0]
	if e.h.NewDriverOnSameStorage != nil {
		first := e.d
		e.d = e.h.NewDriverOnSameStorage(e.t, first)
		e.t.Cleanup(func() { _ = first.Close() })
	} else {
		e.restart()
	}
	if !works {
		expectStaleInstanceHandle(e, q, h, time.Second, 5*time.Second)
		return
	}
	if err := e.change(q, time.Second, h.ReceiptHandle, 60); err != nil {
		e.t.Fatalf("ChangeVisibility through another instance: %v", err)
	}
	e.mustDelete(q, time.Second, h.ReceiptHandle)
	e.expectStats(q, time.Second, drivers.QueueStats{Visible: 1})
}

// threeStates counts visible, in-flight and delayed messages; expectStats holds the
// counts to the declared accuracy.
func threeStates(e *env) {
	q := e.standard("q")
	late := msg("late")
	late.DelaySeconds = 35
	e.send(q, 0, msg("a"), msg("b"), msg("c"), late)
	e.receive(q, 0, 1, 30)
	e.expectStats(q, time.Second, drivers.QueueStats{Visible: 2, NotVisible: 1, Delayed: 1})
	e.expectStats(q, e.after(30*time.Second), drivers.QueueStats{Visible: 3, Delayed: 1})
	e.expectStats(q, e.after(35*time.Second), drivers.QueueStats{Visible: 4})
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
