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
	"github.com/anysqs/anysqs/internal/testenv"
)

// emulatorKey is the Cosmos DB emulators' published well-known key.
const emulatorKey = testenv.CosmosEmulatorKey

// target is one account or emulator the tests run against.
type target struct {
	name string
	opts cosmos.Options
}

// emulatorTarget is the emulator scripts/services/cosmos.sh started
// (ANYSQS_TEST_COSMOS_ENDPOINT), or skips; under CI=true a missing one fails.
func emulatorTarget(t *testing.T) target {
	t.Helper()
	e := testenv.CosmosEmulator(t)
	o := cosmos.Options{Endpoint: e.Endpoint, Key: e.Key, InsecureSkipVerify: true, QueryReads: e.QueryReads,
		CreateContainer: true, Database: "anysqs-test", BatchPartitionKeys: e.BatchPartitionKeys}
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
		testenv.Unavailable(t, "the Cosmos DB endpoint %s: %v", o.Endpoint, err)
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
