package conformance_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

const defaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func postgresDSN() string {
	if dsn := os.Getenv("ANYSQS_TEST_POSTGRES_DSN"); dsn != "" {
		return dsn
	}
	return defaultPostgresDSN
}

var postgresReachable = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, postgresDSN())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
})

// preparePostgres runs each case in a schema of its own on the test server, dropped
// afterwards: cases never see each other's queues, and one case's retention sweep (its
// clock may be days ahead) cannot touch another's messages.
func preparePostgres(t *testing.T) storage {
	schema := postgresCaseSchema(t)
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return postgres.Open(ctx, postgres.Options{DSN: postgresDSN(), Schema: schema, MaxConns: 4})
	}}
}

// preparePostgresPgBouncer is preparePostgres with the driver's connections going
// through PgBouncer in session pooling (scripts/test-env.sh starts one and exports
// ANYSQS_TEST_PGBOUNCER_SESSION_DSN); the schema is made and dropped on the server.
func preparePostgresPgBouncer(t *testing.T) storage {
	dsn := os.Getenv("ANYSQS_TEST_PGBOUNCER_SESSION_DSN")
	if dsn == "" {
		skipUnavailable(t, "PgBouncer in session pooling (ANYSQS_TEST_PGBOUNCER_SESSION_DSN; scripts/test-env.sh starts one)")
	}
	schema := postgresCaseSchema(t)
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return postgres.Open(ctx, postgres.Options{DSN: dsn, Schema: schema, MaxConns: 4})
	}}
}

// postgresCaseSchema names a fresh schema for one case, dropped when t ends; it skips t
// when the server is not reachable.
func postgresCaseSchema(t *testing.T) string {
	if err := postgresReachable(); err != nil {
		skipUnavailable(t, "PostgreSQL at %s (scripts/services/postgres.sh start): %v", postgresDSN(), err)
	}
	schema := "anysqs_conf_" + randomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, postgresDSN())
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
