package cosmos

import (
	"context"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// AwaitActivity is unsupported (drivers.ActivityPoll): Cosmos has no notification a
// waiting receive could block on short of the change feed, so the gateway re-checks.
func (d *Driver) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	return drivers.AwaitActivityResult{}, drivers.Errorf(drivers.KindUnsupported, "cosmos: no activity notification; the gateway polls")
}

// WatchActivity is unsupported, as AwaitActivity is.
func (d *Driver) WatchActivity(ctx context.Context, req drivers.WatchActivityRequest) error {
	return drivers.Errorf(drivers.KindUnsupported, "cosmos: no activity notification; the gateway polls")
}

func noTaskStore() error {
	return drivers.Errorf(drivers.KindUnsupported, "cosmos: move tasks are kept by the gateway")
}

// StartMoveTask is unsupported: the gateway keeps move tasks in its own memory.
func (d *Driver) StartMoveTask(ctx context.Context, t drivers.MoveTask) error { return noTaskStore() }

// ReportMoveTask is unsupported; see StartMoveTask.
func (d *Driver) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	return drivers.MoveTask{}, noTaskStore()
}

// CancelMoveTask is unsupported; see StartMoveTask.
func (d *Driver) CancelMoveTask(ctx context.Context, handle string) (drivers.MoveTask, error) {
	return drivers.MoveTask{}, noTaskStore()
}

// ListMoveTasks is unsupported; see StartMoveTask.
func (d *Driver) ListMoveTasks(ctx context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	return nil, noTaskStore()
}

// AdoptMoveTasks is unsupported; see StartMoveTask.
func (d *Driver) AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]drivers.MoveTask, error) {
	return nil, noTaskStore()
}
