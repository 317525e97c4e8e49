package gateway

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// toSQSError turns any error into the SQS error the client sees. Driver errors should have
// been mapped with queueError already, which names the queue; this is the fallback.
func toSQSError(err error) *sqserr.Error {
	var se *sqserr.Error
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return sqserr.New(sqserr.ServiceUnavailable, "the request was cancelled: %v", err)
	}
	return driverError(err, "")
}

// driverError maps a driver error kind to its SQS error; queue, when known, names the queue.
func driverError(err error, queue string) *sqserr.Error {
	var de *drivers.Error
	if !errors.As(err, &de) {
		return sqserr.New(sqserr.InternalError, "internal error: %v", err)
	}
	return kindError(de.Kind, de.Error(), queue)
}

func kindError(k drivers.Kind, msg, queue string) *sqserr.Error {
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
	case drivers.KindInvalidReceiptHandle:
		return sqserr.New(sqserr.ReceiptHandleIsInvalid, "The input receipt handle is invalid for queue %s: %s", queue, msg)
	case drivers.KindMessageNotInflight:
		return sqserr.New(sqserr.MessageNotInflight, "The message referred to is not in flight (queue %s).", queue)
	case drivers.KindThrottled:
		return sqserr.New(sqserr.RequestThrottled, "queue %s: the backend is throttling requests: %s", queue, msg)
	case drivers.KindUnavailable:
		return sqserr.New(sqserr.ServiceUnavailable, "queue %s: the backend is unavailable, retry: %s", queue, msg)
	}
	return sqserr.New(sqserr.InternalError, "queue %s: internal error: %s", queue, msg)
}

// entryError renders a per-entry driver error as a batch error entry.
func entryError(id string, e *drivers.Error, queue string) batchErrorEntry {
	se := kindError(e.Kind, e.Error(), queue)
	return errorEntry(id, se)
}

func errorEntry(id string, se *sqserr.Error) batchErrorEntry {
	spec := sqserr.SpecOf(se.Code)
	return batchErrorEntry{Id: id, SenderFault: spec.Sender, Code: string(spec.Code), Message: se.Message}
}

// queueURL is the URL of queue name as seen by a request to base.
func (s *Server) queueURL(base, name string) string {
	return base + "/" + s.cfg.AccountID + "/" + name
}

// queueNameFromURL extracts the queue name from a queue URL in any of the forms SDKs send:
// "http(s)://host[:port]/<account>/<name>", the path alone, or the legacy
// "https://queue.amazonaws.com/<account>/<name>". The host is ignored, so a URL built for
// 127.0.0.1 works through localhost; the account must be this gateway's.
func (s *Server) queueNameFromURL(raw string) (string, error) {
	if raw == "" {
		return "", sqserr.New(sqserr.MissingParameter, "The request must contain the parameter QueueUrl.")
	}
	path := raw
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", sqserr.New(sqserr.InvalidAddress, "The address %s is not valid for this endpoint.", raw)
		}
		path = u.Path
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 2 || parts[1] == "" {
		return "", sqserr.New(sqserr.InvalidAddress, "The address %s is not valid for this endpoint: expected /<account-id>/<queue-name>.", raw)
	}
	if parts[0] != s.cfg.AccountID {
		return "", sqserr.New(sqserr.QueueDoesNotExist, "The specified queue %s does not exist: account %s is not %s.", raw, parts[0], s.cfg.AccountID)
	}
	return parts[1], nil
}

// arn is the ARN of queue name.
func (s *Server) arn(name string) string {
	return "arn:aws:sqs:" + s.cfg.Region + ":" + s.cfg.AccountID + ":" + name
}

// parseARN returns the queue name of an SQS queue ARN in this gateway's region and account.
func (s *Server) parseARN(arn string) (string, bool) {
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[2] != "sqs" || p[5] == "" {
		return "", false
	}
	if p[3] != s.cfg.Region || p[4] != s.cfg.AccountID {
		return "", false
	}
	return p[5], true
}
