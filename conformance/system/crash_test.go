package system_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
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

// startCrashLoad runs 4 standard senders, 4 FIFO senders (one group each) and 4
// consumers over clients (round robin), tolerating failures: only acknowledged sends count.
func startCrashLoad(clients []*sqs.Client, std, fifo []string) *loadRun {
	r := &loadRun{l: newLedger()}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	for i := 0; i < 4; i++ {
		r.senders.Add(2)
		go func() {
			defer r.senders.Done()
			r.l.sendStandard(ctx, clients[i%len(clients)], std[i%len(clients)], fmt.Sprintf("s%d", i), 1_000_000, false)
		}()
		go func() {
			defer r.senders.Done()
			r.l.sendFIFO(ctx, clients[i%len(clients)], fifo[i%len(clients)], fmt.Sprintf("g%d", i), 1_000_000, false)
		}()
	}
	cctx, ccancel := context.WithCancel(context.Background())
	r.stopC = ccancel
	for i := 0; i < 4; i++ {
		r.cons.Add(2)
		go func() {
			defer r.cons.Done()
			r.l.consume(cctx, i, clients[i%len(clients)], std[i%len(clients)], crashVT, false)
		}()
		go func() {
			defer r.cons.Done()
			r.l.consume(cctx, 100+i, clients[i%len(clients)], fifo[i%len(clients)], crashVT, false)
		}()
	}
	return r
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

// drain lets the consumers (restarted on clients) run until every acknowledged message
// was delivered, and fails with what is missing.
func (r *loadRun) drain(t *testing.T, clients []*sqs.Client, std, fifo []string) {
	t.Helper()
	r.stopC()
	r.cons.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.l.consume(ctx, 200+i, clients[i%len(clients)], std[i%len(clients)], crashVT, false)
		}()
		go func() {
			defer wg.Done()
			r.l.consume(ctx, 300+i, clients[i%len(clients)], fifo[i%len(clients)], crashVT, false)
		}()
	}
	missing := r.l.waitAllDelivered(ctx, nil)
	cancel()
	wg.Wait()
	if len(missing) > 0 {
		t.Errorf("%d of %d acknowledged messages never delivered, e.g. %v", len(missing), r.l.ackedN.Load(), missing[:min(len(missing), 5)])
		return
	}
	t.Logf("%d acknowledged sends, all delivered", r.l.ackedN.Load())
}

// TestKillGatewayUnderLoad kills a gateway with SIGKILL while senders and consumers run
// through it, restarts one on the same database, and checks that every message whose
// send returned success is delivered.
func TestKillGatewayUnderLoad(t *testing.T) {
	db := newDatabase(t, serverDSN(t))
	g := startGateway(t, db)
	c := newClient(g, 1) // no retries: a call to the dead gateway fails at once
	std := queueOn(t, "sys-crash", nil, c)
	fifo := queueOn(t, "sys-crash.fifo", map[string]string{"FifoQueue": "true"}, c)

	run := startCrashLoad([]*sqs.Client{c}, std, fifo)
	run.waitAcked(t, int64(scale(600)))
	g.kill()
	run.stopSenders()
	t.Logf("killed the gateway after %d acknowledged sends", run.l.ackedN.Load())

	g2 := startGateway(t, db)
	c2 := newClient(g2, 0)
	std2 := queueOn(t, "sys-crash", nil, c2)
	fifo2 := queueOn(t, "sys-crash.fifo", map[string]string{"FifoQueue": "true"}, c2)
	run.drain(t, []*sqs.Client{c2}, std2, fifo2)
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

	run := startCrashLoad(clients, std, fifo)
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
	run.drain(t, clients, std, fifo)

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
// finishes: every message reaches the destination once.
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
	t.Logf("task adopted after the kill and completed; %d messages moved (the task counted %d)", n, done.ApproximateNumberOfMessagesMoved)
}
