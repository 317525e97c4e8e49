package conformance

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/drivers"
)

// TestMoveTaskCountsExact: on every row whose driver keeps message move tasks in its
// storage, a task's ApproximateNumberOfMessagesMoved equals the messages that left the
// dead-letter queue, whatever befalls the gateway running it after a step's move has
// committed:
//
//   - abandoned: the gateway stalls after the commit and never closes (a kill -9, or a
//     runner that lost its lease); another gateway on the storage adopts the task and
//     finishes it, and the stalled runner, where it can still reach the storage, moves
//     and counts nothing more when it wakes;
//   - cut-by-close: the driver commits the move and then answers a context error while
//     the gateway closes;
//   - report-reply-lost: a report is applied and then answered Unavailable once, so the
//     gateway sends it again.
//
// Drivers without a task store are not cases for it: the gateway's memory holds their
// tasks, and redrive.move-tasks/task-survives-gateway-restart checks what a restart
// leaves of them.
func TestMoveTaskCountsExact(t *testing.T) {
	for _, b := range backends() {
		if b.served || b.hidden || b.reference {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, sc := range []struct {
				name string
				run  func(t *testing.T, b backend)
			}{
				{"abandoned", moveAbandonedMidStep},
				{"cut-by-close", moveCutByClose},
				{"report-reply-lost", moveReportReplyLost},
			} {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					takeCPUSlot(t)
					sc.run(t, b)
				})
			}
		})
	}
}

// faultyStore passes every call to its driver but MoveMessages and ReportMoveTask, which
// go through the test's hooks when set.
type faultyStore struct {
	drivers.Driver
	move   func(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error)
	report func(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error)
}

func (f *faultyStore) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	if f.move != nil {
		return f.move(ctx, req)
	}
	return f.Driver.MoveMessages(ctx, req)
}

func (f *faultyStore) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	if f.report != nil {
		return f.report(ctx, req)
	}
	return f.Driver.ReportMoveTask(ctx, req)
}

// faultyFirst returns a harness wrapper that makes the first driver opened a faultyStore
// set up by hook, and leaves the drivers of later starts (restarts, adopters) alone.
func faultyFirst(hook func(f *faultyStore)) func(drivers.Driver) drivers.Driver {
	var once sync.Once
	return func(d drivers.Driver) drivers.Driver {
		out := d
		once.Do(func() {
			f := &faultyStore{Driver: d}
			hook(f)
			out = f
		})
		return out
	}
}

// storeHarness starts a harness whose first driver is wrapped by wrap, and skips rows
// whose driver keeps no move tasks.
func storeHarness(t *testing.T, b backend, wrap func(drivers.Driver) drivers.Driver) *H {
	h := newHarnessWith(t, b, harnessOptions{wrap: wrap})
	if h.st.open == nil || !h.Desc.MoveTaskStore {
		t.Skip("not a case for this row: its driver keeps no move tasks (Description.MoveTaskStore is false)")
	}
	return h
}

// expectExactMove waits for dlq's task to complete, then checks that it counts 5 moved
// and that the 5 messages are back in src, once each.
func (h *H) expectExactMove(dlq, src string) {
	h.T.Helper()
	task := h.awaitMoveTask(dlq, "COMPLETED")
	if task.ApproximateNumberOfMessagesMoved != 5 {
		h.T.Fatalf("the completed task counts %d moved; 5 messages left the dead-letter queue", task.ApproximateNumberOfMessagesMoved)
	}
	if got := h.receiveN(src, 5, 30); len(got) != 5 {
		h.T.Fatalf("%d of 5 messages back in the source queue", len(got))
	}
	h.ReceiveNone(src, "the source after the 5 moved messages")
}

// awaitClosed waits, advancing the gateway clock a second at a time (the task's steps
// are paced on it), until c is closed.
func (h *H) awaitClosed(what string, c <-chan struct{}) {
	h.T.Helper()
	h.Eventually(what, time.Second, func() bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	})
}

// moveCount is the count dlq's latest task shows now.
func (h *H) moveCount(dlq string) int64 {
	h.T.Helper()
	out, err := h.SQS.ListMessageMoveTasks(h.Ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(h.Arn(dlq))})
	h.Must(err, "ListMessageMoveTasks")
	if len(out.Results) == 0 {
		h.T.Fatal("ListMessageMoveTasks: no task")
	}
	return out.Results[0].ApproximateNumberOfMessagesMoved
}

func moveAbandonedMidStep(t *testing.T, b backend) {
	committed, wake, woke := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var stalled, reported sync.Once
	h := storeHarness(t, b, faultyFirst(func(f *faultyStore) {
		f.move = func(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
			res, err := f.Driver.MoveMessages(ctx, req)
			if err == nil && res.Moved > 0 {
				stalled.Do(func() {
					close(committed)
					<-wake
				})
			}
			return res, err
		}
		f.report = func(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
			task, err := f.Driver.ReportMoveTask(ctx, req)
			select {
			case <-wake:
				reported.Do(func() { close(woke) })
			default:
			}
			return task, err
		}
	}))
	dlq, src, _ := h.slowMoveTask(h.SQS)
	h.awaitClosed("the first step's move to commit", committed)

	// Gateway A stalls inside its step and never closes. A storage one process owns is
	// let go, as the kernel does when that process is killed; shared storage stays
	// reachable to A, so that its wake-up below meets another gateway's lease.
	a, aDriver := h.gw, h.drv
	shared := h.Desc.SharedStorage
	h.handler.Store(nil)
	h.gw, h.drv = nil, nil
	if !shared {
		aDriver.Close()
	}
	t.Cleanup(func() {
		select {
		case <-wake:
		default:
			close(wake)
		}
		a.Close()
		aDriver.Close()
	})
	h.start() // gateway B, on the same storage: it adopts the task once A's lease lapses
	h.expectExactMove(dlq, src)

	if !shared {
		return
	}
	close(wake)
	h.awaitClosed("the stalled gateway to report again", woke)
	if n := h.moveCount(dlq); n != 5 {
		h.T.Fatalf("after the stalled gateway woke the task counts %d moved, want 5", n)
	}
	h.ReceiveNone(dlq, "the dead-letter queue after the move")
}

func moveCutByClose(t *testing.T, b backend) {
	committed, closing := make(chan struct{}), make(chan struct{})
	var cut sync.Once
	h := storeHarness(t, b, faultyFirst(func(f *faultyStore) {
		f.move = func(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
			res, err := f.Driver.MoveMessages(context.WithoutCancel(ctx), req)
			if err != nil || res.Moved == 0 {
				return res, err
			}
			cutNow := false
			cut.Do(func() { cutNow = true })
			if !cutNow {
				return res, err
			}
			// The move has committed; the driver notices the shutdown and answers with a
			// context error, as a driver whose context was cancelled mid-call does.
			close(committed)
			select {
			case <-ctx.Done():
				return drivers.MoveMessagesResult{}, ctx.Err()
			case <-closing:
				return drivers.MoveMessagesResult{}, context.Canceled
			}
		}
	}))
	dlq, src, _ := h.slowMoveTask(h.SQS)
	h.awaitClosed("the first step's move to commit", committed)
	close(closing)
	h.Restart() // Close, then a new gateway that adopts the released task
	h.expectExactMove(dlq, src)
}

func moveReportReplyLost(t *testing.T, b backend) {
	var moved, lost sync.Once
	movedOnce := make(chan struct{})
	h := storeHarness(t, b, faultyFirst(func(f *faultyStore) {
		f.move = func(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
			res, err := f.Driver.MoveMessages(ctx, req)
			if err == nil && res.Moved > 0 {
				moved.Do(func() { close(movedOnce) })
			}
			return res, err
		}
		f.report = func(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
			task, err := f.Driver.ReportMoveTask(ctx, req)
			select {
			case <-movedOnce:
			default:
				return task, err
			}
			failed := false
			lost.Do(func() { failed = err == nil })
			if failed {
				// Applied, but the reply is lost: the gateway must not count twice.
				return drivers.MoveTask{}, drivers.Errorf(drivers.KindUnavailable, "the reply to ReportMoveTask was lost")
			}
			return task, err
		}
	}))
	dlq, src, _ := h.slowMoveTask(h.SQS)
	h.expectExactMove(dlq, src)
}
