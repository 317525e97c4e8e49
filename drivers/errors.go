package drivers

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies driver errors. The gateway maps each kind to an SQS error code.
// Kinds are numbered in declaration order and new ones go at the end, so a kind's value
// never changes.
type Kind int

//go:generate go tool stringer -type=Kind -trimprefix=Kind

const (
	KindUnknown Kind = iota
	// KindNotFound: the named queue does not exist (SQS QueueDoesNotExist).
	KindNotFound
	// KindAlreadyExists: a queue of that name exists with other attributes.
	KindAlreadyExists
	// KindInvalidArgument: the request is malformed for this backend.
	KindInvalidArgument
	// KindUnsupported: the backend cannot do what was asked.
	KindUnsupported
	// KindFailedPrecondition: the queue is in a state that forbids the operation.
	KindFailedPrecondition
	// KindPurgeInProgress: a purge happened within the last 60 seconds.
	KindPurgeInProgress
	// KindInvalidReceiptHandle: the receipt handle is not one this driver issued for this
	// queue (malformed, forged, another queue's, or another instance's where receipt
	// handles are instance-scoped). SQS ReceiptHandleIsInvalid.
	KindInvalidReceiptHandle
	// KindMessageNotInflight: the message is not in flight. Drivers no longer return it
	// (SQS does not either; see Driver.ChangeVisibility); the gateway still maps it for
	// drivers built against older contracts.
	KindMessageNotInflight
	// KindThrottled: the backend asked to slow down; the client may retry, after
	// Error.RetryAfter when the backend said how long.
	KindThrottled
	// KindUnavailable: the backend cannot be reached; the outcome of a write is unknown and
	// the client may retry.
	KindUnavailable
	// KindInternal: a bug or an unexpected backend answer.
	KindInternal
	// KindDeletedRecently: a queue of that name was deleted less than
	// QueueNameReuseDelay ago (SQS QueueDeletedRecently).
	KindDeletedRecently
	// KindOverLimit: a quota of the backend, or a partition or entity that is full, refuses
	// the operation; retrying at once will not help (SQS OverLimit).
	KindOverLimit
	// KindAborted: the backend aborted the operation because of contention, such as an
	// optimistic transaction conflict, and applied none of it, so the client may retry
	// safely (SQS ServiceUnavailable, which every SDK retries).
	KindAborted
	// KindStaleReceiptHandle: the receipt handle is one this driver issued for this queue,
	// but it no longer names a message the operation may act on: the message was deleted,
	// or the handle's receive has ended and the operation's rules refuse it (see
	// Driver.DeleteMessages and Driver.ChangeVisibility). SQS InvalidParameterValue, with
	// a reason that depends on the action.
	KindStaleReceiptHandle
)

// Error is a driver error with a kind. Err, if set, is the native cause.
type Error struct {
	Kind    Kind
	Message string
	Err     error
	// RetryAfter, if positive, is how long the backend asked callers to wait before trying
	// again (a throttling or quota hint); the gateway passes it on as Retry-After.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message != "" {
		return e.Message + ": " + e.Err.Error()
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the native cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap wraps a native error once with a kind; a nil err returns nil.
func Wrap(k Kind, err error, msg string) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Message: msg, Err: err}
}

// KindOf returns the kind of err, KindUnknown if it carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindUnknown
}
