package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anysqs/anysqs/drivers"
)

// listener holds one dedicated connection in LISTEN and collects the queue names other
// gateways (and this one) notify. Names accumulate in pending between AwaitActivity
// calls, so a notification that arrives while no call is waiting is not lost. After the
// connection is lost, notifications sent meanwhile are lost with it; to cover that, the
// first AwaitActivity after a reconnection reports every queue.
type listener struct {
	cfg     *pgxpool.Config // connections are made from its ConnConfig, as the pool makes them
	ownDSN  bool            // cfg is listen_dsn's, not the pool's
	channel string
	pool    *pgxpool.Pool

	mu      sync.Mutex
	pending map[string]bool
	all     bool          // report every queue: the connection was lost and re-established
	wake    chan struct{} // closed and replaced when pending becomes non-empty

	cancel context.CancelFunc
	done   chan struct{}
}

// startListener connects and LISTENs before returning, so that every notification
// committed after Open returns is seen.
// ownDSN says that cfg is not the pool's (listen_dsn).
func startListener(ctx context.Context, cfg *pgxpool.Config, ownDSN bool, channel string, pool *pgxpool.Pool) (*listener, error) {
	l := &listener{cfg: cfg, ownDSN: ownDSN, channel: channel, pool: pool, pending: map[string]bool{},
		wake: make(chan struct{}), done: make(chan struct{})}
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, err
	}
	err = l.probe(ctx, conn)
	if err == nil && ownDSN {
		err = l.probePool(ctx, conn)
	}
	if err != nil {
		closeListening(conn)
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(runCtx, conn)
	return l, nil
}

// probeTimeout bounds how long Open waits for its own notification to come back.
const probeTimeout = 5 * time.Second

// probe sends a notification through the pool and waits for conn to receive it. Behind a
// transaction-pooling proxy (PgBouncer's pool_mode=transaction) the LISTEN binds a server
// connection only for its own transaction, so notifications never arrive and long polls
// would silently miss other gateways' sends; the proxy's other breakages (prepared
// statements, session settings) show only under concurrency. Failing Open says so at once.
// Notifications from other gateways that arrive first are kept, not dropped.
func (l *listener) probe(ctx context.Context, conn *pgx.Conn) error {
	token := probeToken()
	if _, err := l.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, l.channel, token); err != nil {
		return mapErr(ctx, err, "listen: probe")
	}
	wait, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(wait)
		if err != nil {
			if ctx.Err() == nil && wait.Err() != nil {
				if l.ownDSN {
					return drivers.Errorf(drivers.KindUnavailable, "listen: a notification sent through the pool did "+
						"not reach the LISTEN connection (listen_dsn) within %s: does listen_dsn name the same "+
						"database as dsn, directly or through session pooling?", probeTimeout)
				}
				return drivers.Errorf(drivers.KindUnavailable, "listen: a notification sent through the pool did not reach "+
					"the LISTEN connection within %s: is a transaction-pooling proxy (such as PgBouncer with "+
					"pool_mode=transaction) between the gateway and PostgreSQL? anysqs needs a direct connection "+
					"or session pooling", probeTimeout)
			}
			return mapErr(ctx, err, "listen: probe")
		}
		if n.Payload == token {
			return nil
		}
		l.add(n.Payload, false)
	}
}

// probeToken is a random notification payload or channel name of 29 bytes, well within
// the 63 of a channel name. ':' is never in a queue name.
func probeToken() string {
	var b [8]byte
	rand.Read(b[:])
	return "anysqs:probe:" + hex.EncodeToString(b[:])
}

// probePool checks that the pool's connections are session-level when the LISTEN
// connection does not share their DSN (listen_dsn): probe cannot tell then, since a
// notification sent through a transaction-pooling proxy does reach a LISTEN made
// elsewhere. A pool connection LISTENs on a channel of its own and conn notifies it;
// behind transaction pooling that LISTEN held a server connection only for its own
// transaction, so nothing arrives. The pool connection UNLISTENs before it goes back.
func (l *listener) probePool(ctx context.Context, conn *pgx.Conn) error {
	pc, err := l.pool.Acquire(ctx)
	if err != nil {
		return mapErr(ctx, err, "listen: probe the pool")
	}
	defer func() {
		unlisten, cancel := context.WithTimeout(context.Background(), unlistenTimeout)
		defer cancel()
		if _, err := pc.Exec(unlisten, "UNLISTEN *"); err != nil {
			pc.Conn().Close(unlisten) // the pool drops it
		}
		pc.Release()
	}()
	channel := probeToken()
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return mapErr(ctx, err, "listen: probe the pool")
	}
	if _, err := conn.Exec(ctx, `SELECT pg_notify($1, '')`, channel); err != nil {
		return mapErr(ctx, err, "listen: probe the pool")
	}
	wait, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for {
		n, err := pc.Conn().WaitForNotification(wait)
		if err != nil {
			if ctx.Err() == nil && wait.Err() != nil {
				return drivers.Errorf(drivers.KindUnavailable, "listen: a notification to a LISTEN made through the "+
					"pool did not arrive within %s: is a transaction-pooling proxy (such as PgBouncer with "+
					"pool_mode=transaction) behind dsn? anysqs needs a direct connection or session pooling, "+
					"whatever listen_dsn is", probeTimeout)
			}
			return mapErr(ctx, err, "listen: probe the pool")
		}
		if n.Channel == channel {
			return nil
		}
	}
}

func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := connect(ctx, l.cfg, l.cfg.ConnConfig)
	if err != nil {
		return nil, mapErr(ctx, err, "listen: connect")
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		closeListening(conn) // the LISTEN may have taken effect before ctx ended
		return nil, mapErr(ctx, err, "listen")
	}
	return conn, nil
}

// run receives notifications until closed, reconnecting with capped backoff.
func (l *listener) run(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for {
		for conn != nil {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				closeListening(conn) // err is ctx's on Close: conn is still up
				conn = nil
				break
			}
			backoff = 100 * time.Millisecond
			l.add(n.Payload, false)
		}
		if ctx.Err() != nil {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
		c, err := l.connect(ctx)
		if err != nil {
			continue
		}
		conn = c
		l.add("", true) // what was sent while disconnected is unknown
	}
}

// unlistenTimeout bounds the UNLISTEN before a LISTEN connection closes, so that a
// connection that no longer answers does not hold up Close.
const unlistenTimeout = time.Second

// closeListening ends conn's LISTEN, then closes it. Through PgBouncer in session pooling
// the server connection outlives conn: PgBouncer resets it with DISCARD ALL for its next
// client, and PgBouncer 1.18 hands it over early when a notification arrives during that
// reset. The next client then reads the reset's reply as the reply to its own first
// statement, every later reply shifted by one ("mismatched param and argument count"
// from another gateway's migration lock; issue 39). After UNLISTEN no notification can
// arrive. A gateway that dies cannot UNLISTEN: listen_dsn keeps its LISTEN off the pooler.
func closeListening(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), unlistenTimeout)
	defer cancel()
	if !conn.IsClosed() {
		_, _ = conn.Exec(ctx, "UNLISTEN *")
	}
	conn.Close(ctx)
}

func (l *listener) add(queue string, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if all {
		l.all = true
	} else {
		l.pending[queue] = true
	}
	select {
	case <-l.wake:
	default:
		close(l.wake)
	}
}

// take returns and clears what has accumulated, and the channel to wait on when nothing has.
func (l *listener) take() (queues []string, all bool, wake chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 && !l.all {
		return nil, false, l.wake
	}
	for q := range l.pending {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	all = l.all
	l.pending, l.all = map[string]bool{}, false
	l.wake = make(chan struct{})
	return queues, all, nil
}

func (l *listener) close() {
	l.cancel()
	<-l.done
}

// AwaitActivity waits for notifications from any gateway on this schema (including this
// one: the gateway ignores wake-ups it does not need) and returns the queues named. It
// returns no error other than the context's: database trouble shows as empty results.
func (d *Driver) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	var res drivers.AwaitActivityResult
	var timer <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		timer = t.C
	} else {
		expired := make(chan time.Time)
		close(expired)
		timer = expired // no timeout: report what is pending without waiting
	}
	for {
		queues, all, wake := d.lis.take()
		if all {
			names, err := d.allQueueNames(ctx)
			if err == nil {
				res.Queues = names
				return res, nil
			}
			// The database blipped again. Errors here would end the gateway's relay for
			// good, so keep the flag, pause briefly and report nothing this time.
			d.lis.add("", true)
			retry := time.NewTimer(time.Second)
			defer retry.Stop()
			select {
			case <-retry.C:
			case <-timer:
			case <-ctx.Done():
				return res, ctx.Err()
			}
			return res, nil
		}
		if wake == nil {
			res.Queues = queues
			return res, nil
		}
		select {
		case <-wake:
		case <-timer:
			return res, nil
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
}

func (d *Driver) allQueueNames(ctx context.Context) ([]string, error) {
	rows, err := d.pool.Query(ctx, `SELECT name FROM queues ORDER BY name`)
	if err != nil {
		return nil, mapErr(ctx, err, "list queues after reconnecting the listener")
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, mapErr(ctx, err, "list queues after reconnecting the listener")
}

// watchSQL records that a long poll on $3 may wait until $4. It first takes the queue's
// watch lock exclusively, which waits for every send in progress to commit: their
// messages are then visible to the receive the gateway makes after this returns. A send
// that starts later takes the lock shared in watched() (schema.go), which waits for this
// transaction, and then sees the row, so it notifies.
const watchSQL = `SELECT pg_advisory_xact_lock($1, $2)`

const watchUpsertSQL = `INSERT INTO watches (queue, until) VALUES ($1, $2)
	ON CONFLICT (queue) DO UPDATE SET until = greatest(watches.until, excluded.until)`

// WatchActivity makes sends to req.Name notify other gateways until req.Until. Sends to
// queues nobody watches skip the NOTIFY: measured on 2 cores at 1,000 API calls/s, the
// NOTIFYs and the listener wake-ups they cause took about a tenth of the gateway's CPU.
func (d *Driver) WatchActivity(ctx context.Context, req drivers.WatchActivityRequest) error {
	b := &pgx.Batch{}
	b.Queue(watchSQL, d.keys.watch, hash32(req.Name))
	b.Queue(watchUpsertSQL, req.Name, req.Until)
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return mapErr(ctx, err, "watch "+req.Name)
	}
	return nil
}

// notifier sends the NOTIFYs of message sends to watched queues after they commit,
// coalesced: one goroutine sends one statement naming every queue written since its
// previous one.
//
// Measured on 2 cores (BenchmarkCycle, batch 1): a NOTIFY inside each send
// transaction cut driver throughput to about a quarter, because PostgreSQL serializes
// the commits of notifying transactions on one database-wide lock, WAL flush included.
// The price of sending after commit: if the gateway dies between a send's commit and
// its NOTIFY, waiting receives on other gateways learn of the message at the end of
// their wait (at most 20 s) instead of at once. Nothing is lost.
type notifier struct {
	pool    *pgxpool.Pool
	channel string

	mu      sync.Mutex
	pending map[string]bool
	kick    chan struct{} // capacity 1: "pending is not empty"

	cancel context.CancelFunc
	done   chan struct{}
}

func startNotifier(pool *pgxpool.Pool, channel string) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{pool: pool, channel: channel, pending: map[string]bool{}, kick: make(chan struct{}, 1),
		cancel: cancel, done: make(chan struct{})}
	go n.run(ctx)
	return n
}

// notify schedules a NOTIFY naming queue.
func (n *notifier) notify(queue string) {
	n.mu.Lock()
	n.pending[queue] = true
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *notifier) run(ctx context.Context) {
	defer close(n.done)
	for {
		select {
		case <-ctx.Done():
			n.flush(context.Background()) // best effort on Close
			return
		case <-n.kick:
		}
		n.flush(ctx)
	}
}

func (n *notifier) flush(ctx context.Context) {
	n.mu.Lock()
	queues := make([]string, 0, len(n.pending))
	for q := range n.pending {
		queues = append(queues, q)
	}
	n.pending = map[string]bool{}
	n.mu.Unlock()
	if len(queues) == 0 {
		return
	}
	// On failure the wake-up is dropped: waiters still wake at their deadline, and the
	// listeners of other gateways report every queue after they reconnect.
	// A wake-up hint need not wait for its commit record to reach disk.
	_, _ = n.pool.Exec(ctx, `SELECT pg_notify($1, q), set_config('synchronous_commit', 'off', true)
		FROM unnest($2::text[]) AS q`, n.channel, queues)
}

func (n *notifier) close() {
	n.cancel()
	<-n.done
}
