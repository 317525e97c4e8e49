package conformance

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/brokerprofile"
)

// prepareBrokerProfile gives each case a data dir of its own; reopening it is a restart,
// after which the profile's instance-scoped receipts no longer hold.
func prepareBrokerProfile(t *testing.T) storage {
	dir := t.TempDir()
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return brokerprofile.Open(ctx, dir)
	}}
}
