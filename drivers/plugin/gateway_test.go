package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/anysqs/anysqs/gateway"
)

// TestKilledUnderLoad kills the plugin process while SDK clients send, receive and
// delete through a gateway over it: every error a client sees is one the SDK retries,
// every acknowledged send is received in the end, and the same gateway serves again
// once the host has restarted the plugin.
func TestKilledUnderLoad(t *testing.T) {
	t.Parallel()
	o := options(t, "stalling-sqlite", map[string]any{"data_dir": t.TempDir()})
	o.HealthInterval = 50 * time.Millisecond
	h := open(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw, err := gateway.New(ctx, gateway.Config{Driver: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Credentials: map[string]string{"AKIDPLUGIN": "secret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()
	c := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("AKIDPLUGIN", "secret", "")})
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("load"),
		Attributes: map[string]string{"VisibilityTimeout": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	url := q.QueueUrl

	var (
		mu       sync.Mutex
		acked    = map[string]bool{}
		received = map[string]bool{}
		failures []error
	)
	check := func(err error) bool {
		if err == nil {
			return true
		}
		if ctx.Err() == nil && !unavailable(err) {
			mu.Lock()
			failures = append(failures, err)
			mu.Unlock()
		}
		return false
	}
	var sent atomic.Int64
	progress := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(2)
		go func() { // sender
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("w%d-%d", w, i)
				if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: &body}); check(err) {
					mu.Lock()
					acked[body] = true
					mu.Unlock()
					sent.Add(1)
					select {
					case progress <- struct{}{}:
					default:
					}
				}
			}
		}()
		go func() { // receiver
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				receiveAndDelete(ctx, c, url, 0, check, &mu, received)
			}
		}()
	}
	waitSent := func(n int64) {
		for sent.Load() < n {
			select {
			case <-progress:
			case <-ctx.Done():
				t.Fatalf("only %d sends acknowledged, want %d", sent.Load(), n)
			}
		}
	}

	waitSent(30)
	pid := h.PID()
	stalled := make(chan error, 1)
	go func() {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("stall")})
		stalled <- err
	}()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-stalled; !unavailable(err) {
		t.Errorf("the request in flight at the kill got %v, want ServiceUnavailable, which the SDK retries", err)
	}
	if err := h.WaitUp(ctx); err != nil {
		t.Fatal(err)
	}
	waitSent(sent.Load() + 30) // served again, by the same gateway
	close(stop)
	wg.Wait()
	if h.Restarts() < 1 || h.PID() == pid {
		t.Errorf("restarts %d, pid %d (killed %d): want a new plugin process", h.Restarts(), h.PID(), pid)
	}
	if err := gw.Ready(ctx); err != nil {
		t.Errorf("readiness after the restart: %v", err)
	}

	// Drain: messages whose delete failed at the kill come back when their visibility ends.
	for missing := -1; missing != 0; {
		receiveAndDelete(ctx, c, url, 2, check, &mu, received)
		mu.Lock()
		missing = 0
		for b := range acked {
			if !received[b] {
				missing++
			}
		}
		mu.Unlock()
		if ctx.Err() != nil {
			t.Fatalf("%d acknowledged messages never received", missing)
		}
	}
	for _, err := range failures {
		t.Errorf("a client saw an error other than ServiceUnavailable: %v", err)
	}
	t.Logf("%d sends acknowledged, all received; restarts %d", len(acked), h.Restarts())
}

// unavailable: err is SQS's ServiceUnavailable (the gateway's answer to KindUnavailable),
// an error the SDKs retry; an InternalError, say, would be a 500 that looks retryable
// too but says something else.
func unavailable(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ServiceUnavailable" &&
		retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

func receiveAndDelete(ctx context.Context, c *sqs.Client, url *string, wait int32, check func(error) bool,
	mu *sync.Mutex, received map[string]bool) {
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: wait})
	if !check(err) {
		return
	}
	for _, m := range out.Messages {
		// Received counts, not deleted: a delete that fails at the kill may have been
		// applied (its outcome is unknown), and the message was delivered anyway.
		mu.Lock()
		received[*m.Body] = true
		mu.Unlock()
		_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: m.ReceiptHandle})
		check(err)
	}
}
