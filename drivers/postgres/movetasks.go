package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/anysqs/anysqs/drivers"
)

// Message move tasks live in move_tasks (schema version 4), so that every gateway on the
// schema sees and cancels them and one adopts a task whose runner stopped
// (drivers.MoveTaskStore). A task belongs to its source queue's id: deleting the queue
// deletes its tasks, and a queue created again under the name starts with none.

const moveTaskCols = `m.handle, q.name, m.destination, m.rate, m.started, m.to_move, m.moved,
	m.status, m.failure, m.owner, m.lease_until`

func scanMoveTask(r pgx.CollectableRow) (drivers.MoveTask, error) {
	var t drivers.MoveTask
	err := r.Scan(&t.Handle, &t.Source, &t.Destination, &t.Rate, &t.Started, &t.ToMove, &t.Moved,
		&t.Status, &t.Failure, &t.Owner, &t.LeaseUntil)
	return t, err
}

// queryMoveTasks runs sql, whose rows are move_tasks m joined to queues q.
func (d *Driver) queryMoveTasks(ctx context.Context, what, sql string, args ...any) ([]drivers.MoveTask, error) {
	rows, err := d.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, mapErr(ctx, err, what)
	}
	tasks, err := pgx.CollectRows(rows, scanMoveTask)
	return tasks, mapErr(ctx, err, what)
}

// startMoveTaskSQL inserts the task and, in the same statement, forgets the source's
// finished tasks but the latest drivers.MoveTasksKept ones.
const startMoveTaskSQL = `
WITH q AS (SELECT id FROM queues WHERE name = $2),
pruned AS (
	DELETE FROM move_tasks WHERE seq IN (
		SELECT seq FROM move_tasks WHERE queue_id = (SELECT id FROM q)
			AND status NOT IN ('RUNNING', 'CANCELLING')
		ORDER BY seq DESC OFFSET $10)
)
INSERT INTO move_tasks (handle, queue_id, destination, rate, started, to_move, status, owner, lease_until)
SELECT $1, q.id, $3, $4, $5, $6, $7, $8, $9 FROM q`

// StartMoveTask records a running task; see drivers.MoveTaskStore.
func (d *Driver) StartMoveTask(ctx context.Context, t drivers.MoveTask) error {
	tag, err := d.pool.Exec(ctx, startMoveTaskSQL, t.Handle, t.Source, t.Destination, t.Rate, t.Started,
		t.ToMove, t.Status, t.Owner, t.LeaseUntil, drivers.MoveTasksKept)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "move_tasks_one_running" {
		return drivers.Errorf(drivers.KindFailedPrecondition, "a move task is already running on %s", t.Source)
	}
	if err != nil {
		return mapErr(ctx, err, "start move task")
	}
	if tag.RowsAffected() == 0 {
		return notFound(t.Source)
	}
	return nil
}

// ReportMoveTask records a step of a running task; see drivers.MoveTaskStore. Every SET
// reads the row as it was, so the status tests apply to the old status.
func (d *Driver) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	tasks, err := d.queryMoveTasks(ctx, "report move task", `
WITH m AS (
	UPDATE move_tasks SET
		status = CASE WHEN owner <> $2 THEN status
			WHEN status = 'RUNNING' THEN $3
			WHEN status = 'CANCELLING' THEN 'CANCELLED'
			ELSE status END,
		failure = CASE WHEN status = 'RUNNING' AND owner = $2 THEN $4 ELSE failure END,
		lease_until = CASE WHEN status = 'RUNNING' AND owner = $2 THEN $5 ELSE lease_until END
	WHERE handle = $1
	RETURNING *
)
SELECT `+moveTaskCols+` FROM m JOIN queues q ON q.id = m.queue_id`,
		req.Handle, req.Owner, req.Status, req.Failure, req.LeaseUntil)
	if err == nil && len(tasks) == 0 {
		err = drivers.Errorf(drivers.KindNotFound, "no move task %s", req.Handle)
	}
	if err != nil {
		return drivers.MoveTask{}, err
	}
	return tasks[0], nil
}

// CancelMoveTask marks a running task cancelling; see drivers.MoveTaskStore.
func (d *Driver) CancelMoveTask(ctx context.Context, handle string) (drivers.MoveTask, error) {
	tasks, err := d.queryMoveTasks(ctx, "cancel move task", `
WITH m AS (
	UPDATE move_tasks SET status = 'CANCELLING' WHERE handle = $1 AND status = 'RUNNING' RETURNING *
)
SELECT `+moveTaskCols+` FROM m JOIN queues q ON q.id = m.queue_id`, handle)
	if err == nil && len(tasks) == 0 {
		err = drivers.Errorf(drivers.KindNotFound, "no running move task %s", handle)
	}
	if err != nil {
		return drivers.MoveTask{}, err
	}
	return tasks[0], nil
}

// ListMoveTasks returns a queue's latest tasks; see drivers.MoveTaskStore.
func (d *Driver) ListMoveTasks(ctx context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	return d.queryMoveTasks(ctx, "list move tasks", `
SELECT `+moveTaskCols+` FROM queues q JOIN move_tasks m ON m.queue_id = q.id
WHERE q.name = $1 ORDER BY m.seq DESC LIMIT $2`, source, limit)
}

// AdoptMoveTasks takes over running tasks whose lease lapsed, and finishes cancelling
// ones whose runner stopped; see drivers.MoveTaskStore. SKIP LOCKED: two gateways
// looking at once adopt different tasks, or one adopts them.
func (d *Driver) AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]drivers.MoveTask, error) {
	return d.queryMoveTasks(ctx, "adopt move tasks", `
WITH lapsed AS (
	SELECT seq FROM move_tasks WHERE status IN ('RUNNING', 'CANCELLING') AND lease_until < $2
	FOR UPDATE SKIP LOCKED
), m AS (
	UPDATE move_tasks t SET owner = $1, lease_until = $3,
		status = CASE WHEN t.status = 'CANCELLING' THEN 'CANCELLED' ELSE t.status END
	FROM lapsed WHERE t.seq = lapsed.seq
	RETURNING t.*
)
SELECT `+moveTaskCols+` FROM m JOIN queues q ON q.id = m.queue_id WHERE m.status = 'RUNNING'`, owner, now, leaseUntil)
}
