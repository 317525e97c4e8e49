package cosmos_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/cosmos"
)

// emulatorKey is the Cosmos DB emulator's published well-known key; the local
// emulators accept it (or any key).
const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// target is one account or emulator the tests run against.
type target struct {
	name string
	opts cosmos.Options
}

// emulatorTarget is the emulator scripts/services/cosmos.sh started
// (ANYSQS_TEST_COSMOS_ENDPOINT), or skips; under CI=true a missing one fails.
func emulatorTarget(t *testing.T) target {
	t.Helper()
	ep := os.Getenv("ANYSQS_TEST_COSMOS_ENDPOINT")
	if ep == "" {
		unavailable(t, "ANYSQS_TEST_COSMOS_ENDPOINT is not set (eval \"$(scripts/services/cosmos.sh start)\")")
	}
	key := os.Getenv("ANYSQS_TEST_COSMOS_KEY")
	if key == "" {
		key = emulatorKey
	}
	o := cosmos.Options{Endpoint: ep, Key: key, InsecureSkipVerify: true, QueryReads: os.Getenv("ANYSQS_TEST_COSMOS_QUERY_READS") == "1",
		CreateContainer: true, Database: "anysqs-test", BatchPartitionKeys: os.Getenv("ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS") == "1"}
	reachable(t, o)
	return target{name: "emulator", opts: o}
}

// accountTarget is a real account (AZURE_COSMOS_ENDPOINT, AZURE_COSMOS_KEY), or skips.
func accountTarget(t *testing.T) target {
	t.Helper()
	ep, key := os.Getenv("AZURE_COSMOS_ENDPOINT"), os.Getenv("AZURE_COSMOS_KEY")
	if ep == "" || key == "" {
		t.Skip("not run: AZURE_COSMOS_ENDPOINT and AZURE_COSMOS_KEY name no real account here")
	}
	db := os.Getenv("AZURE_COSMOS_DATABASE")
	if db == "" {
		db = "anysqs-contract"
	}
	return target{name: "account", opts: cosmos.Options{Endpoint: ep, Key: key, Database: db, CreateContainer: true, Throughput: 400}}
}

func unavailable(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal("service not available here: " + msg + " (CI=true: not skipping)")
	}
	t.Skip("service not available here: " + msg)
}

var reachOnce sync.Map

func reachable(t *testing.T, o cosmos.Options) {
	t.Helper()
	v, _ := reachOnce.LoadOrStore(o.Endpoint, sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		o.Container = "reach"
		d, err := cosmos.Open(ctx, o)
		if err != nil {
			return err
		}
		return d.Close()
	}))
	if err := v.(func() error)(); err != nil {
		unavailable(t, "Cosmos endpoint "+o.Endpoint+": "+err.Error())
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// storage opens drivers on one fresh container of tg, deleted when t ends.
type storage struct {
	opts cosmos.Options
}

func newStorage(t *testing.T, tg target) *storage {
	t.Helper()
	o := tg.opts
	o.Container = "t" + randomHex(6)
	s := &storage{opts: o}
	t.Cleanup(func() { dropContainer(t, o) })
	return s
}

func (s *storage) open(t *testing.T) *cosmos.Driver {
	t.Helper()
	d, err := cosmos.Open(context.Background(), s.opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// dropContainer deletes a test container with a client of its own.
func dropContainer(t *testing.T, o cosmos.Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cosmos.DropContainer(ctx, o); err != nil {
		t.Logf("drop container %s: %v", o.Container, err)
	}
}

var _ drivers.Driver = (*cosmos.Driver)(nil)
