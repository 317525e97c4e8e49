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

// nativeErr stands for a backend's own error type (a *pgconn.PgError, an
// *azcore.ResponseError, a gRPC status), which must stay reachable under the SQS error.
type nativeErr struct{ msg string }

func (e *nativeErr) Error() string { return e.msg }

// TestDriverErrorKeepsCause: the SQS error made from any error keeps that error as its
// cause (for the log), the native one reachable with errors.As, while what the client
// sees (Error, Message) of a backend's failure holds only the driver's summary.
func TestDriverErrorKeepsCause(t *testing.T) {
	native := &nativeErr{"RESPONSE 403: Forbidden: partition key reached maximum size of 20 GB (substatus 1014)"}
	for _, tc := range []struct {
		name    string
		err     error
		code    sqserr.Code
		message string // the client's message, which must not hold the native text
	}{
		{"unavailable", drivers.Wrap(drivers.KindUnavailable, native, "backend: SendMessages: FIFO write"), sqserr.ServiceUnavailable,
			"queue q1: the backend is unavailable, retry: backend: SendMessages: FIFO write"},
		{"over limit", drivers.Wrap(drivers.KindOverLimit, native, "backend: send: refused"), sqserr.OverLimit,
			"queue q1: over a backend limit: backend: send: refused"},
		{"internal", drivers.Wrap(drivers.KindInternal, native, "sqlite"), sqserr.InternalError, "queue q1: internal error: sqlite"},
		{"throttled, wrapped again", fmt.Errorf("receive: %w", drivers.Wrap(drivers.KindThrottled, native, "backend: claim")),
			sqserr.RequestThrottled, "queue q1: the backend is throttling requests: backend: claim"},
		{"aborted", drivers.Wrap(drivers.KindAborted, native, "backend: send"), sqserr.ServiceUnavailable, "retry: backend: send"},
		{"not a driver error", fmt.Errorf("send: %w", native), sqserr.InternalError, "internal error"},
		{"context error", fmt.Errorf("%w: %w", context.DeadlineExceeded, native), sqserr.ServiceUnavailable, "cancelled before the backend answered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			se := driverError(tc.err, "q1")
			if se.Code != tc.code || !strings.Contains(se.Message, tc.message) {
				t.Errorf("got %s %q, want %s and a message containing %q", se.Code, se.Message, tc.code, tc.message)
			}
			if strings.Contains(se.Error(), "partition key") {
				t.Errorf("Error() %q carries the native error, which goes to the client", se.Error())
			}
			if se.Err != tc.err {
				t.Errorf("cause %v, want the error mapped, %v", se.Err, tc.err)
			}
			var got *nativeErr
			if !errors.As(se, &got) || got != native {
				t.Errorf("the native error is not reachable from %v", se)
			}
			if !strings.Contains(se.Err.Error(), native.msg) {
				t.Errorf("cause %q, want one saying %q", se.Err, native.msg)
			}
		})
	}
}
