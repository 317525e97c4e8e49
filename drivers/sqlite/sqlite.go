package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	sqlitelib "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/anysqs/anysqs/drivers"
)

// Version is this driver's version, reported by Describe.
const Version = "0.1.0"

// schemaVersion is the version migrations bring a database to; Open refuses a newer one.
var schemaVersion = len(migrations) - 1

// MemoryDataDir as Options.DataDir keeps everything in memory (tests only: nothing survives Close).
const MemoryDataDir = ":memory:"

// Options configure the driver. They are decoded from the backend section of the
// gateway's configuration.
type Options struct {
	// DataDir is the directory holding anysqs.db and its WAL; ":memory:" keeps the
	// database in memory.
	DataDir string `json:"data_dir"`
	// BusyTimeoutMS is how long a write waits for another process holding the database
	// before failing with KindUnavailable. Zero means 5000.
	BusyTimeoutMS int `json:"busy_timeout_ms"`
}

// Driver is the SQLite backend. It is safe for concurrent use.
type Driver struct {
	// wconn is the one writer connection. SQLite serialises writers anyway; queueing them
	// on sem instead of in SQLite's busy handler keeps SQLITE_BUSY away from clients and
	// lets each wait honour its context.
	wdb   *sql.DB
	wconn *sql.Conn
	sem   chan struct{}
	// stmts caches statements prepared on wconn (parsing SQL costs more than running
	// these small statements); used only while holding sem.
	stmts map[string]*sql.Stmt
	// pending are writes waiting for the next transaction (see write).
	pmu     sync.Mutex
	pending []*writeReq
	// rdb serves read-only queries from connections of their own (WAL readers do not
	// block the writer). Nil in memory mode, where every connection would get its own
	// database, so reads go through wconn too.
	rdb    *sql.DB
	secret []byte // receipt handle MAC key, stored in the database so handles survive restarts
	memory bool
	lock   *os.File // held while open: one process per data directory
}

func init() {
	drivers.Register("sqlite", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

// Open opens (creating if needed) the database under o.DataDir and migrates its schema.
func Open(ctx context.Context, o Options) (*Driver, error) {
	if o.DataDir == "" {
		return nil, errors.New("sqlite: data_dir is required (a directory, or \":memory:\")")
	}
	busy := o.BusyTimeoutMS
	if busy <= 0 {
		busy = 5000
	}
	d := &Driver{memory: o.DataDir == MemoryDataDir, sem: make(chan struct{}, 1), stmts: map[string]*sql.Stmt{}}
	dsn := "file::memory:?" + dsnParams(busy, false)
	if !d.memory {
		if err := os.MkdirAll(o.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("sqlite: data_dir: %w", err)
		}
		lock, err := lockDataDir(o.DataDir)
		if err != nil {
			return nil, err
		}
		d.lock = lock
		dsn = (&url.URL{Scheme: "file", Opaque: filepath.Join(o.DataDir, "anysqs.db")}).String() + "?" + dsnParams(busy, true)
	}
	var err error
	if d.wdb, err = sql.Open("sqlite", dsn); err != nil {
		d.Close()
		return nil, err
	}
	d.wdb.SetMaxOpenConns(1)
	if d.wconn, err = d.wdb.Conn(ctx); err != nil {
		d.Close()
		return nil, classify(err, "sqlite: open "+o.DataDir)
	}
	if !d.memory {
		if d.rdb, err = sql.Open("sqlite", dsn+"&_query_only=1"); err != nil {
			d.Close()
			return nil, err
		}
		d.rdb.SetMaxOpenConns(4)
	}
	if err := d.migrate(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// dsnParams are the connection settings. WAL lets readers run beside the writer.
// synchronous=FULL makes SQLite fsync the WAL on every commit: NORMAL would survive a
// process crash but may lose the last commits on power loss, and the contract says
// success means durable. _txlock=immediate makes every transaction take the write lock at
// BEGIN (the driver also says BEGIN IMMEDIATE itself), so a read-then-write transaction
// can never fail with SQLITE_BUSY half way when another process shares the file.
func dsnParams(busyMS int, wal bool) string {
	v := url.Values{}
	v.Set("_busy_timeout", strconv.Itoa(busyMS))
	v.Set("_txlock", "immediate")
	v.Set("_foreign_keys", "1")
	if wal {
		v.Set("_journal_mode", "WAL")
		v.Set("_synchronous", "FULL")
	}
	return v.Encode()
}

// migrations[v] takes a database from version v-1 to v. Released steps never change.
var migrations = [][]string{
	0: nil,
	1: {
		// AUTOINCREMENT so that ids of deleted queues and messages are never reused: a stale
		// receipt handle must not name a newer row.
		`CREATE TABLE IF NOT EXISTS queues (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		name TEXT NOT NULL UNIQUE,
		fifo INTEGER NOT NULL,
		attrs TEXT NOT NULL,
		tags TEXT NOT NULL,
		retention_ns INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		last_modified INTEGER NOT NULL,
		last_purge INTEGER,
		next_seq INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE IF NOT EXISTS messages (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
		message_id TEXT NOT NULL,
		body TEXT NOT NULL,
		attrs TEXT NOT NULL,
		sys_attrs TEXT NOT NULL,
		sender_id TEXT NOT NULL,
		sent_at INTEGER NOT NULL,
		enqueued_at INTEGER NOT NULL,
		visible_at INTEGER NOT NULL,
		receive_count INTEGER NOT NULL DEFAULT 0,
		first_received_at INTEGER NOT NULL DEFAULT 0,
		token TEXT,
		group_id TEXT NOT NULL DEFAULT '',
		dedup_id TEXT NOT NULL DEFAULT '',
		seq INTEGER NOT NULL DEFAULT 0,
		dlq_source TEXT NOT NULL DEFAULT '')`,
		`CREATE INDEX IF NOT EXISTS messages_visible ON messages(queue_id, visible_at)`,
		`CREATE INDEX IF NOT EXISTS messages_group ON messages(queue_id, group_id, seq)`,
		`CREATE INDEX IF NOT EXISTS messages_seq ON messages(queue_id, seq)`,
		`CREATE INDEX IF NOT EXISTS messages_enqueued ON messages(queue_id, enqueued_at)`,
		`CREATE TABLE IF NOT EXISTS dedup (
		queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
		scope TEXT NOT NULL,
		dedup_id TEXT NOT NULL,
		message_id TEXT NOT NULL,
		seq INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (queue_id, scope, dedup_id))`,
		`CREATE INDEX IF NOT EXISTS dedup_expiry ON dedup(expires_at)`,
		`CREATE TABLE IF NOT EXISTS receive_attempts (
		queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
		attempt_id TEXT NOT NULL,
		claims TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (queue_id, attempt_id))`,
		`CREATE INDEX IF NOT EXISTS receive_attempts_expiry ON receive_attempts(expires_at)`,
	},
	2: {
		// received_at is the time of the receive that issued the current handle: SQS caps
		// a message's invisibility at 12 hours from it.
		`ALTER TABLE messages ADD COLUMN received_at INTEGER NOT NULL DEFAULT 0`,
		// FIFO receives find blocking groups through messages_visible now.
		`DROP INDEX IF EXISTS messages_group`,
	},
	3: {
		// enqueued_at in the visibility index lets QueueStats count visible, unexpired
		// messages from the index alone.
		`DROP INDEX IF EXISTS messages_visible`,
		`CREATE INDEX messages_visible ON messages(queue_id, visible_at, enqueued_at)`,
	},
	4: {
		// fifo_groups lists each FIFO group with its earliest message, kept by triggers on
		// every insert and delete, so a FIFO receive walks groups in head order instead of
		// every message queued behind a group that is in flight.
		`CREATE TABLE fifo_groups (
			queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
			group_id TEXT NOT NULL,
			head_seq INTEGER NOT NULL,
			PRIMARY KEY (queue_id, group_id))`,
		`CREATE UNIQUE INDEX fifo_groups_head ON fifo_groups(queue_id, head_seq)`,
		`CREATE INDEX messages_group_seq ON messages(queue_id, group_id, seq)`,
		`INSERT INTO fifo_groups(queue_id, group_id, head_seq)
			SELECT queue_id, group_id, MIN(seq) FROM messages WHERE seq > 0 GROUP BY queue_id, group_id`,
		`CREATE TRIGGER fifo_groups_insert AFTER INSERT ON messages WHEN NEW.seq > 0 BEGIN
			INSERT OR IGNORE INTO fifo_groups(queue_id, group_id, head_seq) VALUES (NEW.queue_id, NEW.group_id, NEW.seq);
		END`,
		// head_seq is NOT NULL under a UNIQUE index so that the planner knows heads are
		// distinct and can stream each group's messages in order without sorting.
		`CREATE TRIGGER fifo_groups_delete AFTER DELETE ON messages WHEN OLD.seq > 0 BEGIN
			DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
				AND NOT EXISTS (SELECT 1 FROM messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
			UPDATE fifo_groups SET head_seq = (SELECT MIN(seq) FROM messages
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id)
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND head_seq = OLD.seq;
		END`,
	},
	5: {
		// Partial indexes for the FIFO receive's blocking lookups: claimed messages (which
		// groups are in flight) and, per group, never-claimed ones (where the group's
		// delayed messages start), each read without the other.
		`CREATE INDEX messages_claimed ON messages(queue_id, visible_at, group_id) WHERE token IS NOT NULL`,
		`CREATE INDEX messages_group_unclaimed ON messages(queue_id, group_id, visible_at, seq) WHERE token IS NULL`,
	},
	6: {
		// Message move tasks (movetasks.go), so that they outlive a restart; they go with
		// their queue.
		`CREATE TABLE move_tasks (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			handle TEXT NOT NULL UNIQUE,
			queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
			destination TEXT NOT NULL,
			rate INTEGER,
			started INTEGER NOT NULL,
			to_move INTEGER NOT NULL,
			moved INTEGER NOT NULL DEFAULT 0,
			status TEXT NOT NULL,
			failure TEXT NOT NULL DEFAULT '',
			owner TEXT NOT NULL,
			lease_until INTEGER NOT NULL)`,
		`CREATE UNIQUE INDEX move_tasks_one_running ON move_tasks(queue_id) WHERE status = 'RUNNING'`,
		`CREATE INDEX move_tasks_by_queue ON move_tasks(queue_id, seq)`,
	},
	7: {
		// Names of queues deleted lately, so that one is not re-created within
		// drivers.QueueNameReuseDelay, also across a restart; the sweep forgets them.
		`CREATE TABLE deleted_queues (name TEXT PRIMARY KEY, deleted_at INTEGER NOT NULL)`,
	},
	8: {
		// A cancelled task is CANCELLING until its runner stops, and still counts as the
		// source's one active task.
		`DROP INDEX move_tasks_one_running`,
		`CREATE UNIQUE INDEX move_tasks_one_running ON move_tasks(queue_id) WHERE status IN ('RUNNING', 'CANCELLING')`,
	},
}

func (d *Driver) migrate(ctx context.Context) error {
	return d.write(ctx, func(tx conn) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
			return err
		}
		version := 0
		var v string
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if version, err = strconv.Atoi(v); err != nil {
				return drivers.Errorf(drivers.KindFailedPrecondition, "sqlite: database schema version %q is not a number", v)
			}
		}
		if version > schemaVersion {
			return drivers.Errorf(drivers.KindFailedPrecondition,
				"sqlite: database schema version %d is newer than this driver's %d", version, schemaVersion)
		}
		for next := version + 1; next <= schemaVersion; next++ {
			for _, stmt := range migrations[next] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("schema version %d: %w", next, err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)`,
			strconv.Itoa(schemaVersion)); err != nil {
			return err
		}
		return d.loadSecret(ctx, tx)
	})
}

// loadSecret reads the receipt handle key, creating it in a new database.
func (d *Driver) loadSecret(ctx context.Context, tx conn) error {
	var sec string
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'receipt_secret'`).Scan(&sec)
	if errors.Is(err, sql.ErrNoRows) {
		d.secret = make([]byte, 32)
		if _, err := rand.Read(d.secret); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('receipt_secret', ?)`, hex.EncodeToString(d.secret))
		return err
	}
	if err != nil {
		return err
	}
	d.secret, err = hex.DecodeString(sec)
	return err
}

// Close closes the database.
func (d *Driver) Close() error {
	var err error
	if d.rdb != nil {
		err = d.rdb.Close()
	}
	for _, st := range d.stmts {
		_ = st.Close()
	}
	if d.wconn != nil {
		err = errors.Join(err, d.wconn.Close())
	}
	if d.wdb != nil {
		err = errors.Join(err, d.wdb.Close())
	}
	if d.lock != nil {
		err = errors.Join(err, d.lock.Close()) // closing the file releases the lock
	}
	return err
}

// conn is the writer connection while the caller holds it. Its methods run cached
// prepared statements; in a transaction they are part of it. They use the conn's own
// context, not the one passed in: a write that has started runs to the end even if its
// caller gives up, because SQLite answers an interrupted write by rolling back the
// whole transaction, which holds other callers' writes too.
type conn struct {
	d   *Driver
	ctx context.Context
}

func (c conn) stmt(query string) *sql.Stmt {
	if st, ok := c.d.stmts[query]; ok {
		return st
	}
	st, err := c.d.wconn.PrepareContext(c.ctx, query)
	if err != nil {
		return nil // the unprepared call below reports the error
	}
	c.d.stmts[query] = st
	return st
}

// ExecContext runs a statement that returns no rows.
func (c conn) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.stmt(query); st != nil {
		return st.ExecContext(c.ctx, args...)
	}
	return c.d.wconn.ExecContext(c.ctx, query, args...)
}

// QueryContext runs a query.
func (c conn) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmt(query); st != nil {
		return st.QueryContext(c.ctx, args...)
	}
	return c.d.wconn.QueryContext(c.ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row.
func (c conn) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	if st := c.stmt(query); st != nil {
		return st.QueryRowContext(c.ctx, args...)
	}
	return c.d.wconn.QueryRowContext(c.ctx, query, args...)
}

// acquire takes the writer connection, or gives up when ctx ends.
func (d *Driver) acquire(ctx context.Context) error {
	select {
	case d.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Driver) release() { <-d.sem }

// maxGroup bounds how many queued writes share one transaction.
const maxGroup = 64

// writeReq is one write waiting for a transaction.
type writeReq struct {
	ctx  context.Context
	fn   func(tx conn) error
	err  error
	done chan struct{}
}

// write runs fn in a BEGIN IMMEDIATE transaction on the writer connection and returns
// after COMMIT. Writes that queue up while another transaction runs are committed
// together (group commit: one fsync for all of them), each inside its own SAVEPOINT so
// that one failing leaves the others applied; a caller whose write failed sees nothing
// of it applied. Whoever takes the connection runs every queued write, its own included.
func (d *Driver) write(ctx context.Context, fn func(tx conn) error) error {
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	d.pmu.Lock()
	d.pending = append(d.pending, r)
	d.pmu.Unlock()
	for {
		select {
		case <-r.done:
			return r.err
		case d.sem <- struct{}{}:
			d.runPending()
			d.release()
		case <-ctx.Done():
			if d.withdraw(r) {
				return ctx.Err()
			}
			<-r.done // already taken into a transaction: its outcome is known soon
			return r.err
		}
	}
}

// withdraw removes r from the queue if no transaction has taken it yet.
func (d *Driver) withdraw(r *writeReq) bool {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	for i, p := range d.pending {
		if p == r {
			d.pending = append(d.pending[:i:i], d.pending[i+1:]...)
			return true
		}
	}
	return false
}

// runPending commits the queued writes, up to maxGroup, in one transaction. The caller
// holds the writer connection.
func (d *Driver) runPending() {
	d.pmu.Lock()
	n := min(len(d.pending), maxGroup)
	batch := append([]*writeReq(nil), d.pending[:n]...)
	d.pending = append(d.pending[:0:0], d.pending[n:]...)
	d.pmu.Unlock()
	if len(batch) == 0 {
		return
	}
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	bg := context.Background()
	if _, err := d.wconn.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		failAll(batch, classify(err, "sqlite: begin"))
		return
	}
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err // gave up before its turn: nothing of it runs
			continue
		}
		if _, err := d.wconn.ExecContext(bg, "SAVEPOINT w"); err != nil {
			d.abort(batch, err)
			return
		}
		if err := runOne(conn{d: d, ctx: context.WithoutCancel(r.ctx)}, r.fn); err != nil {
			r.err = classify(err, "sqlite")
			// ROLLBACK TO fails when SQLite already rolled back the whole transaction
			// (after an I/O error, for instance): then nothing in the group is applied.
			if _, rerr := d.wconn.ExecContext(bg, "ROLLBACK TO w"); rerr != nil {
				d.abort(batch, rerr)
				return
			}
		}
		if _, err := d.wconn.ExecContext(bg, "RELEASE w"); err != nil {
			d.abort(batch, err)
			return
		}
	}
	if _, err := d.wconn.ExecContext(bg, "COMMIT"); err != nil {
		d.abort(batch, err)
	}
}

// runOne runs one write, turning a panic into an error so that the connection and the
// other writes of the group are not left behind.
func runOne(c conn, fn func(tx conn) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = drivers.Errorf(drivers.KindInternal, "sqlite: panic in a write: %v", p)
		}
	}()
	return fn(c)
}

// abort rolls the transaction back and fails every write of the group: none of it is
// applied, and the clients may retry.
func (d *Driver) abort(batch []*writeReq, cause error) {
	_, _ = d.wconn.ExecContext(context.Background(), "ROLLBACK")
	failAll(batch, drivers.Wrap(drivers.KindUnavailable, cause, "sqlite: transaction"))
}

// failAll sets err on every write of the group that has no error of its own.
func failAll(batch []*writeReq, err error) {
	for _, r := range batch {
		if r.err == nil {
			r.err = err
		}
	}
}

// read runs fn with a read-only view: the reader pool on disk, the writer connection in
// memory mode.
func (d *Driver) read(ctx context.Context, fn func(q queryer) error) error {
	if d.rdb != nil {
		return classify(fn(d.rdb), "sqlite")
	}
	if err := d.acquire(ctx); err != nil {
		return err
	}
	defer d.release()
	return classify(fn(conn{d: d, ctx: ctx}), "sqlite")
}

// classify wraps a native error once with a kind; driver errors and context errors pass.
func classify(err error, msg string) error {
	var de *drivers.Error
	if errors.As(err, &de) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlitelib.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_READONLY:
			return drivers.Wrap(drivers.KindUnavailable, err, msg)
		}
	}
	return drivers.Wrap(drivers.KindInternal, err, msg)
}

var _ drivers.Driver = (*Driver)(nil)
