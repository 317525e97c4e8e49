package sqlite

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// AwaitActivity is unsupported (drivers.ActivityLocal): one process owns the database,
// so the gateway already sees every write.
func (d *Driver) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	return drivers.AwaitActivityResult{}, drivers.Errorf(drivers.KindUnsupported, "sqlite: one gateway owns the database; there is no other instance's activity to await")
}

// WatchActivity is unsupported (drivers.ActivityLocal), as AwaitActivity is.
func (d *Driver) WatchActivity(ctx context.Context, req drivers.WatchActivityRequest) error {
	return drivers.Errorf(drivers.KindUnsupported, "sqlite: one gateway owns the database; there is no other instance's activity to watch")
}
