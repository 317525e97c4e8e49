package conformance_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/servicebus"
)

// serviceBusLockSeconds is the lock duration of the case queues: short, so that
// visibility timeouts above it run through lock renewal.
const serviceBusLockSeconds = 10

// prepareServiceBus gives each case a model namespace of its own; reopening it is a
// restart, after which the driver's instance-scoped receipts no longer hold. With
// AZURE_SERVICEBUS_CONNECTION_STRING set, the case runs against that real namespace
// instead, its entities under a prefix of its own, deleted afterwards.
func prepareServiceBus(t *testing.T) storage {
	o := servicebus.Options{Model: "conformance-" + randomHex(8), LockDurationSeconds: serviceBusLockSeconds}
	if cs := os.Getenv(servicebus.ConnectionStringEnv); cs != "" {
		o = servicebus.Options{ConnectionString: cs, EntityPrefix: "anysqs-conf-" + randomHex(4) + "-", LockDurationSeconds: serviceBusLockSeconds}
		t.Cleanup(func() { deleteServiceBusQueues(t, o) })
	}
	return storage{open: func(ctx context.Context) (drivers.Driver, error) { return servicebus.Open(ctx, o) }}
}

// deleteServiceBusQueues deletes what a case left in a real namespace.
func deleteServiceBusQueues(t *testing.T, o servicebus.Options) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := servicebus.Open(ctx, o)
	if err != nil {
		t.Logf("clean up %s*: %v", o.EntityPrefix, err)
		return
	}
	defer d.Close()
	res, err := d.ListQueues(ctx, drivers.ListQueuesRequest{})
	if err != nil {
		t.Logf("clean up %s*: %v", o.EntityPrefix, err)
		return
	}
	for _, q := range res.Queues {
		if err := d.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: q.Name, Now: time.Now()}); err != nil {
			t.Logf("clean up %s%s: %v", o.EntityPrefix, q.Name, err)
		}
	}
}

// serviceBusTarget names what the verdicts were obtained against: the in-repo model
// unless a real namespace was named.
func serviceBusTarget(v string) string {
	if strings.HasPrefix(v, "in-repo model") {
		return "in-repo model of Service Bus (drivers/servicebus, in process): real-broker behaviour unverified"
	}
	return v + " (real namespace)"
}
