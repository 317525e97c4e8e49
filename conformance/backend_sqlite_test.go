package conformance_test

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

// sqliteBackend is the embedded default: a data dir per case, so restarts reopen the
// same files.
func sqliteBackend() backend {
	return backend{
		name:     "sqlite",
		parallel: true,
		prepare: func(t *testing.T) storage {
			dir := t.TempDir()
			return storage{open: func(ctx context.Context) (drivers.Driver, error) {
				return sqlite.Open(ctx, sqlite.Options{DataDir: dir})
			}}
		},
	}
}
