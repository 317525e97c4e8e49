package servicebus_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/servicebus"
)

// testLockSeconds is the lock duration of the model's entities in tests: short, so that
// visibility timeouts above it exercise lock renewal.
const testLockSeconds = 10

// TestDriverContract runs the driver contract suite through the in-repo model of
// Service Bus. Its clock is the service's, so the cases wait in real time, side by side.
// Each case gets a model namespace of its own; a restart and a second gateway open
// another driver on the same namespace.
func TestDriverContract(t *testing.T) {
	var mu sync.Mutex
	names := map[drivers.Driver]string{}
	open := func(t *testing.T, model string) drivers.Driver {
		d, err := servicebus.Open(context.Background(), servicebus.Options{Model: model, LockDurationSeconds: testLockSeconds})
		if err != nil {
			t.Fatalf("Open model %s: %v", model, err)
		}
		mu.Lock()
		names[d] = model
		mu.Unlock()
		return d
	}
	nameOf := func(d drivers.Driver) string {
		mu.Lock()
		defer mu.Unlock()
		return names[d]
	}
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: func(t *testing.T) drivers.Driver { return open(t, newModelName(t)) },
		Reopen: func(t *testing.T, old drivers.Driver) drivers.Driver {
			model := nameOf(old)
			if err := old.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, model)
		},
		NewDriverOnSameStorage: func(t *testing.T, d drivers.Driver) drivers.Driver { return open(t, nameOf(d)) },
		Parallel:               true,
	})
}

func newModelName(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "test-" + hex.EncodeToString(b)
}
