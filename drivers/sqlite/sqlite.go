package sqlite

import (
	"context"
	"database/sql"
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
	// One process owns the database (drivers.ActivityLocal), so the gateway already sees
	// every write: there is no other instance's activity to await or watch.
	drivers.NoActivity

	// wconn is the one writer connection. SQLite serialises writers anyway; queueing them
	// on sem instead of in SQLite's busy handler keeps SQLITE_BUSY away from clients and
	// lets each wait honour its context.
	wdb   *sql.DB
	wconn *sql.Conn
	sem   chan struct{}
	// stmts caches statements prepared on wconn (parsing SQL costs more than running
	// these small statements); used only while holding sem.
	stmts map[string]*sql.Stmt
	// queues caches queue rows for message operations (see conn.queueRow); used only
	// while holding sem.
	queues map[string]queueRow
	// fair is each standard queue's recent processing time (fair.go), under fairMu:
	// deletes write it, receives and QueueStats (on the reader pool) read it.
	fairMu sync.Mutex
	fair   map[int64]*fairTime
	// pending are writes waiting for the next transaction (see write).
	pmu     sync.Mutex
	pending []*writeReq
	// rdb serves read-only queries from connections of their own (WAL readers do not
	// block the writer). Nil in memory mode, where every connection would get its own
	// database, so reads go through wconn too.
	rdb     *sql.DB
	readers *readers // rdb's prepared statements
	secret  []byte   // receipt handle MAC key, stored in the database so handles survive restarts
	memory  bool
	lock    *os.File // held while open: one process per data directory
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
	d := &Driver{NoActivity: drivers.NoActivity{Name: "sqlite", Why: "one gateway owns the database; there is no other instance's activity"},
		memory: o.DataDir == MemoryDataDir, sem: make(chan struct{}, 1), stmts: map[string]*sql.Stmt{}, queues: map[string]queueRow{},
		fair: map[int64]*fairTime{}}
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
		d.rdb.SetMaxIdleConns(4) // database/sql keeps 2 by default: concurrent reads would reopen the others
		d.readers = &readers{db: d.rdb, stmts: map[string]*sql.Stmt{}}
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
// temp_store=MEMORY keeps the statement journal of the group commit's savepoints in
// memory: on file it grows past SQLite's spill size within a group and then costs a
// write(2) per page and per page number. It only undoes a savepoint; a crash is
// recovered from the WAL, as before.
func dsnParams(busyMS int, wal bool) string {
	v := url.Values{}
	v.Set("_busy_timeout", strconv.Itoa(busyMS))
	v.Set("_txlock", "immediate")
	v.Set("_foreign_keys", "1")
	v.Set("_pragma", "temp_store(memory)")
	if wal {
		v.Set("_journal_mode", "WAL")
		v.Set("_synchronous", "FULL")
	}
	return v.Encode()
}

// Close closes the database.
func (d *Driver) Close() error {
	var err error
	if d.rdb != nil {
		d.readers.close()
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
