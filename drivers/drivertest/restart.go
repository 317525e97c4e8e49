package drivertest

import (
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

var restartCases = []testCase{
	{Caps: one(capabilities.ReceiptDurable), Name: "messages-and-handles-survive-restart", Run: func(e *env) {
		survivesRestart(e, true)
	}, Degraded: func(e *env, _ capabilities.Declaration) {
		// Instance-scoped handles die with the instance; messages and FIFO state do not.
		survivesRestart(e, e.description.ReceiptScope != drivers.ReceiptInstance)
	}},
	{Caps: one(capabilities.ReceiptDurable), Name: "handle-through-another-instance", Run: func(e *env) {
		handleThroughAnotherInstance(e, true)
	}, Degraded: func(e *env, _ capabilities.Declaration) {
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
