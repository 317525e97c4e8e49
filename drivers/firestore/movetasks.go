package firestore

import (
	"context"
	"fmt"
	"time"

	fs "cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
)

// Message move tasks live in <p>_tasks, one document per task, so every gateway on the
// storage lists and cancels them and adopts one whose gateway stopped
// (drivers.MoveTaskStore). Each change is a transaction on the task's document.

type taskDoc struct {
	Handle      string `firestore:"handle"`
	Source      string `firestore:"src"`
	Destination string `firestore:"dst"`
	Rate        *int64 `firestore:"rate"`
	Started     int64  `firestore:"started"`
	ToMove      int64  `firestore:"to_move"`
	Moved       int64  `firestore:"moved"`
	Status      string `firestore:"status"`
	Failure     string `firestore:"failure"`
	Owner       string `firestore:"owner"`
	Lease       int64  `firestore:"lease"`
	// Order sorts a source's tasks, latest started first: the start time, then the wall
	// clock at the start, for tasks started within one gateway-clock tick.
	Order string `firestore:"ord"`
	// QID is the source queue's storage id: a queue created again under the name does
	// not list the tasks of the deleted one.
	QID string `firestore:"qid"`
}

func taskToDoc(t drivers.MoveTask) taskDoc {
	doc := taskDoc{Handle: t.Handle, Source: t.Source, Destination: t.Destination, Started: toNanos(t.Started),
		ToMove: t.ToMove, Moved: t.Moved, Status: t.Status, Failure: t.Failure, Owner: t.Owner, Lease: toNanos(t.LeaseUntil)}
	if t.Rate != nil {
		r := int64(*t.Rate)
		doc.Rate = &r
	}
	return doc
}

func (doc taskDoc) task() drivers.MoveTask {
	t := drivers.MoveTask{Handle: doc.Handle, Source: doc.Source, Destination: doc.Destination, Started: fromNanos(doc.Started),
		ToMove: doc.ToMove, Moved: doc.Moved, Status: doc.Status, Failure: doc.Failure, Owner: doc.Owner, LeaseUntil: fromNanos(doc.Lease)}
	if doc.Rate != nil {
		r := int32(*doc.Rate)
		t.Rate = &r
	}
	return t
}

func active(status string) bool {
	return status == drivers.MoveTaskRunning || status == drivers.MoveTaskCancelling
}

// taskRef names a task document; handles are opaque, so they are hashed.
func (d *Driver) taskRef(handle string) *fs.DocumentRef { return d.tasks().Doc(hashID("task", handle)) }

// StartMoveTask records a running task; see drivers.MoveTaskStore. The source's tasks
// are read in the transaction, so two gateways cannot both start one.
func (d *Driver) StartMoveTask(ctx context.Context, t drivers.MoveTask) error {
	return d.runTx(ctx, "start move task on "+t.Source, func(ctx context.Context, tx *fs.Transaction) error {
		q, err := d.loadQueue(ctx, tx, t.Source)
		if err != nil {
			return err
		}
		snaps, err := tx.Documents(d.tasks().Where("qid", "==", q.doc.QID).OrderBy("ord", fs.Desc)).GetAll()
		if err != nil {
			return err
		}
		finished := 0
		var w writes
		for _, s := range snaps {
			var doc taskDoc
			if err := s.DataTo(&doc); err != nil {
				return err
			}
			if active(doc.Status) {
				return drivers.Errorf(drivers.KindFailedPrecondition, "a move task is already running on %s", t.Source)
			}
			if finished++; finished > drivers.MoveTasksKept {
				w.delete(s.Ref)
			}
		}
		doc := taskToDoc(t)
		doc.QID = q.doc.QID
		doc.Order = fmt.Sprintf("%020d.%020d", doc.Started, time.Now().UnixNano())
		w.create(d.taskRef(t.Handle), doc)
		return w.apply(tx)
	})
}

// updateTask changes one task in a transaction; f returns false to leave it as is.
func (d *Driver) updateTask(ctx context.Context, handle, notFound string, f func(*fs.Transaction, *taskDoc) (bool, error)) (drivers.MoveTask, error) {
	var out drivers.MoveTask
	err := d.runTx(ctx, "move task "+handle, func(ctx context.Context, tx *fs.Transaction) error {
		ref := d.taskRef(handle)
		s, err := tx.Get(ref)
		if status.Code(err) == codes.NotFound {
			return drivers.Errorf(drivers.KindNotFound, "%s", notFound)
		}
		if err != nil {
			return err
		}
		var doc taskDoc
		if err := s.DataTo(&doc); err != nil {
			return err
		}
		write, err := f(tx, &doc)
		if err != nil {
			return err
		}
		out = doc.task()
		if !write {
			return nil
		}
		return tx.Set(ref, doc)
	})
	return out, err
}

// taskStep is the task document a MoveMessages step reads in its transaction.
type taskStep struct {
	ref *fs.DocumentRef
	doc taskDoc
}

// readTaskStep reads, in tx, the task step names and checks that it is running and
// owned by step.Owner (KindFailedPrecondition otherwise): a step of a task that is
// cancelling, finished, gone or adopted by another instance moves nothing.
func (d *Driver) readTaskStep(tx *fs.Transaction, step *drivers.MoveTaskStep) (*taskStep, error) {
	ref := d.taskRef(step.Handle)
	s, err := tx.Get(ref)
	if status.Code(err) == codes.NotFound {
		return nil, drivers.Errorf(drivers.KindFailedPrecondition, "no move task %s", step.Handle)
	}
	if err != nil {
		return nil, err
	}
	t := &taskStep{ref: ref}
	if err := s.DataTo(&t.doc); err != nil {
		return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: move task "+ref.ID)
	}
	switch {
	case t.doc.Status != drivers.MoveTaskRunning:
		return nil, drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is %s, not RUNNING", step.Handle, t.doc.Status)
	case t.doc.Owner != step.Owner:
		return nil, drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is run by %s, not %s", step.Handle, t.doc.Owner, step.Owner)
	}
	return t, nil
}

// ReportMoveTask records a runner's report on its task; see drivers.MoveTaskStore. It
// never changes the count: each MoveMessages step adds its own.
func (d *Driver) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	return d.updateTask(ctx, req.Handle, "no move task "+req.Handle, func(tx *fs.Transaction, t *taskDoc) (bool, error) {
		if t.Owner == req.Owner {
			switch t.Status {
			case drivers.MoveTaskRunning:
				t.Status, t.Failure, t.Lease = req.Status, req.Failure, toNanos(req.LeaseUntil)
			case drivers.MoveTaskCancelling:
				t.Status = drivers.MoveTaskCancelled
			}
		}
		return true, nil
	})
}

// CancelMoveTask marks a running task cancelling; see drivers.MoveTaskStore.
func (d *Driver) CancelMoveTask(ctx context.Context, handle string) (drivers.MoveTask, error) {
	notFound := "no running move task " + handle
	return d.updateTask(ctx, handle, notFound, func(tx *fs.Transaction, t *taskDoc) (bool, error) {
		if t.Status != drivers.MoveTaskRunning {
			return false, drivers.Errorf(drivers.KindNotFound, "%s", notFound)
		}
		// A task of a deleted queue is gone with it.
		if q, err := d.loadQueue(ctx, tx, t.Source); drivers.KindOf(err) == drivers.KindNotFound || err == nil && q.doc.QID != t.QID {
			return false, drivers.Errorf(drivers.KindNotFound, "%s", notFound)
		} else if err != nil {
			return false, err
		}
		t.Status = drivers.MoveTaskCancelling
		return true, nil
	})
}

// ListMoveTasks returns a queue's latest tasks; see drivers.MoveTaskStore.
func (d *Driver) ListMoveTasks(ctx context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	src, err := d.loadQueue(ctx, nil, source)
	if drivers.KindOf(err) == drivers.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, classify(ctx, err, "list move tasks of "+source)
	}
	q := d.tasks().Where("qid", "==", src.doc.QID).OrderBy("ord", fs.Desc)
	if limit > 0 {
		q = q.Limit(limit)
	}
	snaps, err := q.Documents(ctx).GetAll()
	if err != nil {
		return nil, classify(ctx, err, "list move tasks of "+source)
	}
	out := make([]drivers.MoveTask, 0, len(snaps))
	for _, s := range snaps {
		var doc taskDoc
		if err := s.DataTo(&doc); err != nil {
			return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: move task "+s.Ref.ID)
		}
		out = append(out, doc.task())
	}
	return out, nil
}

// AdoptMoveTasks takes over running tasks whose lease lapsed, and finishes cancelling
// ones whose runner stopped; see drivers.MoveTaskStore.
func (d *Driver) AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]drivers.MoveTask, error) {
	var out []drivers.MoveTask
	for _, st := range []string{drivers.MoveTaskCancelling, drivers.MoveTaskRunning} {
		snaps, err := d.tasks().Where("status", "==", st).Where("lease", "<", toNanos(now)).Documents(ctx).GetAll()
		if err != nil {
			return nil, classify(ctx, err, "adopt move tasks")
		}
		for _, s := range snaps {
			var doc taskDoc
			if err := s.DataTo(&doc); err != nil {
				return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: move task "+s.Ref.ID)
			}
			adopted := false
			t, err := d.updateTask(ctx, doc.Handle, "no move task "+doc.Handle, func(tx *fs.Transaction, t *taskDoc) (bool, error) {
				if t.Lease >= toNanos(now) || t.Status != st {
					return false, nil // another gateway was quicker
				}
				if st == drivers.MoveTaskCancelling {
					t.Status = drivers.MoveTaskCancelled
					return true, nil
				}
				t.Owner, t.Lease, adopted = owner, toNanos(leaseUntil), true
				return true, nil
			})
			if err != nil && drivers.KindOf(err) != drivers.KindNotFound {
				return nil, err
			}
			if adopted {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
