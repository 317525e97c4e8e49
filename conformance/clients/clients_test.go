package clients_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

// The credentials every client of these tests signs with; the shipped configs verify
// none. js/scenario.cjs and celery/anysqs_tasks.py use the same.
const (
	accessKey = "AKIDCLIENTS"
	secretKey = "clients-secret"
)

// hangGuard bounds every wait on a client or gateway event. It is a safety net against a
// hang, not a performance bound: each wait ends as soon as its event arrives.
const hangGuard = 2 * time.Minute

// backends are the shipped configurations the clients run against: every backend of
// internal/testbed, and the binary as its own plugin (configs/plugin.yaml), each on the
// service or emulator scripts/test-env.sh provides.
var backends = append(testbed.Names(), "plugin")

func TestMain(m *testing.M) {
	code := m.Run()
	servetest.RemoveBuild()
	os.Exit(code)
}

// TestClients runs every client on every backend, each backend on a gateway of its own
// served from its shipped configuration on fresh storage. Subtests are
// TestClients/<backend>/<client>/<scenario>.
func TestClients(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			g, _ := testbed.Start(t, b)
			c := newSQS(g.URL)
			t.Run("sqs-consumer", func(t *testing.T) {
				js := jsModules(t)
				t.Run("standard", func(t *testing.T) { jsStandard(t, g.URL, c, js) })
				t.Run("fifo", func(t *testing.T) { jsFIFO(t, g.URL, c, js) })
				t.Run("dlq", func(t *testing.T) { jsDLQ(t, g.URL, c, js) })
			})
			t.Run("celery", func(t *testing.T) {
				py := celeryPython(t)
				t.Run("tasks", func(t *testing.T) { celeryTasks(t, g.URL, c, py) })
			})
		})
	}
}

// newSQS returns the test's own client of the gateway, which checks what the client
// libraries left in the queues.
func newSQS(endpoint string) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")})
}

// clientEnv is the environment of a client subprocess: only what it needs, so that a
// developer's AWS settings (profile, endpoint, region) cannot redirect it.
func clientEnv(t *testing.T, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8", "AWS_EC2_METADATA_DISABLED=true"}
	return append(env, extra...)
}

// process is a client subprocess whose stdout the test reads as JSON events, one object
// a line.
type process struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout
	stderr *servetest.Tail
	done   chan struct{} // closed once the process has exited and its output is read
	err    error         // the exit status, valid after done
	seen   []event       // the events read so far
}

// start runs cmd and keeps the tail of its stderr for failure messages. The process is
// killed when the test ends, and its stderr shown if the test failed.
func start(t *testing.T, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{t: t, name: name, cmd: cmd, lines: make(chan string, 4096), stderr: &servetest.Tail{}, done: make(chan struct{})}
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
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.stderr.Add(sc.Text())
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

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the process to exit; it fails the test unless the
// process exits cleanly.
func (p *process) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !p.exited() {
		p.t.Fatalf("%s: SIGTERM: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(hangGuard):
		p.t.Fatalf("%s did not exit within %v of SIGTERM:\n%s", p.name, hangGuard, p.stderr)
	}
	if p.err != nil {
		p.t.Fatalf("%s: %v after SIGTERM:\n%s", p.name, p.err, p.stderr)
	}
}

// waitEvent reads events until one has field == value and returns it; it fails the test
// if the process ends first.
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

// events reads events until the process exits, fails the test if it exited with an
// error, and returns every event it printed, those waitEvent read included.
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

// event is one line a client printed: fields by name.
type event map[string]any

// str returns field k as a string: strings as they are, numbers in decimal, anything
// else as JSON.
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

// filter returns the events whose field is value.
func filter(evs []event, field, value string) []event {
	var out []event
	for _, e := range evs {
		if e.str(field) == value {
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
