package spanner

import (
	"context"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
)

// Message move tasks live in MoveTasks, so that every gateway on the database lists and
// cancels them and one adopts a task whose runner stopped (drivers.MoveTaskStore).

var moveTaskCols = []string{"Handle", "Source", "Destination", "Rate", "Started", "ToMove", "Moved", "Status", "Failure", "Owner", "LeaseUntil"}

func scanMoveTask(r *spanner.Row) (drivers.MoveTask, error) {
	var t drivers.MoveTask
	var rate spanner.NullInt64
	err := r.Columns(&t.Handle, &t.Source, &t.Destination, &rate, &t.Started, &t.ToMove, &t.Moved, &t.Status, &t.Failure, &t.Owner, &t.LeaseUntil)
	if rate.Valid {
		v := int32(rate.Int64)
		t.Rate = &v
	}
	return t, err
}

func moveTaskValues(t drivers.MoveTask) []any {
	var rate spanner.NullInt64
	if t.Rate != nil {
		rate = spanner.NullInt64{Int64: int64(*t.Rate), Valid: true}
	}
	return []any{t.Handle, t.Source, t.Destination, rate, t.Started, t.ToMove, t.Moved, t.Status, t.Failure, t.Owner, t.LeaseUntil}
}

func active(status string) bool {
	return status == drivers.MoveTaskRunning || status == drivers.MoveTaskCancelling
}

func sourceTasks(ctx context.Context, tx *spanner.ReadWriteTransaction, source string) ([]drivers.MoveTask, error) {
	var out []drivers.MoveTask
	err := tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(moveTaskCols) + ` FROM MoveTasks@{FORCE_INDEX=MoveTasksBySource}
		WHERE Source = @s ORDER BY Ord DESC`, Params: map[string]any{"s": source}}).Do(func(r *spanner.Row) error {
		t, err := scanMoveTask(r)
		out = append(out, t)
		return err
	})
	return out, err
}

// StartMoveTask records a running task and forgets all but the latest
// drivers.MoveTasksKept finished ones of its source, in one transaction that also reads
// the source's tasks, so two gateways cannot both start one.
func (d *Driver) StartMoveTask(ctx context.Context, t drivers.MoveTask) error {
	return d.rw(ctx, "start move task", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		if _, err := readQueue(ctx, tx, t.Source); err != nil {
			return err
		}
		tasks, err := sourceTasks(ctx, tx, t.Source)
		if err != nil {
			return err
		}
		var ms []*spanner.Mutation
		finished := 0
		ord := int64(len(tasks))
		if len(tasks) > 0 {
			r, err := tx.ReadRow(ctx, "MoveTasks", spanner.Key{tasks[0].Handle}, []string{"Ord"})
			if err != nil {
				return err
			}
			if err := r.Columns(&ord); err != nil {
				return err
			}
			ord++
		}
		for _, o := range tasks {
			if active(o.Status) {
				return drivers.Errorf(drivers.KindFailedPrecondition, "a move task is already running on %s", t.Source)
			}
			if finished++; finished > drivers.MoveTasksKept {
				ms = append(ms, spanner.Delete("MoveTasks", spanner.Key{o.Handle}))
			}
		}
		ms = append(ms, spanner.Insert("MoveTasks", append(moveTaskCols, "Ord"), append(moveTaskValues(t), ord)))
		return tx.BufferWrite(ms)
	})
}

func readMoveTask(ctx context.Context, tx *spanner.ReadWriteTransaction, h string) (drivers.MoveTask, bool, error) {
	r, err := tx.ReadRow(ctx, "MoveTasks", spanner.Key{h}, moveTaskCols)
	if spanner.ErrCode(err) == codes.NotFound {
		return drivers.MoveTask{}, false, nil
	}
	if err != nil {
		return drivers.MoveTask{}, false, err
	}
	t, err := scanMoveTask(r)
	return t, true, err
}

// stepTask reads, in a move's transaction, the task step names and fails with
// KindFailedPrecondition unless it is RUNNING under step.Owner: a task cancelled,
// finished or adopted by another gateway moves nothing more (drivers.Driver.MoveMessages).
func stepTask(ctx context.Context, tx *spanner.ReadWriteTransaction, step *drivers.MoveTaskStep) (drivers.MoveTask, error) {
	t, ok, err := readMoveTask(ctx, tx, step.Handle)
	switch {
	case err != nil:
		return t, err
	case !ok:
		return t, drivers.Errorf(drivers.KindFailedPrecondition, "no move task %s", step.Handle)
	case t.Owner != step.Owner:
		return t, drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is run by %s, not %s", step.Handle, t.Owner, step.Owner)
	case t.Status != drivers.MoveTaskRunning:
		return t, drivers.Errorf(drivers.KindFailedPrecondition, "move task %s is %s, not RUNNING", step.Handle, t.Status)
	}
	return t, nil
}

// ReportMoveTask records a runner's view of its task; see drivers.MoveTaskStore. It never
// changes the count: MoveMessages keeps it, in the move's transaction.
func (d *Driver) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	var out drivers.MoveTask
	err := d.rw(ctx, "report move task", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		t, ok, err := readMoveTask(ctx, tx, req.Handle)
		if err != nil {
			return err
		}
		if !ok {
			return drivers.Errorf(drivers.KindNotFound, "no move task %s", req.Handle)
		}
		if t.Owner == req.Owner {
			switch t.Status {
			case drivers.MoveTaskRunning:
				t.Status, t.Failure, t.LeaseUntil = req.Status, req.Failure, req.LeaseUntil
			case drivers.MoveTaskCancelling:
				t.Status = drivers.MoveTaskCancelled
			}
		}
		out = t
		return tx.BufferWrite([]*spanner.Mutation{spanner.Update("MoveTasks", moveTaskCols, moveTaskValues(t))})
	})
	return out, err
}

// CancelMoveTask marks a running task cancelling; see drivers.MoveTaskStore.
func (d *Driver) CancelMoveTask(ctx context.Context, h string) (drivers.MoveTask, error) {
	var out drivers.MoveTask
	err := d.rw(ctx, "cancel move task", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		t, ok, err := readMoveTask(ctx, tx, h)
		if err != nil {
			return err
		}
		if !ok || t.Status != drivers.MoveTaskRunning {
			return drivers.Errorf(drivers.KindNotFound, "no running move task %s", h)
		}
		t.Status = drivers.MoveTaskCancelling
		out = t
		return tx.BufferWrite([]*spanner.Mutation{spanner.Update("MoveTasks", []string{"Handle", "Status"}, []any{h, t.Status})})
	})
	return out, err
}

// ListMoveTasks returns a queue's latest tasks; see drivers.MoveTaskStore.
func (d *Driver) ListMoveTasks(ctx context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	var out []drivers.MoveTask
	tx, done := d.snapshot(ctx)
	defer done()
	err := tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(moveTaskCols) + ` FROM MoveTasks@{FORCE_INDEX=MoveTasksBySource}
		WHERE Source = @s ORDER BY Ord DESC LIMIT @n`, Params: map[string]any{"s": source, "n": int64(limit)}}).Do(func(r *spanner.Row) error {
		t, err := scanMoveTask(r)
		out = append(out, t)
		return err
	})
	return out, mapErr(ctx, err, "list move tasks")
}

// AdoptMoveTasks takes over running tasks whose lease lapsed and finishes cancelling ones
// whose runner stopped; see drivers.MoveTaskStore. The table holds few rows (ten finished
// tasks per queue at most), so the scan is cheap.
func (d *Driver) AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]drivers.MoveTask, error) {
	var out []drivers.MoveTask
	err := d.rw(ctx, "adopt move tasks", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		out = nil
		var ms []*spanner.Mutation
		err := tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(moveTaskCols) + ` FROM MoveTasks
			WHERE Status IN ('RUNNING', 'CANCELLING') AND LeaseUntil < @now`, Params: map[string]any{"now": now}}).Do(func(r *spanner.Row) error {
			t, err := scanMoveTask(r)
			if err != nil {
				return err
			}
			t.Owner, t.LeaseUntil = owner, leaseUntil
			if t.Status == drivers.MoveTaskCancelling {
				t.Status = drivers.MoveTaskCancelled
			} else {
				out = append(out, t)
			}
			ms = append(ms, spanner.Update("MoveTasks", moveTaskCols, moveTaskValues(t)))
			return nil
		})
		if err != nil {
			return err
		}
		return tx.BufferWrite(ms)
	})
	return out, err
}
