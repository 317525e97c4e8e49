package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestPasswordFile runs the driver as a role that must give a password (SCRAM), taken
// from password_file. The password is then rotated: in the server and in the file, and
// the driver's connections are cut, as a managed service's token expiry or a failover
// would. Its new connections, the LISTEN one included, must use the new password.
func TestPasswordFile(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, c.dsnFor("postgres", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{
		`CREATE DATABASE anysqs`,
		`SET password_encryption = 'scram-sha-256'`,
		`CREATE ROLE app LOGIN PASSWORD 'first-secret'`,
		`GRANT CONNECT, CREATE ON DATABASE anysqs TO app`,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.requirePasswords("app")

	file := filepath.Join(t.TempDir(), "password")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dsn := c.dsnFor("app", "anysqs")
	write("wrong\n")
	if _, err := postgres.Open(ctx, postgres.Options{DSN: dsn, PasswordFile: file}); err == nil ||
		!strings.Contains(err.Error(), "password authentication failed") {
		t.Fatalf("Open with a wrong password: %v", err)
	}
	if _, err := postgres.Open(ctx, postgres.Options{DSN: dsn}); err == nil {
		t.Fatal("Open without a password succeeded: the server does not require one, so this test proves nothing")
	}

	write("first-secret\n")
	d, err := postgres.Open(ctx, postgres.Options{DSN: dsn, PasswordFile: file})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	createQueue(t, d, "q", stdAttrs())
	watch(t, d, "q")

	if _, err := admin.Exec(ctx, `ALTER ROLE app PASSWORD 'second-secret'`); err != nil {
		t.Fatal(err)
	}
	write("second-secret")
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'`); err != nil {
		t.Fatal(err)
	}
	// The pool drops the dead connections on use and opens new ones; the listener
	// reconnects and, having missed what happened meanwhile, reports every queue.
	var sent bool
	for range 20 {
		req := drivers.SendMessagesRequest{Name: "q", Now: epoch, Entries: []drivers.SendEntry{
			{EntryID: "e0", MessageID: "m-rotation-" + hexID(), Body: "after rotation"}}}
		if _, err := d.SendMessages(ctx, req); err == nil {
			sent = true
			break
		} else if drivers.KindOf(err) != drivers.KindUnavailable {
			t.Fatalf("send after rotation: %v", err)
		}
	}
	if !sent {
		t.Fatal("no send succeeded after the rotation")
	}
	awaitQueue(t, d, "q")
	if got := receive(t, d, "q", epoch, 1, 30).Messages; len(got) != 1 {
		t.Fatalf("received %d messages", len(got))
	}
	var listening int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE usename = 'app' AND query LIKE 'LISTEN%'`).Scan(&listening); err != nil {
		t.Fatal(err)
	}
	if listening != 1 {
		t.Fatalf("%d LISTEN connections of the driver after the rotation, want 1", listening)
	}
}
