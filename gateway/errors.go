package gateway

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// toSQSError turns any error into the SQS error the client sees. Driver errors should have
// been mapped with driverError already, which names the queue; this is the fallback.
func toSQSError(err error) *sqserr.Error {
	var se *sqserr.Error
	if errors.As(err, &se) {
		return se
	}
	return driverError(err, "")
}

// driverError maps a driver error kind to its SQS error; queue, when known, names the
// queue. A bare context error (the request ended, or a timeout of the driver's own) is
// retryable, not an internal error. The SQS error keeps err as its cause, for the log.
func driverError(err error, queue string) *sqserr.Error {
	var se *sqserr.Error
	var de *drivers.Error
	switch {
	case errors.As(err, &de):
		se = kindError(de, queue)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		se = sqserr.New(sqserr.ServiceUnavailable, "the request was cancelled before the backend answered")
	default:
		se = sqserr.New(sqserr.InternalError, "internal error")
	}
	se.Err = err
	return se
}

// kindError maps one driver error to its SQS error, keeping the backend's retry hint.
// A client's mistake is explained with the driver's whole message; for the backend's own
// failures the client gets the driver's summary only, never the native error under it
// (SQL, addresses, credentials): that stays in the SQS error's cause, which writeError
// logs with the request id.
func kindError(de *drivers.Error, queue string) *sqserr.Error {
	msg := de.Error()
	if serverFault(de.Kind) {
		msg = de.Message
	}
	se := kindSQSError(de.Kind, msg, queue)
	se.RetryAfter = de.RetryAfter
	se.Err = de
	return se
}

// serverFault says the kind is the backend's failure, not the request's.
func serverFault(k drivers.Kind) bool {
	switch k {
	case drivers.KindUnavailable, drivers.KindInternal, drivers.KindUnknown, drivers.KindThrottled,
		drivers.KindAborted, drivers.KindOverLimit:
		return true
	}
	return false
}

func kindSQSError(k drivers.Kind, msg, queue string) *sqserr.Error {
	switch k {
	case drivers.KindNotFound:
		return sqserr.New(sqserr.QueueDoesNotExist, "The specified queue %s does not exist.", queue)
	case drivers.KindAlreadyExists:
		return sqserr.New(sqserr.QueueNameExists, "A queue named %s already exists with different attributes.", queue)
	case drivers.KindInvalidArgument, drivers.KindFailedPrecondition:
		return sqserr.New(sqserr.InvalidParameterValue, "queue %s: %s", queue, msg)
	case drivers.KindUnsupported:
		return sqserr.New(sqserr.UnsupportedOperation, "queue %s: not supported by this backend: %s", queue, msg)
	case drivers.KindDeletedRecently:
		return sqserr.New(sqserr.QueueDeletedRecently, "You must wait %v after deleting a queue before you can create another queue with the same name (%s).", drivers.QueueNameReuseDelay, queue)
	case drivers.KindPurgeInProgress:
		return sqserr.New(sqserr.PurgeQueueInProgress, "Only one PurgeQueue operation on %s is allowed every 60 seconds.", queue)
	case drivers.KindInvalidReceiptHandle, drivers.KindStaleReceiptHandle:
		// Only reached without the handle at hand; handleError words these as SQS does.
		return sqserr.New(sqserr.ReceiptHandleIsInvalid, "The input receipt handle is invalid for queue %s: %s", queue, msg)
	case drivers.KindMessageNotInflight:
		return sqserr.New(sqserr.MessageNotInflight, "The message referred to is not in flight (queue %s).", queue)
	case drivers.KindThrottled:
		return sqserr.New(sqserr.RequestThrottled, "queue %s: the backend is throttling requests: %s", queue, msg)
	case drivers.KindUnavailable:
		return sqserr.New(sqserr.ServiceUnavailable, "queue %s: the backend is unavailable, retry: %s", queue, msg)
	case drivers.KindOverLimit:
		return sqserr.New(sqserr.OverLimit, "queue %s: over a backend limit: %s", queue, msg)
	case drivers.KindAborted:
		// SQS has no code for a conflict; ServiceUnavailable is one every SDK retries, and
		// the driver guarantees nothing was applied, so the retry is safe.
		return sqserr.New(sqserr.ServiceUnavailable, "queue %s: the backend aborted the operation because of contention and applied none of it, retry: %s", queue, msg)
	}
	return sqserr.New(sqserr.InternalError, "queue %s: internal error: %s", queue, msg)
}

// handleOp is the receipt-handle action a driver answered, which decides SQS's wording.
type handleOp int

const (
	opDelete handleOp = iota
	opVisibility
)

// handleError renders a driver's error for one receipt handle in SQS's words: SQS names
// the handle, not the queue, and says why a handle it issued cannot be used by action. In
// a batch entry (batch) SQS keeps the code ReceiptHandleIsInvalid and gives the reason
// alone (seen from DeleteMessageBatch on FIFO queues; ChangeMessageVisibilityBatch is
// worded the same way by analogy, unconfirmed). A visibility change refused on a standard queue's stale handle is something SQS
// would have applied where the backend declares receipt.stale degraded, so the policy
// decides it: the degraded header, or the capability's rejection under strict.
func (c *call) handleError(e *drivers.Error, handle, queue string, op handleOp, batch bool) *sqserr.Error {
	switch e.Kind {
	case drivers.KindInvalidReceiptHandle:
		return sqserr.New(sqserr.ReceiptHandleIsInvalid, "The input receipt handle \"%s\" is not a valid receipt handle.", handle)
	case drivers.KindStaleReceiptHandle:
		if op == opVisibility && !strings.HasSuffix(queue, ".fifo") {
			if err := c.need(queue, capabilities.ReceiptStale); err != nil {
				return toSQSError(err)
			}
		}
		reason := "The receipt handle has expired."
		if op == opVisibility {
			reason = "Message does not exist or is not available for visibility timeout change."
		}
		if batch {
			if op == opDelete {
				reason = strings.TrimSuffix(reason, ".") // as SQS's batch entry words it
			}
			return sqserr.New(sqserr.ReceiptHandleIsInvalid, "%s", reason)
		}
		return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter ReceiptHandle is invalid. Reason: %s", handle, reason)
	}
	return kindError(e, queue)
}

// entryError renders a per-entry driver error as a batch error entry.
func entryError(id string, e *drivers.Error, queue string) batchErrorEntry {
	return errorEntry(id, kindError(e, queue))
}

func errorEntry(id string, se *sqserr.Error) batchErrorEntry {
	spec := sqserr.SpecOf(se.Code)
	e := batchErrorEntry{Id: id, SenderFault: spec.Sender, Code: string(spec.Code), Message: se.Message}
	if _, ok := faultLevel(se); ok {
		e.fault = se
	}
	return e
}

// faultLevel says whether an error the client gets is logged, and at which level: a
// server fault at ERROR; the backend's refusal that SQS words as the client's fault (a
// backend's throttling, quota or full partition: RequestThrottled, OverLimit) at WARN,
// since only the operator can act on it; any other client fault not at all.
func faultLevel(se *sqserr.Error) (slog.Level, bool) {
	if !sqserr.SpecOf(se.Code).Sender {
		return slog.LevelError, true
	}
	if se.Err != nil && serverFault(drivers.KindOf(se.Err)) {
		return slog.LevelWarn, true
	}
	return 0, false
}

// batchOutput is the output of a batch action, whose entries may fail one by one.
type batchOutput interface{ failedEntries() []batchErrorEntry }

func (o sendMessageBatchOutput) failedEntries() []batchErrorEntry      { return o.Failed }
func (o deleteMessageBatchOutput) failedEntries() []batchErrorEntry    { return o.Failed }
func (o changeVisibilityBatchOutput) failedEntries() []batchErrorEntry { return o.Failed }

// logEntryFaults logs the entries of a batch's output that failed by the backend's
// fault, as writeError logs a failed request: the client has the entry's code and the
// driver's summary, the log also the cause, with what the backend said.
func (s *Server) logEntryFaults(action, reqID string, out any) {
	b, ok := out.(batchOutput)
	if !ok {
		return
	}
	for _, e := range b.failedEntries() {
		if e.fault == nil {
			continue
		}
		level, _ := faultLevel(e.fault)
		attrs := []any{"action", action, "request_id", reqID, "entry", e.Id, "err", e.fault}
		if e.fault.Err != nil {
			attrs = append(attrs, "cause", e.fault.Err)
		}
		s.log.Log(context.Background(), level, "batch entry failed", attrs...)
	}
}

// retryAfter renders d as a Retry-After value: whole seconds, rounded up so the client
// never comes back early, and at least 1.
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(int64(max((d+time.Second-1)/time.Second, 1)), 10)
}
