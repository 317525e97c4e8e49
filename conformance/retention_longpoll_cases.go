package conformance

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Retention: messages older than MessageRetentionPeriod are never delivered.
func retentionCases() []tc {
	ret := []capabilities.ID{capabilities.RetentionPeriod}
	return []tc{
		{Caps: ret, Name: "expired-message-dropped", Run: func(h *H) {
			url := h.Queue("MessageRetentionPeriod", "60")
			h.Send(url, "old")
			h.Advance(61 * time.Second)
			h.ReceiveNone(url, "61 s after send with 60 s retention")
			h.Eventually("retention sweep empties the counts", 0, func() bool {
				v, n, d := h.Counts(url)
				return v+n+d == 0
			})
		}},
		{Caps: ret, Name: "kept-until-retention", Run: func(h *H) {
			url := h.Queue("MessageRetentionPeriod", "120")
			h.Send(url, "young")
			h.Advance(119 * time.Second)
			h.ReceiveOne(url, 0)
		}},
		{Caps: ret, Name: "in-flight-message-expires", Run: func(h *H) {
			url := h.Queue("MessageRetentionPeriod", "60")
			h.Send(url, "m")
			h.ReceiveOne(url, 300)
			h.Advance(301 * time.Second)
			h.ReceiveNone(url, "after both visibility and retention passed")
		}},
		{Caps: ret, Name: "default-four-days", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "m")
			h.Send(url, "n")
			h.Advance(4*24*time.Hour - time.Minute)
			h.ReceiveOne(url, 0)
			h.Advance(2 * time.Minute)
			h.ReceiveNone(url, "after the default 4-day retention")
		}},
		{Caps: []capabilities.ID{capabilities.RetentionPeriod, capabilities.AttrRetention}, Name: "shortened-retention-applies", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "m")
			h.Advance(2 * time.Minute)
			h.SetAttrs(url, "MessageRetentionPeriod", "60")
			h.ReceiveNone(url, "after retention was shortened below the message's age")
		}},
	}
}

// Long polling: woken by sends and by visibility expiry, empty at the deadline.
func longPollCases() []tc {
	lp := []capabilities.ID{capabilities.LongPolling}
	return []tc{
		{Caps: lp, Name: "woken-by-send", Run: func(h *H) {
			url := h.Queue()
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 20)
			<-waiting // the gateway has looked, found nothing, and waits
			h.Send(url, "wake")
			ms := h.awaitPoll(got)
			if len(ms) != 1 || aws.ToString(ms[0].Body) != "wake" {
				h.T.Fatalf("long poll returned %v, want the message sent while it waited", Bodies(ms))
			}
		}},
		{Caps: lp, Name: "woken-by-batch-send-on-other-queue-not", Run: func(h *H) {
			a, b := h.Queue(), h.Queue()
			waiting := h.NextEmptyReceive()
			got := h.longPoll(a, 20)
			<-waiting
			h.Send(b, "elsewhere")
			h.Send(a, "here")
			ms := h.awaitPoll(got)
			if len(ms) != 1 || aws.ToString(ms[0].Body) != "here" {
				h.T.Fatalf("long poll on a returned %v, want [here]", Bodies(ms))
			}
		}},
		{Caps: lp, Name: "empty-at-deadline", Run: func(h *H) {
			url := h.Queue()
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 5)
			<-waiting
			ms := h.advanceUntilPolled(got)
			if len(ms) != 0 {
				h.T.Fatalf("long poll on an empty queue returned %v", Bodies(ms))
			}
		}},
		{Caps: lp, Name: "woken-by-visibility-expiry", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "again")
			h.ReceiveOne(url, 3)
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 20)
			<-waiting
			h.Advance(4 * time.Second)
			ms := h.awaitPollBefore(got, 15*time.Second)
			if len(ms) != 1 || aws.ToString(ms[0].Body) != "again" {
				h.T.Fatalf("long poll returned %v, want the message whose visibility expired", Bodies(ms))
			}
		}},
		{Caps: []capabilities.ID{capabilities.LongPolling, capabilities.FIFOOrdering}, Name: "woken-by-fifo-delete-releasing-the-group", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g", "", "first")
			h.SendFifo(url, "g", "", "second")
			first := h.ReceiveOne(url, 60)
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 20)
			<-waiting // "second" waits behind "first", in flight
			h.Delete(url, first)
			ms := h.awaitPollBefore(got, 15*time.Second)
			if len(ms) != 1 || aws.ToString(ms[0].Body) != "second" {
				h.T.Fatalf("long poll returned %v, want the message the delete released", Bodies(ms))
			}
		}},
		{Caps: []capabilities.ID{capabilities.LongPolling, capabilities.VisibilityChange}, Name: "woken-by-shortened-visibility", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "sooner")
			m := h.ReceiveOne(url, 60)
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 20)
			<-waiting
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
				ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 2})
			h.Must(err, "ChangeMessageVisibility 2")
			h.Advance(3 * time.Second)
			ms := h.awaitPollBefore(got, 15*time.Second)
			if len(ms) != 1 || aws.ToString(ms[0].Body) != "sooner" {
				h.T.Fatalf("long poll returned %v, want the message whose visibility was shortened", Bodies(ms))
			}
		}},
		{Caps: []capabilities.ID{capabilities.LongPolling, capabilities.DelayMessage}, Name: "woken-by-delay-expiry", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("late"), DelaySeconds: 3})
			h.Must(err, "SendMessage DelaySeconds=3")
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 20)
			<-waiting
			h.Advance(4 * time.Second)
			ms := h.awaitPollBefore(got, 15*time.Second)
			if len(ms) != 1 || aws.ToString(ms[0].Body) != "late" {
				h.T.Fatalf("long poll returned %v, want the delayed message", Bodies(ms))
			}
		}},
		{Caps: []capabilities.ID{capabilities.LongPolling, capabilities.AttrReceiveWait}, Name: "queue-default-wait", Run: func(h *H) {
			url := h.Queue("ReceiveMessageWaitTimeSeconds", "20")
			waiting := h.NextEmptyReceive()
			got := h.longPoll(url, 0) // no WaitTimeSeconds: the queue's 20 s applies
			<-waiting
			h.Send(url, "m")
			if ms := h.awaitPoll(got); len(ms) != 1 {
				h.T.Fatalf("receive with the queue's default wait returned %d messages, want 1", len(ms))
			}
		}},
		{Caps: lp, Name: "wait-time-range", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 21})
			h.WantErr(err, "ReceiveMessage WaitTimeSeconds=21", "InvalidParameterValue")
		}},
		{Caps: lp, Name: "many-waiters-each-get-one", Run: func(h *H) {
			url := h.Queue()
			const n = 3
			var polls []<-chan pollResult
			for i := 0; i < n; i++ {
				waiting := h.NextEmptyReceive()
				polls = append(polls, h.longPoll(url, 20))
				<-waiting
			}
			for i := 0; i < n; i++ {
				h.Send(url, bodyN(i))
			}
			seen := map[string]bool{}
			for _, p := range polls {
				ms := h.awaitPollOrAdvance(p)
				for _, m := range ms {
					if seen[aws.ToString(m.Body)] {
						h.T.Fatalf("%s delivered to two waiters", aws.ToString(m.Body))
					}
					seen[aws.ToString(m.Body)] = true
				}
			}
			// A waiter may have taken two messages and another none; all must be delivered.
			for _, b := range h.drain(url, n) {
				seen[b] = true
			}
			if len(seen) != n {
				h.T.Fatalf("delivered %d distinct messages, want %d", len(seen), n)
			}
		}},
	}
}

type pollResult struct {
	ms  []types.Message
	err error
}

// longPoll starts a ReceiveMessage with WaitTimeSeconds wait in the background.
func (h *H) longPoll(url string, wait int32) <-chan pollResult {
	c := make(chan pollResult, 1)
	go func() {
		out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: wait,
			MaxNumberOfMessages: 10, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			c <- pollResult{err: err}
			return
		}
		c <- pollResult{ms: out.Messages}
	}()
	return c
}

// awaitPoll waits for a long poll that must finish without the clock moving. The bound
// only keeps a broken gateway from hanging the suite; it is not a timing assertion.
func (h *H) awaitPoll(c <-chan pollResult) []types.Message {
	h.T.Helper()
	select {
	case r := <-c:
		h.Must(r.err, "long poll")
		return r.ms
	case <-time.After(2 * time.Minute):
		h.T.Fatalf("long poll not woken (no clock movement was needed)")
		return nil
	}
}

// awaitPollBefore waits for a poll woken by a timer on the gateway clock (a message
// becoming visible). The clock has been moved past the message's visibility; should the
// gateway have armed its timer a moment later, the clock moves on a second at a time, but
// never by more than limit, which stays below the poll's own deadline: a gateway that
// only wakes at the deadline fails.
func (h *H) awaitPollBefore(c <-chan pollResult, limit time.Duration) []types.Message {
	h.T.Helper()
	for moved := time.Duration(0); ; moved += time.Second {
		select {
		case r := <-c:
			h.Must(r.err, "long poll")
			return r.ms
		case <-time.After(3 * time.Second): // generous: the machine may be loaded
		}
		if moved >= limit {
			h.T.Fatalf("long poll not woken within %v of gateway time after the message became visible", limit)
		}
		h.Advance(time.Second)
	}
}

// advanceUntilPolled moves the gateway clock a second at a time until the poll returns.
func (h *H) advanceUntilPolled(c <-chan pollResult) []types.Message {
	h.T.Helper()
	r := h.pollResultAdvancing(c)
	h.Must(r.err, "long poll")
	return r.ms
}

// pollResultAdvancing moves the gateway clock a second at a time until the poll returns.
func (h *H) pollResultAdvancing(c <-chan pollResult) pollResult {
	h.T.Helper()
	guard := time.After(2 * time.Minute) // hang guard for a loaded machine, not a timing assertion
	for moved := 0; ; {
		select {
		case r := <-c:
			return r
		case <-guard:
			h.T.Fatalf("long poll never returned although %d s passed on the gateway clock", moved)
			return pollResult{}
		case <-time.After(20 * time.Millisecond):
			if moved < 60 { // past any WaitTimeSeconds (at most 20)
				h.Advance(time.Second)
				moved++
			}
		}
	}
}

// awaitPollOrAdvance waits for a poll that may end with messages or at its deadline.
func (h *H) awaitPollOrAdvance(c <-chan pollResult) []types.Message {
	h.T.Helper()
	select {
	case r := <-c:
		h.Must(r.err, "long poll")
		return r.ms
	case <-time.After(2 * time.Second):
		return h.advanceUntilPolled(c)
	}
}
