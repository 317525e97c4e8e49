package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// TestEveryKindMapped: a kind added to drivers without a case in kindSQSError would reach
// clients as InternalError, which SDKs report as the gateway's fault.
func TestEveryKindMapped(t *testing.T) {
	// stringer names every declared kind and renders the first undeclared one as Kind(n).
	n := 0
	for k := drivers.KindUnknown; !strings.HasPrefix(k.String(), "Kind("); k++ {
		n++
		se := kindError(&drivers.Error{Kind: k, Message: "detail"}, "q1")
		internal := k == drivers.KindUnknown || k == drivers.KindInternal
		if (se.Code == sqserr.InternalError) != internal {
			t.Errorf("%v maps to %s", k, se.Code)
		}
		if _, ok := sqserr.Specs[se.Code]; !ok {
			t.Errorf("%v maps to %s, which has no Spec", k, se.Code)
		}
	}
	if n <= int(drivers.KindAborted) {
		t.Errorf("iterated %d kinds, fewer than declared", n)
	}
}

func TestKindErrorNewKinds(t *testing.T) {
	cases := []struct {
		kind    drivers.Kind
		code    sqserr.Code
		message string // part of the message
	}{
		{drivers.KindOverLimit, sqserr.OverLimit, "queue q1: over a backend limit: detail"},
		{drivers.KindAborted, sqserr.ServiceUnavailable, "contention"},
		{drivers.KindThrottled, sqserr.RequestThrottled, "throttling"},
	}
	for _, tc := range cases {
		se := kindError(&drivers.Error{Kind: tc.kind, Message: "detail", RetryAfter: 3 * time.Second}, "q1")
		if se.Code != tc.code || !strings.Contains(se.Message, tc.message) {
			t.Errorf("%v: got %s %q, want %s and a message containing %q", tc.kind, se.Code, se.Message, tc.code, tc.message)
		}
		if se.RetryAfter != 3*time.Second {
			t.Errorf("%v: RetryAfter %v, want the driver's 3s", tc.kind, se.RetryAfter)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{time.Nanosecond, "1"},
		{999 * time.Millisecond, "1"},
		{time.Second, "1"},
		{time.Second + time.Millisecond, "2"},
		{90 * time.Second, "90"},
	}
	for _, tc := range cases {
		if got := retryAfter(tc.d); got != tc.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tc.d, got, tc.want)
		}
	}
}

// TestBareErrorsMapped: a driver that returns a context error of its own (a timeout, or a
// call cut short) leaves the client a retryable ServiceUnavailable, not an InternalError.
func TestBareErrorsMapped(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code sqserr.Code
	}{
		{context.Canceled, sqserr.ServiceUnavailable},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), sqserr.ServiceUnavailable},
		{errors.New("something else"), sqserr.InternalError},
		{drivers.Wrap(drivers.KindNotFound, context.Canceled, "gone"), sqserr.QueueDoesNotExist},
	} {
		if got := driverError(tc.err, "q1").Code; got != tc.code {
			t.Errorf("driverError(%v) = %s, want %s", tc.err, got, tc.code)
		}
	}
}
