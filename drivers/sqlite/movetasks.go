package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// Message move tasks live in move_tasks (schema version 6), so that a task outlives a
// restart of the gateway running it: the next gateway on the data directory adopts it
// once its lease lapses (drivers.MoveTaskStore). One process owns the database, so every
// write below runs alone and needs no locking of its own.

// moveTaskReturning lists a move_tasks row as scanMoveTasks reads it.
const moveTaskReturning = `handle, (SELECT name FROM queues WHERE id = queue_id), destination, rate,
	started, to_move, moved, status, failure, owner, lease_until`

func scanMoveTasks(rows *sql.Rows, err error) ([]drivers.MoveTask, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []drivers.MoveTask
	for rows.Next() {
		var t drivers.MoveTask
		var rate sql.NullInt32
		var started, lease int64
		if err := rows.Scan(&t.Handle, &t.Source, &t.Destination, &rate, &started, &t.ToMove, &t.Moved,
			&t.Status, &t.Failure, &t.Owner, &lease); err != nil {
			return nil, err
		}
		if rate.Valid {
			t.Rate = &rate.Int32
		}
		t.Started, t.LeaseUntil = fromNanos(started), fromNanos(lease)
		out = append(out, t)
	}
	return out, rows.Err()
}

// StartMoveTask records a running task; see drivers.MoveTaskStore.
func (d *Driver) StartMoveTask(ctx context.Context, t drivers.MoveTask) error {
	return d.write(ctx, func(tx conn) error {
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM queues WHERE name = ?`, t.Source).Scan(&id); err == sql.ErrNoRows {
			return drivers.Errorf(drivers.KindNotFound, "queue %q does not exist", t.Source)
		} else if err != nil {
			return err
		}
		var running int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM move_tasks
			WHERE queue_id = ? AND status IN ('RUNNING', 'CANCELLING')`, id).Scan(&running); err != nil {
			return err
		}
		if running > 0 {
			return drivers.Errorf(drivers.KindFailedPrecondition, "a move task is already running on %s", t.Source)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM move_tasks WHERE seq IN (
			SELECT seq FROM move_tasks WHERE queue_id = ? AND status NOT IN ('RUNNING', 'CANCELLING')
			ORDER BY seq DESC LIMIT -1 OFFSET ?)`,
			id, drivers.MoveTasksKept); err != nil {
			return err
		}
		var rate sql.NullInt32
		if t.Rate != nil {
			rate = sql.NullInt32{Int32: *t.Rate, Valid: true}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO move_tasks (handle, queue_id, destination, rate, started,
			to_move, status, owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.Handle, id, t.Destination, rate, toNanos(t.Started), t.ToMove, t.Status, t.Owner, toNanos(t.LeaseUntil))
		return err
	})
}

// oneTask runs a write statement returning at most one task; none is notFound.
func (d *Driver) oneTask(ctx context.Context, notFound string, query string, args ...any) (drivers.MoveTask, error) {
	var tasks []drivers.MoveTask
	err := d.write(ctx, func(tx conn) error {
		var err error
		tasks, err = scanMoveTasks(tx.QueryContext(ctx, query, args...))
		return err
	})
	if err == nil && len(tasks) == 0 {
		err = drivers.Errorf(drivers.KindNotFound, "%s", notFound)
	}
	if err != nil {
		return drivers.MoveTask{}, err
	}
	return tasks[0], nil
}

// ReportMoveTask records a step of a running task; see drivers.MoveTaskStore. Every SET
// reads the row as it was, so the status tests apply to the old status.
func (d *Driver) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	return d.oneTask(ctx, "no move task "+req.Handle, `UPDATE move_tasks SET
		status = CASE WHEN owner <> ?2 THEN status
			WHEN status = 'RUNNING' THEN ?3
			WHEN status = 'CANCELLING' THEN 'CANCELLED'
			ELSE status END,
		failure = CASE WHEN status = 'RUNNING' AND owner = ?2 THEN ?4 ELSE failure END,
		lease_until = CASE WHEN status = 'RUNNING' AND owner = ?2 THEN ?5 ELSE lease_until END
		WHERE handle = ?1 RETURNING `+moveTaskReturning,
		req.Handle, req.Owner, req.Status, req.Failure, toNanos(req.LeaseUntil))
}

// CancelMoveTask marks a running task cancelling; see drivers.MoveTaskStore.
func (d *Driver) CancelMoveTask(ctx context.Context, handle string) (drivers.MoveTask, error) {
	return d.oneTask(ctx, "no running move task "+handle, `UPDATE move_tasks SET status = 'CANCELLING'
		WHERE handle = ? AND status = 'RUNNING' RETURNING `+moveTaskReturning, handle)
}

// ListMoveTasks returns a queue's latest tasks; see drivers.MoveTaskStore.
func (d *Driver) ListMoveTasks(ctx context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	var tasks []drivers.MoveTask
	err := d.read(ctx, func(q queryer) error {
		var err error
		tasks, err = scanMoveTasks(q.QueryContext(ctx, `SELECT `+moveTaskReturning+` FROM move_tasks
			WHERE queue_id = (SELECT id FROM queues WHERE name = ?) ORDER BY seq DESC LIMIT ?`, source, limit))
		return err
	})
	return tasks, err
}

// AdoptMoveTasks takes over running tasks whose lease lapsed, and finishes cancelling
// ones whose runner stopped; see drivers.MoveTaskStore.
func (d *Driver) AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]drivers.MoveTask, error) {
	var tasks []drivers.MoveTask
	err := d.write(ctx, func(tx conn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE move_tasks SET status = 'CANCELLED'
			WHERE status = 'CANCELLING' AND lease_until < ?`, toNanos(now)); err != nil {
			return err
		}
		var err error
		tasks, err = scanMoveTasks(tx.QueryContext(ctx, `UPDATE move_tasks SET owner = ?, lease_until = ?
			WHERE status = 'RUNNING' AND lease_until < ? RETURNING `+moveTaskReturning,
			owner, toNanos(leaseUntil), toNanos(now)))
		return err
	})
	return tasks, err
}
