package migrate_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testbed"
)

// openSide opens a migration side's storage in this process.
func openSide(t *testing.T, s testbed.Side) drivers.Driver {
	t.Helper()
	return openWithEnv(t, s.Backend, s.Env).Driver
}
