package plugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
)

// TestBackendWordsCross: what a plugin's backend said (a gRPC status of its own, an
// Azure response, a PostgreSQL error) crosses the boundary in the driver error's text,
// which the gateway logs, for a failed call and for a failed batch entry alike; and what
// cut a call on the transport (a closing connection) is said too, not only that the
// call was cancelled.
func TestBackendWordsCross(t *testing.T) {
	ctx := context.Background()
	for _, native := range []error{
		status.Error(codes.Unavailable, "the service is down: connection reset by peer"),
		errors.New("POST https://acct.documents.azure.com/dbs/anysqs/colls/queues/docs\n---\nRESPONSE 503: 503 Service Unavailable\nERROR CODE: 503 Service Unavailable\n{\"code\":\"ServiceUnavailable\"}"),
		errors.New("ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)"),
	} {
		in := &drivers.Error{Kind: drivers.KindUnavailable, Message: "send to q1", Err: native}
		out := fromStatus(ctx, "p", wireStatus(t, toStatus(in)))
		if drivers.KindOf(out) != drivers.KindUnavailable || out.Error() != in.Error() {
			t.Errorf("call: got %q (kind %v), want %q", out, drivers.KindOf(out), in)
		}
		r := fromSendEntryResult(wire(t, toSendEntryResult(drivers.SendEntryResult{EntryID: "e1", Err: in})))
		if r.Err == nil || r.Err.Kind != in.Kind || r.Err.Error() != in.Error() {
			t.Errorf("batch entry: got %v, want %q", r.Err, in)
		}
	}
	for _, tc := range []struct {
		code codes.Code
		want error
	}{
		{codes.Canceled, context.Canceled},
		{codes.DeadlineExceeded, context.DeadlineExceeded},
	} {
		cut := status.Error(tc.code, "grpc: the client connection is closing")
		got := fromStatus(ctx, "p", cut)
		if !errors.Is(got, tc.want) || drivers.KindOf(got) != drivers.KindUnavailable ||
			!strings.Contains(got.Error(), "grpc: the client connection is closing") {
			t.Errorf("%v: got %q (kind %v), want KindUnavailable wrapping %v that says what cut the call",
				tc.code, got, drivers.KindOf(got), tc.want)
		}
	}
}
