package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/internal/testenv"
)

// adminDSN is the server the tests use (testenv.PostgresDSN).
func adminDSN() string { return testenv.PostgresDSN() }

// requireServer skips when no PostgreSQL is reachable, except under CI where that fails.
func requireServer(t testing.TB) {
	t.Helper()
	testenv.RequirePostgres(t, adminDSN())
}

// newDatabase creates an empty database, dropped when the test ends, and returns its DSN.
func newDatabase(t testing.TB) string {
	t.Helper()
	return newDatabaseWith(t, "")
}

// newDatabaseWith is newDatabase with options for CREATE DATABASE (a collation, say).
func newDatabaseWith(t testing.TB, options string) string {
	t.Helper()
	requireServer(t)
	ctx := context.Background()
	var b [6]byte
	rand.Read(b[:])
	name := "anysqs_test_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, adminDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" "+options); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, adminDSN())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return dsnFor(t, adminDSN(), name)
}

func dsnFor(t testing.TB, dsn, db string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "postgres", Host: cfg.Host + ":" + itoa(int(cfg.Port)), Path: "/" + db,
		RawQuery: "sslmode=disable"}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	return u.String()
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// openDriver opens the driver on dsn and closes it when the test ends.
func openDriver(t testing.TB, dsn string) *postgres.Driver {
	t.Helper()
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// newDriver opens the driver on a fresh database.
func newDriver(t testing.TB) *postgres.Driver {
	return openDriver(t, newDatabase(t))
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func stdAttrs() drivers.QueueAttributes {
	return drivers.QueueAttributes{MaximumMessageSize: 262144, MessageRetentionPeriod: 345600, VisibilityTimeout: 30}
}

func fifoAttrs() drivers.QueueAttributes {
	a := stdAttrs()
	a.FifoQueue = true
	a.DeduplicationScope = "queue"
	a.FifoThroughputLimit = "perQueue"
	return a
}

func createQueue(t testing.TB, d drivers.Driver, name string, a drivers.QueueAttributes) {
	t.Helper()
	_, err := d.CreateQueue(context.Background(), drivers.CreateQueueRequest{Queue: drivers.Queue{
		Name: name, Attributes: a, CreatedAt: epoch, LastModified: epoch}})
	if err != nil {
		t.Fatal(err)
	}
}

var msgSeq int

func send(t testing.TB, d drivers.Driver, queue string, now time.Time, entries ...drivers.SendEntry) drivers.SendMessagesResult {
	t.Helper()
	for i := range entries {
		if entries[i].MessageID == "" {
			msgSeq++
			entries[i].MessageID = "m-" + itoa(msgSeq) + "-" + hexID()
		}
		if entries[i].EntryID == "" {
			entries[i].EntryID = "e" + itoa(i)
		}
	}
	res, err := d.SendMessages(context.Background(), drivers.SendMessagesRequest{Name: queue, Now: now, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Entries {
		if e.Err != nil {
			t.Fatal(e.Err)
		}
	}
	return res
}

func hexID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func receive(t testing.TB, d drivers.Driver, queue string, now time.Time, max int, vt int32) drivers.ReceiveMessagesResult {
	t.Helper()
	res, err := d.ReceiveMessages(context.Background(), drivers.ReceiveMessagesRequest{Name: queue, Now: now,
		MaxMessages: max, VisibilityTimeout: vt})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func del(t testing.TB, d drivers.Driver, queue string, now time.Time, handles ...string) drivers.BatchResult {
	t.Helper()
	req := drivers.DeleteMessagesRequest{Name: queue, Now: now}
	for i, h := range handles {
		req.Entries = append(req.Entries, drivers.DeleteEntry{EntryID: "d" + itoa(i), ReceiptHandle: h})
	}
	res, err := d.DeleteMessages(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func bodies(ms []drivers.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Body)
	}
	return out
}

// dbName is the database a DSN made by newDatabase names.
func dbName(t testing.TB, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
