package drivertest

import (
	"fmt"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// Cases for drivers whose Description claims MoveTaskStore. For others the gateway keeps
// move tasks in its own memory, and each case checks instead that every method of the
// store answers KindUnsupported, as the description says.

// storeDisclaimed checks, when the description disclaims MoveTaskStore, that each of its
// methods answers KindUnsupported, and says so: the case has nothing more to check.
func (e *env) storeDisclaimed() bool {
	e.t.Helper()
	if e.description.MoveTaskStore {
		return false
	}
	q := e.standard("dlq")
	t := e.task(q, "gw-a", time.Minute)
	checkAbility(e, "StartMoveTask", false, e.d.StartMoveTask(e.ctx, t))
	_, err := e.d.ReportMoveTask(e.ctx, drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-a"})
	checkAbility(e, "ReportMoveTask", false, err)
	_, err = e.d.CancelMoveTask(e.ctx, t.Handle)
	checkAbility(e, "CancelMoveTask", false, err)
	_, err = e.d.ListMoveTasks(e.ctx, q, 10)
	checkAbility(e, "ListMoveTasks", false, err)
	_, err = e.d.AdoptMoveTasks(e.ctx, "gw-b", e.base, e.base)
	checkAbility(e, "AdoptMoveTasks", false, err)
	return true
}

// store is the case's driver as a MoveTaskStore.
func (e *env) store() drivers.MoveTaskStore { return e.d }

// task is a running task on source, owned by owner until lease after the base time.
func (e *env) task(source, owner string, lease time.Duration) drivers.MoveTask {
	e.n++
	return drivers.MoveTask{Handle: fmt.Sprintf("%stask-%d", e.prefix, e.n), Source: source, Started: e.base,
		ToMove: 5, Status: drivers.MoveTaskRunning, Owner: owner, LeaseUntil: e.stamp(lease)}
}

func (e *env) startTask(t drivers.MoveTask) {
	e.t.Helper()
	if err := e.store().StartMoveTask(e.ctx, t); err != nil {
		e.t.Fatalf("StartMoveTask %s: %v", t.Handle, err)
	}
}

func (e *env) report(req drivers.ReportMoveTaskRequest) drivers.MoveTask {
	e.t.Helper()
	t, err := e.store().ReportMoveTask(e.ctx, req)
	if err != nil {
		e.t.Fatalf("ReportMoveTask %+v: %v", req, err)
	}
	return t
}

func (e *env) listTasks(source string, limit int) []drivers.MoveTask {
	e.t.Helper()
	ts, err := e.store().ListMoveTasks(e.ctx, source, limit)
	if err != nil {
		e.t.Fatalf("ListMoveTasks %s: %v", source, err)
	}
	return ts
}

var moveTaskCases = []testCase{
	{Caps: one(capabilities.RedriveMoveTasks), Name: "store-one-running-task-per-source", Run: func(e *env) {
		if e.storeDisclaimed() {
			return
		}
		s := e.store()
		q, other := e.standard("dlq"), e.standard("other")
		rate := int32(7)
		first := e.task(q, "gw-a", time.Minute)
		first.Destination, first.Rate = other, &rate
		e.startTask(first)
		err := s.StartMoveTask(e.ctx, e.task(q, "gw-b", time.Minute))
		expectKind(e.t, "a second running task on the queue", err, drivers.KindFailedPrecondition)
		e.startTask(e.task(other, "gw-b", time.Minute)) // another source is independent
		err = s.StartMoveTask(e.ctx, e.task(e.name("missing", false), "gw-a", time.Minute))
		expectKind(e.t, "a task on a missing queue", err, drivers.KindNotFound)

		got := e.listTasks(q, 10)
		if len(got) != 1 || got[0].Handle != first.Handle || got[0].Destination != other ||
			got[0].Rate == nil || *got[0].Rate != 7 || !got[0].Started.Equal(e.base) || got[0].ToMove != 5 ||
			got[0].Status != drivers.MoveTaskRunning || got[0].Owner != "gw-a" {
			e.t.Fatalf("ListMoveTasks = %+v, want the first task as started", got)
		}
		// Once it finishes, a new task may start; the list shows the latest first, with
		// the count its steps made.
		e.send(q, 0, msg("a"), msg("b"))
		e.taskStep(first, "gw-a", time.Minute, 2, 2)
		e.report(drivers.ReportMoveTaskRequest{Handle: first.Handle, Owner: "gw-a",
			Status: drivers.MoveTaskCompleted, LeaseUntil: e.stamp(time.Minute)})
		second := e.task(q, "gw-b", time.Minute)
		e.startTask(second)
		if got := e.listTasks(q, 10); len(got) != 2 || got[0].Handle != second.Handle || got[1].Moved != 2 ||
			got[1].Status != drivers.MoveTaskCompleted {
			e.t.Fatalf("ListMoveTasks = %+v, want the second task, then the completed first", got)
		}
		if got := e.listTasks(q, 1); len(got) != 1 || got[0].Handle != second.Handle {
			e.t.Fatalf("ListMoveTasks limit 1 = %+v", got)
		}
	}},
	{Caps: one(capabilities.RedriveMoveTasks), Name: "store-report-cancel-and-adopt", Run: func(e *env) {
		if e.storeDisclaimed() {
			return
		}
		s := e.store()
		q, dst := e.standard("dlq"), e.standard("dst")
		e.send(q, 0, msg("a"), msg("b"), msg("c"), msg("d"), msg("e"), msg("f"))
		t := e.task(q, "gw-a", 30*time.Second)
		t.Destination = dst
		e.startTask(t)
		// A step by the owner moves, counts and renews the lease in one transaction.
		e.taskStep(t, "gw-a", 40*time.Second, 2, 2)
		got := e.listTasks(q, 1)[0]
		if got.Moved != 2 || !got.LeaseUntil.Equal(e.stamp(40*time.Second)) || got.Owner != "gw-a" {
			e.t.Fatalf("after a step: %+v, want 2 moved, owner gw-a, lease renewed", got)
		}
		// A report never counts: repeated, as after a lost reply, it changes nothing more.
		for i := 0; i < 2; i++ {
			got = e.report(drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-a",
				Status: drivers.MoveTaskRunning, LeaseUntil: e.stamp(40 * time.Second)})
			if got.Moved != 2 || got.Status != drivers.MoveTaskRunning {
				e.t.Fatalf("report %d: %+v, want 2 moved, RUNNING", i+1, got)
			}
		}
		// Another instance neither moves for, renews nor finishes a task it does not hold.
		e.taskStepRefused(t, "gw-b", q, 4)
		got = e.report(drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-b",
			Status: drivers.MoveTaskCompleted, LeaseUntil: e.stamp(time.Hour)})
		if got.Moved != 2 || got.Status != drivers.MoveTaskRunning || !got.LeaseUntil.Equal(e.stamp(40*time.Second)) {
			e.t.Fatalf("after a report by a non-owner: %+v", got)
		}
		// Adoption takes only lapsed leases, and each once.
		adopted, err := s.AdoptMoveTasks(e.ctx, "gw-b", e.stamp(39*time.Second), e.stamp(time.Minute))
		if err != nil || containsTask(adopted, t.Handle) {
			e.t.Fatalf("AdoptMoveTasks before the lease lapsed: %+v, %v", adopted, err)
		}
		adopted, err = s.AdoptMoveTasks(e.ctx, "gw-b", e.stamp(41*time.Second), e.stamp(time.Minute+41*time.Second))
		if err != nil || !containsTask(adopted, t.Handle) {
			e.t.Fatalf("AdoptMoveTasks after the lease lapsed: %+v, %v", adopted, err)
		}
		for _, a := range adopted {
			if a.Handle == t.Handle && (a.Owner != "gw-b" || a.Moved != 2 || a.Source != q) {
				e.t.Fatalf("adopted task %+v, want owner gw-b, 2 moved, source %s", a, q)
			}
		}
		if again, err := s.AdoptMoveTasks(e.ctx, "gw-c", e.stamp(42*time.Second), e.stamp(time.Hour)); err != nil || containsTask(again, t.Handle) {
			e.t.Fatalf("adopted twice: %+v, %v", again, err)
		}
		// The previous owner, stalled until now, moves nothing more; its report shows it
		// lost the task. The new owner's steps count on from the stored count.
		e.taskStepRefused(t, "gw-a", q, 4)
		if got := e.report(drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-a",
			Status: drivers.MoveTaskRunning, LeaseUntil: e.stamp(time.Hour)}); got.Owner != "gw-b" || got.Moved != 2 {
			e.t.Fatalf("the old owner's report: %+v", got)
		}
		e.taskStep(t, "gw-b", 2*time.Minute, 1, 1)
		// Cancel: once; the task is CANCELLING, still the source's active task, until its
		// owner's next report makes it CANCELLED. A cancelling task moves nothing more.
		c, err := s.CancelMoveTask(e.ctx, t.Handle)
		if err != nil || c.Status != drivers.MoveTaskCancelling || c.Moved != 3 {
			e.t.Fatalf("CancelMoveTask = %+v, %v", c, err)
		}
		_, err = s.CancelMoveTask(e.ctx, t.Handle)
		expectKind(e.t, "cancelling a cancelling task", err, drivers.KindNotFound)
		err = s.StartMoveTask(e.ctx, e.task(q, "gw-c", time.Minute))
		expectKind(e.t, "starting a task while one is cancelling", err, drivers.KindFailedPrecondition)
		e.taskStepRefused(t, "gw-b", q, 3)
		if got := e.report(drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-a",
			Status: drivers.MoveTaskRunning, LeaseUntil: e.stamp(time.Hour)}); got.Status != drivers.MoveTaskCancelling || got.Moved != 3 {
			e.t.Fatalf("a non-owner's report on a cancelling task: %+v, want CANCELLING, 3 moved", got)
		}
		if got := e.report(drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-b",
			Status: drivers.MoveTaskRunning, LeaseUntil: e.stamp(time.Hour)}); got.Status != drivers.MoveTaskCancelled || got.Moved != 3 {
			e.t.Fatalf("the owner's report after the cancel: %+v, want CANCELLED, 3 moved", got)
		}
		if got := e.report(drivers.ReportMoveTaskRequest{Handle: t.Handle, Owner: "gw-b",
			Status: drivers.MoveTaskCompleted, LeaseUntil: e.stamp(time.Hour)}); got.Status != drivers.MoveTaskCancelled || got.Moved != 3 {
			e.t.Fatalf("a report after the task finished: %+v, want CANCELLED, 3 moved", got)
		}
		e.taskStepRefused(t, "gw-b", q, 3)
		// A cancelling task whose owner stopped before reporting is finished by the next
		// adoption pass once its lease lapsed, and not handed to anyone.
		t2 := e.task(q, "gw-a", time.Minute)
		e.startTask(t2)
		if _, err := s.CancelMoveTask(e.ctx, t2.Handle); err != nil {
			e.t.Fatal(err)
		}
		if adopted, err := s.AdoptMoveTasks(e.ctx, "gw-b", e.stamp(30*time.Second), e.stamp(time.Hour)); err != nil || containsTask(adopted, t2.Handle) {
			e.t.Fatalf("AdoptMoveTasks before the cancelled task's lease lapsed: %+v, %v", adopted, err)
		}
		if adopted, err := s.AdoptMoveTasks(e.ctx, "gw-b", e.stamp(2*time.Minute), e.stamp(time.Hour)); err != nil || containsTask(adopted, t2.Handle) {
			e.t.Fatalf("AdoptMoveTasks adopted a cancelled task: %+v, %v", adopted, err)
		}
		if list, err := s.ListMoveTasks(e.ctx, q, 1); err != nil || len(list) != 1 || list[0].Handle != t2.Handle || list[0].Status != drivers.MoveTaskCancelled {
			e.t.Fatalf("after the adoption pass: %+v, %v; want %s CANCELLED", list, err, t2.Handle)
		}
		_, err = s.ReportMoveTask(e.ctx, drivers.ReportMoveTaskRequest{Handle: e.prefix + "no-such-task", Owner: "gw-b"})
		expectKind(e.t, "reporting an unknown task", err, drivers.KindNotFound)
		_, err = s.CancelMoveTask(e.ctx, e.prefix+"no-such-task")
		expectKind(e.t, "cancelling an unknown task", err, drivers.KindNotFound)
	}},
	{Caps: one(capabilities.RedriveMoveTasks), Name: "store-keeps-latest-finished-forgets-with-queue-outlives-restart", Run: func(e *env) {
		if e.storeDisclaimed() {
			return
		}
		q := e.standard("dlq")
		var last drivers.MoveTask
		for i := 0; i < 15; i++ {
			last = e.task(q, "gw-a", time.Minute)
			e.startTask(last)
			e.report(drivers.ReportMoveTaskRequest{Handle: last.Handle, Owner: "gw-a", Status: drivers.MoveTaskCompleted})
		}
		got := e.listTasks(q, 100)
		if len(got) < 10 || len(got) > 11 || got[0].Handle != last.Handle {
			e.t.Fatalf("after 15 finished tasks the queue lists %d, the first %s; want the latest 10 (or 11), latest first", len(got), got[0].Handle)
		}
		// A deleted queue's tasks go with it.
		running := e.task(q, "gw-a", time.Minute)
		e.startTask(running)
		if err := e.d.DeleteQueue(e.ctx, drivers.DeleteQueueRequest{Name: q}); err != nil {
			e.t.Fatalf("DeleteQueue: %v", err)
		}
		if _, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q,
			Attributes: StandardAttributes(), Tags: map[string]string{}, CreatedAt: e.base, LastModified: e.base}}); err != nil {
			e.t.Fatalf("CreateQueue %s again: %v", q, err)
		}
		if got := e.listTasks(q, 100); len(got) != 0 {
			e.t.Fatalf("a queue created again under the name lists %d tasks of the deleted one", len(got))
		}
		if _, err := e.store().CancelMoveTask(e.ctx, running.Handle); drivers.KindOf(err) != drivers.KindNotFound {
			e.t.Fatalf("the deleted queue's running task can still be cancelled: %v", err)
		}
		// Tasks outlive a restart.
		running = e.task(q, "gw-a", time.Minute)
		e.startTask(running)
		e.restart()
		if got := e.listTasks(q, 1); len(got) != 1 || got[0].Handle != running.Handle || got[0].Status != drivers.MoveTaskRunning {
			e.t.Fatalf("after a restart: %+v, want the running task", got)
		}
	}},
}

// taskStep moves up to limit messages as a step of t run by owner, who takes the lease
// until lease after the base time, and expects want to move.
func (e *env) taskStep(t drivers.MoveTask, owner string, lease time.Duration, limit, want int) {
	e.t.Helper()
	res, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: t.Source, Destination: t.Destination,
		Now: e.at(0), Limit: limit, Task: &drivers.MoveTaskStep{Handle: t.Handle, Owner: owner, LeaseUntil: e.stamp(lease)}})
	if err != nil || res.Moved != want {
		e.t.Fatalf("MoveMessages as a step of %s by %s: %+v, %v; want %d moved", t.Handle, owner, res, err, want)
	}
}

// taskStepRefused expects a step of t by owner to fail with KindFailedPrecondition and
// to leave source's visible messages at visible.
func (e *env) taskStepRefused(t drivers.MoveTask, owner, source string, visible int64) {
	e.t.Helper()
	_, err := e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: t.Source, Destination: t.Destination,
		Now: e.at(0), Limit: 10, Task: &drivers.MoveTaskStep{Handle: t.Handle, Owner: owner, LeaseUntil: e.stamp(time.Hour)}})
	expectKind(e.t, "a step by "+owner+" of a task it does not run", err, drivers.KindFailedPrecondition)
	e.expectStats(source, 0, drivers.QueueStats{Visible: visible})
}

func containsTask(ts []drivers.MoveTask, handle string) bool {
	for _, t := range ts {
		if t.Handle == handle {
			return true
		}
	}
	return false
}

func init() {
	// A store keeps tasks the same way however the messages move, so a degraded move
	// declaration (at-least-once) asks nothing else of these cases.
	for i := range moveTaskCases {
		moveTaskCases[i].Degraded = asNative(moveTaskCases[i].Run)
	}
}
