package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestConcurrentOpen starts several drivers at once on a fresh database: the migration
// runs once, and all of them work.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	var wg sync.WaitGroup
	ds := make([]*postgres.Driver, 6)
	errs := make([]error, len(ds))
	for i := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds[i], errs[i] = postgres.Open(context.Background(), postgres.Options{DSN: dsn})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer ds[i].Close()
	}
	createQueue(t, ds[0], "q", stdAttrs())
	send(t, ds[1], "q", epoch, drivers.SendEntry{Body: "x"})
	got := receive(t, ds[2], "q", epoch, 1, 30).Messages
	if len(got) != 1 {
		t.Fatalf("received %v", bodies(got))
	}
	// The drivers opened together agreed on one receipt key: a handle one issued deletes
	// through another.
	if res := del(t, ds[3], "q", epoch, got[0].ReceiptHandle); res.Entries[0].Err != nil {
		t.Fatalf("delete through another driver: %v", res.Entries[0].Err)
	}
	if st, err := ds[4].QueueStats(context.Background(), drivers.QueueStatsRequest{Name: "q", Now: epoch}); err != nil || st != (drivers.QueueStats{}) {
		t.Fatalf("after delete %+v %v", st, err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var versions int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM anysqs.schema_version`).Scan(&versions); err != nil || versions != postgres.SchemaVersions {
		t.Fatalf("schema_version rows: %d, %v; want %d", versions, err, postgres.SchemaVersions)
	}
}

func TestRegistryOptions(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	ctx := context.Background()
	if _, err := drivers.Open(ctx, "postgres", map[string]any{"dsn": dsn, "colour": "blue"}); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Fatalf("unknown option: %v, want an error naming it", err)
	}
	d, err := drivers.Open(ctx, "postgres", map[string]any{"dsn": dsn, "schema": "other", "max_conns": 4})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	createQueue(t, d, "q", stdAttrs())
	// A second schema in the same database is a separate namespace.
	d2 := openDriver(t, dsn)
	if _, err := d2.GetQueue(ctx, drivers.GetQueueRequest{Name: "q"}); drivers.KindOf(err) != drivers.KindNotFound {
		t.Fatalf("queue of schema other visible in schema anysqs: %v", err)
	}
	desc, err := d.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := capabilities.Validate(desc.Capabilities); err != nil {
		t.Fatalf("declarations: %v", err)
	}
}

func TestDSNFromEnvironment(t *testing.T) {
	dsn := newDatabase(t)
	t.Setenv(postgres.DSNEnv, dsn)
	d, err := postgres.Open(context.Background(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	createQueue(t, d, "q", stdAttrs())
}

func TestUnreachableIsUnavailable(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback refuses connections at once.
	_, err := postgres.Open(context.Background(), postgres.Options{DSN: "postgres://postgres@127.0.0.1:1/x?connect_timeout=2"})
	if drivers.KindOf(err) != drivers.KindUnavailable {
		t.Fatalf("open against a closed port: %v (kind %v), want Unavailable", err, drivers.KindOf(err))
	}
}

// TestNewerSchema: a driver starts on a schema newer than it knows when that schema's
// newest version says drivers of its version still work there (a rolling upgrade through
// migrations that only add), and refuses, naming the versions, when it does not.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	var known int
	c := connect(t, dsn)
	if err := c.QueryRow(context.Background(), `SELECT max(version) FROM anysqs.schema_version`).Scan(&known); err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	d.Close()

	execSQL(t, dsn, fmt.Sprintf(`INSERT INTO anysqs.schema_version (version, oldest_driver) VALUES (%d, %d)`, known+1, known))
	d2, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn})
	if err != nil {
		t.Fatalf("a schema one version ahead that admits this driver: %v", err)
	}
	createQueue(t, d2, "still-works", stdAttrs())
	d2.Close()

	execSQL(t, dsn, fmt.Sprintf(`INSERT INTO anysqs.schema_version (version, oldest_driver) VALUES (%d, %d)`, known+2, known+2))
	_, err = postgres.Open(context.Background(), postgres.Options{DSN: dsn})
	if drivers.KindOf(err) != drivers.KindFailedPrecondition || !strings.Contains(err.Error(), "upgrade the gateway") {
		t.Fatalf("a schema that needs a newer driver: %v", err)
	}
}

// A DSN that does not parse is an InvalidArgument that names its option and not its
// password, with or without the tls options (which rewrite the DSN first).
func TestBadDSNHidesPassword(t *testing.T) {
	t.Parallel()
	const bad = "postgres://anysqs:s3cret-pw@127.0.0.1:notaport/anysqs"
	good := "postgres://anysqs@127.0.0.1:1/anysqs"
	tls := map[string]any{"mode": "disable"}
	for _, c := range []struct {
		name    string
		options map[string]any
		want    string
	}{
		{"dsn", map[string]any{"dsn": bad}, "postgres options"},
		{"dsn with tls", map[string]any{"dsn": bad, "tls": tls}, "postgres options"},
		{"listen_dsn", map[string]any{"dsn": good, "listen_dsn": bad}, "listen_dsn"},
		{"listen_dsn with tls", map[string]any{"dsn": good, "listen_dsn": bad, "tls": tls}, "listen_dsn"},
	} {
		_, err := drivers.Open(context.Background(), "postgres", c.options)
		if err == nil || drivers.KindOf(err) != drivers.KindInvalidArgument || !strings.Contains(err.Error(), c.want) ||
			strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v (kind %v); want InvalidArgument naming %q, without the password", c.name, err,
				drivers.KindOf(err), c.want)
		}
	}
}

// A listen_dsn on another database than dsn's would never hear a wake-up: Open says so.
func TestListenDSNOtherDatabaseRefused(t *testing.T) {
	t.Parallel() // it waits out the probe
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: newDatabase(t), ListenDSN: newDatabase(t)})
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded with listen_dsn on another database")
	}
	if drivers.KindOf(err) != drivers.KindUnavailable || !strings.Contains(err.Error(), "does listen_dsn name the same database") {
		t.Fatalf("Open: %v (kind %v); want an Unavailable error asking whether listen_dsn names the same database",
			err, drivers.KindOf(err))
	}
}
