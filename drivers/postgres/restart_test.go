package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

const pgBin = "/usr/lib/postgresql/15/bin"

// cluster is a throwaway PostgreSQL server in a temporary directory, so that restarting
// it does not disturb anyone else's database.
type cluster struct {
	t    *testing.T
	dir  string
	port int
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := newClusterDir(t)
	c.run("initdb", "-D", filepath.Join(c.dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync")
	c.start()
	return c
}

// newStandby makes a streaming replica of primary (a base backup with its recovery
// settings) and starts it.
func newStandby(t *testing.T, primary *cluster) *cluster {
	t.Helper()
	c := newClusterDir(t)
	c.run("pg_basebackup", "-D", filepath.Join(c.dir, "data"), "-R", "-X", "stream", "--no-sync", "--checkpoint=fast",
		"-h", "127.0.0.1", "-p", fmt.Sprint(primary.port), "-U", "postgres")
	c.start()
	return c
}

// newClusterDir reserves a directory and a port for a cluster, removed when the test ends.
func newClusterDir(t *testing.T) *cluster {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBin, "initdb")); err != nil {
		t.Skipf("PostgreSQL server binaries not installed in %s: restart test not run", pgBin)
	}
	dir, err := os.MkdirTemp("", "anysqs-pg-")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &cluster{t: t, dir: dir, port: port}
	if u, _ := user.Current(); u != nil && u.Uid == "0" {
		// The server refuses to run as root: hand the directory to the postgres user.
		if out, err := exec.Command("chown", "-R", "postgres:postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	t.Cleanup(func() {
		c.runQuiet("pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "stop")
		os.RemoveAll(dir)
	})
	return c
}

func (c *cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(pgBin, name)
	if u, _ := user.Current(); u != nil && u.Uid == "0" {
		return exec.Command("su", "postgres", "-s", "/bin/sh", "-c", shellQuote(append([]string{path}, args...)))
	}
	return exec.Command(path, args...)
}

func shellQuote(words []string) string {
	s := ""
	for _, w := range words {
		s += "'" + w + "' "
	}
	return s
}

func (c *cluster) run(name string, args ...string) {
	c.t.Helper()
	if out, err := c.command(name, args...).CombinedOutput(); err != nil {
		c.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func (c *cluster) runQuiet(name string, args ...string) { _ = c.command(name, args...).Run() }

func (c *cluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir)
	c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "start")
}

func (c *cluster) stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop")
}

func (c *cluster) dsn() string { return c.dsnFor("postgres", "anysqs") }

// dsnFor is the DSN of database db on the cluster, as role.
func (c *cluster) dsnFor(role, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=5", role, c.port, db)
}

// requirePasswords makes every role but postgres give its password over TCP, and waits
// until the server refuses role without one.
func (c *cluster) requirePasswords(role string) {
	c.t.Helper()
	hba := "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(c.dir, "data", "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		c.t.Fatal(err)
	}
	c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "reload")
	dsn := c.dsnFor(role, "postgres")
	for start := time.Now(); ; {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return // the reload took effect
		}
		conn.Close(context.Background())
		if time.Since(start) > time.Minute { // hang guard
			c.t.Fatal("the server still admits " + role + " without a password after reloading pg_hba.conf")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDatabaseRestart stops the server under an open driver: calls fail with
// KindUnavailable while it is down, and once it is back the driver works again by
// itself, with the data and receipt handles from before the restart.
func TestDatabaseRestart(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	d, err := postgres.Open(ctx, postgres.Options{DSN: c.dsn(), CreateDatabase: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	createQueue(t, d, "q", stdAttrs())
	send(t, d, "q", epoch, drivers.SendEntry{Body: "before"}, drivers.SendEntry{Body: "second"})
	held := receive(t, d, "q", epoch, 1, 300).Messages[0]

	c.stop()
	_, err = d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: epoch,
		Entries: []drivers.SendEntry{{EntryID: "1", MessageID: "down", Body: "down"}}})
	if drivers.KindOf(err) != drivers.KindUnavailable {
		t.Fatalf("send while the database is down: %v (kind %v), want Unavailable", err, drivers.KindOf(err))
	}
	if _, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: epoch, MaxMessages: 1}); drivers.KindOf(err) != drivers.KindUnavailable {
		t.Fatalf("receive while down: %v, want Unavailable", err)
	}

	c.start()
	// Connections broken by the restart may fail a few calls, always as Unavailable.
	var res drivers.BatchResult
	for attempt := 0; ; attempt++ {
		res, err = d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "q", Now: epoch,
			Entries: []drivers.DeleteEntry{{EntryID: "1", ReceiptHandle: held.ReceiptHandle}}})
		if err == nil {
			break
		}
		if drivers.KindOf(err) != drivers.KindUnavailable || attempt > 20 {
			t.Fatalf("delete after restart, attempt %d: %v", attempt, err)
		}
	}
	if res.Entries[0].Err != nil {
		t.Fatalf("handle from before the restart: %v", res.Entries[0].Err)
	}
	got := receive(t, d, "q", epoch.Add(time.Hour), 10, 30)
	if b := bodies(got.Messages); !slices.Equal(b, []string{"second"}) {
		t.Fatalf("after restart received %v, want [second]", b)
	}
	// The listener reconnects and reports every queue, since notifications sent while it
	// was away are lost.
	awaitQueue(t, d, "q")
}

// TestCrashUnderLoad crashes the server (immediate shutdown: no checkpoint, WAL replay
// on start) while 8 senders run, then restarts it: every send that returned success is
// delivered afterwards, and senders saw only Unavailable errors meanwhile.
func TestCrashUnderLoad(t *testing.T) {
	c := newCluster(t)
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: c.dsn(), CreateDatabase: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sendThrough(t, d, "the crash", func() {
		c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
		c.start()
	})
}

// sendThrough runs 8 senders on d (standard and FIFO), calls disrupt once each has had a
// send acknowledged, lets them go on until 50 more sends are acknowledged, and then checks
// that they saw only Unavailable errors and that every acknowledged message is delivered.
func sendThrough(t *testing.T, d *postgres.Driver, what string, disrupt func()) {
	ctx := context.Background()
	createQueue(t, d, "q", stdAttrs())
	createQueue(t, d, "q.fifo", fifoAttrs())
	var mu sync.Mutex
	acked := map[string]bool{}
	var bad []error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	sentSome := make(chan struct{}, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				queue, id := "q", fmt.Sprintf("w%d-%d", w, i)
				e := drivers.SendEntry{EntryID: "1", MessageID: id, Body: id}
				if w%2 == 1 {
					queue, e.MessageGroupID, e.MessageDeduplicationID = "q.fifo", fmt.Sprint(w), id
				}
				res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: queue, Now: epoch, Entries: []drivers.SendEntry{e}})
				mu.Lock()
				switch {
				case err == nil && res.Entries[0].Err == nil:
					acked[id] = true
					select {
					case sentSome <- struct{}{}:
					default:
					}
				case drivers.KindOf(err) != drivers.KindUnavailable:
					bad = append(bad, fmt.Errorf("send %s: %v", id, err))
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 8; i++ {
		<-sentSome
	}
	disrupt()
	// Let the senders reconnect and write some more afterwards.
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n > before+50 {
			break
		}
		<-sentSome
	}
	close(stop)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d sends failed with a kind other than Unavailable, first: %v", len(bad), bad[0])
	}
	got := map[string]bool{}
	for _, q := range []string{"q", "q.fifo"} {
		for {
			r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: q, Now: epoch, MaxMessages: 10, VisibilityTimeout: 3600})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) == 0 {
				break
			}
			for _, m := range r.Messages {
				got[m.MessageID] = true
			}
			if q == "q.fifo" { // free the groups for the next receive
				req := drivers.DeleteMessagesRequest{Name: q, Now: epoch}
				for i, m := range r.Messages {
					req.Entries = append(req.Entries, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
				}
				if _, err := d.DeleteMessages(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	lost := 0
	for id := range acked {
		if !got[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged sends lost in %s", lost, len(acked), what)
	}
	t.Logf("%d acknowledged sends, all delivered after %s (%d messages in total)", len(acked), what, len(got))
}

// TestFailoverToSynchronousStandby runs the driver on a primary with a synchronous
// streaming standby, through a two-host DSN with target_session_attrs=read-write (as a
// client of an HA pair would have). Under load the primary crashes and the standby is
// promoted: the driver must follow without being reopened, senders must see only
// Unavailable meanwhile, and every acknowledged message must be on the new primary.
// (With the standby asynchronous instead, 2 runs of 4 lost 1 and 3 acknowledged sends:
// the guarantee is the replication's.)
func TestFailoverToSynchronousStandby(t *testing.T) {
	primary := newCluster(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, primary.dsnFor("postgres", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `CREATE DATABASE anysqs`); err != nil {
		t.Fatal(err)
	}
	standby := newStandby(t, primary)
	for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = '*'`, `SELECT pg_reload_conf()`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		var sync bool
		if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync')`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if sync {
			break
		}
		if time.Since(start) > time.Minute { // hang guard
			t.Fatal("the standby did not become synchronous")
		}
	}
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/anysqs?sslmode=disable&connect_timeout=5"+
		"&target_session_attrs=read-write", primary.port, standby.port)
	d, err := postgres.Open(ctx, postgres.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sendThrough(t, d, "the failover", func() {
		primary.run("pg_ctl", "-D", filepath.Join(primary.dir, "data"), "-m", "immediate", "-w", "stop")
		standby.run("pg_ctl", "-D", filepath.Join(standby.dir, "data"), "-w", "promote")
	})
	// The LISTEN connection followed too: having lost its connection it reports every queue.
	awaitQueue(t, d, "q")
}
