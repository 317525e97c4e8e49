package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/internal/testenv"
)

// throughPgBouncer returns a DSN for a new database on the test server, reached through
// the PgBouncer that scripts/test-env.sh started in front of it in the given pooling mode.
func throughPgBouncer(t *testing.T, mode string) string {
	t.Helper()
	env := "ANYSQS_TEST_PGBOUNCER_" + strings.ToUpper(mode) + "_DSN"
	bouncer := os.Getenv(env)
	if bouncer == "" {
		testenv.Unavailable(t, "PgBouncer: %s is not set (eval \"$(scripts/test-env.sh)\" starts it)", env)
	}
	return dsnFor(t, bouncer, dbName(t, newDatabase(t)))
}

// Session pooling pins a server connection to each client connection, so the driver
// works through it unchanged: the driver contract suite and cross-instance wake-ups.
func TestThroughPgBouncerSessionPooling(t *testing.T) {
	t.Parallel()
	dsn := throughPgBouncer(t, "session")
	t.Run("contract", func(t *testing.T) { runContract(t, dsn) })
	t.Run("await-activity-across-instances", func(t *testing.T) { awaitActivityAcrossInstances(t, dsn) })
}

// Transaction pooling breaks LISTEN, prepared statements and session settings; Open must
// refuse it and say why, rather than start and fail under load or miss wake-ups.
func TestThroughPgBouncerTransactionPoolingRefused(t *testing.T) {
	t.Parallel() // it waits out the probe
	dsn := throughPgBouncer(t, "transaction")
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn})
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded through transaction pooling")
	}
	if drivers.KindOf(err) != drivers.KindUnavailable || !strings.Contains(err.Error(), "transaction-pooling proxy") {
		t.Fatalf("Open: %v (kind %v); want an Unavailable error naming the transaction-pooling proxy", err, drivers.KindOf(err))
	}
}

// ownPgBouncer starts a PgBouncer of the test's own in front of the test server, in
// session pooling with one server connection per database and user, stopped when the
// test ends, and returns its DSN for database db. Without the pgbouncer binary (Debian
// package pgbouncer; scripts/test-env.sh installs it) the test is skipped, or fails
// under CI=true.
func ownPgBouncer(t *testing.T, db string) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
	}
	if _, err := os.Stat(bin); err != nil {
		testenv.Unavailable(t, "pgbouncer is not installed (eval \"$(scripts/test-env.sh)\" installs it)")
	}
	requireServer(t)
	server, err := pgx.ParseConfig(adminDSN())
	if err != nil {
		t.Fatal(err)
	}
	if server.Password != "" {
		t.Skip("the test server needs a password; this test's PgBouncer passes none")
	}
	dir, err := os.MkdirTemp("", "anysqs-pgbouncer-") // not t.TempDir(): its parent is closed to others
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ini := strings.Join([]string{"[databases]", fmt.Sprintf("* = host=%s port=%d", server.Host, server.Port),
		"[pgbouncer]", "listen_addr = 127.0.0.1", "listen_port = " + strconv.Itoa(port), "unix_socket_dir =",
		"auth_type = trust", "auth_file = " + filepath.Join(dir, "users"), "pool_mode = session",
		"default_pool_size = 1", "max_client_conn = 100", "server_reset_query = DISCARD ALL",
		"logfile = " + filepath.Join(dir, "log"), "pidfile = " + filepath.Join(dir, "pid")}, "\n") + "\n"
	for name, content := range map[string]string{"ini": ini, "users": fmt.Sprintf("%q \"\"\n", server.User)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-d", filepath.Join(dir, "ini"))
	if u, _ := user.Current(); u != nil && u.Uid == "0" {
		// PgBouncer refuses to run as root.
		if out, err := exec.Command("chown", "-R", "postgres:postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
		cmd = exec.Command("su", "postgres", "-s", "/bin/sh", "-c", shellQuote(cmd.Args))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbouncer: %v %s", err, out)
	}
	t.Cleanup(func() {
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			t.Errorf("pgbouncer pid: %v", err)
			return
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 0 || syscall.Kill(pid, syscall.SIGTERM) != nil {
			return
		}
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	dsn := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=5", server.User, port, db)
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := pgx.Connect(ctx, dsn)
		cancel()
		if err == nil {
			c.Close(context.Background())
			return dsn
		}
		if i == 40 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("pgbouncer does not answer: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Issue 39: a LISTEN connection closed through PgBouncer 1.18 in session pooling while
// notifications arrive. PgBouncer resets the server connection with DISCARD ALL for its
// next client; a notification arriving during the reset made it hand the connection
// over before the reset's reply, which the next client read as the reply to its own
// first statement, every later reply shifted by one (in CI: "migrate: lock: mismatched
// param and argument count"). The listener must UNLISTEN before it closes. With one
// server connection in the pool, every cycle's client gets the listener's connection.
func TestListenerCloseThroughPgBouncer(t *testing.T) {
	t.Parallel()
	direct := newDatabase(t)
	bouncer := ownPgBouncer(t, dbName(t, direct))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, direct) // sends the listener's probe notification
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const channel = "anysqs:issue39"

	// Other connections notify on the listener's channel all the time.
	stop := make(chan struct{})
	var notifiers sync.WaitGroup
	for range 3 {
		notifier, err := pgx.Connect(ctx, direct)
		if err != nil {
			t.Fatal(err)
		}
		notifiers.Go(func() {
			defer notifier.Close(context.Background())
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := notifier.Exec(ctx, `SELECT pg_notify($1, 'q')`, channel); err != nil {
					t.Errorf("notify: %v", err)
					return
				}
			}
		})
	}
	defer func() { close(stop); notifiers.Wait() }()

	const cycles = 200
	for i := range cycles {
		closeListener, err := postgres.OpenListener(ctx, bouncer, channel, pool)
		if err != nil {
			t.Fatalf("cycle %d: listener: %v", i, err)
		}
		closeListener()
		// A fresh client through the same PgBouncer gets the listener's server connection.
		func() {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			c, err := pgx.Connect(cctx, bouncer)
			if err != nil {
				t.Fatalf("cycle %d: connect: %v", i, err)
			}
			defer c.Close(context.Background())
			var sum int
			if err := c.QueryRow(cctx, `SELECT $1::int + $2::int`, i, 1000).Scan(&sum); err != nil || sum != i+1000 {
				t.Fatalf("cycle %d of %d: SELECT %d + 1000 through PgBouncer after a listener closed: %d, %v; "+
					"want %d (a reply meant for another client?)", i, cycles, i, sum, err, i+1000)
			}
		}()
	}
}

// listen_dsn: the pool through PgBouncer in session pooling, LISTEN straight to
// PostgreSQL. PgBouncer has one server connection and the driver's pool one client
// connection, which holds it, so Open succeeds only when the LISTEN connection does not
// go through PgBouncer. Wake-ups still arrive.
func TestListenDSNBesidePgBouncer(t *testing.T) {
	t.Parallel()
	direct := newDatabase(t)
	bouncer := ownPgBouncer(t, dbName(t, direct))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := postgres.Open(ctx, postgres.Options{DSN: bouncer, ListenDSN: direct, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	createQueue(t, d, "q", stdAttrs())
	watch(t, d, "q")
	send(t, d, "q", epoch, drivers.SendEntry{Body: "x"})
	awaitQueue(t, d, "q")
}

// With listen_dsn, notifications sent through a transaction-pooling proxy reach the
// LISTEN connection, so Open checks the pool's connections by a LISTEN of their own.
func TestListenDSNTransactionPoolingRefused(t *testing.T) {
	t.Parallel() // it waits out the probe
	dsn := throughPgBouncer(t, "transaction")
	direct := dsnFor(t, adminDSN(), dbName(t, dsn))
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, ListenDSN: direct})
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded through transaction pooling")
	}
	if drivers.KindOf(err) != drivers.KindUnavailable || !strings.Contains(err.Error(), "transaction-pooling proxy") {
		t.Fatalf("Open: %v (kind %v); want an Unavailable error naming the transaction-pooling proxy", err, drivers.KindOf(err))
	}
}
