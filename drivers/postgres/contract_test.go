package postgres_test

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestDriverContract runs the driver contract suite. All cases share one database; the
// suite names its queues uniquely.
func TestDriverContract(t *testing.T) {
	runContract(t, newDatabase(t))
}

func runContract(t *testing.T, dsn string) {
	open := func(t *testing.T) drivers.Driver {
		d, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: open,
		Reopen: func(t *testing.T, d drivers.Driver) drivers.Driver {
			d.Close()
			return open(t)
		},
		// Every driver of the run opens the same database: a second Open is a second
		// gateway instance on the same storage.
		NewDriverOnSameStorage: func(t *testing.T, _ drivers.Driver) drivers.Driver { return open(t) },
	})
}
