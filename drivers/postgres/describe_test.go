package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Describe warns when the server will not autovacuum the driver's tables: with
// track_counts off for the database (a setting a superuser may make per database), and
// with autovacuum off for the whole server, which only some servers have.
func TestDescribeWarnsWithoutAutovacuum(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, adminDSN())
	if err != nil {
		t.Skipf("PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	var serverAutovacuum bool
	if err := admin.QueryRow(ctx, `SELECT current_setting('autovacuum')::bool`).Scan(&serverAutovacuum); err != nil {
		t.Fatal(err)
	}
	warned := func(dsn string) bool {
		d := openDriver(t, dsn)
		desc, err := d.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range desc.Warnings {
			if strings.Contains(w, "autovacuum is off") {
				return true
			}
		}
		return false
	}
	if got := warned(newDatabase(t)); got != !serverAutovacuum {
		t.Errorf("server autovacuum %v: warned %v", serverAutovacuum, got)
	}
	dsn := newDatabase(t)
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{dbName(t, dsn)}.Sanitize()+" SET track_counts = off"); err != nil {
		t.Fatal(err)
	}
	if !warned(dsn) {
		t.Error("track_counts off: no warning")
	}
}
