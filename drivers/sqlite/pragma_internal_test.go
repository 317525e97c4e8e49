package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// TestWriterIsDurable checks the writer connection's settings: synchronous is per
// connection, so only the driver's own connection can show it.
func TestWriterIsDurable(t *testing.T) {
	d, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var sync, busy, temp int
	if err := d.wconn.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous %d, %v; want 2 (FULL)", sync, err)
	}
	if err := d.wconn.QueryRowContext(context.Background(), `PRAGMA temp_store`).Scan(&temp); err != nil || temp != 2 {
		t.Fatalf("temp_store %d, %v; want 2 (MEMORY): the savepoints' statement journal on file costs a write(2) per page", temp, err)
	}
	if err := d.wconn.QueryRowContext(context.Background(), `PRAGMA busy_timeout`).Scan(&busy); err != nil || busy != 5000 {
		t.Fatalf("busy_timeout %d, %v; want 5000", busy, err)
	}
}

// TestMigrateFromVersion1 builds a database at schema version 1 with a FIFO message in
// it and checks that Open brings it to the current version with the message receivable.
func TestMigrateFromVersion1(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "anysqs.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	stmts := append([]string{`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`}, migrations[1]...)
	stmts = append(stmts,
		`INSERT INTO meta(key, value) VALUES ('schema_version', '1')`,
		`INSERT INTO queues(name, fifo, attrs, tags, retention_ns, created_at, last_modified, next_seq)
			VALUES ('q.fifo', 1, '{"FifoQueue":true,"MessageRetentionPeriod":345600}', '{}', 345600000000000, 0, 0, 1)`,
		fmt.Sprintf(`INSERT INTO messages(queue_id, message_id, body, attrs, sys_attrs, sender_id, sent_at, enqueued_at,
			visible_at, group_id, dedup_id, seq) VALUES (1, 'm1', 'old', '{}', '{}', '', %[1]d, %[1]d, %[1]d, 'g', 'd1', 1)`, now.UnixNano()))
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()

	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("Open a version 1 database: %v", err)
	}
	defer d.Close()
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q.fifo", Now: now, Entries: []drivers.SendEntry{
		{EntryID: "e", MessageID: "m2", Body: "new", MessageGroupID: "g", MessageDeduplicationID: "d2"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q.fifo", Now: now, MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 || res.Messages[0].Body != "old" || res.Messages[1].Body != "new" || res.Messages[1].SequenceNumber != sqsrule.SequenceNumber(2) {
		t.Fatalf("after migration: %+v, want old then new (sequence 2)", res.Messages)
	}
}

// TestDeleteInFlightUsesRowIDs: the batched delete must find its rows by id, not scan the
// queue's in-flight index, whatever the planner's statistics say.
func TestDeleteInFlightUsesRowIDs(t *testing.T) {
	d, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	args := []any{1, 0}
	for i := range 10 {
		args = append(args, i)
	}
	for i := range 10 {
		args = append(args, i, "t")
	}
	rows, err := d.wconn.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+deleteInFlightSQL.text(10), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if len(plan) != 1 || !strings.Contains(plan[0], "INTEGER PRIMARY KEY") {
		t.Fatalf("plan of the batched delete: %q, want one search by INTEGER PRIMARY KEY", plan)
	}
}
