package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
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
