package system_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	servetest.RemoveBuild()
	os.Exit(code)
}

// scale multiplies message counts under ANYSQS_SOAK (make soak).
func scale(n int) int {
	if f, err := strconv.Atoi(os.Getenv("ANYSQS_SOAK")); err == nil && f >= 1 {
		return n * f * 5
	}
	if os.Getenv("ANYSQS_SOAK") != "" {
		return n * 5
	}
	return n
}

// serverDSN is the PostgreSQL the tests run against.
func serverDSN(t *testing.T) string {
	t.Helper()
	return testenv.Postgres(t)
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newDatabase creates anysqs_sys_<random> on the server of dsn, drops it when the test
// ends, and returns its DSN.
func newDatabase(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		testenv.Unavailable(t, "PostgreSQL at %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	name := "anysqs_sys_" + randomSuffix()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(t, dsn, name)
}

func withDatabase(t *testing.T, dsn, db string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("parse DSN: %v", err)
	}
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	return u.String()
}

// gateway is one running anysqs process.
type gateway struct {
	t    *testing.T
	cmd  *exec.Cmd
	URL  string
	done chan struct{} // closed when the process has exited
	logs *servetest.Tail
}

var listeningRE = regexp.MustCompile(`anysqs listening.* addr=(\S+)`)

// startGateway runs `anysqs serve` on dsn, listening on a free loopback port, and waits
// for its "listening" log line. The process is killed when the test ends.
func startGateway(t *testing.T, dsn string) *gateway {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("listen: 127.0.0.1:0\nlog_level: info\nbackend:\n  name: postgres\n  options:\n    dsn: %q\n", dsn)
	cfgPath := filepath.Join(dir, "anysqs.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(servetest.Binary(t), "serve", "--config", cfgPath)
	cmd.Env = append(os.Environ(), "ANYSQS_LISTEN=", "ANYSQS_BACKEND=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	g := &gateway{t: t, cmd: cmd, done: make(chan struct{}), logs: &servetest.Tail{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			g.logs.Add(line)
			if m := listeningRE.FindStringSubmatch(line); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(g.done)
	}()
	t.Cleanup(func() {
		g.kill()
		if t.Failed() {
			t.Logf("gateway pid %d log tail:\n%s", cmd.Process.Pid, g.logs.String())
		}
	})
	select {
	case a := <-addr:
		g.URL = "http://" + a
	case <-g.done:
		t.Fatalf("gateway exited before listening:\n%s", g.logs.String())
	case <-time.After(60 * time.Second): // hang guard, not a performance bound
		t.Fatalf("gateway did not report listening:\n%s", g.logs.String())
	}
	return g
}

// kill sends SIGKILL and waits for the process to be gone.
func (g *gateway) kill() {
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.done
}

// httpClient is shared by all SDK clients so that many concurrent consumers reuse
// connections instead of exhausting loopback ports.
var httpClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 128
})

// newClient returns an SQS client (AWS JSON protocol) for g. attempts 0 keeps the SDK's
// default retry policy.
func newClient(g *gateway, attempts int) *sqs.Client { return clientFor(g.URL, attempts) }

// clientFor is newClient for a gateway at url.
func clientFor(url string, attempts int) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDSYSTEMTEST", "secret", ""),
		HTTPClient:       httpClient,
		RetryMaxAttempts: attempts,
	})
}

// receiveResult is what a ReceiveMessage call returned.
type receiveResult struct {
	out *sqs.ReceiveMessageOutput
	err error
}

// longPoll starts a ReceiveMessage with a 20 s wait on url and returns where its result
// will arrive.
func longPoll(c *sqs.Client, url string) <-chan receiveResult {
	got := make(chan receiveResult, 1)
	go func() {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 20})
		got <- receiveResult{out, err}
	}()
	return got
}

// cluster is a throwaway PostgreSQL cluster, owned by this test, that may be stopped and
// started at will.
type cluster struct {
	t       *testing.T
	bin     string
	dir     string
	port    int
	asOwner func(args ...string) *exec.Cmd
}

// newCluster initdb's a cluster into a temporary directory and starts it on a free port.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		testenv.Unavailable(t, "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
	}
	c := &cluster{t: t, bin: filepath.Dir(bins[len(bins)-1])}
	dir, err := os.MkdirTemp("", "anysqs-sys-pg")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.asOwner = func(args ...string) *exec.Cmd { return exec.Command(args[0], args[1:]...) }
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: run the cluster as the postgres user.
		pg, err := user.Lookup("postgres")
		if err != nil {
			testenv.Unavailable(t, "running as root and no postgres user to own a throwaway cluster")
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asOwner = func(args ...string) *exec.Cmd {
			quoted := make([]string, len(args))
			for i, a := range args {
				quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
			return exec.Command("su", "postgres", "-s", "/bin/sh", "-c", strings.Join(quoted, " "))
		}
	}
	c.port = freePort(t)
	if out, err := c.asOwner(filepath.Join(c.bin, "initdb"), "-D", c.data(), "-A", "trust", "-U", "postgres").CombinedOutput(); err != nil {
		testenv.Unavailable(t, "initdb: %v\n%s", err, out)
	}
	c.start()
	t.Cleanup(func() { c.stop("immediate") })
	return c
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// DSN is the cluster's maintenance database.
func (c *cluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

func (c *cluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=100", c.port, c.dir)
	out, err := c.asOwner(filepath.Join(c.bin, "pg_ctl"), "-D", c.data(), "-o", opts, "-l",
		filepath.Join(c.dir, "log"), "-w", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// stop stops the cluster; mode "immediate" is a crash: no checkpoint, WAL replay on start.
func (c *cluster) stop(mode string) {
	out, err := c.asOwner(filepath.Join(c.bin, "pg_ctl"), "-D", c.data(), "-m", mode, "-w", "stop").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "not running") && !strings.Contains(string(out), "No such file") {
		c.t.Logf("pg_ctl stop: %v\n%s", err, out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
