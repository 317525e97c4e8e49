package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
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
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil || version != "10" {
		t.Fatalf("schema_version %q, %v; want 10", version, err)
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

func TestDataDirHeldByOneDriver(t *testing.T) {
	dir := t.TempDir()
	d := openT(t, dir)
	if second, err := sqlite.Open(context.Background(), sqlite.Options{DataDir: dir}); err == nil {
		second.Close()
		t.Fatal("a second driver opened a data_dir that is in use")
	} else if !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Open: %v, want an error saying the data_dir is in use", err)
	}
	d.Close()
	openT(t, dir).Close() // free again after Close
}
