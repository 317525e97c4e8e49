package sqlite_test

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

func openT(t *testing.T, dir string) *sqlite.Driver {
	t.Helper()
	d, err := sqlite.Open(context.Background(), sqlite.Options{DataDir: dir})
	if err != nil {
		t.Fatalf("Open %s: %v", dir, err)
	}
	return d
}

// TestDriverContract runs the driver contract suite on both stores. (Not TestConformance:
// `make test` skips that name, which is the gateway suite run through the report generator.)
func TestDriverContract(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		drivertest.RunConformance(t, drivertest.Harness{
			NewDriver: func(t *testing.T) drivers.Driver { return openT(t, sqlite.MemoryDataDir) },
		})
	})
	t.Run("file", func(t *testing.T) {
		dirs := map[drivers.Driver]string{}
		drivertest.RunConformance(t, drivertest.Harness{
			NewDriver: func(t *testing.T) drivers.Driver {
				dir := t.TempDir()
				d := openT(t, dir)
				dirs[d] = dir
				return d
			},
			Reopen: func(t *testing.T, old drivers.Driver) drivers.Driver {
				dir := dirs[old]
				if err := old.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				d := openT(t, dir)
				dirs[d] = dir
				return d
			},
		})
	})
}
