package conformance

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Visibility timeout: default, override, expiry, extension, release, the 12 h maximum.
func visibilityCases() []tc {
	vt := []capabilities.ID{capabilities.VisibilityTimeout}
	change := []capabilities.ID{capabilities.VisibilityChange}
	return []tc{
		{Caps: []capabilities.ID{capabilities.RedeliveryOrder}, Name: "returned-before-newer", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "old")
			h.Send(url, "new")
			first := h.ReceiveOne(url, 30)
			if got := aws.ToString(first.Body); got != "old" {
				h.T.Fatalf("first receive %q, want old", got)
			}
			h.release(url, first)
			if got := aws.ToString(h.ReceiveOne(url, 30).Body); got != "old" {
				h.T.Fatalf("after releasing old received %q, want old again before new", got)
			}
			if h.realClock {
				return // the expiry half needs queue time moved
			}
			h.Advance(31 * time.Second)
			if got := Bodies(h.Receive(url, 10, 30)); fmt.Sprint(got) != "[old new]" {
				h.T.Fatalf("after old's timeout received %v, want [old new]", got)
			}
		}, Degraded: func(h *H, _ capabilities.Declaration) {
			// Order is the backend's; the released message is not lost.
			url := h.Queue()
			h.Send(url, "old")
			h.Send(url, "new")
			h.release(url, h.ReceiveOne(url, 30))
			if got := h.drain(url, 2); fmt.Sprint(got) != "[new old]" {
				h.T.Fatalf("after the release received %v, want new and old once each", got)
			}
		}},
		{Caps: vt, Name: "hidden-while-in-flight-then-redelivered", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			due := h.Now().Add(30 * time.Second)
			first := h.ReceiveOne(url, 0)      // queue default: 30 s
			received := h.Now()                // on a real clock the receive takes time: its timeout ends by received+30 s
			h.AdvanceTo(due.Add(-time.Second)) // due, not received: a slow receive would put the check past it
			late := h.ReceiveNoneBefore(url, due, "29 s into a 30 s visibility timeout")
			h.WantCountsBefore(url, due, 0, 1, 0)
			h.AdvanceTo(received.Add(31 * time.Second))
			again := h.ReceiveOne(url, 0)
			if want := 2 + late; aws.ToString(again.MessageId) != aws.ToString(first.MessageId) || h.ReceiveCount(again) != want {
				h.T.Fatalf("redelivered %s with receive count %d, want %s with %d", aws.ToString(again.MessageId), h.ReceiveCount(again), aws.ToString(first.MessageId), want)
			}
		}},
		{Caps: vt, Name: "per-receive-override", Run: func(h *H) {
			url := h.Queue("VisibilityTimeout", "300")
			h.Send(url, "v")
			h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			h.ReceiveOne(url, 5)
		}},
		{Caps: []capabilities.ID{capabilities.VisibilityTimeout, capabilities.AttrVisibilityTimeout}, Name: "queue-default-changed", Run: func(h *H) {
			url := h.Queue()
			h.SetAttrs(url, "VisibilityTimeout", "10")
			h.Send(url, "v")
			due := h.Now().Add(10 * time.Second)
			h.ReceiveOne(url, 0)
			received := h.Now()
			h.AdvanceTo(due.Add(-time.Second))
			h.ReceiveNoneBefore(url, due, "9 s into a 10 s queue visibility timeout")
			h.AdvanceTo(received.Add(11 * time.Second))
			h.ReceiveOne(url, 0)
		}},
		{Caps: change, Name: "extend-in-flight", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			m := h.ReceiveOne(url, 10)
			due := h.Now().Add(120 * time.Second)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 120})
			h.Must(err, "ChangeMessageVisibility 120")
			h.Advance(60 * time.Second)
			h.ReceiveNoneBefore(url, due, "60 s into an extended 120 s timeout")
			h.Advance(61 * time.Second)
			h.ReceiveOne(url, 0)
		}},
		{Caps: change, Name: "shorten-in-flight", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			m := h.ReceiveOne(url, 300) // within a broker's 5-minute lock
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 5})
			h.Must(err, "ChangeMessageVisibility 5")
			h.Advance(6 * time.Second)
			h.ReceiveOne(url, 0)
		}},
		{Caps: change, Name: "handle-still-valid-after-change", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			m := h.ReceiveOne(url, 10)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 60})
			h.Must(err, "ChangeMessageVisibility")
			h.Delete(url, m)
			h.Advance(61 * time.Second)
			h.ReceiveNone(url, "after delete")
		}},
		{Caps: change, Name: "change-garbage-handle", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String("garbage"), VisibilityTimeout: 60})
			h.WantErr(err, "ChangeMessageVisibility with a garbage handle", "ReceiptHandleIsInvalid")
		}},
		{Caps: []capabilities.ID{capabilities.VisibilityRelease}, Name: "zero-releases-at-once", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			m := h.ReceiveOne(url, 300) // within a broker's 5-minute lock
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			h.Must(err, "ChangeMessageVisibility 0")
			again := h.ReceiveOne(url, 0) // no clock advance
			if aws.ToString(again.MessageId) != aws.ToString(m.MessageId) {
				h.T.Fatalf("released message not redelivered")
			}
		}},
		{Caps: []capabilities.ID{capabilities.VisibilityMax}, Name: "twelve-hours-accepted", Run: func(h *H) {
			// 12 h from the receive, then 12 h again from the change: only a clock that
			// stands still between the two keeps the second within SQS's 12 h total.
			h.NeedGatewayClock("12 h of visibility, set twice at the same instant")
			url := h.Queue("VisibilityTimeout", "43200")
			h.Send(url, "v")
			m := h.ReceiveOne(url, 0)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 43200})
			h.Must(err, "ChangeMessageVisibility 43200")
			h.Advance(12*time.Hour - time.Minute)
			h.ReceiveNone(url, "a minute before 12 h")
			h.Advance(2 * time.Minute)
			h.ReceiveOne(url, 0)
		}, Degraded: visibilityBeyondMax},
		{Caps: []capabilities.ID{capabilities.VisibilityMax}, Name: "over-twelve-hours-rejected", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "v")
			_, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), VisibilityTimeout: 43201})
			h.WantErr(err, "ReceiveMessage VisibilityTimeout=43201", "InvalidParameterValue")
			m := h.ReceiveOne(url, 30)
			_, err = h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 43201})
			h.WantErr(err, "ChangeMessageVisibility 43201", "InvalidParameterValue")
			h.Advance(31 * time.Second)
			h.ReceiveOne(url, 0) // the rejected change left the 30 s timeout alone
		}},
	}
}

// Delay: queue delay, per-message delay, limits.
func delayCases() []tc {
	return []tc{
		{Caps: []capabilities.ID{capabilities.DelayQueue}, Name: "queue-delay", Run: func(h *H) {
			url := h.Queue("DelaySeconds", "30")
			due := h.Now().Add(30 * time.Second)
			h.Send(url, "d")
			sent := h.Now() // on a real clock the send takes time: its delay ends by sent+30 s
			h.ReceiveNoneBefore(url, due, "right after send to a 30 s delay queue")
			h.WantCountsBefore(url, due, 0, 0, 1)
			h.AdvanceTo(due.Add(-time.Second)) // due, not sent: a slow send would put the check past it
			h.ReceiveNoneBefore(url, due, "29 s into a 30 s delay")
			h.AdvanceTo(sent.Add(31 * time.Second))
			h.WantCounts(url, 1, 0, 0)
			h.ReceiveOne(url, 0)
		}},
		{Caps: []capabilities.ID{capabilities.DelayQueue, capabilities.AttrDelaySeconds}, Name: "queue-delay-changed-applies-to-new-messages", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "before")
			h.SetAttrs(url, "DelaySeconds", "60")
			h.Send(url, "after")
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "before" {
				h.T.Fatalf("right after the change received %v, want [before]", got)
			}
			h.Advance(61 * time.Second)
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "after" {
				h.T.Fatalf("after 61 s received %v, want [after]", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.DelayMessage}, Name: "per-message-delay", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("late"), DelaySeconds: 10})
			h.Must(err, "SendMessage DelaySeconds=10")
			h.Send(url, "now")
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "now" {
				h.T.Fatalf("before the delay received %v, want [now]", got)
			}
			h.Advance(11 * time.Second)
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "late" {
				h.T.Fatalf("after the delay received %v, want [late]", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.DelayMessage, capabilities.DelayQueue}, Name: "per-message-delay-overrides-queue", Run: func(h *H) {
			url := h.Queue("DelaySeconds", "600")
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("m"), DelaySeconds: 5})
			h.Must(err, "SendMessage DelaySeconds=5")
			h.Advance(6 * time.Second)
			h.ReceiveOne(url, 0)
		}},
		{Caps: []capabilities.ID{capabilities.DelayMessage}, Name: "per-message-delay-range", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("m"), DelaySeconds: 901})
			h.WantErr(err, "SendMessage DelaySeconds=901", "InvalidParameterValue")
			_, err = h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("m"), DelaySeconds: 900})
			h.Must(err, "SendMessage DelaySeconds=900")
			h.WantCounts(url, 0, 0, 1)
		}},
		{Caps: []capabilities.ID{capabilities.DelayMessage, capabilities.QueueFIFO}, Name: "per-message-delay-rejected-on-fifo", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("m"), MessageGroupId: aws.String("g"), DelaySeconds: 5})
			h.WantErr(err, "FIFO SendMessage DelaySeconds=5", "InvalidParameterValue")
			h.ReceiveNone(url, "after the rejected send")
		}},
		{Caps: []capabilities.ID{capabilities.DelayQueue, capabilities.QueueFIFO}, Name: "queue-delay-on-fifo", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true", "DelaySeconds", "20")
			h.SendFifo(url, "g", "", "m")
			h.ReceiveNone(url, "inside the FIFO queue delay")
			h.Advance(21 * time.Second)
			h.ReceiveOne(url, 0)
		}},
		{Caps: []capabilities.ID{capabilities.DelayQueue, capabilities.QueueFIFO}, Name: "queue-delay-on-fifo-with-zero-message-delay", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true", "DelaySeconds", "20")
			due := h.Now().Add(20 * time.Second)
			// FIFO queues take no per-message delay: an explicit 0 leaves the queue's delay.
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("m"),
				MessageGroupId: aws.String("g")}, withExplicitZeroDelay)
			h.Must(err, "FIFO SendMessage DelaySeconds=0")
			h.ReceiveNoneBefore(url, due, "inside the FIFO queue delay, sent with DelaySeconds=0")
			h.Advance(21 * time.Second)
			h.ReceiveOne(url, 0)
		}},
		{Caps: []capabilities.ID{capabilities.DelayMessage}, Name: "send-batch-per-entry-delay", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("a"), MessageBody: aws.String("a")},
				{Id: aws.String("b"), MessageBody: aws.String("b"), DelaySeconds: 30},
			}})
			h.Must(err, "SendMessageBatch")
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "a" {
				h.T.Fatalf("received %v, want [a]", got)
			}
			h.Advance(31 * time.Second)
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "b" {
				h.T.Fatalf("received %v, want [b]", got)
			}
		}},
	}
}

// visibilityBeyondMax asserts the fallback of a degraded visibility.max: a timeout above
// the declared max_seconds is rejected with InvalidParameterValue and changes nothing,
// or, where the policy clamps it, is accepted with X-Anysqs-Degraded and lasts max_seconds.
func visibilityBeyondMax(h *H, d capabilities.Declaration) {
	limit, err := strconv.Atoi(d.Limits["max_seconds"])
	if err != nil || limit <= 0 || limit >= 43200 {
		h.T.Fatalf("visibility.max is degraded, and its max_seconds limit %q says by how much it is not", d.Limits["max_seconds"])
	}
	url := h.Queue()
	h.Send(url, "v")
	out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), VisibilityTimeout: 43200})
	clamped := err == nil
	if clamped {
		if h.LastHeader(capabilities.HeaderDegraded) == "" || len(out.Messages) != 1 {
			h.T.Fatalf("ReceiveMessage VisibilityTimeout=43200 on a %d s maximum: accepted with %d message(s) and no %s header; want a rejection or a marked clamp",
				limit, len(out.Messages), capabilities.HeaderDegraded)
		}
	} else {
		h.WantErr(err, fmt.Sprintf("ReceiveMessage VisibilityTimeout=43200 on a %d s maximum", limit), "InvalidParameterValue")
	}
	if !clamped {
		m := h.ReceiveOne(url, int32(limit)) // the rejected receive took nothing
		_, err = h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 43200})
		h.WantErr(err, fmt.Sprintf("ChangeMessageVisibility 43200 on a %d s maximum", limit), "InvalidParameterValue")
	}
	// The message comes back after the maximum, whichever way the request was handled.
	h.Advance(time.Duration(limit+1) * time.Second)
	h.ReceiveOne(url, 0)
}
