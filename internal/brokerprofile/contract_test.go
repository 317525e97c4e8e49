package brokerprofile_test

import (
	"context"
	"sync"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/internal/brokerprofile"
)

// TestDriverContract runs the driver contract suite on the profile. Its clock is the
// service's, so cases wait in real time; they run in parallel to overlap the waits.
// There is no NewDriverOnSameStorage hook: SQLite serves one process per directory.
func TestDriverContract(t *testing.T) {
	var mu sync.Mutex
	dirs := map[drivers.Driver]string{}
	open := func(t *testing.T, dir string) drivers.Driver {
		d, err := brokerprofile.Open(context.Background(), dir)
		if err != nil {
			t.Fatalf("Open %s: %v", dir, err)
		}
		mu.Lock()
		dirs[d] = dir
		mu.Unlock()
		return d
	}
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: func(t *testing.T) drivers.Driver { return open(t, t.TempDir()) },
		Reopen: func(t *testing.T, old drivers.Driver) drivers.Driver {
			mu.Lock()
			dir := dirs[old]
			mu.Unlock()
			if err := old.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, dir)
		},
		Parallel: true,
	})
}
