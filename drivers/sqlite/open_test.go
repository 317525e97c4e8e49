package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

func TestRegistryOptions(t *testing.T) {
	ctx := context.Background()
	d, err := drivers.Open(ctx, "sqlite", map[string]any{"data_dir": t.TempDir(), "busy_timeout_ms": 1000})
	if err != nil {
		t.Fatalf("Open through the registry: %v", err)
	}
	desc, err := d.Describe(ctx)
	if err != nil || desc.Name != "sqlite" || desc.ServiceVersion == "" || !strings.HasPrefix(desc.ServiceVersion, "3.") {
		t.Fatalf("Describe: %+v, %v; want name sqlite and a SQLite 3 version", desc, err)
	}
	d.Close()
	if _, err := drivers.Open(ctx, "sqlite", map[string]any{"data_dir": t.TempDir(), "datadir": "x"}); err == nil || !strings.Contains(err.Error(), "datadir") {
		t.Fatalf("unknown option: error %v, want one naming the key", err)
	}
	if _, err := drivers.Open(ctx, "sqlite", map[string]any{}); err == nil || !strings.Contains(err.Error(), "data_dir") {
		t.Fatalf("missing data_dir: error %v, want one naming data_dir", err)
	}
}

// TestDurabilitySettings checks, on the file the driver created, the settings its
// durability promise rests on.
func TestDurabilitySettings(t *testing.T) {
	dir := t.TempDir()
	d := openT(t, dir)
	defer d.Close()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "anysqs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q, %v; want wal", mode, err)
	}
	var version string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil || version != "3" {
		t.Fatalf("schema_version %q, %v; want 3", version, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	openT(t, dir).Close()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "anysqs.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	d, err := sqlite.Open(context.Background(), sqlite.Options{DataDir: dir})
	if err == nil {
		d.Close()
		t.Fatal("Open accepted a database with schema version 99")
	}
	if drivers.KindOf(err) != drivers.KindFailedPrecondition {
		t.Fatalf("Open: %v, want KindFailedPrecondition", err)
	}
}

// TestMigrateFromVersion1 opens a database left at schema version 1 and checks it is
// brought to the current version with its messages intact.
func TestMigrateFromVersion1(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d := openT(t, dir)
	now := time.Unix(1_800_000_000, 0)
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: drivertest.StandardAttributes()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now, Entries: []drivers.SendEntry{{EntryID: "a", MessageID: "m", Body: "kept"}}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "anysqs.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`ALTER TABLE messages DROP COLUMN received_at`,
		`CREATE INDEX messages_group ON messages(queue_id, group_id, seq)`,
		`UPDATE meta SET value = '1' WHERE key = 'schema_version'`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	d = openT(t, dir)
	defer d.Close()
	res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 1, VisibilityTimeout: 30})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Body != "kept" {
		t.Fatalf("receive after migration: %+v, %v", res, err)
	}
}
