package conformance

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// caseInFlightLimit is the gateway's in-flight limit in these cases, in place of SQS's
// 120,000, which no case can hold.
const caseInFlightLimit = 3

// The in-flight limit: at it, a short poll on a standard queue fails with OverLimit, a
// long poll and a FIFO receive return nothing; a delete or a release makes room.
func inFlightCases() []tc {
	lim := []capabilities.ID{capabilities.InFlightLimit}
	return []tc{
		{Caps: lim, MaxInFlight: caseInFlightLimit, Name: "standard-short-poll-over-limit", Run: func(h *H) {
			url := h.Queue()
			for i := range 5 {
				h.Send(url, fmt.Sprint("m", i))
			}
			held := h.fillInFlight(url)
			_, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
			h.WantErr(err, fmt.Sprintf("ReceiveMessage with %d messages in flight, the limit, and 2 visible", caseInFlightLimit), "OverLimit")
			// A long poll at the limit answers as on an empty queue: no message, no error.
			if ms := h.advanceUntilPolled(h.longPoll(url, 1)); len(ms) != 0 {
				h.T.Fatalf("long poll at the in-flight limit returned %v, want none", Bodies(ms))
			}
			h.Delete(url, held[0])
			if ms := h.Receive(url, 10, 600); len(ms) != 1 {
				h.T.Fatalf("after deleting 1 of %d in-flight messages, a receive of 10 returned %d messages, want the 1 that fits",
					caseInFlightLimit, len(ms))
			}
			_, err = h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
				ReceiptHandle: held[1].ReceiptHandle, VisibilityTimeout: 0})
			h.Must(err, "ChangeMessageVisibility to 0")
			if ms := h.Receive(url, 10, 600); len(ms) != 1 {
				h.T.Fatalf("after releasing 1 of %d in-flight messages, a receive of 10 returned %d messages, want 1",
					caseInFlightLimit, len(ms))
			}
		}},
		{Caps: lim, MaxInFlight: caseInFlightLimit, Name: "fifo-no-error-at-limit", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for i := range 5 {
				h.SendFifo(url, fmt.Sprint("g", i), "", fmt.Sprint("m", i))
			}
			held := h.fillInFlight(url)
			out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
			h.Must(err, fmt.Sprintf("ReceiveMessage on a FIFO queue with %d messages in flight, the limit", caseInFlightLimit))
			if len(out.Messages) != 0 {
				h.T.Fatalf("receive at the in-flight limit returned %v, want none (2 other groups' messages wait)", Bodies(out.Messages))
			}
			h.Delete(url, held[0])
			if ms := h.Receive(url, 10, 600); len(ms) != 1 {
				h.T.Fatalf("after deleting 1 of %d in-flight messages, a receive of 10 returned %d messages, want the 1 that fits",
					caseInFlightLimit, len(ms))
			}
		}},
	}
}

// fillInFlight receives from url, whose queue holds more visible messages than the
// limit, until the limit's worth is in flight; no receive may take more.
func (h *H) fillInFlight(url string) []types.Message {
	h.T.Helper()
	var held []types.Message
	for range 10 {
		ms := h.Receive(url, 10, 600)
		held = append(held, ms...)
		if len(held) > caseInFlightLimit {
			h.T.Fatalf("receives took %d messages in flight, over the limit of %d", len(held), caseInFlightLimit)
		}
		if len(held) == caseInFlightLimit {
			return held
		}
	}
	h.T.Fatalf("10 receives took %d messages in flight, want %d", len(held), caseInFlightLimit)
	return nil
}
