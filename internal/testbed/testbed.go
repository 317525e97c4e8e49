// Package testbed is the table of backends every suite iterates: the drivertest
// harnesses' services, the conformance rows (in process, served and through the plugin
// boundary), the real-client, system, migrate and deployment tests. A backend is one
// row here: its name, its shipped configuration, the script that starts its service,
// whether the lite build has it, and how a test gets storage of its own on this
// machine's service. Adding a backend adds a row; no other test file names it
// (TestBackendNamesStayInTheirPackages).
package testbed

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/cosmos"
	"github.com/anysqs/anysqs/drivers/servicebus"
	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testenv"

	"github.com/anysqs/anysqs/drivers/firestore"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/drivers/spanner"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

// Backend is one row of the table.
type Backend struct {
	// Name is the driver's registered name, backend.name in a configuration.
	Name string
	// Config is the shipped configuration, configs/<Config>.yaml.
	Config string
	// Service is the script under scripts/services that starts the backend's service for
	// the tests ("" for an embedded backend or an in-process model).
	Service string
	// Lite says the lite build (-tags anysqs_lite) has the backend.
	Lite bool
	// Shared says several gateways may share one storage (TestKillGatewayUnderLoad).
	Shared bool
	// Emulated says the tests' service is an emulator, slower than the service itself:
	// load tests put fewer messages through it.
	Emulated bool
	// InProcessServed says a served gateway keeps the backend's storage in its own
	// process (an in-repo model), so a restart of the process empties it.
	InProcessServed bool
	// SecretEnv is the environment variable the driver reads its secret from when its
	// options leave SecretOption out (deployments set it from a Secret).
	SecretEnv, SecretOption string
	// Plugin says the conformance suite also runs the backend as an out-of-process
	// plugin (anysqs driver serve NAME).
	Plugin bool
	// Options returns a pointer to the driver's options struct, for checking a
	// configuration's backend.options with drivers.DecodeOptions.
	Options func() any
	// Storage returns the backend options of storage of the test's own on this machine's
	// service, removed when t ends, or calls testenv.Unavailable. Opened in process with
	// drivers.Open(ctx, Name, options).
	Storage func(t testing.TB) map[string]any
	// Served returns the options merged over the shipped configuration's (through
	// ANYSQS_BACKEND_OPTIONS) for a served gateway on storage of the test's own, and any
	// other environment it needs.
	Served func(t testing.TB) (options map[string]any, env []string)
	// Target names what verdicts are obtained against, from the service version the
	// driver reports: "PostgreSQL 15.2 local server".
	Target func(serviceVersion string) string
}

// Open opens the backend's driver in process with options (from Storage).
func (b Backend) Open(ctx context.Context, options map[string]any) (drivers.Driver, error) {
	return drivers.Open(ctx, b.Name, options)
}

// All is the table, in the order reports list backends.
var All = []Backend{
	{Name: "sqlite", Config: "embedded", Lite: true, Plugin: true, Options: func() any { return &sqlite.Options{} },
		Storage: func(t testing.TB) map[string]any { return map[string]any{"data_dir": t.TempDir()} },
		Served: func(t testing.TB) (map[string]any, []string) {
			return map[string]any{"data_dir": t.TempDir()}, nil
		},
		Target: func(v string) string { return "SQLite " + v + " embedded" }},
	{Name: "postgres", Config: "postgres", Service: "postgres", Lite: true, Plugin: true, Shared: true,
		SecretEnv: postgres.DSNEnv, SecretOption: "dsn",
		Options: func() any { return &postgres.Options{} },
		Storage: func(t testing.TB) map[string]any {
			dsn := testenv.Postgres(t)
			return map[string]any{"dsn": dsn, "schema": testenv.PostgresSchema(t, dsn, "anysqs_conf_"), "max_conns": 4}
		},
		Served: func(t testing.TB) (map[string]any, []string) {
			dsn := testenv.Postgres(t)
			return map[string]any{"dsn": dsn, "schema": testenv.PostgresSchema(t, dsn, "anysqs_srv_")}, nil
		},
		Target: func(v string) string { return "PostgreSQL " + v + " local server" }},
	{Name: "spanner", Config: "spanner", Service: "spanner", Shared: true, Emulated: true, Options: func() any { return &spanner.Options{} },
		Storage: func(t testing.TB) map[string]any {
			return map[string]any{"project": "anysqs-conformance", "instance": "anysqs",
				"database": testenv.SpannerDatabase(t, "anysqs-conformance", "anysqs", "c")}
		},
		Served: func(t testing.TB) (map[string]any, []string) {
			// The shipped project and instance; the driver creates both on an emulator.
			return map[string]any{"database": testenv.SpannerDatabase(t, "anysqs-local", "anysqs", "s")}, nil
		},
		Target: func(serviceVersion string) string {
			if os.Getenv("SPANNER_EMULATOR_HOST") == "" {
				return serviceVersion
			}
			return "Cloud Spanner emulator " + version("ANYSQS_TEST_SPANNER_EMULATOR_VERSION") + " (official, google-cloud-cli), local"
		}},
	{Name: "firestore", Config: "firestore", Service: "firestore", Shared: true, Emulated: true, Options: func() any { return &firestore.Options{} },
		Storage: func(t testing.TB) map[string]any {
			addr := testenv.FirestoreEmulator(t)
			return map[string]any{"project": testenv.FirestoreProject(t, addr, "anysqs-conf-")}
		},
		Served: func(t testing.TB) (map[string]any, []string) {
			addr := testenv.FirestoreEmulator(t)
			return map[string]any{"project": testenv.FirestoreProject(t, addr, "anysqs-srv-"), "emulator_host": addr}, nil
		},
		Target: func(string) string {
			return "Cloud Firestore emulator " + version("ANYSQS_FIRESTORE_EMULATOR_VERSION") + " (google-cloud-cli), local"
		}},
	{Name: "cosmos", Config: "cosmos", Service: "cosmos", Shared: true, Emulated: true,
		SecretEnv: "ANYSQS_COSMOS_KEY", SecretOption: "key", Options: func() any { return &cosmos.Options{} },
		Storage: func(t testing.TB) map[string]any { return cosmosStorage(t, "anysqs-conformance") },
		Served: func(t testing.TB) (map[string]any, []string) {
			o := cosmosStorage(t, "anysqs-served")
			served := map[string]any{}
			for _, k := range []string{"endpoint", "database", "container", "create_container", "insecure_skip_verify",
				"query_reads", "batch_partition_keys"} {
				served[k] = o[k]
			}
			return served, []string{"ANYSQS_COSMOS_KEY=" + o["key"].(string)}
		},
		Target: func(host string) string {
			name := os.Getenv("ANYSQS_TEST_COSMOS_TARGET")
			if name == "" {
				name = "Cosmos DB endpoint"
			}
			return name + " at " + host
		}},
	{Name: "servicebus", Config: "servicebus", InProcessServed: true,
		SecretEnv: servicebus.ConnectionStringEnv, SecretOption: "connection_string", Options: func() any { return &servicebus.Options{} },
		Storage: serviceBusStorage,
		Served: func(t testing.TB) (map[string]any, []string) {
			// The in-repo model of the broker, held in the gateway process.
			return map[string]any{"connection_string": nil, "model": "srv-" + testenv.RandomHex(6)}, nil
		},
		Target: func(v string) string {
			if strings.HasPrefix(v, "in-repo model") {
				return "in-repo model of Service Bus (drivers/servicebus, in process): real-broker behaviour unverified"
			}
			return v + " (real namespace)"
		}},
}

// Named returns the row called name.
func Named(name string) (Backend, bool) {
	for _, b := range All {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// Names lists the table's backends in order.
func Names() []string {
	out := make([]string, len(All))
	for i, b := range All {
		out[i] = b.Name
	}
	return out
}

// version is a service version that scripts/services exported in env, or says it is not known.
func version(env string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return "(version unknown)"
}

// cosmosStorage is a container of its own in database on scripts/services/cosmos.sh's
// emulator, deleted when t ends.
func cosmosStorage(t testing.TB, database string) map[string]any {
	e := testenv.CosmosEmulator(t)
	o := cosmos.Options{Endpoint: e.Endpoint, Key: e.Key, Database: database, Container: "c" + testenv.RandomHex(6),
		CreateContainer: true, InsecureSkipVerify: true, QueryReads: e.QueryReads, BatchPartitionKeys: e.BatchPartitionKeys}
	cosmosReachable(t, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cosmos.DropContainer(ctx, o); err != nil {
			t.Logf("drop Cosmos container %s: %v", o.Container, err)
		}
	})
	return optionsOf(t, o)
}

// cosmosReachable calls testenv.Unavailable unless the emulator answers an Open, which
// is tried once per endpoint and process.
func cosmosReachable(t testing.TB, o cosmos.Options) {
	t.Helper()
	v, _ := cosmosUp.LoadOrStore(o.Endpoint, sync.OnceValue(func() error {
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
		testenv.Unavailable(t, "the Cosmos DB emulator (scripts/services/cosmos.sh start): %v", err)
	}
}

var cosmosUp sync.Map // endpoint → func() error, the first Open's outcome

// serviceBusLockSeconds is the lock duration of in-process Service Bus queues: short,
// so that visibility timeouts above it run through lock renewal.
const serviceBusLockSeconds = 10

// serviceBusStorage is a model namespace of the test's own; with
// AZURE_SERVICEBUS_CONNECTION_STRING set, that real namespace instead, the test's
// entities under a prefix of its own, deleted afterwards.
func serviceBusStorage(t testing.TB) map[string]any {
	o := servicebus.Options{Model: "conformance-" + testenv.RandomHex(8), LockDurationSeconds: serviceBusLockSeconds}
	if cs := os.Getenv(servicebus.ConnectionStringEnv); cs != "" {
		o = servicebus.Options{ConnectionString: cs, EntityPrefix: "anysqs-conf-" + testenv.RandomHex(4) + "-", LockDurationSeconds: serviceBusLockSeconds}
		t.Cleanup(func() { deleteServiceBusQueues(t, o) })
	}
	return optionsOf(t, o)
}

// deleteServiceBusQueues deletes what a test left in a real namespace.
func deleteServiceBusQueues(t testing.TB, o servicebus.Options) {
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

// optionsOf turns a driver's Options struct into the backend options map that opens it.
func optionsOf(t testing.TB, o any) map[string]any {
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// PluginServed is the served row of the plugin boundary: the served binary itself as
// the plugin (anysqs driver serve sqlite) over a SQLite directory of the test's own.
func PluginServed(t testing.TB) (map[string]any, []string) {
	return map[string]any{"path": servetest.Binary(t), "checksum": servetest.BinaryChecksum(t),
		"config": map[string]any{"data_dir": t.TempDir()}}, nil
}

// Env returns the environment that points b's shipped configuration at this machine's
// test service, on storage of its own (Served), removed when t ends. Gateways started
// with the same environment share the storage. "plugin" names the plugin boundary's
// served row (PluginServed).
func Env(t testing.TB, backend string) []string {
	t.Helper()
	if backend == Routed {
		return routedEnv(t)
	}
	var opts map[string]any
	var env []string
	if backend == "plugin" {
		opts, env = PluginServed(t)
	} else {
		b, ok := Named(backend)
		if !ok {
			t.Fatalf("backends: no backend %q", backend)
		}
		opts, env = b.Served(t)
	}
	raw, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	return append(env, "ANYSQS_BACKEND_OPTIONS="+string(raw))
}

// Routed names the routed gateway's served row: configs/routed.yaml, its FIFO queues
// on PostgreSQL and the others on SQLite.
const Routed = "routed"

// RoutedTarget names what the routed row's verdicts are obtained against, from the
// version of its default backend (SQLite's).
func RoutedTarget(v string) string {
	sqlite, _ := Named("sqlite")
	return "FIFO queues on PostgreSQL (local server), the others on " + sqlite.Target(v) + ", routed by one gateway"
}

// RoutedService starts what the routed row needs besides the embedded backend.
const RoutedService = "scripts/services/postgres.sh"

// routedEnv points configs/routed.yaml's two backends at storage of the test's own.
func routedEnv(t testing.TB) []string {
	t.Helper()
	sqlite, _ := Named("sqlite")
	postgres, _ := Named("postgres")
	local, env := sqlite.Served(t)
	main, penv := postgres.Served(t)
	raw, err := json.Marshal(map[string]any{"local": local, "main": main})
	if err != nil {
		t.Fatal(err)
	}
	return append(append(env, penv...), "ANYSQS_BACKENDS_OPTIONS="+string(raw))
}

// ConfigOf is the path of backend's shipped configuration ("plugin": configs/plugin.yaml).
func ConfigOf(backend string) string {
	if b, ok := Named(backend); ok {
		return servetest.Config(b.Config)
	}
	return servetest.Config(backend)
}

// Side is one backend of a migration as users run it: its shipped configuration and
// the environment that points it at fresh test storage (Env).
type Side struct {
	Backend string
	Config  string
	Env     []string
}

// NewSide returns backend's Side on fresh storage.
func NewSide(t testing.TB, backend string) Side {
	t.Helper()
	return Side{Backend: backend, Config: ConfigOf(backend), Env: Env(t, backend)}
}

// MigrateEnv returns from's and to's environments as `anysqs migrate` reads them:
// each ANYSQS_X as ANYSQS_FROM_X and ANYSQS_TO_X.
func MigrateEnv(from, to Side) []string {
	var out []string
	for _, side := range []struct {
		prefix string
		env    []string
	}{{"ANYSQS_FROM_", from.Env}, {"ANYSQS_TO_", to.Env}} {
		for _, kv := range side.env {
			out = append(out, side.prefix+strings.TrimPrefix(kv, "ANYSQS_"))
		}
	}
	return out
}

// Start starts a gateway from backend's shipped configuration on fresh storage. It
// returns the gateway and the environment, so that a second gateway may share it.
func Start(t testing.TB, backend string, env ...string) (*servetest.Gateway, []string) {
	t.Helper()
	env = append(Env(t, backend), env...)
	return servetest.Start(t, ConfigOf(backend), env...), env
}
