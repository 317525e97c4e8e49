package conformance_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/cosmos"
	"github.com/anysqs/anysqs/internal/servetest"
)

// cosmosOptions are the emulator's (scripts/services/cosmos.sh): @vercel/cosmosdb-server,
// which answers 500 for a missing item (hence query reads) and takes a batch's partition
// key per operation (hence batch partition keys): the options its served config sets.
func cosmosOptions() cosmos.Options {
	key := os.Getenv("ANYSQS_TEST_COSMOS_KEY")
	if key == "" {
		key = servetest.CosmosEmulatorKey
	}
	return cosmos.Options{Endpoint: os.Getenv("ANYSQS_TEST_COSMOS_ENDPOINT"), Key: key, Database: "anysqs-conformance",
		CreateContainer: true, QueryReads: os.Getenv("ANYSQS_TEST_COSMOS_QUERY_READS") == "1",
		InsecureSkipVerify: true, BatchPartitionKeys: os.Getenv("ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS") == "1"}
}

var cosmosReachable = sync.OnceValue(func() error {
	o := cosmosOptions()
	if o.Endpoint == "" {
		return errNoCosmos
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o.Container = "reach"
	d, err := cosmos.Open(ctx, o)
	if err != nil {
		return err
	}
	return d.Close()
})

type noCosmos struct{}

func (noCosmos) Error() string { return "ANYSQS_TEST_COSMOS_ENDPOINT is not set" }

var errNoCosmos error = noCosmos{}

// prepareCosmos gives each case a container of its own, deleted afterwards; reopening
// the driver on it is a restart, or a second gateway.
func prepareCosmos(t *testing.T) storage {
	if err := cosmosReachable(); err != nil {
		skipUnavailable(t, "Cosmos DB emulator (scripts/services/cosmos.sh start): %v", err)
	}
	o := cosmosOptions()
	o.Container = "c" + randomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cosmos.DropContainer(ctx, o); err != nil {
			t.Logf("drop container %s: %v", o.Container, err)
		}
	})
	return storage{open: func(ctx context.Context) (drivers.Driver, error) { return cosmos.Open(ctx, o) }}
}

// cosmosTarget names what the row's verdicts are obtained against: the emulator the
// service script started says which it is (ANYSQS_TEST_COSMOS_TARGET).
func cosmosTarget(host string) string {
	name := os.Getenv("ANYSQS_TEST_COSMOS_TARGET")
	if name == "" {
		name = "Cosmos DB endpoint"
	}
	return name + " at " + host
}
