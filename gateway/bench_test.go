package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
)

// cannedDriver answers the message hot path with fixed results, so the benchmarks below
// time the gateway's own work (decode, validate, digest, encode) and nothing of a backend.
type cannedDriver struct {
	drivers.Driver // queue calls go to an in-memory SQLite
	msgs           []drivers.Message
}

func (d *cannedDriver) SendMessages(_ context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	res := drivers.SendMessagesResult{Entries: make([]drivers.SendEntryResult, len(req.Entries))}
	for i, e := range req.Entries {
		res.Entries[i] = drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID}
	}
	return res, nil
}

func (d *cannedDriver) ReceiveMessages(_ context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	return drivers.ReceiveMessagesResult{Messages: d.msgs[:req.MaxMessages]}, nil
}

func (d *cannedDriver) DeleteMessages(_ context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	return drivers.BatchResult{Entries: make([]drivers.EntryResult, len(req.Entries))}, nil
}

// BenchmarkServeHTTP is the gateway's CPU per API call of the load generator's cycle
// (SendMessageBatch, ReceiveMessage, DeleteMessageBatch over AWS JSON, 100-byte bodies),
// without HTTP transport or backend: compare with the driver's cost per call.
func BenchmarkServeHTTP(b *testing.B) {
	ctx := context.Background()
	d := &cannedDriver{Driver: memDriver(b)}
	body := strings.Repeat("m", 100)
	for i := range 10 {
		d.msgs = append(d.msgs, drivers.Message{
			MessageID:     fmt.Sprintf("9b0c6f9e-1d4f-4b7e-8d7c-%012d", i),
			ReceiptHandle: fmt.Sprintf("AQEB%0200d", i),
			Body:          body, ReceiveCount: 1, SenderID: "AIDAANYSQS",
		})
	}
	// Plain, with Prometheus metrics, with SigV4 verification, and routed (two backends,
	// the queue on the third route's), to show what each costs.
	for _, variant := range []string{"plain", "metrics", "sigv4", "routed"} {
		b.Run(variant, func(b *testing.B) { benchServeHTTP(b, ctx, d, body, variant) })
	}
}

func benchServeHTTP(b *testing.B, ctx context.Context, d *cannedDriver, body string, variant string) {
	cfg := gateway.Config{Driver: d, PublicURL: "http://sqs.test"}
	switch variant {
	case "metrics":
		cfg.Metrics = prometheus.NewRegistry()
	case "sigv4":
		cfg.Credentials = map[string]string{"AKIDBENCH": "bench-secret"}
	case "routed":
		cfg.Driver = nil
		cfg.Backends = []gateway.Backend{{Name: "main", Driver: d}, {Name: "other", Driver: memDriver(b)}}
		cfg.Routes = []gateway.Route{{Queues: "orders*", Backend: "other"}, {Queues: "*.fifo", Backend: "other"},
			{Queues: "bench*", Backend: "main"}, {Backend: "other"}}
	}
	// Each distinct request is signed once (the signature stays valid for 15 minutes), so
	// the loop times the gateway's verification, not the client's signing.
	signed := map[string]http.Header{}
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	serve := func(action, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		if cfg.Credentials != nil {
			h, ok := signed[action+body]
			if !ok {
				sum := sha256.Sum256([]byte(body))
				if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "AKIDBENCH", SecretAccessKey: "bench-secret"},
					req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now()); err != nil {
					b.Fatal(err)
				}
				h = req.Header.Clone()
				signed[action+body] = h
			}
			req.Header = h.Clone()
		}
		w := httptest.NewRecorder()
		gw.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", action, w.Code, w.Body)
		}
		return w
	}
	serve("CreateQueue", `{"QueueName":"bench"}`) // existing is fine: same attributes
	const url = "http://sqs.test/000000000000/bench"
	for _, n := range []int{1, 10} {
		var send, del strings.Builder
		fmt.Fprintf(&send, `{"Entries":[`)
		fmt.Fprintf(&del, `{"Entries":[`)
		for i := range n {
			if i > 0 {
				send.WriteByte(',')
				del.WriteByte(',')
			}
			fmt.Fprintf(&send, `{"Id":"%d","MessageBody":"%s"}`, i, body)
			fmt.Fprintf(&del, `{"Id":"%d","ReceiptHandle":"%s"}`, i, d.msgs[i].ReceiptHandle)
		}
		fmt.Fprintf(&send, `],"QueueUrl":"%s"}`, url)
		fmt.Fprintf(&del, `],"QueueUrl":"%s"}`, url)
		calls := []struct{ action, body string }{
			{"SendMessageBatch", send.String()},
			{"ReceiveMessage", fmt.Sprintf(`{"MaxNumberOfMessages":%d,"QueueUrl":"%s","VisibilityTimeout":30}`, n, url)},
			{"DeleteMessageBatch", del.String()},
		}
		for _, c := range calls {
			b.Run(fmt.Sprintf("%s/batch%d", c.action, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					serve(c.action, c.body)
				}
			})
		}
	}
}
