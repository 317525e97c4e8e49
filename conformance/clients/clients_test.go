//go:build clients

package clients_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The credentials every client of these tests signs with; the shipped configs verify none.
const (
	accessKey = "AKIDCLIENTS"
	secretKey = "clients-secret"
)

// hangGuard bounds every wait on a client or gateway event. It is a safety net against a
// hang, not a performance bound: each wait ends as soon as its event arrives.
const hangGuard = 2 * time.Minute

// binary is the anysqs executable built by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "anysqs-clients-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "clients tests:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "anysqs")
	build := exec.Command("go", "build", "-o", binary, "github.com/anysqs/anysqs/cmd/anysqs")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "clients tests: building anysqs:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// unavailable skips because something the test needs is not here, and fails under CI.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := "not available here: " + fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: not skipping)")
	}
	t.Skip(msg)
}

// backend is one shipped configuration and what its service needs from the environment.
type backend struct {
	name, config string
	// ready skips (or fails under CI) when the backend's service is not here.
	ready func(t *testing.T)
}

var backends = []backend{
	{name: "sqlite", config: "embedded.yaml", ready: func(*testing.T) {}},
	{name: "postgres", config: "postgres.yaml", ready: func(t *testing.T) {
		// configs/postgres.yaml names the local server; the test uses that file as shipped.
		dsn := os.Getenv("ANYSQS_TEST_POSTGRES_DSN")
		if dsn == "" {
			unavailable(t, "PostgreSQL: ANYSQS_TEST_POSTGRES_DSN is not set (eval \"$(scripts/test-env.sh)\")")
		}
		if u, err := url.Parse(dsn); err != nil || u.Host != "127.0.0.1:5432" {
			unavailable(t, "PostgreSQL on 127.0.0.1:5432, the server configs/postgres.yaml names (the test server is %s)", dsn)
		}
	}},
	{name: "spanner", config: "spanner.yaml", ready: func(t *testing.T) {
		if os.Getenv("SPANNER_EMULATOR_HOST") == "" {
			unavailable(t, "the Spanner emulator: SPANNER_EMULATOR_HOST is not set (eval \"$(scripts/services/spanner.sh start)\")")
		}
	}},
	{name: "firestore", config: "firestore.yaml", ready: func(t *testing.T) {
		// configs/firestore.yaml names the emulator scripts/services/firestore.sh starts.
		if h := os.Getenv("FIRESTORE_EMULATOR_HOST"); h != "127.0.0.1:8687" {
			unavailable(t, "the Firestore emulator on 127.0.0.1:8687, which configs/firestore.yaml names (FIRESTORE_EMULATOR_HOST=%q)", h)
		}
	}},
}

// TestClients runs every client scenario on every backend, each backend on its own served
// gateway. Subtests: TestClients/<backend>/<client>/<scenario>.
func TestClients(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.ready(t)
			g := serve(t, b.config)
			run := &runEnv{g: g, sqs: newSQS(g.url), prefix: "cl" + randomHex(4)}
			t.Cleanup(func() { run.deleteQueues(t) })
			t.Run("sqs-consumer", func(t *testing.T) {
				nodeModules := jsModules(t)
				t.Run("standard", func(t *testing.T) { jsStandard(t, run, nodeModules) })
				t.Run("fifo", func(t *testing.T) { jsFIFO(t, run, nodeModules) })
				t.Run("dlq", func(t *testing.T) { jsDLQ(t, run, nodeModules) })
			})
		})
	}
}

// runEnv is one backend's gateway, a client of it and the prefix of its queue names.
type runEnv struct {
	g      *gateway
	sqs    *sqs.Client
	prefix string
}

// deleteQueues deletes the queues this run created: the shipped configs keep every run's
// queues in one database per server.
func (r *runEnv) deleteQueues(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	out, err := r.sqs.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(r.prefix), MaxResults: aws.Int32(1000)})
	if err != nil {
		t.Logf("list queues %s*: %v", r.prefix, err)
		return
	}
	for _, u := range out.QueueUrls {
		if _, err := r.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
			t.Logf("delete queue %s: %v", u, err)
		}
	}
}

// gateway is one running `anysqs serve`.
type gateway struct {
	url  string
	logs *tail
}

var listeningRE = regexp.MustCompile(`anysqs listening.* addr=(\S+)`)

// serve runs the binary on a copy of configs/<config>, listening on a free loopback port
// (ANYSQS_LISTEN), and waits for its "listening" log line. The copy lives in a scratch
// directory so that relative paths in it (SQLite's data_dir) resolve there.
func serve(t *testing.T, config string) *gateway {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "configs", config))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, config)
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "--config", path)
	// Other overrides a developer may have exported would change what the file says.
	cmd.Env = append(os.Environ(), "ANYSQS_LISTEN=127.0.0.1:0", "ANYSQS_ADMIN_LISTEN=", "ANYSQS_BACKEND=",
		"ANYSQS_POLICY_MODE=", "ANYSQS_AUTH_CREDENTIALS=", "ANYSQS_PUBLIC_URL=")
	p := start(t, "anysqs serve", cmd, false)
	line, ok := p.waitStderr(listeningRE.MatchString)
	if !ok {
		t.Fatalf("anysqs serve --config %s exited before listening:\n%s", config, p.stderr)
	}
	go func() { // the tail keeps the log; nothing else waits on its lines
		for range p.lines {
		}
	}()
	return &gateway{url: "http://" + listeningRE.FindStringSubmatch(line)[1], logs: p.stderr}
}

func newSQS(endpoint string) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// process is a client or gateway subprocess whose output the test reads line by line.
type process struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, or stderr for processes that log there
	stderr *tail
	done   chan struct{} // closed once the process has exited and its output is read
	err    error         // the exit status, valid after done
	seen   []event       // the stdout events read so far
}

// start runs cmd, feeding its stdout lines (with stdoutLines) or its stderr lines to
// p.lines, and keeps the tail of stderr for failure messages. The process is killed when
// the test ends, and its stderr shown if the test failed.
func start(t *testing.T, name string, cmd *exec.Cmd, stdoutLines bool) *process {
	t.Helper()
	p := &process{t: t, name: name, cmd: cmd, lines: make(chan string, 1024), stderr: &tail{}, done: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if stdoutLines {
				p.lines <- sc.Text()
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.stderr.add(sc.Text())
			if !stdoutLines {
				p.lines <- sc.Text()
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		wg.Wait()
		p.err = cmd.Wait()
		close(p.lines)
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s (pid %d) stderr, last lines:\n%s", name, cmd.Process.Pid, p.stderr)
		}
	})
	return p
}

// waitStderr reads p's lines until one matches; false if the process ended first.
func (p *process) waitStderr(match func(string) bool) (string, bool) {
	p.t.Helper()
	guard := time.After(hangGuard)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return "", false
			}
			if match(line) {
				return line, true
			}
		case <-guard:
			p.t.Fatalf("%s: no matching output line within %v:\n%s", p.name, hangGuard, p.stderr)
		}
	}
}

// waitEvent reads p's stdout events until one has field == value and returns it; it
// fails the test if the process ends first.
func (p *process) waitEvent(field, value string) event {
	p.t.Helper()
	for {
		e, ok := p.nextEvent()
		if !ok {
			p.t.Fatalf("%s exited (%v) before printing an event with %s %q:\n%s", p.name, p.err, field, value, p.stderr)
		}
		if e.str(field) == value {
			return e
		}
	}
}

// events reads p's stdout events until the process exits, fails the test if it exited
// with an error, and returns every event it printed, those waitEvent read included.
func (p *process) events() []event {
	p.t.Helper()
	for {
		if _, ok := p.nextEvent(); !ok {
			break
		}
	}
	if p.err != nil {
		p.t.Fatalf("%s: %v\n%s", p.name, p.err, p.stderr)
	}
	return p.seen
}

// nextEvent reads one JSON object line of stdout; false once the process has exited.
func (p *process) nextEvent() (event, bool) {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			<-p.done
			return nil, false
		}
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			p.t.Fatalf("%s: output line %q is not a JSON object: %v", p.name, line, err)
		}
		p.seen = append(p.seen, e)
		return e, true
	case <-time.After(hangGuard):
		p.t.Fatalf("%s: no output for %v:\n%s", p.name, hangGuard, p.stderr)
		return nil, false
	}
}

// event is one line a client scenario printed: fields by name, as strings.
type event map[string]any

func (e event) str(k string) string {
	switch v := e[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// filter returns the events whose "event" (JS) or "task" (Celery) field is kind.
func filter(evs []event, field, kind string) []event {
	var out []event
	for _, e := range evs {
		if e.str(field) == kind {
			out = append(out, e)
		}
	}
	return out
}

// counts is what GetQueueAttributes says a queue holds.
type counts struct{ visible, inFlight, delayed int }

func queueCounts(t *testing.T, c *sqs.Client, queueURL string) counts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		t.Fatalf("GetQueueAttributes %s: %v", queueURL, err)
	}
	n := func(k types.QueueAttributeName) int {
		v, err := strconv.Atoi(out.Attributes[string(k)])
		if err != nil {
			t.Fatalf("GetQueueAttributes %s: %s = %q", queueURL, k, out.Attributes[string(k)])
		}
		return v
	}
	return counts{n(types.QueueAttributeNameApproximateNumberOfMessages),
		n(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible), n(types.QueueAttributeNameApproximateNumberOfMessagesDelayed)}
}

// wantEmpty fails unless the queue holds no message at all, visible, in flight or delayed.
func wantEmpty(t *testing.T, c *sqs.Client, queueURL string) {
	t.Helper()
	if got := queueCounts(t, c, queueURL); got != (counts{}) {
		t.Errorf("queue %s holds %+v after the clients finished, want nothing", queueURL, got)
	}
}

// clientEnv is the environment of a client subprocess: only what it needs, so that a
// developer's AWS settings (profile, endpoint, region) cannot redirect it.
func clientEnv(home string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AWS_EC2_METADATA_DISABLED=true", "LANG=C.UTF-8"}
	return append(env, extra...)
}

// tail keeps the last lines of a process's stderr for failure messages.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (b *tail) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, s)
	if len(b.lines) > 80 {
		b.lines = b.lines[len(b.lines)-80:]
	}
}

func (b *tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// hostPort returns the host:port of an http:// endpoint.
func hostPort(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		t.Fatalf("endpoint %s: %v", endpoint, err)
	}
	return u.Host
}

// sameFile reports whether two files hold the same bytes.
func sameFile(a, b string) bool {
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
