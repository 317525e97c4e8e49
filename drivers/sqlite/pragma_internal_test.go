package sqlite

import (
	"context"
	"testing"
)

// TestWriterIsDurable checks the writer connection's settings: synchronous is per
// connection, so only the driver's own connection can show it.
func TestWriterIsDurable(t *testing.T) {
	d, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var sync, busy int
	if err := d.wconn.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous %d, %v; want 2 (FULL)", sync, err)
	}
	if err := d.wconn.QueryRowContext(context.Background(), `PRAGMA busy_timeout`).Scan(&busy); err != nil || busy != 5000 {
		t.Fatalf("busy_timeout %d, %v; want 5000", busy, err)
	}
}
