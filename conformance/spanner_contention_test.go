package conformance

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
)

// TestSpannerContention runs 16 concurrent receivers, 8 through each of two gateways
// (each with its own Spanner driver and client, so its own session), on one standard
// queue of one database, and checks that every message is delivered exactly once. It
// reports how many read-write transaction attempts Spanner aborted, from the drivers'
// Metrics.
func TestSpannerContention(t *testing.T) {
	st := rowNamed("spanner").prepare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // hang guard
	defer cancel()
	const (
		gateways  = 2
		receivers = 16
		messages  = 320
	)
	var drvs []drivers.Driver
	var clients []*sqs.Client
	for i := 0; i < gateways; i++ {
		d, err := st.open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := gateway.New(ctx, gateway.Config{Driver: d, AccountID: testAccount, Region: testRegion,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SweepInterval: time.Hour,
			Credentials: map[string]string{testAccessKey: testSecretKey}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(gw)
		t.Cleanup(func() { srv.Close(); gw.Close(); d.Close() })
		drvs = append(drvs, d)
		clients = append(clients, sqs.New(sqs.Options{Region: testRegion, BaseEndpoint: aws.String(srv.URL),
			Credentials:      credentials.NewStaticCredentialsProvider(testAccessKey, testSecretKey, ""),
			RetryMaxAttempts: 10}))
	}
	q, err := clients[0].CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("contention"),
		Attributes: map[string]string{"VisibilityTimeout": "600"}})
	if err != nil {
		t.Fatal(err)
	}
	url := q.QueueUrl
	for b := 0; b < messages/10; b++ {
		var entries []types.SendMessageBatchRequestEntry
		for i := 0; i < 10; i++ {
			n := b*10 + i
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String("m" + strconv.Itoa(n))})
		}
		out, err := clients[b%gateways].SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: entries})
		if err != nil || len(out.Failed) > 0 {
			t.Fatalf("send batch %d: %v %v", b, err, out)
		}
	}
	abortsBefore := metricOf(t, drvs, "anysqs_spanner_transaction_aborts_total")
	txBefore := metricOf(t, drvs, "anysqs_spanner_transactions_total")

	var mu sync.Mutex
	seen := map[string]int{}
	var received, errs atomic.Int64
	var wg sync.WaitGroup
	for r := 0; r < receivers; r++ {
		wg.Add(1)
		go func(c *sqs.Client) {
			defer wg.Done()
			for received.Load() < messages && ctx.Err() == nil {
				out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
				if err != nil {
					errs.Add(1)
					continue
				}
				var del []types.DeleteMessageBatchRequestEntry
				mu.Lock()
				for i, m := range out.Messages {
					seen[aws.ToString(m.Body)]++
					del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
				}
				mu.Unlock()
				received.Add(int64(len(out.Messages)))
				if len(del) > 0 {
					if d, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: url, Entries: del}); err != nil || len(d.Failed) > 0 {
						errs.Add(1)
					}
				}
			}
		}(clients[r%gateways])
	}
	wg.Wait()
	doubles, lost := 0, 0
	for n := 0; n < messages; n++ {
		switch c := seen["m"+strconv.Itoa(n)]; {
		case c == 0:
			lost++
		case c > 1:
			doubles += c - 1
		}
	}
	aborts := metricOf(t, drvs, "anysqs_spanner_transaction_aborts_total") - abortsBefore
	txs := metricOf(t, drvs, "anysqs_spanner_transactions_total") - txBefore
	t.Logf("contention: %d receivers through %d gateways, %d messages: %d double deliveries, %d lost, "+
		"%d aborted read-write transaction attempts (retried) in %d transactions, %d client errors after SDK retries",
		receivers, gateways, messages, doubles, lost, aborts, txs, errs.Load())
	if doubles > 0 || lost > 0 {
		t.Fatalf("%d double deliveries, %d lost messages", doubles, lost)
	}
	attrs, err := clients[1].GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"} {
		if attrs.Attributes[a] != "0" {
			t.Errorf("%s = %s after every message was deleted, want 0", a, attrs.Attributes[a])
		}
	}
}

// metricOf sums the drivers' samples of the counter name.
func metricOf(t *testing.T, ds []drivers.Driver, name string) int64 {
	var n float64
	for _, d := range ds {
		ms, err := d.Metrics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms {
			if m.Name == name {
				n += m.Value
				found = true
			}
		}
		if !found {
			t.Fatalf("driver reports no %s", name)
		}
	}
	return int64(n)
}
