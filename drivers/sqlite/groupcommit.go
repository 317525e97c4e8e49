package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"github.com/anysqs/anysqs/drivers"
)

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
	// The transaction-control statements run prepared, like the writes' own. A write
	// alone in its transaction needs no savepoint: if it fails, the whole transaction
	// is rolled back.
	bg := context.Background()
	tc := conn{d: d, ctx: bg}
	exec := func(q string) error { _, err := tc.ExecContext(bg, q); return err }
	solo := len(batch) == 1
	if err := exec("BEGIN IMMEDIATE"); err != nil {
		failAll(batch, classify(err, "sqlite: begin"))
		return
	}
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err // gave up before its turn: nothing of it runs
			continue
		}
		if !solo {
			if err := exec("SAVEPOINT w"); err != nil {
				d.abort(batch, err)
				return
			}
		}
		if err := runOne(conn{d: d, ctx: context.WithoutCancel(r.ctx)}, r.fn); err != nil {
			r.err = classify(err, "sqlite")
			d.forgetQueues() // the rolled-back write may have read or changed a queue's row
			if solo {
				_ = exec("ROLLBACK") // fails only when SQLite has rolled back already
				return
			}
			// ROLLBACK TO fails when SQLite already rolled back the whole transaction
			// (after an I/O error, for instance): then nothing in the group is applied.
			if err := exec("ROLLBACK TO w"); err != nil {
				d.abort(batch, err)
				return
			}
		}
		if !solo {
			if err := exec("RELEASE w"); err != nil {
				d.abort(batch, err)
				return
			}
		}
	}
	if err := exec("COMMIT"); err != nil {
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
	_, _ = conn{d: d, ctx: context.Background()}.ExecContext(context.Background(), "ROLLBACK")
	d.forgetQueues()
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
		return classify(fn(d.readers), "sqlite")
	}
	if err := d.acquire(ctx); err != nil {
		return err
	}
	defer d.release()
	return classify(fn(conn{d: d, ctx: ctx}), "sqlite")
}

// readers runs read-only queries on the reader pool as prepared statements, prepared
// once per query text and connection (database/sql re-prepares a Stmt on each pool
// connection as needed), since parsing the SQL costs more than running these small
// queries. The set of query texts is fixed by the code; past maxReaderStmts (a query
// built at run time that varies) queries run unprepared.
type readers struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

const maxReaderStmts = 256

func (r *readers) stmt(ctx context.Context, query string) *sql.Stmt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stmts[query]; ok {
		return st
	}
	if len(r.stmts) >= maxReaderStmts {
		return nil
	}
	st, err := r.db.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared call reports the error
	}
	r.stmts[query] = st
	return st
}

func (r *readers) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.db.QueryRowContext(ctx, query, args...)
}

func (r *readers) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.db.QueryContext(ctx, query, args...)
}

func (r *readers) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.stmts {
		_ = st.Close()
	}
}
