package conformance

import (
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// Concurrency: consumers never hold the same message at once; nothing is lost.
func concurrencyCases() []tc {
	std := []capabilities.ID{capabilities.QueueStandard, capabilities.VisibilityTimeout}
	return []tc{
		{Caps: std, Name: "consumers-never-share-a-message", Run: func(h *H) {
			url := h.Queue()
			const total = 60
			h.sendBatches(url, total)
			var mu sync.Mutex
			held := map[string]int{} // message id -> consumer currently holding it
			done := map[string]bool{}
			h.consumers(4, func(c *sqsConsumer) bool {
				// The clock never moves, so no visibility timeout expires: any second
				// delivery of a message is a double delivery.
				for _, m := range c.receive(url, 5, 300) {
					id := aws.ToString(m.MessageId)
					mu.Lock()
					if other, ok := held[id]; ok || done[id] {
						mu.Unlock()
						c.h.T.Errorf("message %s delivered to consumer %d while held by %d (or already deleted)", id, c.id, other)
						return false
					}
					held[id] = c.id
					mu.Unlock()
					c.delete(url, m)
					mu.Lock()
					delete(held, id)
					done[id] = true
					mu.Unlock()
				}
				mu.Lock()
				defer mu.Unlock()
				return len(done) < total
			})
			if len(done) != total {
				h.T.Fatalf("consumers received %d distinct messages, want %d", len(done), total)
			}
			h.ReceiveNone(url, "after all were consumed")
		}},
		{Caps: std, Name: "concurrent-receives-without-delete", Run: func(h *H) {
			url := h.Queue()
			const total = 30
			h.sendBatches(url, total)
			var mu sync.Mutex
			seen := map[string]int{}
			h.consumers(5, func(c *sqsConsumer) bool {
				// Empty answers are allowed (a backend may skip rows another receive has
				// locked); the consumers stop once every message has been seen.
				ms := c.receive(url, 3, 300)
				mu.Lock()
				defer mu.Unlock()
				for _, m := range ms {
					seen[aws.ToString(m.MessageId)]++
				}
				return len(seen) < total
			})
			if len(seen) != total {
				h.T.Fatalf("received %d distinct messages, want %d", len(seen), total)
			}
			for id, n := range seen {
				if n != 1 {
					h.T.Fatalf("message %s received %d times within its visibility timeout", id, n)
				}
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueStandard}, Name: "concurrent-senders-nothing-lost", Run: func(h *H) {
			url := h.Queue()
			const senders, each = 4, 15
			var wg sync.WaitGroup
			for s := 0; s < senders; s++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(fmt.Sprintf("s%d-%d", s, i))})
						if err != nil {
							h.T.Errorf("sender %d: %v", s, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if got := h.drain(url, senders*each); len(got) != senders*each {
				h.T.Fatalf("drained %d messages, want %d", len(got), senders*each)
			}
		}},
	}
}

// Restart durability: stop gateway and driver, start both on the same storage.
func restartCases() []tc {
	durable := []capabilities.ID{capabilities.ReceiptDurable}
	return restarting([]tc{
		{Caps: []capabilities.ID{capabilities.QueueStandard, capabilities.MessageAttrs}, Name: "messages-survive-restart", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("kept"),
				MessageAttributes: map[string]types.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}})
			h.Must(err, "SendMessage")
			_, err = h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("delayed"), DelaySeconds: 30})
			h.Must(err, "SendMessage delayed")
			h.Restart()
			m := h.ReceiveOne(url, 0)
			if aws.ToString(m.Body) != "kept" || aws.ToString(m.MessageAttributes["k"].StringValue) != "v" {
				h.T.Fatalf("after restart received %q %v", aws.ToString(m.Body), m.MessageAttributes)
			}
			h.Delete(url, m)
			h.Advance(31 * time.Second)
			if got := aws.ToString(h.ReceiveOne(url, 0).Body); got != "delayed" {
				h.T.Fatalf("delayed message after restart: got %q", got)
			}
		}},
		{Caps: durable, Name: "in-flight-handle-deletes-after-restart", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "m")
			m := h.ReceiveOne(url, 60)
			h.Restart()
			h.ReceiveNone(url, "in-flight message right after restart")
			h.Delete(url, m)
			h.Advance(61 * time.Second)
			h.ReceiveNone(url, "message deleted with a pre-restart handle")
		}, Degraded: func(h *H, d capabilities.Declaration) {
			url := h.Queue()
			h.Send(url, "m")
			m := h.ReceiveOne(url, 60)
			h.Restart()
			// The catalog's fallback: the old handle fails and the message comes back after
			// its timeout. A backend that keeps nothing across restarts (":memory:") loses
			// the queue itself, which its note says.
			_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
			h.WantErr(err, "pre-restart handle on a backend declaring "+string(d.ID)+" degraded ("+d.Note+")", "ReceiptHandleIsInvalid", "QueueDoesNotExist")
		}},
		{Caps: durable, Name: "in-flight-handle-changes-visibility-after-restart", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "m")
			m := h.ReceiveOne(url, 60)
			h.Restart()
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			h.Must(err, "ChangeMessageVisibility with a pre-restart handle")
			h.ReceiveOne(url, 0)
		}, Degraded: func(h *H, d capabilities.Declaration) {
			url := h.Queue()
			h.Send(url, "m")
			due := h.Now().Add(60 * time.Second)
			m := h.ReceiveOne(url, 60)
			h.Restart()
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			h.WantErr(err, "pre-restart handle on a backend declaring "+string(d.ID)+" degraded ("+d.Note+")", "ReceiptHandleIsInvalid", "QueueDoesNotExist")
			if h.Desc.Normalized().ReceiptScope == drivers.ReceiptInstance {
				// The failed change released nothing: the message waits out its timeout.
				h.ReceiveNoneBefore(url, due, "after a rejected release with a pre-restart handle")
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueStandard, capabilities.QueueTags}, Name: "queue-attributes-and-tags-survive-restart", Run: func(h *H) {
			name := h.Name("keep")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
				Attributes: map[string]string{"VisibilityTimeout": "77", "DelaySeconds": "3"}, Tags: map[string]string{"t": "1"}})
			h.Must(err, "CreateQueue")
			h.Restart()
			url := h.urlOf(name)
			a := h.Attrs(url, types.QueueAttributeNameAll)
			if a["VisibilityTimeout"] != "77" || a["DelaySeconds"] != "3" {
				h.T.Fatalf("attributes after restart: %v", a)
			}
			h.wantTags(url, map[string]string{"t": "1"})
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupEcho, capabilities.FIFOSequenceNumber}, Name: "fifo-dedup-and-sequence-survive-restart", Run: func(h *H) {
			url := h.FifoQueue()
			a := h.SendFifo(url, "g", "d", "x")
			h.Restart()
			if b := h.SendFifo(url, "g", "d", "x"); aws.ToString(b.MessageId) != aws.ToString(a.MessageId) || aws.ToString(b.SequenceNumber) != aws.ToString(a.SequenceNumber) {
				h.T.Fatalf("dedup after restart returned %s/%s, want %s/%s", aws.ToString(b.MessageId), aws.ToString(b.SequenceNumber), aws.ToString(a.MessageId), aws.ToString(a.SequenceNumber))
			}
			c := h.SendFifo(url, "g", "e", "y")
			if len(aws.ToString(c.SequenceNumber)) < len(aws.ToString(a.SequenceNumber)) || aws.ToString(c.SequenceNumber) <= aws.ToString(a.SequenceNumber) {
				h.T.Fatalf("sequence number after restart %s not above %s", aws.ToString(c.SequenceNumber), aws.ToString(a.SequenceNumber))
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			// Deduplication outlives the restart, whatever ids the duplicate's send returns.
			url := h.FifoQueue()
			h.SendFifo(url, "g", "d", "x")
			h.Restart()
			h.SendFifo(url, "g", "d", "x")
			h.SendFifo(url, "g", "e", "y")
			if got := h.drain(url, 3); len(got) != 2 || got[0] != "x" || got[1] != "y" {
				h.T.Fatalf("after restart the queue holds %v, want x once and y", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.RedriveDLQ, capabilities.ReceiptDurable}, Name: "receive-count-survives-restart", Run: func(h *H) {
			dl, src := h.withDLQ(1)
			h.Send(src, "m")
			h.ReceiveOne(src, 5)
			h.Restart()
			h.Advance(6 * time.Second)
			h.ReceiveNone(src, "after restart, past maxReceiveCount")
			h.ReceiveOne(dl, 0)
		}},
	})
}

// sqsConsumer is one concurrent consumer; errors are reported with Errorf (it runs in its
// own goroutine) and stop it.
type sqsConsumer struct {
	h      *H
	id     int
	failed bool
}

func (c *sqsConsumer) receive(url string, max, vis int32) []types.Message {
	out, err := c.h.SQS.ReceiveMessage(c.h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: max, VisibilityTimeout: vis,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err != nil {
		c.h.T.Errorf("consumer %d: ReceiveMessage: %v", c.id, err)
		c.failed = true
		return nil
	}
	return out.Messages
}

func (c *sqsConsumer) delete(url string, m types.Message) {
	if _, err := c.h.SQS.DeleteMessage(c.h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
		c.h.T.Errorf("consumer %d: DeleteMessage: %v", c.id, err)
		c.failed = true
	}
}

// consumers runs n consumers, each calling step until it returns false or fails, and
// waits for all. A bound on rounds turns a stuck queue into a failure, not a hang.
func (h *H) consumers(n int, step func(c *sqsConsumer) bool) {
	h.T.Helper()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &sqsConsumer{h: h, id: i}
			for round := 0; ; round++ {
				if round == 5000 {
					h.T.Errorf("consumer %d: still not done after %d receives", i, round)
					return
				}
				if !step(c) || c.failed {
					return
				}
			}
		}()
	}
	wg.Wait()
	if h.T.Failed() {
		h.T.FailNow()
	}
}

// sendBatches sends total messages in batches of 10.
func (h *H) sendBatches(url string, total int) {
	h.T.Helper()
	for i := 0; i < total; i += 10 {
		var entries []types.SendMessageBatchRequestEntry
		for j := i; j < min(i+10, total); j++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", j)), MessageBody: aws.String(bodyN(j))})
		}
		out, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
		h.Must(err, "SendMessageBatch")
		if len(out.Failed) != 0 {
			h.T.Fatalf("SendMessageBatch failed entries: %+v", out.Failed)
		}
	}
}

// restarting marks cases as restarting the gateway.
func restarting(cases []tc) []tc {
	for i := range cases {
		cases[i].Restarts = true
	}
	return cases
}
