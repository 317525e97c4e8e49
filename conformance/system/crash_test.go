package system_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

// crashVT is the consumers' visibility timeout in the crash tests: what a consumer held
// when its gateway died comes back after it.
const crashVT = 2

// loadRun is senders and consumers running against a set of gateways until stopped.
type loadRun struct {
	l       *ledger
	stop    context.CancelFunc
	senders sync.WaitGroup
	stopC   context.CancelFunc
	cons    sync.WaitGroup
}

// startCrashLoad runs 4 standard senders, 4 FIFO senders (one group each) and
// `consumers` consumers on each queue, over clients (round robin), tolerating failures:
// only acknowledged sends count.
func startCrashLoad(clients []*sqs.Client, std, fifo []string, consumers int) *loadRun {
	r := &loadRun{l: newLedger()}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	for i := 0; i < 4; i++ {
		r.senders.Add(2)
		go func() {
			defer r.senders.Done()
			r.l.sendStandard(ctx, fixed(clients[i%len(clients)], std[i%len(clients)]), fmt.Sprintf("s%d", i), 1_000_000, false)
		}()
		go func() {
			defer r.senders.Done()
			r.l.sendFIFO(ctx, fixed(clients[i%len(clients)], fifo[i%len(clients)]), fmt.Sprintf("g%d", i), 1_000_000, false)
		}()
	}
	cctx, ccancel := context.WithCancel(context.Background())
	r.stopC = ccancel
	r.consume(cctx, &r.cons, 0, clients, std, fifo, consumers)
	return r
}

// consume starts n consumers on each of std and fifo, over clients (round robin),
// numbered from base (standard) and base+100 (FIFO).
func (r *loadRun) consume(ctx context.Context, wg *sync.WaitGroup, base int, clients []*sqs.Client, std, fifo []string, n int) {
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.l.consume(ctx, base+i, clients[i%len(clients)], std[i%len(clients)], crashVT, false)
		}()
		go func() {
			defer wg.Done()
			r.l.consume(ctx, base+100+i, clients[i%len(clients)], fifo[i%len(clients)], crashVT, false)
		}()
	}
}

// waitAcked blocks until at least n sends were acknowledged since the call, or fails.
func (r *loadRun) waitAcked(t *testing.T, n int64) {
	t.Helper()
	target := r.l.ackedN.Load() + n
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	for r.l.ackedN.Load() < target {
		r.l.mu.Lock()
		ch := r.l.changed
		r.l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("only %d of %d sends acknowledged", r.l.ackedN.Load(), target)
		}
	}
}

func (r *loadRun) stopSenders() { r.stop(); r.senders.Wait() }

// drain lets `consumers` consumers per queue (restarted on clients) run until every
// acknowledged message was delivered, and fails with what is missing.
func (r *loadRun) drain(t *testing.T, clients []*sqs.Client, std, fifo []string, consumers int) {
	t.Helper()
	r.stopC()
	r.cons.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var wg sync.WaitGroup
	r.consume(ctx, &wg, 200, clients, std, fifo, consumers)
	missing := r.l.waitAllDelivered(ctx, nil)
	cancel()
	wg.Wait()
	if len(missing) > 0 {
		t.Errorf("%d of %d acknowledged messages never delivered, e.g. %v", len(missing), r.l.ackedN.Load(), missing[:min(len(missing), 5)])
		return
	}
	t.Logf("%d acknowledged sends, all delivered", r.l.ackedN.Load())
}

// killCase is one backend of TestKillGatewayUnderLoad: acknowledged sends wanted before
// the kill, and through the survivor after it.
type killCase struct {
	backend       string
	before, after int
}

// killCases are the backends of TestKillGatewayUnderLoad: those of internal/testbed whose
// storage gateways share, each served from its shipped configuration on storage of its
// own (testbed.Env). The emulators are slower, so their rows put fewer messages through
// by default.
var killCases = func() []killCase {
	var out []killCase
	for _, b := range testbed.All {
		switch {
		case b.Shared && b.Emulated:
			out = append(out, killCase{backend: b.Name, before: 200, after: 100})
		case b.Shared:
			out = append(out, killCase{backend: b.Name, before: 600, after: 300})
		}
	}
	return out
}()

// TestKillGatewayUnderLoad runs two gateways on one backend's storage behind a load
// balancer, with 4 standard and 4 FIFO senders and 16 consumers (8 per queue) going
// through it, and kills one gateway with SIGKILL mid-run. The balancer then takes it out
// of rotation, as a failing readiness check would: the survivor must go on acknowledging
// sends (FIFO senders retry a batch of unknown outcome through it, with the same
// deduplication ids), and a gateway restarted on the same storage joins it to drain the
// queues. Nothing acknowledged may be lost, no message may be held by two consumers at
// once, and FIFO order must hold per group. Each backend's counts are logged on one line
// ("kill counts").
func TestKillGatewayUnderLoad(t *testing.T) {
	for _, kc := range killCases {
		t.Run(kc.backend, func(t *testing.T) {
			env := testbed.Env(t, kc.backend)
			config := testbed.ConfigOf(kc.backend)
			a, b := servetest.Start(t, config, env...), servetest.Start(t, config, env...)
			lb := &balancer{}
			lb.setURLs(a.URL, b.URL)
			front := httptest.NewServer(lb)
			defer front.Close()
			c := clientFor(front.URL, 0)
			std := queueOn(t, "sys-kill", nil, c)
			fifo := queueOn(t, "sys-kill.fifo", map[string]string{"FifoQueue": "true"}, c)

			run := startCrashLoad([]*sqs.Client{c}, std, fifo, 8)
			run.waitAcked(t, int64(scale(kc.before)))
			a.Kill()
			lb.setURLs(b.URL)
			killed, killedAt := run.l.ackedN.Load(), time.Now()
			run.waitAcked(t, int64(scale(kc.after)))
			run.stopSenders()
			t.Logf("killed gateway A after %d acknowledged sends, cutting %d requests (answered 502, retried by the SDK); B acknowledged %d more alone",
				killed, lb.failed.Load(), run.l.ackedN.Load()-killed)

			a2 := servetest.Start(t, config, env...)
			lb.setURLs(b.URL, a2.URL)
			run.drain(t, []*sqs.Client{c}, std, fifo, 8)
			t.Logf("drained %v after the kill", time.Since(killedAt).Round(100*time.Millisecond))

			t.Logf("kill counts %-10s %v", kc.backend+":", run.l.counts(crashVT*time.Second))
			if d := run.l.doubleDeliveries(crashVT * time.Second); len(d) > 0 {
				t.Errorf("%d messages held by two consumers at once, first: %s", len(d), strings.Join(d[:min(len(d), 10)], "; "))
			}
			if v := run.l.fifoViolations(); len(v) > 0 {
				t.Errorf("%d FIFO order violations, first: %s", len(v), strings.Join(v[:min(len(v), 10)], "; "))
			}
		})
	}
}

// TestPostgresRestartUnderLoad stops a throwaway PostgreSQL cluster (immediate mode: a
// crash, WAL replay on start) under load through two gateways. While it is down a call
// must fail with an error the SDK retries; after it is back both gateways must serve
// again without being restarted, every acknowledged message must be delivered, and a
// send on one gateway must still wake a long poll on the other.
func TestPostgresRestartUnderLoad(t *testing.T) {
	cl := newCluster(t)
	db := newDatabase(t, cl.DSN())
	a, b := startGateway(t, db), startGateway(t, db)
	clients := []*sqs.Client{newClient(a, 0), newClient(b, 0)}
	std := queueOn(t, "sys-restart", nil, clients...)
	fifo := queueOn(t, "sys-restart.fifo", map[string]string{"FifoQueue": "true"}, clients...)

	run := startCrashLoad(clients, std, fifo, 4)
	run.waitAcked(t, int64(scale(600)))
	cl.stop("immediate")
	t.Logf("stopped PostgreSQL after %d acknowledged sends", run.l.ackedN.Load())

	for i, g := range []*gateway{a, b} {
		_, err := newClient(g, 1).SendMessage(context.Background(), &sqs.SendMessageInput{
			QueueUrl: aws.String(std[i]), MessageBody: aws.String("while-down")})
		checkRetryable(t, fmt.Sprintf("gateway %d, database down", i), err)
	}

	cl.start()
	for i := range clients {
		waitServing(t, clients[i], std[i])
	}
	run.waitAcked(t, int64(scale(300)))
	run.stopSenders()
	run.drain(t, clients, std, fifo, 4)

	lp := queueOn(t, "sys-restart-longpoll", nil, clients...)
	longPollRounds(t, db, clients[0], clients[1], lp[0], lp[1], 3)
}

// checkRetryable fails unless err is a server-side (5xx) error that aws-sdk-go-v2's
// standard retryer retries.
func checkRetryable(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: call succeeded", what)
		return
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) {
		t.Errorf("%s: %v: not an HTTP response error", what, err)
		return
	}
	if re.HTTPStatusCode() < http.StatusInternalServerError {
		t.Errorf("%s: HTTP %d (%v), want a 5xx", what, re.HTTPStatusCode(), err)
	}
	if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) != aws.TrueTernary {
		t.Errorf("%s: %v: the SDK would not retry it", what, err)
	}
}

// waitServing retries a send until the gateway answers it, i.e. until it has recovered
// from the database restart on its own.
func waitServing(t *testing.T, c *sqs.Client, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		if _, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("probe")}); err == nil {
			return
		}
		pause(ctx)
	}
	t.Fatalf("gateway did not recover after the database restart: %v", err)
}

// TestMoveTaskSurvivesKill: a message move task whose gateway is killed (SIGKILL) mid-run
// is adopted by the other gateway on the database once its lease lapses (30 s), and
// finishes: every message reaches the destination once, and the task counts each.
func TestMoveTaskSurvivesKill(t *testing.T) {
	ctx := context.Background()
	db := newDatabase(t, serverDSN(t))
	a, b := startGateway(t, db), startGateway(t, db)
	ca, cb := newClient(a, 1), newClient(b, 0)
	arn := func(url string) string {
		out, err := cb.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes["QueueArn"]
	}
	dlq := queueOn(t, "sys-move-dlq", nil, ca, cb)
	src := queueOn(t, "sys-move-src", map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arn(dlq[1]) + `","maxReceiveCount":"1"}`}, ca, cb)
	const n = 60
	for i := 0; i < n; i += 10 {
		var entries []types.SendMessageBatchRequestEntry
		for j := i; j < i+10; j++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(j)), MessageBody: aws.String(fmt.Sprintf("m-%02d", j))})
		}
		if out, err := cb.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(dlq[1]), Entries: entries}); err != nil || len(out.Failed) > 0 {
			t.Fatalf("SendMessageBatch: %v %+v", err, out)
		}
	}
	if _, err := ca.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn(dlq[1])),
		DestinationArn: aws.String(arn(src[1])), MaxNumberOfMessagesPerSecond: aws.Int32(10)}); err != nil {
		t.Fatalf("StartMessageMoveTask through gateway A: %v", err)
	}
	// task polls the task through gateway B until done says so (hang guard, not a bound).
	task := func(what string, done func(types.ListMessageMoveTasksResultEntry) bool) types.ListMessageMoveTasksResultEntry {
		t.Helper()
		for guard := time.Now().Add(2 * time.Minute); time.Now().Before(guard); time.Sleep(100 * time.Millisecond) {
			out, err := cb.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(arn(dlq[1]))})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) == 1 && done(out.Results[0]) {
				return out.Results[0]
			}
		}
		t.Fatalf("%s: never happened", what)
		return types.ListMessageMoveTasksResultEntry{}
	}
	task("10 messages moved", func(e types.ListMessageMoveTasksResultEntry) bool { return e.ApproximateNumberOfMessagesMoved >= 10 })
	a.kill()
	done := task("the task completes after the kill", func(e types.ListMessageMoveTasksResultEntry) bool {
		if s := aws.ToString(e.Status); s != "RUNNING" && s != "COMPLETED" {
			t.Fatalf("task %s: %s", s, aws.ToString(e.FailureReason))
		}
		return aws.ToString(e.Status) == "COMPLETED"
	})
	seen := map[string]bool{}
	for len(seen) < n {
		out, err := cb.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src[1]), MaxNumberOfMessages: 10, VisibilityTimeout: 600})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			t.Fatalf("%d of %d messages reached the destination (task reports %d moved)", len(seen), n, done.ApproximateNumberOfMessagesMoved)
		}
		for _, m := range out.Messages {
			if seen[aws.ToString(m.Body)] {
				t.Fatalf("%s moved twice", aws.ToString(m.Body))
			}
			seen[aws.ToString(m.Body)] = true
		}
	}
	if done.ApproximateNumberOfMessagesMoved != n {
		t.Fatalf("the task adopted after the kill counts %d moved; %d messages moved", done.ApproximateNumberOfMessagesMoved, n)
	}
}
