package cosmos_test

import (
	"sync"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestDriverContract runs the driver contract suite against the local emulator, one
// container per case. A second driver on the same container is a second gateway.
func TestDriverContract(t *testing.T) {
	runContract(t, emulatorTarget(t))
}

// TestAccountContract runs the same suite against a real Cosmos DB account:
//
//	AZURE_COSMOS_ENDPOINT=https://<account>.documents.azure.com:443/ AZURE_COSMOS_KEY=<key> \
//	  go test -count=1 -run TestAccountContract ./drivers/cosmos/
//
// It creates a 400 RU/s container per case in database anysqs-contract (or
// AZURE_COSMOS_DATABASE) and deletes it afterwards.
func TestAccountContract(t *testing.T) {
	runContract(t, accountTarget(t))
}

func runContract(t *testing.T, tg target) {
	var mu sync.Mutex
	stores := map[drivers.Driver]*storage{}
	open := func(t *testing.T, s *storage) drivers.Driver {
		d := s.open(t)
		mu.Lock()
		stores[d] = s
		mu.Unlock()
		return d
	}
	storeOf := func(d drivers.Driver) *storage {
		mu.Lock()
		defer mu.Unlock()
		return stores[d]
	}
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: func(t *testing.T) drivers.Driver { return open(t, newStorage(t, tg)) },
		Reopen: func(t *testing.T, d drivers.Driver) drivers.Driver {
			s := storeOf(d)
			_ = d.Close()
			return open(t, s)
		},
		NewDriverOnSameStorage: func(t *testing.T, d drivers.Driver) drivers.Driver { return open(t, storeOf(d)) },
	})
}
