package cosmos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers/cosmos"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/gateway"
)

// fifoAccount answers what a FIFO send reads (the account, the container, the receipt
// key, the queue's record; no head and no deduplication marker yet) and refuses its
// transactional batch with batch.
type fifoAccount struct {
	t     *testing.T
	batch func(r *http.Request) *http.Response
}

func (f *fifoAccount) RoundTrip(r *http.Request) (*http.Response, error) {
	reply := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Request: r,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
	}
	if r.Header.Get("x-ms-cosmos-is-batch-request") == "True" {
		resp := f.batch(r)
		resp.Request = r
		return resp, nil
	}
	switch p := r.URL.Path; {
	case p == "/" || p == "":
		return reply(200, `{"id":"fake","writableLocations":[{"name":"local","databaseAccountEndpoint":"https://fake.local/"}],`+
			`"readableLocations":[{"name":"local","databaseAccountEndpoint":"https://fake.local/"}],"enableMultipleWriteLocations":false}`), nil
	case strings.HasSuffix(p, "/colls/queues"):
		return reply(200, `{"id":"queues","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`), nil
	case strings.HasSuffix(p, "/docs/secret"):
		return reply(200, `{"id":"secret","pk":"catalog","key":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}`), nil
	case strings.HasSuffix(p, "/docs/q:f1.fifo"):
		q, err := json.Marshal(map[string]any{"id": "q:f1.fifo", "pk": "catalog", "kind": "queue", "name": "f1.fifo", "inc": "i1",
			"attrs": drivertest.FIFOAttributes(), "tags": map[string]string{}, "deleted": 0})
		if err != nil {
			f.t.Fatal(err)
		}
		return reply(200, string(q)), nil
	}
	return reply(404, `{"code":"NotFound","message":"Entity with the specified id does not exist in the system."}`), nil
}

// TestFIFOWriteFailureLogged: when Cosmos refuses a FIFO send's transactional batch, the
// gateway's log line for the request carries what Cosmos said (status, code, message,
// substatus, activity id), not only the driver's summary, and the client's answer none
// of it. Cosmos refuses a batch in two ways: the request fails (an HTTP error, which the
// SDK returns as an *azcore.ResponseError), or it answers 207 with the failed operation's
// own status.
func TestFIFOWriteFailureLogged(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch func(r *http.Request) *http.Response
		level string
		said  []string // in the log line
		own   []string // of those, what only the log may say
	}{
		{"request refused", func(*http.Request) *http.Response {
			return &http.Response{StatusCode: 503, Status: "503 Service Unavailable",
				Header: http.Header{"Content-Type": {"application/json"}, "X-Ms-Substatus": {"21008"}},
				Body: io.NopCloser(strings.NewReader(`{"code":"ServiceUnavailable","message":"The service is unavailable: ` +
					`replica quorum lost. ActivityId: 7d5c6a1e-0000"}`))}
		}, "ERROR", []string{"503", "ServiceUnavailable", "replica quorum lost", "substatus 21008"}, []string{"replica quorum lost"}},
		{"operation refused", func(*http.Request) *http.Response {
			return &http.Response{StatusCode: 207, Status: "207 Multi-Status",
				Header: http.Header{"Content-Type": {"application/json"}, "X-Ms-Activity-Id": {"5f1e0c2a-0000"}},
				Body:   io.NopCloser(strings.NewReader(`[{"statusCode":424},{"statusCode":424},{"statusCode":413,"requestCharge":1.2}]`))}
		}, "WARN", []string{"operation 2 answered 413", "activity id 5f1e0c2a-0000"}, []string{"5f1e0c2a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := cosmos.Open(context.Background(), cosmos.Options{Endpoint: "https://fake.local/", Key: emulatorKey,
				Transport: &http.Client{Transport: &fifoAccount{t: t, batch: tc.batch}}})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			var logs bytes.Buffer
			gw, err := gateway.New(context.Background(), gateway.Config{Driver: d, PublicURL: "http://sqs.test",
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer gw.Close()
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"QueueUrl":"http://sqs.test/000000000000/f1.fifo",`+
				`"MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"d1"}`))
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
			w := httptest.NewRecorder()
			gw.ServeHTTP(w, req)
			if w.Code == http.StatusOK {
				t.Fatalf("SendMessage succeeded: %s", w.Body)
			}
			id := w.Header().Get("x-amzn-RequestId")
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "request_id="+id) {
					line = l
				}
			}
			if !strings.Contains(line, "level="+tc.level) || !strings.Contains(line, "cosmos: SendMessages: FIFO write") {
				t.Fatalf("log line of request %s: %q, want one at %s about the FIFO write; log:\n%s", id, line, tc.level, logs.String())
			}
			for _, s := range tc.said {
				if !strings.Contains(line, s) {
					t.Errorf("the log line does not say %q: %s", s, line)
				}
			}
			for _, s := range tc.own {
				if strings.Contains(w.Body.String(), s) {
					t.Errorf("the response says %q: %s", s, w.Body)
				}
			}
			t.Log(line)
		})
	}
}
