package conformance_test

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

// prepareSQLite gives each case a data dir of its own, so restarts reopen the same files.
func prepareSQLite(t *testing.T) storage {
	dir := t.TempDir()
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return sqlite.Open(ctx, sqlite.Options{DataDir: dir})
	}}
}
