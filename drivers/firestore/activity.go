package firestore

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// AwaitActivity is unsupported (drivers.ActivityPoll): the gateway re-checks waiting
// receives at most the poll interval apart instead.
func (d *Driver) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	return drivers.AwaitActivityResult{}, drivers.Errorf(drivers.KindUnsupported, "firestore: long polls re-check the queue every %v; there is no notification to await", d.poll)
}

// WatchActivity is unsupported (drivers.ActivityPoll), as AwaitActivity is.
func (d *Driver) WatchActivity(ctx context.Context, req drivers.WatchActivityRequest) error {
	return drivers.Errorf(drivers.KindUnsupported, "firestore: long polls re-check the queue every %v; there is no notification to watch", d.poll)
}
