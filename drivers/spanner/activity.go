package spanner

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// The driver declares drivers.ActivityPoll: Spanner has no cheap cross-client
// notification (change streams cost a partitioned stream read per gateway and have
// seconds of latency), so waiting receives re-check at most PollInterval apart.

// AwaitActivity is not offered; see above.
func (d *Driver) AwaitActivity(context.Context, drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	return drivers.AwaitActivityResult{}, drivers.Errorf(drivers.KindUnsupported, "spanner: waiting receives poll; there is no activity notification")
}

// WatchActivity is not offered; see above.
func (d *Driver) WatchActivity(context.Context, drivers.WatchActivityRequest) error {
	return drivers.Errorf(drivers.KindUnsupported, "spanner: waiting receives poll; there is no activity notification")
}
