package cosmos_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/cosmos"
)

// fakeAccount answers the account and item reads of a driver that opens and reads one
// queue; the queue read is throttled (429 with x-ms-retry-after-ms) throttles times.
type fakeAccount struct {
	throttles  int32
	retryAfter string
	queueReads atomic.Int32
}

func (f *fakeAccount) RoundTrip(r *http.Request) (*http.Response, error) {
	reply := func(status int, body string, hdr ...string) (*http.Response, error) {
		h := http.Header{"Content-Type": {"application/json"}, "X-Ms-Request-Charge": {"1.5"}}
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Set(hdr[i], hdr[i+1])
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
	switch p := r.URL.Path; {
	case p == "/" || p == "":
		return reply(200, `{"id":"fake","writableLocations":[{"name":"local","databaseAccountEndpoint":"https://fake.local/"}],`+
			`"readableLocations":[{"name":"local","databaseAccountEndpoint":"https://fake.local/"}],"enableMultipleWriteLocations":false}`)
	case strings.HasSuffix(p, "/colls/queues"):
		return reply(200, `{"id":"queues","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`)
	case strings.HasSuffix(p, "/docs/secret"):
		return reply(200, `{"id":"secret","pk":"catalog","key":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}`)
	case strings.HasSuffix(p, "/docs/q:q1"):
		if f.queueReads.Add(1) <= f.throttles {
			return reply(429, `{"code":"TooManyRequests","message":"Request rate is large"}`, "x-ms-retry-after-ms", f.retryAfter)
		}
		return reply(200, `{"id":"q:q1","pk":"catalog","kind":"queue","name":"q1","inc":"i1","attrs":{},"tags":{},"deleted":0}`)
	}
	return reply(404, `{"code":"NotFound"}`)
}

func openFake(t *testing.T, f *fakeAccount, timeout string) *cosmos.Driver {
	t.Helper()
	d, err := cosmos.Open(context.Background(), cosmos.Options{Endpoint: "https://fake.local/", Key: emulatorKey,
		Transport: &http.Client{Transport: f}, RequestTimeout: timeout})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return d
}

// TestThrottleRetried: a 429 is retried after the wait the service asked for, within
// the request's deadline, and counted in the metrics with the RU the service charged.
func TestThrottleRetried(t *testing.T) {
	f := &fakeAccount{throttles: 2, retryAfter: "5"}
	d := openFake(t, f, "10s")
	if _, err := d.GetQueue(context.Background(), drivers.GetQueueRequest{Name: "q1"}); err != nil {
		t.Fatalf("GetQueue after two 429s: %v", err)
	}
	if n := f.queueReads.Load(); n != 3 {
		t.Fatalf("%d reads of the queue, want 3 (two throttled, one answered)", n)
	}
	ms, _ := d.Metrics(context.Background())
	got := map[string]float64{}
	for _, m := range ms {
		if m.Labels[0].Value == "GetQueue" {
			got[m.Name] = m.Value
		}
	}
	if got["anysqs_cosmos_throttled_total"] != 2 || got["anysqs_cosmos_requests_total"] != 3 || got["anysqs_cosmos_request_units_total"] != 4.5 {
		t.Fatalf("GetQueue metrics %v, want 2 throttled, 3 requests, 4.5 RU", got)
	}
}

// TestThrottleBeyondDeadline: when the service asks for a wait the request's deadline
// cannot afford, the driver answers at once with a retryable throttling error that
// carries the service's wait.
func TestThrottleBeyondDeadline(t *testing.T) {
	f := &fakeAccount{throttles: 1000, retryAfter: "60000"}
	d := openFake(t, f, "2s")
	_, err := d.GetQueue(context.Background(), drivers.GetQueueRequest{Name: "q1"})
	var de *drivers.Error
	if !errors.As(err, &de) || de.Kind != drivers.KindThrottled || de.RetryAfter != time.Minute {
		t.Fatalf("GetQueue: %v, want KindThrottled with RetryAfter 1m", err)
	}
	if f.queueReads.Load() != 1 {
		t.Fatalf("%d reads, want 1: a wait past the deadline is not waited for", f.queueReads.Load())
	}
}
