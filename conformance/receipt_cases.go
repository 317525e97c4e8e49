package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// SQS's words for receipt handles it cannot use.
const (
	notAvailableForChange = "Message does not exist or is not available for visibility timeout change."
	handleExpired         = "The receipt handle has expired."
)

// invalidHandleMessage is SQS's message for a handle it never issued.
func invalidHandleMessage(handle string) string {
	return fmt.Sprintf("The input receipt handle \"%s\" is not a valid receipt handle.", handle)
}

// staleHandleMessage is SQS's message for a handle it issued that no longer serves.
func staleHandleMessage(handle, reason string) string {
	return fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: %s", handle, reason)
}

// Receipt handles that SQS still accepts, or refuses in its own words: visibility
// changes with expired and older handles, deleted messages, malformed handles.
func receiptCases() []tc {
	stale := []capabilities.ID{capabilities.VisibilityChange, capabilities.ReceiptStale}
	return []tc{
		{Caps: stale, Name: "change-after-expiry-applies", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			m := h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			// Nobody received it since: SQS applies the change.
			due := h.Now().Add(10 * time.Second)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 10})
			h.Must(err, "ChangeMessageVisibility after the timeout expired")
			h.ReceiveNoneBefore(url, due, "right after the change hid it again")
			h.Advance(11 * time.Second)
			h.ReceiveOne(url, 0)
		}, Degraded: func(h *H, _ capabilities.Declaration) {
			url := h.Queue()
			h.Send(url, "v")
			m := h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 10})
			h.WantErrMessage(err, "ChangeMessageVisibility after the timeout expired", "InvalidParameterValue",
				staleHandleMessage(aws.ToString(m.ReceiptHandle), notAvailableForChange))
			h.ReceiveOne(url, 0) // still visible: the refused change did nothing
		}},
		{Caps: stale, Name: "older-handle-changes-visibility", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			old := h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			h.ReceiveOne(url, 300)
			// SQS applies an older handle's change to the message: 0 releases it at once.
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: old.ReceiptHandle, VisibilityTimeout: 0})
			h.Must(err, "ChangeMessageVisibility 0 with the previous receive's handle")
			again := h.ReceiveOne(url, 30)
			if aws.ToString(again.MessageId) != aws.ToString(old.MessageId) || h.ReceiveCount(again) != 3 {
				h.T.Fatalf("received %s with receive count %d, want %s with 3", aws.ToString(again.MessageId), h.ReceiveCount(again), aws.ToString(old.MessageId))
			}
		}, Degraded: func(h *H, _ capabilities.Declaration) {
			url := h.Queue()
			h.Send(url, "v")
			old := h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			h.ReceiveOne(url, 300)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: old.ReceiptHandle, VisibilityTimeout: 0})
			h.WantErrMessage(err, "ChangeMessageVisibility 0 with the previous receive's handle", "InvalidParameterValue",
				staleHandleMessage(aws.ToString(old.ReceiptHandle), notAvailableForChange))
			h.ReceiveNone(url, "after the refused release: the later receive still holds it")
		}},
		{Caps: stale, Name: "change-after-delete", Run: func(h *H) {
			for _, url := range []string{h.Queue(), h.FifoQueue("ContentBasedDeduplication", "true")} {
				if strings.HasSuffix(url, ".fifo") {
					h.SendFifo(url, "g", "", "v")
				} else {
					h.Send(url, "v")
				}
				m := h.ReceiveOne(url, 30)
				h.Delete(url, m)
				_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 10})
				h.WantErrMessage(err, "ChangeMessageVisibility of a deleted message", "InvalidParameterValue",
					staleHandleMessage(aws.ToString(m.ReceiptHandle), notAvailableForChange))
				out, err := h.SQS.ChangeMessageVisibilityBatch(h.Ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url),
					Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("gone"), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 10}}})
				h.Must(err, "ChangeMessageVisibilityBatch of a deleted message")
				h.WantFailedEntry(out.Failed, "ChangeMessageVisibilityBatch of a deleted message", "gone", "ReceiptHandleIsInvalid", notAvailableForChange)
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueFIFO, capabilities.VisibilityChange, capabilities.ReceiptStale}, Name: "fifo-change-with-expired-handle", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g", "", "v")
			m := h.ReceiveOne(url, 10)
			h.Advance(11 * time.Second)
			// FIFO handles expire with their visibility timeout.
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 60})
			h.WantErrMessage(err, "FIFO ChangeMessageVisibility after the timeout expired", "InvalidParameterValue",
				staleHandleMessage(aws.ToString(m.ReceiptHandle), notAvailableForChange))
			h.ReceiveOne(url, 30) // still visible: the refused change did nothing
		}},
		{Caps: []capabilities.ID{capabilities.ReceiptStale}, Name: "malformed-handle-in-sqs-words", Run: func(h *H) {
			url := h.Queue()
			const bad = "not-a-handle"
			_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(bad)})
			h.WantErrMessage(err, "DeleteMessage with a malformed handle", "ReceiptHandleIsInvalid", invalidHandleMessage(bad))
			_, err = h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(bad), VisibilityTimeout: 10})
			h.WantErrMessage(err, "ChangeMessageVisibility with a malformed handle", "ReceiptHandleIsInvalid", invalidHandleMessage(bad))
			del, err := h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url),
				Entries: []types.DeleteMessageBatchRequestEntry{{Id: aws.String("bad"), ReceiptHandle: aws.String(bad)}}})
			h.Must(err, "DeleteMessageBatch with a malformed handle")
			h.WantFailedEntry(del.Failed, "DeleteMessageBatch with a malformed handle", "bad", "ReceiptHandleIsInvalid", invalidHandleMessage(bad))
			vis, err := h.SQS.ChangeMessageVisibilityBatch(h.Ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url),
				Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("bad"), ReceiptHandle: aws.String(bad), VisibilityTimeout: 10}}})
			h.Must(err, "ChangeMessageVisibilityBatch with a malformed handle")
			h.WantFailedEntry(vis.Failed, "ChangeMessageVisibilityBatch with a malformed handle", "bad", "ReceiptHandleIsInvalid", invalidHandleMessage(bad))
		}},
		{Caps: []capabilities.ID{capabilities.QueueFIFO, capabilities.ReceiptStale}, Name: "fifo-delete-with-expired-handle-in-sqs-words", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g", "", "x")
			m := h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
			h.WantErrMessage(err, "FIFO DeleteMessage with an expired handle", "InvalidParameterValue",
				staleHandleMessage(aws.ToString(m.ReceiptHandle), handleExpired))
			out, err := h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url),
				Entries: []types.DeleteMessageBatchRequestEntry{{Id: aws.String("old"), ReceiptHandle: m.ReceiptHandle}}})
			h.Must(err, "FIFO DeleteMessageBatch with an expired handle")
			h.WantFailedEntry(out.Failed, "FIFO DeleteMessageBatch with an expired handle", "old", "ReceiptHandleIsInvalid", "The receipt handle has expired")
			h.ReceiveOne(url, 30) // not deleted; this receive supersedes the handle
			_, err = h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
			h.WantErrMessage(err, "FIFO DeleteMessage with the previous receive's handle", "InvalidParameterValue",
				staleHandleMessage(aws.ToString(m.ReceiptHandle), handleExpired))
		}},
		{Caps: []capabilities.ID{capabilities.QueuePurge, capabilities.FIFODedupExplicit}, Name: "purge-forgets-deduplication", Run: func(h *H) {
			url := h.FifoQueue()
			h.SendFifo(url, "g", "d1", "before")
			_, err := h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.Must(err, "PurgeQueue")
			// SQS accepts the deduplication id again after a purge.
			h.SendFifo(url, "g", "d1", "after")
			if m := h.ReceiveOne(url, 30); aws.ToString(m.Body) != "after" {
				h.T.Fatalf("received %q after the purge, want %q", aws.ToString(m.Body), "after")
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			if d.ID != capabilities.QueuePurge {
				h.T.Fatalf("no fallback assertion for %s degraded (%s)", d.ID, d.Note)
			}
			// The backend keeps its deduplication history through a purge.
			url := h.FifoQueue()
			h.SendFifo(url, "g", "d1", "before")
			_, err := h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.Must(err, "PurgeQueue")
			h.SendFifo(url, "g", "d1", "after")
			h.ReceiveNone(url, "after a purge on a backend that keeps deduplication history")
		}},
	}
}
