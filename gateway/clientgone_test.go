package gateway_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/gateway"
)

// TestClientGone: a call whose client left before the answer (its request context ended)
// is not logged as a gateway error nor counted as InternalError; the request metrics
// count it as ClientGone.
func TestClientGone(t *testing.T) {
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	gw, err := gateway.New(context.Background(), gateway.Config{Driver: memDriver(t), PublicURL: "http://sqs.test",
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	call := func(ctx context.Context, action, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).WithContext(ctx)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		w := httptest.NewRecorder()
		gw.ServeHTTP(w, req)
		return w
	}
	if w := call(context.Background(), "CreateQueue", `{"QueueName":"gone"}`); w.Code != http.StatusOK {
		t.Fatalf("CreateQueue: %d %s", w.Code, w.Body)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	call(gone, "SendMessage", `{"QueueUrl":"http://sqs.test/000000000000/gone","MessageBody":"x"}`)

	if strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "client went away") {
		t.Errorf("log:\n%s\nwant a debug line about the client, no error", logs.String())
	}
	requests, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, mf := range requests {
		if mf.GetName() != "anysqs_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var action, outcome string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "action":
					action = l.GetValue()
				case "outcome":
					outcome = l.GetValue()
				}
			}
			if action == "SendMessage" && m.GetCounter().GetValue() > 0 {
				outcomes = append(outcomes, outcome)
			}
		}
	}
	if len(outcomes) != 1 || outcomes[0] != "ClientGone" {
		t.Errorf("SendMessage outcomes counted: %v, want [ClientGone]", outcomes)
	}
}
