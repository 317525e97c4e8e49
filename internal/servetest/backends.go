package servetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers/cosmos"
)

// Backends are the names BackendEnv knows, each with its shipped configuration.
var Backends = map[string]string{
	"sqlite":     "embedded",
	"postgres":   "postgres",
	"spanner":    "spanner",
	"firestore":  "firestore",
	"cosmos":     "cosmos",
	"servicebus": "servicebus",
	"plugin":     "plugin",
}

// CosmosEmulatorKey is the Cosmos DB emulator's published well-known key.
const CosmosEmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// BackendEnv returns the environment that points backend's shipped configuration
// (Config(Backends[backend])) at this machine's test service, on fresh storage of its
// own: a SQLite data directory, a PostgreSQL schema, a Spanner database, a Firestore
// emulator project, a Cosmos DB container, a Service Bus model namespace, or for
// "plugin" the served binary itself as the plugin over a SQLite directory. The storage
// is removed when t ends. Gateways started with the same environment share the storage.
// A missing service skips t (fails it under CI=true).
func BackendEnv(t testing.TB, backend string) []string {
	t.Helper()
	var opts map[string]any
	var env []string
	switch backend {
	case "sqlite":
		opts = map[string]any{"data_dir": t.TempDir()}
	case "postgres":
		dsn := os.Getenv("ANYSQS_TEST_POSTGRES_DSN")
		if dsn == "" {
			Unavailable(t, "PostgreSQL: ANYSQS_TEST_POSTGRES_DSN is not set (eval \"$(scripts/test-env.sh)\")")
		}
		opts = map[string]any{"dsn": dsn, "schema": postgresSchema(t, dsn)}
	case "spanner":
		if os.Getenv("SPANNER_EMULATOR_HOST") == "" {
			Unavailable(t, "the Spanner emulator: SPANNER_EMULATOR_HOST is not set (scripts/services/spanner.sh start)")
		}
		db := "s" + randomHex(8)
		t.Cleanup(func() { dropSpannerDatabase(t, "anysqs-local", "anysqs", db) })
		// The shipped project and instance; the driver creates both on an emulator.
		opts = map[string]any{"database": db}
	case "firestore":
		addr := os.Getenv("FIRESTORE_EMULATOR_HOST")
		if addr == "" {
			Unavailable(t, "the Firestore emulator: FIRESTORE_EMULATOR_HOST is not set (scripts/services/firestore.sh start)")
		}
		reachable(t, "the Firestore emulator", addr)
		project := "anysqs-srv-" + randomHex(6)
		t.Cleanup(func() { emptyFirestoreProject(t, addr, project) })
		opts = map[string]any{"project": project, "emulator_host": addr}
	case "cosmos":
		o := cosmosOptions(t)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := cosmos.DropContainer(ctx, o); err != nil {
				t.Logf("drop Cosmos container %s: %v", o.Container, err)
			}
		})
		opts = map[string]any{"endpoint": o.Endpoint, "database": o.Database, "container": o.Container,
			"create_container": true, "insecure_skip_verify": true,
			"query_reads": o.QueryReads, "batch_partition_keys": o.BatchPartitionKeys}
		env = append(env, "ANYSQS_COSMOS_KEY="+o.Key)
	case "servicebus":
		// The in-repo model of the broker, held in the gateway process.
		opts = map[string]any{"connection_string": nil, "model": "srv-" + randomHex(6)}
	case "plugin":
		opts = map[string]any{"path": Binary(t), "checksum": BinaryChecksum(t),
			"config": map[string]any{"data_dir": t.TempDir()}}
	default:
		t.Fatalf("servetest: no backend %q", backend)
	}
	b, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	return append(env, "ANYSQS_BACKEND_OPTIONS="+string(b))
}

// Side is one backend of a migration as users run it: its shipped configuration and
// the environment that points it at fresh test storage (BackendEnv).
type Side struct {
	Backend string
	Config  string
	Env     []string
}

// NewSide returns backend's Side on fresh storage.
func NewSide(t testing.TB, backend string) Side {
	t.Helper()
	return Side{Backend: backend, Config: Config(Backends[backend]), Env: BackendEnv(t, backend)}
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

// StartBackend starts a gateway from backend's shipped configuration on fresh storage.
// It returns the gateway and the environment, so that a second gateway may share it.
func StartBackend(t testing.TB, backend string, env ...string) (*Gateway, []string) {
	t.Helper()
	env = append(BackendEnv(t, backend), env...)
	return Start(t, Config(Backends[backend]), env...), env
}

func reachable(t testing.TB, what, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		Unavailable(t, "%s at %s: %v", what, addr, err)
	}
	c.Close()
}

func postgresSchema(t testing.TB, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		Unavailable(t, "PostgreSQL at %s: %v", dsn, err)
	}
	conn.Close(ctx)
	schema := "anysqs_srv_" + randomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

func dropSpannerDatabase(t testing.TB, project, instance, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc, err := database.NewDatabaseAdminClient(ctx)
	if err != nil {
		t.Logf("drop Spanner database %s: %v", db, err)
		return
	}
	defer dc.Close()
	err = dc.DropDatabase(ctx, &databasepb.DropDatabaseRequest{
		Database: "projects/" + project + "/instances/" + instance + "/databases/" + db})
	if err != nil {
		t.Logf("drop Spanner database %s: %v", db, err)
	}
}

// emptyFirestoreProject drops an emulator project's documents, so a long-lived emulator
// does not keep every test's data in memory.
func emptyFirestoreProject(t testing.TB, addr, project string) {
	req, err := http.NewRequest(http.MethodDelete, "http://"+addr+"/emulator/v1/projects/"+project+"/databases/(default)/documents", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	if err != nil {
		t.Logf("empty Firestore emulator project %s: %v", project, err)
	}
}

// cosmosOptions are those of scripts/services/cosmos.sh's emulator, on a new container.
func cosmosOptions(t testing.TB) cosmos.Options {
	t.Helper()
	endpoint := os.Getenv("ANYSQS_TEST_COSMOS_ENDPOINT")
	if endpoint == "" {
		Unavailable(t, "the Cosmos DB emulator: ANYSQS_TEST_COSMOS_ENDPOINT is not set (scripts/services/cosmos.sh start)")
	}
	key := os.Getenv("ANYSQS_TEST_COSMOS_KEY")
	if key == "" {
		key = CosmosEmulatorKey
	}
	return cosmos.Options{Endpoint: endpoint, Key: key, Database: "anysqs-served", Container: "c" + randomHex(6),
		CreateContainer: true, InsecureSkipVerify: true,
		QueryReads:         os.Getenv("ANYSQS_TEST_COSMOS_QUERY_READS") == "1",
		BatchPartitionKeys: os.Getenv("ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS") == "1"}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
