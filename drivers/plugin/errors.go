package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/anysqs/anysqs/drivers"
	pb "github.com/anysqs/anysqs/drivers/plugin/internal/driverpb"
)

// An error crosses the boundary as a gRPC status: a *drivers.Error as the status's
// detail (pb.Error: kind, message, cause text, retry hint), context errors as Canceled
// and DeadlineExceeded, anything else as Unknown with a plain pb.Error detail holding
// its text. The status code is only a courtesy to gRPC tooling; the detail is what the
// host reads, and a status without one is the transport's (gRPC reports some broken
// connections as Unknown, which must not pass for the plugin's own answer).

func toErrorDetail(e *drivers.Error) *pb.Error {
	if e == nil {
		return nil
	}
	out := &pb.Error{Kind: int32(e.Kind), Message: e.Message, RetryAfterNs: int64(e.RetryAfter)}
	if e.Err != nil {
		cause := e.Err.Error()
		out.Cause = &cause
		switch {
		case errors.Is(e.Err, context.Canceled):
			out.ContextCause = pb.ContextCause_CONTEXT_CAUSE_CANCELED
		case errors.Is(e.Err, context.DeadlineExceeded):
			out.ContextCause = pb.ContextCause_CONTEXT_CAUSE_DEADLINE_EXCEEDED
		}
	}
	return out
}

// remoteCause is a native error of the plugin, of which only the text crosses.
type remoteCause struct{ msg string }

func (e *remoteCause) Error() string { return e.msg }

// contextCause keeps a context error's identity (errors.Is) under the plugin's text.
type contextCause struct {
	msg string
	err error
}

func (e *contextCause) Error() string { return e.msg }
func (e *contextCause) Unwrap() error { return e.err }

func fromErrorDetail(e *pb.Error) *drivers.Error {
	if e == nil {
		return nil
	}
	out := &drivers.Error{Kind: drivers.Kind(e.GetKind()), Message: e.GetMessage(), RetryAfter: time.Duration(e.GetRetryAfterNs())}
	if e.Cause != nil {
		switch e.GetContextCause() {
		case pb.ContextCause_CONTEXT_CAUSE_CANCELED:
			out.Err = &contextCause{msg: e.GetCause(), err: context.Canceled}
		case pb.ContextCause_CONTEXT_CAUSE_DEADLINE_EXCEEDED:
			out.Err = &contextCause{msg: e.GetCause(), err: context.DeadlineExceeded}
		default:
			out.Err = &remoteCause{msg: e.GetCause()}
		}
	}
	return out
}

var kindCodes = map[drivers.Kind]codes.Code{
	drivers.KindNotFound:             codes.NotFound,
	drivers.KindAlreadyExists:        codes.AlreadyExists,
	drivers.KindInvalidArgument:      codes.InvalidArgument,
	drivers.KindUnsupported:          codes.Unimplemented,
	drivers.KindFailedPrecondition:   codes.FailedPrecondition,
	drivers.KindPurgeInProgress:      codes.FailedPrecondition,
	drivers.KindInvalidReceiptHandle: codes.InvalidArgument,
	drivers.KindMessageNotInflight:   codes.FailedPrecondition,
	drivers.KindThrottled:            codes.ResourceExhausted,
	drivers.KindUnavailable:          codes.Unavailable,
	drivers.KindInternal:             codes.Internal,
	drivers.KindDeletedRecently:      codes.FailedPrecondition,
	drivers.KindOverLimit:            codes.ResourceExhausted,
	drivers.KindAborted:              codes.Aborted,
	drivers.KindStaleReceiptHandle:   codes.FailedPrecondition,
}

// toStatus is the plugin side: the driver's error as the gRPC error a handler returns.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var de *drivers.Error
	if errors.As(err, &de) {
		code, ok := kindCodes[de.Kind]
		if !ok {
			code = codes.Unknown
		}
		st, derr := status.New(code, err.Error()).WithDetails(protoadapt.MessageV1Of(toErrorDetail(de)))
		if derr != nil {
			return status.Error(codes.Internal, fmt.Sprintf("plugin: encoding error %q: %v", err, derr))
		}
		return st.Err()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	st, derr := status.New(codes.Unknown, err.Error()).WithDetails(protoadapt.MessageV1Of(&pb.Error{Message: err.Error(), Plain: true}))
	if derr != nil {
		return status.Error(codes.Internal, fmt.Sprintf("plugin: encoding error %q: %v", err, derr))
	}
	return st.Err()
}

// fromStatus is the host side: the error a driver method returns for a failed call.
// A status without our detail is the transport's own (the plugin died, hangs, or is not
// one of ours): the outcome is unknown, so the call fails KindUnavailable, which the
// client may retry. Only the caller's own cancellation is returned as it is.
func fromStatus(ctx context.Context, name string, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	st, ok := status.FromError(err)
	if !ok {
		return drivers.Wrap(drivers.KindUnavailable, err, "plugin "+name)
	}
	for _, d := range st.Details() {
		if e, ok := d.(*pb.Error); ok {
			if e.GetPlain() {
				return &remoteCause{msg: e.GetMessage()}
			}
			return fromErrorDetail(e)
		}
	}
	// The caller's context is live (checked above). A Canceled or DeadlineExceeded status
	// then means the plugin's side gave up, or the connection to it was closed under the
	// call (gRPC cancels the calls of a connection that closes, as a restart does): the
	// outcome is unknown, like any transport failure.
	// The status's message says what cut the call ("grpc: the client connection is
	// closing", say); a context error keeps its identity under it.
	cause := errors.New(st.Message())
	switch st.Code() {
	case codes.Canceled:
		cause = &contextCause{msg: st.Message(), err: context.Canceled}
	case codes.DeadlineExceeded:
		// gRPC times the caller's deadline with its own timer, which can fire just before
		// the context's: a deadline that has passed is the caller's own end.
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			return context.DeadlineExceeded
		}
		cause = &contextCause{msg: st.Message(), err: context.DeadlineExceeded}
	}
	return drivers.Wrap(drivers.KindUnavailable, cause, "plugin "+name+" ("+st.Code().String()+")")
}

// transportFailure reports whether err, a failed call's error, says the connection to
// the plugin process is broken, rather than carrying an answer from the plugin.
func transportFailure(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable && len(st.Details()) == 0
}
