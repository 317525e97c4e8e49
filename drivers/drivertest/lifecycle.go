package drivertest

import (
	"fmt"
	"sync"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
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
	{string(capabilities.RedriveDLQ), "moved-after-max-receives", func(e *env) {
		src, dlq := e.withDLQ(false, 2)
		sent := e.send(src, 0, msg("poison"))[0]
		e.expectBodies("receive 1", e.receive(src, 0, 1, 10).Messages, "poison")
		e.expectBodies("receive 2", e.receive(src, 10*time.Second, 1, 10).Messages, "poison")
		// The third attempt finds the count equal to maxReceiveCount: the message moves.
		e.expectBodies("receive 3", e.receive(src, 20*time.Second, 1, 10).Messages)
		e.expectStats(src, 20*time.Second, drivers.QueueStats{})
		e.expectStats(dlq, 20*time.Second, drivers.QueueStats{Visible: 1})
		got := e.receive(dlq, 21*time.Second, 1, 10)
		e.expectBodies("receive from the DLQ", got.Messages, "poison")
		m := got.Messages[0]
		if m.MessageID != sent.MessageID || m.DeadLetterSource != src || m.ReceiveCount != 3 || !sameTime(m.FirstReceivedAt, e.base) {
			e.t.Fatalf("DLQ message %s: DeadLetterSource %q ReceiveCount %d FirstReceivedAt %v; want %s, %q, 3 (2 kept + this receive), %v",
				m.MessageID, m.DeadLetterSource, m.ReceiveCount, m.FirstReceivedAt, sent.MessageID, src, e.base)
		}
	}},
	{string(capabilities.RedriveDLQ), "fifo-next-in-group-delivered", func(e *env) {
		src, dlq := e.withDLQ(true, 1)
		sent := e.send(src, 0, fifoMsg("g", "m1"), fifoMsg("g", "m2"))
		e.expectBodies("receive 1", e.receive(src, 0, 1, 10).Messages, "m1")
		e.expectBodies("receive 2: m1 moves, m2 follows", e.receive(src, 10*time.Second, 1, 10).Messages, "m2")
		got := e.receive(dlq, 11*time.Second, 10, 10)
		e.expectBodies("DLQ", got.Messages, "m1")
		m := got.Messages[0]
		if m.MessageGroupID != "g" || !seqPattern.MatchString(m.SequenceNumber) || m.MessageID != sent[0].MessageID {
			e.t.Fatalf("FIFO DLQ message: id %s group %q sequence %q; want id %s, group g", m.MessageID, m.MessageGroupID, m.SequenceNumber, sent[0].MessageID)
		}
		// SQS replaces the deduplication id of a message moved to a FIFO DLQ with its message id.
		if m.MessageDeduplicationID != m.MessageID {
			e.t.Fatalf("FIFO DLQ message: deduplication id %q, want the message id %q", m.MessageDeduplicationID, m.MessageID)
		}
	}},
	{string(capabilities.RedriveDLQ), "dlq-retention-clock", func(e *env) {
		// SQS: a standard message keeps its enqueue time in the DLQ; a FIFO one starts anew.
		for _, fifo := range []bool{false, true} {
			attrs := StandardAttributes()
			m := msg("x")
			if fifo {
				attrs = FIFOAttributes()
				m = fifoMsg("g", "x")
			}
			attrs.MessageRetentionPeriod = 120
			dlq := e.queue("dlq", attrs)
			attrs.MessageRetentionPeriod = 345600
			attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 1}
			src := e.queue("src", attrs)
			e.send(src, 0, m)
			e.receive(src, 100*time.Second, 1, 10)
			e.expectBodies("redrive", e.receive(src, 110*time.Second, 1, 10).Messages)
			want := drivers.QueueStats{}
			if fifo {
				want.Visible = 1
			}
			e.expectStats(dlq, 121*time.Second, want)
			e.expectStats(dlq, 231*time.Second, drivers.QueueStats{})
		}
	}},
	{string(capabilities.RedriveMoveTasks), "move-back-to-source", func(e *env) {
		src, dlq := e.withDLQ(false, 1)
		sent := map[string]bool{}
		for _, r := range e.send(src, 0, msg("a"), msg("b"), msg("c")) {
			sent[r.MessageID] = true
		}
		e.receive(src, 0, 10, 10)
		e.expectBodies("all moved", e.receive(src, 10*time.Second, 10, 10).Messages)
		e.expectStats(dlq, 10*time.Second, drivers.QueueStats{Visible: 3})
		res, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: dlq, Now: e.at(11 * time.Second), Limit: 2})
		if err != nil || res.Moved != 2 || !res.More {
			e.t.Fatalf("MoveMessages limit 2: %+v, %v; want 2 moved and More", res, err)
		}
		res, err = e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: dlq, Now: e.at(11 * time.Second), Limit: 2})
		if err != nil || res.Moved != 1 || res.More {
			e.t.Fatalf("MoveMessages again: %+v, %v; want 1 moved, no More", res, err)
		}
		e.expectStats(dlq, 11*time.Second, drivers.QueueStats{})
		got := e.receive(src, 11*time.Second, 10, 10)
		if len(got.Messages) != 3 {
			e.t.Fatalf("source after move: %d messages, want 3", len(got.Messages))
		}
		for _, m := range got.Messages {
			if m.ReceiveCount != 1 || !sameTime(m.FirstReceivedAt, e.at(11*time.Second)) || m.DeadLetterSource != "" {
				e.t.Fatalf("moved message %s: count %d FirstReceivedAt %v source %q; want fresh delivery state", m.Body, m.ReceiveCount, m.FirstReceivedAt, m.DeadLetterSource)
			}
			// SQS: redriven messages are new messages, with a new id and enqueue time.
			if sent[m.MessageID] || m.MessageID == "" || !sameTime(m.SentAt, e.at(11*time.Second)) {
				e.t.Fatalf("moved message %s: MessageID %q SentAt %v; want a new id and SentAt %v", m.Body, m.MessageID, m.SentAt, e.at(11*time.Second))
			}
		}
	}},
	{string(capabilities.RedriveMoveTasks), "move-to-destination-visible-only", func(e *env) {
		from, to := e.standard("from"), e.standard("to")
		e.send(from, 0, msg("a"), msg("b"))
		e.receive(from, 0, 1, 30) // one in flight: not moved
		res, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: from, Destination: to, Now: e.at(time.Second), Limit: 10})
		if err != nil || res.Moved != 1 || res.More {
			e.t.Fatalf("MoveMessages: %+v, %v; want 1 moved", res, err)
		}
		e.expectStats(from, time.Second, drivers.QueueStats{NotVisible: 1})
		e.expectStats(to, time.Second, drivers.QueueStats{Visible: 1})
		_, err = e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: from, Destination: e.name("missing", false), Now: e.at(time.Second), Limit: 10})
		expectKind(e.t, "MoveMessages to a missing queue", err, drivers.KindNotFound)
	}},
}

var purgeStatsSweepCases = []testCase{
	{string(capabilities.QueuePurge), "sixty-second-rule", func(e *env) {
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
	{string(capabilities.CountsApprox), "three-states", func(e *env) {
		q := e.standard("q")
		late := msg("late")
		late.DelaySeconds = 60
		e.send(q, 0, msg("a"), msg("b"), msg("c"), late)
		e.receive(q, 0, 1, 30)
		e.expectStats(q, time.Second, drivers.QueueStats{Visible: 2, NotVisible: 1, Delayed: 1})
		e.expectStats(q, 30*time.Second, drivers.QueueStats{Visible: 3, Delayed: 1})
		e.expectStats(q, 60*time.Second, drivers.QueueStats{Visible: 4})
	}},
	{string(capabilities.RetentionPeriod), "expired-never-delivered-and-swept", func(e *env) {
		attrs := StandardAttributes()
		attrs.MessageRetentionPeriod = 60
		q := e.queue("q", attrs)
		e.send(q, 0, msg("old1"), msg("old2"), msg("old3"))
		e.send(q, 30*time.Second, msg("young"))
		e.expectBodies("after retention, before any sweep", e.receive(q, 61*time.Second, 10, 1).Messages, "young")
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
	{string(capabilities.RetentionPeriod), "shortened-retention-applies-to-queued-messages", func(e *env) {
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
	{string(capabilities.RetentionPeriod), "sweep-forgets-dedup-after-window", func(e *env) {
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
	{string(capabilities.QueueStandard), "concurrent-receivers-exactly-once", func(e *env) {
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
		e.expectStats(q, time.Hour, drivers.QueueStats{})
	}},
	{string(capabilities.FIFOOrdering), "concurrent-receivers-keep-group-order", func(e *env) {
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
	{string(capabilities.ReceiptDurable), "messages-and-handles-survive-restart", func(e *env) {
		q := e.standard("q")
		f := e.fifo("f")
		e.send(q, 0, msg("kept"), msg("inflight"))
		seq1 := e.send(f, 0, fifoMsg("g", "f1"))[0].SequenceNumber
		h := e.receive(q, 0, 1, 60).Messages[0]
		e.restart()
		e.expectStats(q, time.Second, drivers.QueueStats{Visible: 1, NotVisible: 1})
		// The handle issued before the restart still works and still changes visibility.
		if err := e.change(q, time.Second, h.ReceiptHandle, 120); err != nil {
			e.t.Fatalf("ChangeVisibility after restart: %v", err)
		}
		e.mustDelete(q, 2*time.Second, h.ReceiptHandle)
		got := e.receive(q, 2*time.Second, 10, 30)
		if len(got.Messages) != 1 || got.Messages[0].MessageID == h.MessageID {
			e.t.Fatalf("after restart: got %v, want the other message only", bodies(got.Messages))
		}
		// FIFO state: deduplication and the sequence counter carry over.
		if r := e.send(f, time.Minute, fifoMsg("g", "f1"))[0]; !r.Duplicate || r.SequenceNumber != seq1 {
			e.t.Fatalf("dedup after restart: %+v, want duplicate of %s", r, seq1)
		}
		if r := e.send(f, time.Minute, fifoMsg("g", "f2"))[0]; r.SequenceNumber <= seq1 {
			e.t.Fatalf("sequence after restart %s, want > %s", r.SequenceNumber, seq1)
		}
	}},
}
