package conformance

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
)

// peer is another gateway on a harness's storage and clock, as a second instance behind
// a load balancer would be.
type peer struct {
	SQS *sqs.Client
	drv drivers.Driver
	gw  *gateway.Server
}

func (h *H) peer() *peer {
	h.T.Helper()
	d, err := h.st.open(h.Ctx)
	if err != nil {
		h.T.Fatalf("open a second %s driver: %v", h.backend, err)
	}
	gw, err := gateway.New(h.Ctx, gateway.Config{Driver: d, Clock: h.gatewayClock(), AccountID: testAccount,
		Region: testRegion, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SweepInterval: time.Minute,
		Credentials: map[string]string{testAccessKey: testSecretKey}})
	if err != nil {
		d.Close()
		h.T.Fatalf("start a second gateway: %v", err)
	}
	srv := httptest.NewServer(gw)
	p := &peer{drv: d, gw: gw}
	p.SQS = sqs.NewFromConfig(aws.Config{}, func(o *sqs.Options) {
		*o = h.newClient(protocolJSON).Options()
		o.BaseEndpoint = aws.String(srv.URL)
	})
	h.T.Cleanup(func() {
		srv.Close()
		p.gw.Close()
		p.drv.Close()
	})
	return p
}

// crash stops p as a killed process would leave things: its database connections go
// first, so it can neither record progress nor hand its tasks on.
func (p *peer) crash() {
	p.drv.Close()
	p.gw.Close()
}

// TestMoveTasksAcrossGateways: on PostgreSQL, gateways on one schema share message move
// tasks. A task started through one is listed through the others and a second one on its
// source is refused through any; when the gateway running it dies, another adopts it once
// its lease lapses and finishes it; a cancel through another gateway stops its runner.
func TestMoveTasksAcrossGateways(t *testing.T) {
	h := newHarness(t, postgresBackend())
	b, c := h.peer(), h.peer()
	list := func(cl *sqs.Client, dl string) []string {
		out, err := cl.ListMessageMoveTasks(h.Ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(h.Arn(dl))})
		h.Must(err, "ListMessageMoveTasks")
		var got []string
		for _, r := range out.Results {
			got = append(got, aws.ToString(r.Status)+" "+aws.ToString(r.TaskHandle))
		}
		return got
	}

	dl, src, out := h.slowMoveTask(c.SQS) // through gateway C
	want := "RUNNING " + aws.ToString(out.TaskHandle)
	for name, cl := range map[string]*sqs.Client{"A": h.SQS, "B": b.SQS, "C": c.SQS} {
		if got := list(cl, dl); len(got) != 1 || got[0] != want {
			h.T.Fatalf("ListMessageMoveTasks through %s = %v, want [%s]", name, got, want)
		}
	}
	_, err := b.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dl))})
	h.WantErr(err, "a second task on the source through gateway B", "UnsupportedOperation")

	c.crash()
	// A or B adopts the task once C's lease lapses (30 s of gateway clock) and finishes it.
	task := h.awaitMoveTask(dl, "COMPLETED")
	if task.ApproximateNumberOfMessagesMoved != 5 {
		h.T.Fatalf("the task counts %d moved; 5 messages moved", task.ApproximateNumberOfMessagesMoved)
	}
	if got := h.receiveN(src, 5, 30); len(got) != 5 {
		h.T.Fatalf("%d of 5 messages are back in the source queue", len(got))
	}

	// A task run by B, cancelled through A once B's first step has moved a message: the
	// task is CANCELLING, still the source's active task, until B's next step, which
	// reports before it moves anything and makes it CANCELLED.
	dl2, _, out2 := h.slowMoveTask(b.SQS) // through gateway B
	h.Eventually("the first step to move a message", 0, func() bool {
		return h.Attr(dl2, "ApproximateNumberOfMessages") == "4"
	})
	_, err = h.SQS.CancelMessageMoveTask(h.Ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: out2.TaskHandle})
	h.Must(err, "CancelMessageMoveTask through gateway A")
	if got := list(b.SQS, dl2); len(got) != 1 || got[0] != "CANCELLING " {
		h.T.Fatalf("ListMessageMoveTasks through B after the cancel = %q, want [CANCELLING] without a handle", got)
	}
	_, err = b.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dl2))})
	h.WantErr(err, "a task on a source whose task is cancelling", "UnsupportedOperation")
	_, err = h.SQS.CancelMessageMoveTask(h.Ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: out2.TaskHandle})
	h.WantErr(err, "cancelling a cancelling task", "ResourceNotFoundException")
	task2 := h.awaitMoveTask(dl2, "CANCELLED")
	// Let B's runner take several more steps if it were still running.
	for i := 0; i < 10; i++ {
		h.Advance(time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	if left := h.Attr(dl2, "ApproximateNumberOfMessages"); task2.ApproximateNumberOfMessagesMoved != 1 || left != "4" {
		h.T.Fatalf("after the cancel: the task counts %d moved and %s messages are left, want 1 and 4",
			task2.ApproximateNumberOfMessagesMoved, left)
	}
}

// TestQueueNameReuseAcrossGateways: on PostgreSQL, a queue deleted through one gateway
// cannot be created again through another for 60 seconds, as in SQS.
func TestQueueNameReuseAcrossGateways(t *testing.T) {
	h := newHarness(t, postgresBackend())
	h.checkNameReuse(h.peer().SQS) // deleted through the harness's gateway, created through the peer
}
