package conformance

import (
	"context"
	"os"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/internal/testenv"
)

// preparePostgresPgBouncer runs each case in a schema of its own, with the driver's
// connections going through PgBouncer in session pooling (scripts/test-env.sh starts one
// and exports ANYSQS_TEST_PGBOUNCER_SESSION_DSN); the schema is made and dropped on the
// server.
func preparePostgresPgBouncer(t *testing.T) storage {
	dsn := os.Getenv("ANYSQS_TEST_PGBOUNCER_SESSION_DSN")
	if dsn == "" {
		testenv.Unavailable(t, "PgBouncer in session pooling (ANYSQS_TEST_PGBOUNCER_SESSION_DSN; scripts/test-env.sh starts one)")
	}
	schema := testenv.PostgresSchema(t, testenv.Postgres(t), "anysqs_conf_")
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return postgres.Open(ctx, postgres.Options{DSN: dsn, Schema: schema, MaxConns: 4})
	}}
}
