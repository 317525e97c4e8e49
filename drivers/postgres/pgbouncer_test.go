package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// throughPgBouncer returns a DSN for a new database on the test server, reached through
// the PgBouncer that scripts/test-env.sh started in front of it in the given pooling mode.
func throughPgBouncer(t *testing.T, mode string) string {
	t.Helper()
	env := "ANYSQS_TEST_PGBOUNCER_" + strings.ToUpper(mode) + "_DSN"
	bouncer := os.Getenv(env)
	if bouncer == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set (eval \"$(scripts/test-env.sh)\")", env)
		}
		t.Skipf("%s is not set (eval \"$(scripts/test-env.sh)\" starts PgBouncer)", env)
	}
	return dsnFor(t, bouncer, dbName(t, newDatabase(t)))
}

// Session pooling pins a server connection to each client connection, so the driver
// works through it unchanged: the driver contract suite and cross-instance wake-ups.
func TestThroughPgBouncerSessionPooling(t *testing.T) {
	t.Parallel()
	dsn := throughPgBouncer(t, "session")
	t.Run("contract", func(t *testing.T) { runContract(t, dsn) })
	t.Run("await-activity-across-instances", func(t *testing.T) { awaitActivityAcrossInstances(t, dsn) })
}

// Transaction pooling breaks LISTEN, prepared statements and session settings; Open must
// refuse it and say why, rather than start and fail under load or miss wake-ups.
func TestThroughPgBouncerTransactionPoolingRefused(t *testing.T) {
	t.Parallel() // it waits out the probe
	dsn := throughPgBouncer(t, "transaction")
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn})
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded through transaction pooling")
	}
	if drivers.KindOf(err) != drivers.KindUnavailable || !strings.Contains(err.Error(), "transaction-pooling proxy") {
		t.Fatalf("Open: %v (kind %v); want an Unavailable error naming the transaction-pooling proxy", err, drivers.KindOf(err))
	}
}
