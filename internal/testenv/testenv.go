// Package testenv is the test environment every suite shares: the rule for a service
// that is not on this machine, where each test service is, and fresh storage on it.
//
// The rule: a test that needs a service this machine does not have skips, saying what
// is missing and which script starts it; under CI=true, where scripts/test-env.sh has
// started every service, it fails instead. Services are found through the variables
// scripts/test-env.sh exports (eval "$(scripts/test-env.sh)").
//
// testenv imports no driver package, so that a driver's own tests can use it; the table
// of backends, which opens them, is internal/testbed.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	"github.com/jackc/pgx/v5"
)

// UnderCI says whether the tests run under CI=true, where every service must be there.
func UnderCI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips t because something it needs is not on this machine, or fails it
// under CI=true.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := "service not available here: " + fmt.Sprintf(format, args...)
	if UnderCI() {
		t.Fatal(msg + " (CI=true: not skipping)")
	}
	t.Skip(msg)
}

// Reachable calls Unavailable unless a TCP connection to addr succeeds.
func Reachable(t testing.TB, what, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		Unavailable(t, "%s at %s: %v", what, addr, err)
	}
	c.Close()
}

// RandomHex returns n random bytes in hex, for names of fresh storage.
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// DefaultPostgresDSN is the test server when $ANYSQS_TEST_POSTGRES_DSN is not set.
const DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresDSN is the DSN of the PostgreSQL test server: $ANYSQS_TEST_POSTGRES_DSN, or
// DefaultPostgresDSN. It does not check that the server answers; Postgres does.
func PostgresDSN() string {
	if dsn := os.Getenv("ANYSQS_TEST_POSTGRES_DSN"); dsn != "" {
		return dsn
	}
	return DefaultPostgresDSN
}

var postgresUp sync.Map // DSN → error of the first connection attempt

// Postgres returns the test server's DSN, calling Unavailable when it does not answer.
func Postgres(t testing.TB) string {
	t.Helper()
	dsn := PostgresDSN()
	RequirePostgres(t, dsn)
	return dsn
}

// RequirePostgres calls Unavailable unless the server at dsn answers. The answer is
// kept for the process.
func RequirePostgres(t testing.TB, dsn string) {
	t.Helper()
	v, ok := postgresUp.Load(dsn)
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		v, _ = postgresUp.LoadOrStore(dsn, err)
	}
	if err, _ := v.(error); err != nil {
		Unavailable(t, "PostgreSQL at %s (scripts/services/postgres.sh start): %v", dsn, err)
	}
}

// PostgresSchema names a fresh schema (prefix and random hex) on the server at dsn,
// dropped when t ends. The driver creates it.
func PostgresSchema(t testing.TB, dsn, prefix string) string {
	t.Helper()
	RequirePostgres(t, dsn)
	schema := prefix + RandomHex(6)
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

// SpannerEmulator calls Unavailable unless $SPANNER_EMULATOR_HOST names an emulator
// that answers, and returns its address.
func SpannerEmulator(t testing.TB) string {
	t.Helper()
	return emulator(t, "the Spanner emulator", "SPANNER_EMULATOR_HOST", "spanner")
}

// FirestoreEmulator calls Unavailable unless $FIRESTORE_EMULATOR_HOST names an emulator
// that answers, and returns its address.
func FirestoreEmulator(t testing.TB) string {
	t.Helper()
	return emulator(t, "the Firestore emulator", "FIRESTORE_EMULATOR_HOST", "firestore")
}

// emulator returns the address in env of what, which scripts/services/<script>.sh
// starts, calling Unavailable unless it is set and answers.
func emulator(t testing.TB, what, env, script string) string {
	t.Helper()
	addr := os.Getenv(env)
	if addr == "" {
		Unavailable(t, "%s: %s is not set (scripts/services/%s.sh start)", what, env, script)
	}
	Reachable(t, what+" (scripts/services/"+script+".sh start)", addr)
	return addr
}

// FirestoreProject names a fresh project on the Firestore emulator at addr, whose
// documents are dropped when t ends: the emulator keeps one database per project, and
// its transaction locks are per database, so tests neither see nor wait for each other.
func FirestoreProject(t testing.TB, addr, prefix string) string {
	project := prefix + RandomHex(6)
	t.Cleanup(func() {
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
	})
	return project
}

// CosmosEmulatorKey is the Cosmos DB emulator's published well-known key.
const CosmosEmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Cosmos is the Cosmos DB emulator the tests use, and the driver variant they run:
// $ANYSQS_TEST_COSMOS_QUERY_READS=1 and $ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS=1 select
// the driver options of the same names.
type Cosmos struct {
	Endpoint, Key                  string
	QueryReads, BatchPartitionKeys bool
}

// CosmosEmulator calls Unavailable unless $ANYSQS_TEST_COSMOS_ENDPOINT names an
// emulator, and returns it, with $ANYSQS_TEST_COSMOS_KEY or the emulators' well-known key.
func CosmosEmulator(t testing.TB) Cosmos {
	t.Helper()
	c := Cosmos{Endpoint: os.Getenv("ANYSQS_TEST_COSMOS_ENDPOINT"), Key: os.Getenv("ANYSQS_TEST_COSMOS_KEY"),
		QueryReads:         os.Getenv("ANYSQS_TEST_COSMOS_QUERY_READS") == "1",
		BatchPartitionKeys: os.Getenv("ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS") == "1"}
	if c.Endpoint == "" {
		Unavailable(t, "the Cosmos DB emulator: ANYSQS_TEST_COSMOS_ENDPOINT is not set (scripts/services/cosmos.sh start)")
	}
	if c.Key == "" {
		c.Key = CosmosEmulatorKey
	}
	return c
}

// SpannerDatabase names a fresh database (prefix and random hex) in project and
// instance on the Spanner emulator, calling Unavailable when there is none; the driver
// creates the database on first Open (and the instance, on an emulator). It is dropped
// when t ends. Creating one takes a few milliseconds there.
func SpannerDatabase(t testing.TB, project, instance, prefix string) string {
	t.Helper()
	SpannerEmulator(t)
	db := prefix + RandomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		dc, err := database.NewDatabaseAdminClient(ctx)
		if err == nil {
			defer dc.Close()
			err = dc.DropDatabase(ctx, &databasepb.DropDatabaseRequest{
				Database: "projects/" + project + "/instances/" + instance + "/databases/" + db})
		}
		if err != nil {
			t.Logf("drop Spanner database %s: %v", db, err)
		}
	})
	return db
}

// AWSCLI returns the AWS CLI the tests speak the Query protocol with: $ANYSQS_TEST_AWSCLI,
// or Debian's /usr/bin/aws (scripts/test-env.sh installs it), calling Unavailable when
// it is not there.
func AWSCLI(t testing.TB) string {
	t.Helper()
	cli := os.Getenv("ANYSQS_TEST_AWSCLI")
	if cli == "" {
		cli = "/usr/bin/aws"
	}
	if _, err := os.Stat(cli); err != nil {
		Unavailable(t, "the AWS CLI %s (scripts/test-env.sh installs it): %v", cli, err)
	}
	return cli
}
