package plugin_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/plugin"
	"github.com/anysqs/anysqs/internal/testenv"
)

// TestDriverContract runs the driver contract suite on the SQLite and PostgreSQL drivers
// served as plugins: every call crosses the process boundary.
func TestDriverContract(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dirs := map[drivers.Driver]string{}
		openDir := func(t *testing.T, dir string) drivers.Driver {
			h, err := plugin.Open(context.Background(), options(t, "sqlite", map[string]any{"data_dir": dir}))
			if err != nil {
				t.Fatal(err)
			}
			dirs[h] = dir
			return h
		}
		drivertest.RunConformance(t, drivertest.Harness{
			NewDriver: func(t *testing.T) drivers.Driver { return openDir(t, t.TempDir()) },
			Reopen: func(t *testing.T, old drivers.Driver) drivers.Driver {
				if err := old.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				return openDir(t, dirs[old])
			},
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn, schema := postgresSchema(t)
		open := func(t *testing.T) drivers.Driver {
			h, err := plugin.Open(context.Background(), options(t, "postgres", map[string]any{"dsn": dsn, "schema": schema, "max_conns": 4}))
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		drivertest.RunConformance(t, drivertest.Harness{
			NewDriver: open,
			Reopen: func(t *testing.T, d drivers.Driver) drivers.Driver {
				d.Close()
				return open(t)
			},
			NewDriverOnSameStorage: func(t *testing.T, _ drivers.Driver) drivers.Driver { return open(t) },
		})
	})
}

// postgresSchema returns the test server's DSN and a fresh schema name, the schema
// dropped afterwards; it skips (fails under CI=true) when no server answers.
func postgresSchema(t *testing.T) (dsn, schema string) {
	dsn = testenv.Postgres(t)
	return dsn, testenv.PostgresSchema(t, dsn, "anysqs_plugin_")
}

// TestDescriptionCrosses: the SQLite driver as a plugin describes itself exactly as in
// process, so the gateway's policy, limits and report are the same.
func TestDescriptionCrosses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, err := drivers.Open(ctx, "sqlite", map[string]any{"data_dir": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	want, err := in.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := open(t, options(t, "sqlite", map[string]any{"data_dir": t.TempDir()})).Describe(ctx)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("as a plugin:\n%#v, %v\nin process:\n%#v", got, err, want)
	}
}
