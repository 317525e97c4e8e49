package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// routedEnv serves two in-memory backends (memDriver): "hot" takes hot-* and *.fifo, "cold"
// every other queue and declares queue tags unsupported, so that a check made against
// the wrong backend's declarations shows.
func routedEnv(t *testing.T, pre func(hot, cold drivers.Driver)) (*env, drivers.Driver, drivers.Driver, *bytes.Buffer) {
	t.Helper()
	hot := memDriver(t)
	cold := limited{Driver: memDriver(t), decls: map[capabilities.ID]declared{capabilities.QueueTags: {level: capabilities.Unsupported}}}
	if pre != nil {
		pre(hot, cold)
	}
	var logs bytes.Buffer
	clk := clock.NewFake(start)
	gw, err := gateway.New(context.Background(), gateway.Config{
		Backends: []gateway.Backend{{Name: "hot", Driver: hot}, {Name: "cold", Driver: cold}},
		Routes:   []gateway.Route{{Queues: "hot-*", Backend: "hot"}, {Queues: "*.fifo", Backend: "hot"}, {Backend: "cold"}},
		Clock:    clk, PublicURL: "http://sqs.test",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, gw: gw, clock: clk, http: httptest.NewServer(gw)}
	t.Cleanup(func() { e.http.Close(); _ = gw.Close() })
	return e, hot, cold, &logs
}

func stored(t *testing.T, d drivers.Driver) []string {
	t.Helper()
	res, err := d.ListQueues(context.Background(), drivers.ListQueuesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range res.Queues {
		names = append(names, q.Name)
	}
	return names
}

// TestRoutedQueuesLiveOnTheirBackend: each queue is created, written and read on the
// backend its name routes to, and ListQueues merges both backends in name order,
// page by page.
func TestRoutedQueuesLiveOnTheirBackend(t *testing.T) {
	e, hot, cold, _ := routedEnv(t, nil)
	c := e.sdk()
	ctx := context.Background()
	names := []string{"a", "hot-b", "c", "hot-d", "e.fifo", "f", "hot-g"}
	urls := map[string]string{}
	for _, n := range names {
		in := &sqs.CreateQueueInput{QueueName: aws.String(n)}
		if strings.HasSuffix(n, ".fifo") {
			in.Attributes = map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}
		}
		out, err := c.CreateQueue(ctx, in)
		if err != nil {
			t.Fatalf("CreateQueue %s: %v", n, err)
		}
		urls[n] = aws.ToString(out.QueueUrl)
	}
	if got, want := fmt.Sprint(stored(t, hot)), "[e.fifo hot-b hot-d hot-g]"; got != want {
		t.Errorf("hot holds %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(stored(t, cold)), "[a c f]"; got != want {
		t.Errorf("cold holds %s, want %s", got, want)
	}

	var listed []string
	p := sqs.NewListQueuesPaginator(c, &sqs.ListQueuesInput{MaxResults: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.QueueUrls) > 2 {
			t.Fatalf("a page of MaxResults 2 holds %d", len(page.QueueUrls))
		}
		for _, u := range page.QueueUrls {
			listed = append(listed, u[strings.LastIndexByte(u, '/')+1:])
		}
	}
	if got, want := fmt.Sprint(listed), "[a c e.fifo f hot-b hot-d hot-g]"; got != want {
		t.Errorf("ListQueues pages: %s, want %s", got, want)
	}

	for _, n := range []string{"a", "hot-b", "e.fifo"} {
		in := &sqs.SendMessageInput{QueueUrl: aws.String(urls[n]), MessageBody: aws.String("to " + n)}
		if strings.HasSuffix(n, ".fifo") {
			in.MessageGroupId = aws.String("g")
		}
		if _, err := c.SendMessage(ctx, in); err != nil {
			t.Fatalf("SendMessage %s: %v", n, err)
		}
		got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[n])})
		if err != nil || len(got.Messages) != 1 || aws.ToString(got.Messages[0].Body) != "to "+n {
			t.Fatalf("ReceiveMessage %s: %+v, %v", n, got, err)
		}
		if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(urls[n]), ReceiptHandle: got.Messages[0].ReceiptHandle}); err != nil {
			t.Fatalf("DeleteMessage %s: %v", n, err)
		}
	}
}

// TestRoutedChecksTheQueuesBackend: a queue's requests are checked against its own
// backend's declarations, and a dead-letter queue on another backend is refused.
func TestRoutedChecksTheQueuesBackend(t *testing.T) {
	e, _, cold, _ := routedEnv(t, nil)
	c := e.sdk()
	ctx := context.Background()
	tags := map[string]string{"team": "a"}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("hot-tagged"), Tags: tags}); err != nil {
		t.Fatalf("tags on hot, which declares them native: %v", err)
	}
	_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("cold-tagged"), Tags: tags})
	if err == nil {
		t.Fatal("tags on cold, which declares them unsupported: created")
	}
	if got := fmt.Sprint(stored(t, cold)); got != "[]" {
		t.Fatalf("a refused CreateQueue left %s on cold", got)
	}

	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("hot-dlq")}); err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:sqs:us-east-1:000000000000:hot-dlq"
	redrive := map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":"3"}`}
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("source"), Attributes: redrive})
	if err == nil || !strings.Contains(err.Error(), "InvalidParameterValue") || !strings.Contains(err.Error(), "on backend hot") {
		t.Fatalf("a dead-letter queue on another backend: %v; want InvalidParameterValue naming the backends", err)
	}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("hot-source"), Attributes: redrive}); err != nil {
		t.Fatalf("a dead-letter queue on the same backend: %v", err)
	}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("elsewhere")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn),
		DestinationArn: aws.String("arn:aws:sqs:us-east-1:000000000000:elsewhere")})
	if err == nil || !strings.Contains(err.Error(), "InvalidParameterValue") || !strings.Contains(err.Error(), "on backend cold") {
		t.Fatalf("a move task to another backend: %v; want InvalidParameterValue naming the backends", err)
	}
}

// TestRoutedStrandedQueuesAreReported: a queue stored on a backend its name no longer
// routes to is named in the start-up log, and not listed.
func TestRoutedStrandedQueuesAreReported(t *testing.T) {
	e, _, _, logs := routedEnv(t, func(hot, cold drivers.Driver) {
		for _, n := range []string{"hot-moved", "hot-moved2", "hot-moved3", "hot-moved4", "hot-moved5"} {
			if _, err := cold.CreateQueue(context.Background(), drivers.CreateQueueRequest{Queue: drivers.Queue{Name: n, CreatedAt: start, LastModified: start}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !strings.Contains(logs.String(), "hot-moved (routes to hot)") {
		t.Fatalf("start-up log does not name the stranded queue:\n%s", logs)
	}
	ctx := context.Background()
	if _, err := e.sdk().CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("zz")}); err != nil {
		t.Fatal(err)
	}
	// Pages of 2 whose first backend pages hold only stranded queues: the listing reads
	// past them instead of ending.
	var listed []string
	p := sqs.NewListQueuesPaginator(e.sdk(), &sqs.ListQueuesInput{MaxResults: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, page.QueueUrls...)
	}
	if len(listed) != 1 || !strings.HasSuffix(listed[0], "/zz") {
		t.Fatalf("ListQueues: %v; want zz alone", listed)
	}
	if got := gateway.BackendNames(e.gw); got != "hot:hot-*,*.fifo cold:(default)" {
		t.Fatalf("Backends: %s", got)
	}
}
