package gateway_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// TestClientLimits: each access key has its own request bucket and long-poll allowance;
// a key past its rate gets RequestThrottled and past its long polls OverLimit, and
// neither touches another key's calls.
func TestClientLimits(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(start)
	gw, err := gateway.New(ctx, gateway.Config{Driver: memDriver(t), Clock: clk, PublicURL: "http://sqs.test",
		Credentials:  map[string]string{"AKIDA": "secret-a", "AKIDB": "secret-b"},
		ClientLimits: gateway.ClientLimits{RequestsPerSecond: 1, Burst: 3, MaxLongPolls: 1}})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan string, 10)
	gateway.SetOnWait(gw, func(q string) { waiting <- q })
	srv := httptest.NewServer(gw)
	t.Cleanup(func() { srv.Close(); _ = gw.Close() })
	client := func(key, secret string) *sqs.Client {
		return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Retryer: aws.NopRetryer{},
			Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")})
	}
	a, b := client("AKIDA", "secret-a"), client("AKIDB", "secret-b")
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return ""
	}

	// A's burst of three, then throttled; B still has its own three.
	if _, err := a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q")}); err != nil {
		t.Fatal(err)
	}
	qurl := aws.String("http://sqs.test/000000000000/q")
	for i := 0; i < 2; i++ {
		if _, err := a.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
			t.Fatalf("A's request %d of its burst: %v", i+2, err)
		}
	}
	if _, err := a.ListQueues(ctx, &sqs.ListQueuesInput{}); code(err) != "RequestThrottled" {
		t.Fatalf("A's fourth request at once: %v, want RequestThrottled", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := b.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
			t.Fatalf("B's request %d while A is throttled: %v", i+1, err)
		}
	}
	clk.Advance(10 * time.Second) // each bucket refills to its burst of three
	if _, err := a.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
		t.Fatalf("A after the bucket refilled: %v", err)
	}

	// A's one long poll waits; its second is OverLimit; B's is not refused.
	polled := make(chan error, 1)
	go func() {
		_, err := a.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qurl, WaitTimeSeconds: 20})
		polled <- err
	}()
	awaitEvent(t, waiting, "a long poll waiting")
	if _, err := a.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qurl, WaitTimeSeconds: 20}); code(err) != "OverLimit" {
		t.Fatalf("A's second concurrent long poll: %v, want OverLimit", err)
	}
	bPolled := make(chan error, 1)
	go func() {
		_, err := b.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qurl, WaitTimeSeconds: 20})
		bPolled <- err
	}()
	awaitEvent(t, waiting, "a long poll waiting")
	clk.Advance(21 * time.Second) // both polls end empty; A may poll again
	if err := awaitEvent(t, polled, "A's long poll ending"); err != nil {
		t.Fatalf("A's long poll: %v", err)
	}
	if err := awaitEvent(t, bPolled, "B's long poll ending"); err != nil {
		t.Fatalf("B's long poll while A held its allowance: %v", err)
	}
	go func() {
		_, err := a.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qurl, WaitTimeSeconds: 1})
		polled <- err
	}()
	awaitEvent(t, waiting, "A's next long poll waiting") // admitted: the first poll's allowance came back
	clk.Advance(2 * time.Second)
	if err := awaitEvent(t, polled, "A's long poll ending"); err != nil {
		t.Fatalf("A's long poll after the first ended: %v", err)
	}
}
