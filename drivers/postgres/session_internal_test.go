package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testenv"
)

// The pool's connections get the schema and the plan mode by statement after connecting
// (not as startup parameters, which PgBouncer refuses): every connection must have both.
func TestSessionSettings(t *testing.T) {
	dsn := testenv.Postgres(t)
	cfg, err := poolConfig(Options{DSN: dsn, Schema: "Odd Schema", MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("PostgreSQL at %s: %v", dsn, err)
	}
	// Two connections held at once, so both are checked, not one twice.
	var conns []*pgxpool.Conn
	for range 2 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		conns = append(conns, c)
	}
	for i, c := range conns {
		var path, mode, app string
		if err := c.QueryRow(ctx, `SELECT current_setting('search_path'), current_setting('plan_cache_mode'),
			current_setting('application_name')`).Scan(&path, &mode, &app); err != nil {
			t.Fatal(err)
		}
		if path != `"Odd Schema"` || mode != "force_generic_plan" || app != "anysqs" {
			t.Errorf("connection %d: search_path %s, plan_cache_mode %s, application_name %s", i, path, mode, app)
		}
	}
}

// A prepared statement that exists already or has vanished is what a transaction-pooling
// proxy causes under concurrency: the error says so.
func TestMapErrNamesTransactionPooling(t *testing.T) {
	for _, code := range []string{"42P05", "26000"} {
		err := mapErr(context.Background(), &pgconn.PgError{Code: code, Message: "prepared statement"}, "send to q")
		if !strings.Contains(err.Error(), "transaction-pooling proxy") {
			t.Errorf("%s: %v", code, err)
		}
	}
	if err := mapErr(context.Background(), &pgconn.PgError{Code: "23505"}, "x"); strings.Contains(err.Error(), "pooling") {
		t.Errorf("23505: %v", err)
	}
}

// A refused password is retryable: it may be a rotation not yet in place.
func TestAuthenticationRefusedIsUnavailable(t *testing.T) {
	if k := pgKind("28P01"); k != drivers.KindUnavailable {
		t.Fatalf("28P01: %v", k)
	}
}
