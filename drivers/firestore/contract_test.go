package firestore_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestDriverContract runs the driver contract suite on the Firestore emulator. Each case
// gets collections of its own (a fresh prefix); Reopen and the second instance open the
// same prefix, as a restarted or second gateway would.
func TestDriverContract(t *testing.T) {
	emulator(t)
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: func(t *testing.T) drivers.Driver { return openDriver(t, testOptions(t)) },
		Reopen: func(t *testing.T, d drivers.Driver) drivers.Driver {
			o := sameStorage(t, d)
			d.Close()
			return openDriver(t, o)
		},
		NewDriverOnSameStorage: func(t *testing.T, d drivers.Driver) drivers.Driver { return openDriver(t, sameStorage(t, d)) },
		Parallel:               true,
	})
}
