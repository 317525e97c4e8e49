package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
)

// failingList is a driver whose ListQueues fails with err.
type failingList struct {
	drivers.Driver
	err error
}

func (d failingList) ListQueues(context.Context, drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	return drivers.ListQueuesResult{}, d.err
}

func TestDriverErrorRendering(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		status     int
		code       string // JSON __type short name
		queryCode  string
		retryAfter string // "" for no header
	}{
		{"throttled with hint", &drivers.Error{Kind: drivers.KindThrottled, Message: "slow down", RetryAfter: 1500 * time.Millisecond},
			http.StatusForbidden, "RequestThrottled", "RequestThrottled", "2"},
		{"throttled without hint", drivers.Errorf(drivers.KindThrottled, "slow down"),
			http.StatusForbidden, "RequestThrottled", "RequestThrottled", ""},
		{"over limit with hint", &drivers.Error{Kind: drivers.KindOverLimit, Message: "partition full", RetryAfter: time.Minute},
			http.StatusForbidden, "OverLimit", "OverLimit", "60"},
		{"aborted", drivers.Errorf(drivers.KindAborted, "transaction conflict"),
			http.StatusServiceUnavailable, "ServiceUnavailable", "ServiceUnavailable", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver { return failingList{inner, tc.err} })

			status, h, body := e.jsonCall("ListQueues", `{}`)
			if status != tc.status || !strings.Contains(body, `"com.amazonaws.sqs#`+tc.code+`"`) {
				t.Errorf("JSON: %d %s, want %d %s", status, body, tc.status, tc.code)
			}
			if got := h.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("JSON: Retry-After %q, want %q", got, tc.retryAfter)
			}

			status, h, body = e.queryCall("/", url.Values{"Action": {"ListQueues"}})
			if status != tc.status || !strings.Contains(body, "<Code>"+tc.queryCode+"</Code>") {
				t.Errorf("Query: %d %s, want %d %s", status, body, tc.status, tc.queryCode)
			}
			if got := h.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Query: Retry-After %q, want %q", got, tc.retryAfter)
			}
		})
	}
}

// TestBackendErrorsDoNotLeak: what a backend's native error says (SQL, file paths,
// credentials) stays out of the response, in both protocols; the client gets the
// driver's summary and the request id under which the whole error is logged.
func TestBackendErrorsDoNotLeak(t *testing.T) {
	native := errors.New(`password authentication failed for user "admin" (password=hunter2) in SELECT * FROM anysqs.messages at /var/lib/anysqs/db`)
	for _, err := range []error{
		drivers.Wrap(drivers.KindUnavailable, native, "listing queues"),
		drivers.Wrap(drivers.KindInternal, native, "listing queues"),
		drivers.Wrap(drivers.KindAborted, native, "listing queues"),
		drivers.Wrap(drivers.KindThrottled, native, "listing queues"),
		native, // not a driver error at all
	} {
		e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver { return failingList{inner, err} })
		for proto, call := range map[string]func() (int, http.Header, string){
			"JSON":  func() (int, http.Header, string) { return e.jsonCall("ListQueues", `{}`) },
			"Query": func() (int, http.Header, string) { return e.queryCall("/", url.Values{"Action": {"ListQueues"}}) },
		} {
			status, h, body := call()
			for _, secret := range []string{"hunter2", "SELECT", "/var/lib", "admin"} {
				if strings.Contains(body, secret) {
					t.Errorf("%s %v: the response carries %q: %d %s", proto, err, secret, status, body)
				}
			}
			if id := h.Get("x-amzn-RequestId"); status >= 500 && (id == "" || !strings.Contains(body, id)) {
				t.Errorf("%s %v: a server fault's message should quote the request id %q: %s", proto, err, id, body)
			}
		}
	}
}

// failingSend is a driver whose sends fail: the whole call with err, or, when err is nil,
// every entry with entryErr.
type failingSend struct {
	drivers.Driver
	err      error
	entryErr *drivers.Error
}

func (d failingSend) SendMessages(_ context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	if d.err != nil {
		return drivers.SendMessagesResult{}, d.err
	}
	res := drivers.SendMessagesResult{}
	for _, e := range req.Entries {
		res.Entries = append(res.Entries, drivers.SendEntryResult{EntryID: e.EntryID, Err: d.entryErr})
	}
	return res, nil
}

// TestBackendWordsLogged: when the backend fails a request, or one entry of a batch, the
// gateway's log line under the request id carries what the backend said (the driver
// error's native cause), which the client never sees. Handlers map driver errors to SQS
// errors before writeError logs them, and batch entries fail in a 200 response, so
// neither reaches the log with the cause unless the SQS error keeps it. A backend's
// refusal that SQS words as the client's fault (OverLimit) is logged too, at WARN.
func TestBackendWordsLogged(t *testing.T) {
	native := errors.New(`POST https://acct.documents.azure.com/dbs/anysqs/colls/queues/docs: RESPONSE 503: ServiceUnavailable: "the partition is splitting"`)
	const said = `RESPONSE 503: ServiceUnavailable: \"the partition is splitting\"`
	unavailable := &drivers.Error{Kind: drivers.KindUnavailable, Message: "backend: SendMessages: FIFO write", Err: native}
	full := &drivers.Error{Kind: drivers.KindOverLimit, Message: "backend: send: refused", Err: native}
	const queueURL = "http://sqs.test/000000000000/words"
	single := `{"QueueUrl":"` + queueURL + `","MessageBody":"x"}`
	batch := `{"QueueUrl":"` + queueURL + `","Entries":[{"Id":"e1","MessageBody":"x"}]}`
	for _, tc := range []struct {
		name, action, body string
		driver             failingSend
		level              string // of the line; "" for none
	}{
		{"call", "SendMessage", single, failingSend{err: unavailable}, "ERROR"},
		{"call, not a driver error", "SendMessage", single, failingSend{err: native}, "ERROR"},
		{"call, over a backend limit", "SendMessage", single, failingSend{err: full}, "WARN"},
		{"single entry", "SendMessage", single, failingSend{entryErr: unavailable}, "ERROR"},
		{"batch entry", "SendMessageBatch", batch, failingSend{entryErr: unavailable}, "ERROR"},
		{"batch entry over a backend limit", "SendMessageBatch", batch, failingSend{entryErr: full}, "WARN"},
		{"client's fault", "SendMessage", single,
			failingSend{err: drivers.Wrap(drivers.KindInvalidArgument, native, "bad attribute")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			d := tc.driver
			d.Driver = memDriver(t)
			gw, err := gateway.New(context.Background(), gateway.Config{Driver: d, PublicURL: "http://sqs.test",
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer gw.Close()
			call := func(action, body string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-amz-json-1.0")
				req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
				w := httptest.NewRecorder()
				gw.ServeHTTP(w, req)
				return w
			}
			if w := call("CreateQueue", `{"QueueName":"words"}`); w.Code != http.StatusOK {
				t.Fatalf("CreateQueue: %d %s", w.Code, w.Body)
			}
			w := call(tc.action, tc.body)
			if tc.level != "" && strings.Contains(w.Body.String(), "partition is splitting") {
				t.Errorf("the response carries the native error: %d %s", w.Code, w.Body)
			}
			id := w.Header().Get("x-amzn-RequestId")
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "request_id="+id) {
					line = l
				}
			}
			switch {
			case tc.level == "" && line != "":
				t.Errorf("a client's fault is logged: %s", line)
			case tc.level != "" && (!strings.Contains(line, "level="+tc.level) || !strings.Contains(line, said)):
				t.Errorf("log line of request %s: %q, want one at %s with what the backend said; log:\n%s", id, line, tc.level, logs.String())
			}
			t.Log(line)
		})
	}
}
