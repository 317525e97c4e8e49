package drivertest

import (
	"fmt"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

var purgeStatsSweepCases = []testCase{
	{Caps: one(capabilities.QueuePurge), Name: "sixty-second-rule", Run: func(e *env) {
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
	{Caps: one(capabilities.QueuePurge), Name: "purge-forgets-deduplication", Run: func(e *env) {
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
	}, Degraded: func(e *env, _ capabilities.Declaration) {
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
	{Caps: one(capabilities.CountsApprox), Name: "three-states", Run: threeStates, Degraded: asNative(threeStates)},
	{Caps: one(capabilities.CountsApprox), Name: "oldest-message", Run: oldestMessage, Degraded: asNative(oldestMessage)},
	{Caps: one(capabilities.FairQueues), Name: "fair-group-counts", Run: fairGroupCounts, Degraded: func(e *env, _ capabilities.Declaration) {
		q := e.standard("q")
		m := msg("a")
		m.MessageGroupID = "a"
		e.send(q, 0, m)
		if s := e.groupStats(q, 0); s.NoisyGroups != 0 || s.QuietGroups != 0 {
			e.t.Fatalf("QueueStats with Groups from a driver without fair queues: %+v, want no group counts", s)
		}
	}},
	{Caps: one(capabilities.RetentionPeriod), Name: "expired-never-delivered-and-swept", Run: func(e *env) {
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
	{Caps: one(capabilities.RetentionPeriod), Name: "shortened-retention-applies-to-queued-messages", Run: func(e *env) {
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
	{Caps: one(capabilities.RetentionPeriod), Name: "sweep-forgets-dedup-after-window", Run: func(e *env) {
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

// oldestMessage: QueueStats.OldestSentAt is the oldest message's enqueue time, whatever
// its state, and zero on an empty queue. A backend that cannot tell reports zero
// throughout; one that reports a time must report the right one. Counts that are only
// approximate may take countsSettle to catch up.
func oldestMessage(e *env) {
	if e.limitValue(capabilities.CountsApprox, "accuracy", "exact") == "unavailable" {
		return
	}
	q := e.standard("q")
	reports := false
	expect := func(what string, at time.Duration, want time.Time) {
		e.t.Helper()
		got := e.queueStats(q, at).OldestSentAt
		ok := func() bool {
			if want.IsZero() || !reports && got.IsZero() {
				return got.IsZero()
			}
			return e.sameTime(got, want)
		}
		if e.limitValue(capabilities.CountsApprox, "accuracy", "exact") == "approximate" {
			for end := time.Now().Add(countsSettle); !ok() && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond) // no event says that a backend's counts caught up
				got = e.queueStats(q, at).OldestSentAt
			}
		}
		if !ok() {
			e.t.Fatalf("%s: OldestSentAt %v, want %v (zero: empty, or a backend that cannot tell)", what, got, want)
		}
		reports = reports || !got.IsZero()
	}
	expect("empty queue", 0, time.Time{})
	e.send(q, 0, msg("a"))
	second := e.after(2 * time.Second)
	e.send(q, second, msg("b"))
	expect("two messages", second, e.base)
	h := e.receive(q, second, 1, 30).Messages
	if len(h) != 1 {
		e.t.Fatalf("receive: %d messages, want 1", len(h))
	}
	// Order is best effort on a standard queue: whichever was received goes in flight.
	expect("one of them in flight", second, e.base)
	e.mustDelete(q, second, h[0].ReceiptHandle)
	left := e.base.Add(second) // the oldest deleted: the other one's time
	if h[0].Body != "a" {
		left = e.base
	}
	expect("after one is deleted", second, left)
}

// threeStates counts visible, in-flight and delayed messages; expectStats holds the
// counts to the declared accuracy.
// fairGroupCounts: a group holding 35 of 35 in-flight messages is noisy while it has
// visible messages and has sent within 5 minutes; another group with a message is quiet,
// and a message without a group is no group.
func fairGroupCounts(e *env) {
	e.needs(5*time.Minute + 3*time.Second)
	q := e.standard("q")
	for i := 0; i < 60; i += 10 {
		var batch []drivers.SendEntry
		for j := i; j < i+10; j++ {
			m := msg(fmt.Sprintf("a-%d", j))
			m.MessageGroupID = "a"
			batch = append(batch, m)
		}
		e.send(q, 0, batch...)
	}
	for held := 0; held < 35; {
		n := len(e.receive(q, time.Second, min(10, 35-held), 600).Messages)
		if n == 0 {
			e.t.Fatalf("receive of group a's 60 messages: empty after %d", held)
		}
		held += n
	}
	b := msg("b-0")
	b.MessageGroupID = "b"
	e.send(q, 2*time.Second, b, msg("no group"))
	check := func(at time.Duration, noisy, quiet int64) {
		e.t.Helper()
		if s := e.groupStats(q, at); s.NoisyGroups != noisy || s.QuietGroups != quiet {
			e.t.Fatalf("QueueStats with Groups at +%v: %d noisy, %d quiet; want %d and %d", at, s.NoisyGroups, s.QuietGroups, noisy, quiet)
		}
	}
	check(3*time.Second, 1, 1)
	check(2*time.Second+5*time.Minute+time.Second, 0, 2) // a sent nothing for 5 minutes
}

func (e *env) groupStats(q string, at time.Duration) drivers.QueueStats {
	e.t.Helper()
	s, err := e.d.QueueStats(e.ctx, drivers.QueueStatsRequest{Name: q, Now: e.at(at), Groups: true})
	if err != nil {
		e.t.Fatalf("QueueStats %s: %v", q, err)
	}
	return s
}

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
