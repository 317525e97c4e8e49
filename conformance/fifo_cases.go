package conformance

import (
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// FIFO queues: ordering, group blocking, dedup, sequence numbers, receive attempts.
func fifoCases() []tc {
	order := []capabilities.ID{capabilities.FIFOOrdering}
	return []tc{
		{Caps: order, Name: "order-within-group", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for i := 0; i < 10; i++ {
				h.SendFifo(url, "g", "", bodyN(i))
			}
			var got []string
			for len(got) < 10 {
				ms := h.Receive(url, 3, 0)
				if len(ms) == 0 {
					h.T.Fatalf("receive stalled after %v", got)
				}
				for _, m := range ms {
					got = append(got, aws.ToString(m.Body))
					h.Delete(url, m)
				}
			}
			for i, b := range got {
				if b != bodyN(i) {
					h.T.Fatalf("order %v, want message-000..009", got)
				}
			}
		}},
		{Caps: order, Name: "group-blocked-while-in-flight", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g", "", "one")
			h.SendFifo(url, "g", "", "two")
			m := h.ReceiveOne(url, 30)
			if aws.ToString(m.Body) != "one" {
				h.T.Fatalf("first receive %q, want one", aws.ToString(m.Body))
			}
			h.ReceiveNone(url, "while the group's first message is in flight")
			h.Delete(url, m)
			if got := aws.ToString(h.ReceiveOne(url, 30).Body); got != "two" {
				h.T.Fatalf("after delete received %q, want two", got)
			}
		}},
		{Caps: order, Name: "redelivered-in-order-after-expiry", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for i := 0; i < 3; i++ {
				h.SendFifo(url, "g", "", bodyN(i))
			}
			first := h.Receive(url, 10, 10)
			if len(first) == 0 {
				h.T.Fatalf("first receive got nothing, want the group's head %s", bodyN(0))
			}
			for i, m := range first {
				if aws.ToString(m.Body) != bodyN(i) {
					h.T.Fatalf("first receive got %v, want a run from %s in send order", Bodies(first), bodyN(0))
				}
			}
			h.Advance(11 * time.Second)
			// Every message comes back, the expired ones first, all in send order: receive
			// (deleting, so the group moves on) until all three are in.
			var again []string
			for len(again) < 3 {
				ms := h.Receive(url, 10, 10)
				if len(ms) == 0 {
					h.T.Fatalf("after expiry receive stalled after %v (first %v)", again, Bodies(first))
				}
				for _, m := range ms {
					again = append(again, aws.ToString(m.Body))
					h.Delete(url, m)
				}
			}
			for i, b := range again {
				if i >= 3 || b != bodyN(i) {
					h.T.Fatalf("after expiry got %v (first %v), want %s, %s, %s", again, Bodies(first), bodyN(0), bodyN(1), bodyN(2))
				}
			}
		}},
		{Caps: order, Name: "other-groups-not-blocked", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "a", "", "a1")
			h.SendFifo(url, "a", "", "a2")
			h.SendFifo(url, "b", "", "b1")
			m := h.ReceiveOne(url, 30)
			if aws.ToString(m.Body) != "a1" {
				h.T.Fatalf("first receive %q, want a1", aws.ToString(m.Body))
			}
			if got := aws.ToString(h.ReceiveOne(url, 30).Body); got != "b1" {
				h.T.Fatalf("with group a blocked received %q, want b1", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOOrdering, capabilities.FIFOGroupBatch}, Name: "three-groups-concurrent-consumers", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			groups := []string{"red", "green", "blue"}
			const per = 12
			for i := 0; i < per; i++ {
				for _, g := range groups {
					h.SendFifo(url, g, "", fmt.Sprintf("%s-%02d", g, i))
				}
			}
			var mu sync.Mutex
			seen := map[string][]string{}
			total := 0
			h.consumers(3, func(c *sqsConsumer) bool {
				ms := c.receive(url, 4, 60)
				for _, m := range ms {
					g := m.Attributes["MessageGroupId"]
					mu.Lock()
					seen[g] = append(seen[g], aws.ToString(m.Body)) // recorded before the delete frees the group
					total++
					mu.Unlock()
					c.delete(url, m)
				}
				mu.Lock()
				defer mu.Unlock()
				return total < per*len(groups)
			})
			for _, g := range groups {
				if len(seen[g]) != per {
					h.T.Fatalf("group %s: received %d messages, want %d", g, len(seen[g]), per)
				}
				for i, b := range seen[g] {
					if want := fmt.Sprintf("%s-%02d", g, i); b != want {
						h.T.Fatalf("group %s out of order: %v", g, seen[g])
					}
				}
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOGroupBatch}, Name: "several-of-one-group-in-one-receive", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for i := 0; i < 5; i++ {
				h.SendFifo(url, "g", "", bodyN(i))
			}
			ms := h.Receive(url, 10, 30)
			if len(ms) < 2 {
				h.T.Fatalf("one receive returned %d messages of a 5-message group, want several", len(ms))
			}
			for i, m := range ms {
				if aws.ToString(m.Body) != bodyN(i) {
					h.T.Fatalf("batch out of order: %v", Bodies(ms))
				}
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOGroupRelease}, Name: "released-first-while-later-in-flight", Run: func(h *H) {
			// SQS: the released g1-m1 is received again while g1-m2 is still in flight,
			// after g2, which waited since its send; g1-m3 waits behind g1-m2.
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g1", "", "g1-m1")
			h.SendFifo(url, "g1", "", "g1-m2")
			h.SendFifo(url, "g2", "", "g2-m1")
			h.SendFifo(url, "g1", "", "g1-m3")
			first := h.Receive(url, 2, 30)
			if got := Bodies(first); fmt.Sprint(got) != "[g1-m1 g1-m2]" {
				h.T.Fatalf("first receive of 2 got %v, want [g1-m1 g1-m2]", got)
			}
			h.Advance(time.Second) // g2 has waited longer than the release
			h.release(url, first[0])
			again := h.Receive(url, 10, 30)
			if got := Bodies(again); fmt.Sprint(got) != "[g2-m1 g1-m1]" {
				h.T.Fatalf("after releasing g1-m1 got %v, want [g2-m1 g1-m1]", got)
			}
			h.Delete(url, first[1])
			h.ReceiveNone(url, "g1-m1 is in flight again and g2 has nothing left")
			h.Delete(url, again[1])
			if got := aws.ToString(h.ReceiveOne(url, 30).Body); got != "g1-m3" {
				h.T.Fatalf("after deleting g1's first two received %q, want g1-m3", got)
			}
		}, Degraded: func(h *H, _ capabilities.Declaration) {
			// The group waits until none of its messages is in flight; order holds.
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g1", "", "g1-m1")
			h.SendFifo(url, "g1", "", "g1-m2")
			first := h.Receive(url, 2, 30)
			if got := Bodies(first); fmt.Sprint(got) != "[g1-m1 g1-m2]" {
				h.T.Fatalf("first receive of 2 got %v, want [g1-m1 g1-m2]", got)
			}
			h.release(url, first[0])
			h.ReceiveNone(url, "g1-m2 is still in flight: the degraded group stays blocked")
			h.Delete(url, first[1])
			if got := aws.ToString(h.ReceiveOne(url, 30).Body); got != "g1-m1" {
				h.T.Fatalf("after deleting g1-m2 received %q, want g1-m1", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOGroupRelease, capabilities.FIFOGroupBatch}, Name: "batch-takes-one-group-before-the-next", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for _, b := range []string{"a1", "b1", "a2", "b2", "a3"} {
				h.SendFifo(url, b[:1], "", b)
			}
			if got := Bodies(h.Receive(url, 10, 30)); fmt.Sprint(got) != "[a1 a2 a3 b1 b2]" {
				h.T.Fatalf("one receive of 10 got %v, want [a1 a2 a3 b1 b2]", got)
			}
		}, Degraded: func(h *H, _ capabilities.Declaration) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for _, b := range []string{"a1", "b1", "a2", "b2", "a3"} {
				h.SendFifo(url, b[:1], "", b)
			}
			perGroup := map[string]string{}
			for round := 0; round < 6; round++ {
				for _, m := range h.Receive(url, 10, 30) {
					perGroup[aws.ToString(m.Body)[:1]] += aws.ToString(m.Body)
					h.Delete(url, m)
				}
			}
			if perGroup["a"] != "a1a2a3" || perGroup["b"] != "b1b2" {
				h.T.Fatalf("received per group %v, want a1a2a3 and b1b2", perGroup)
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupExplicit, capabilities.FIFODedupEcho}, Name: "explicit-dedup-echoes-original", Run: func(h *H) {
			url := h.FifoQueue()
			a := h.SendFifo(url, "g", "d-1", "first")
			b := h.SendFifo(url, "g", "d-1", "second body, same id")
			if aws.ToString(b.MessageId) != aws.ToString(a.MessageId) || aws.ToString(b.SequenceNumber) != aws.ToString(a.SequenceNumber) {
				h.T.Fatalf("duplicate send returned %s/%s, want original %s/%s", aws.ToString(b.MessageId), aws.ToString(b.SequenceNumber), aws.ToString(a.MessageId), aws.ToString(a.SequenceNumber))
			}
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "first" {
				h.T.Fatalf("queue holds %v, want [first]", got)
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			// The duplicate is dropped, whatever ids its send returns.
			url := h.FifoQueue()
			h.SendFifo(url, "g", "d-1", "first")
			h.SendFifo(url, "g", "d-1", "second body, same id")
			if got := h.drain(url, 2); len(got) != 1 || got[0] != "first" {
				h.T.Fatalf("queue holds %v, want [first]", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupContent, capabilities.FIFODedupEcho}, Name: "content-dedup-echoes-original", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			a := h.SendFifo(url, "g", "", "same body")
			b := h.SendFifo(url, "g", "", "same body")
			if aws.ToString(b.MessageId) != aws.ToString(a.MessageId) || aws.ToString(b.SequenceNumber) != aws.ToString(a.SequenceNumber) {
				h.T.Fatalf("content duplicate returned %s/%s, want original %s/%s", aws.ToString(b.MessageId), aws.ToString(b.SequenceNumber), aws.ToString(a.MessageId), aws.ToString(a.SequenceNumber))
			}
			h.SendFifo(url, "g", "", "other body")
			if got := h.drain(url, 3); len(got) != 2 {
				h.T.Fatalf("queue holds %v, want the two distinct bodies", got)
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g", "", "same body")
			h.SendFifo(url, "g", "", "same body")
			h.SendFifo(url, "g", "", "other body")
			if got := h.drain(url, 3); len(got) != 2 || got[0] != "other body" || got[1] != "same body" { // sorted
				h.T.Fatalf("queue holds %v, want the two distinct bodies once each", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupExplicit}, Name: "dedup-window-five-minutes", Run: func(h *H) {
			url := h.FifoQueue()
			a := h.SendFifo(url, "g", "d", "x")
			h.Advance(4*time.Minute + 50*time.Second)
			if b := h.SendFifo(url, "g", "d", "x"); aws.ToString(b.MessageId) != aws.ToString(a.MessageId) {
				h.T.Fatalf("duplicate inside the window stored anew")
			}
			h.Advance(20 * time.Second)
			if c := h.SendFifo(url, "g", "d", "x"); aws.ToString(c.MessageId) == aws.ToString(a.MessageId) {
				h.T.Fatalf("send after the 5-minute window was still deduplicated")
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupExplicit}, Name: "dedup-after-delete", Run: func(h *H) {
			url := h.FifoQueue()
			a := h.SendFifo(url, "g", "d", "x")
			h.Delete(url, h.ReceiveOne(url, 0))
			if b := h.SendFifo(url, "g", "d", "x"); aws.ToString(b.MessageId) != aws.ToString(a.MessageId) {
				h.T.Fatalf("dedup id forgotten when the message was deleted")
			}
			h.ReceiveNone(url, "duplicate of a deleted message")
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupExplicit}, Name: "dedup-id-required-without-content-dedup", Run: func(h *H) {
			url := h.FifoQueue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageGroupId: aws.String("g")})
			h.WantErr(err, "FIFO send without dedup id or content dedup", "InvalidParameterValue", "MissingParameter")
		}},
		{Caps: []capabilities.ID{capabilities.FIFOOrdering, capabilities.QueueFIFO}, Name: "group-id-required", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")})
			h.WantErr(err, "FIFO send without MessageGroupId", "MissingParameter", "InvalidParameterValue")
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupScopeGroup}, Name: "dedup-scope-message-group", Run: func(h *H) {
			url := h.FifoQueue("DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId")
			a := h.SendFifo(url, "g1", "d", "x")
			b := h.SendFifo(url, "g2", "d", "x")
			if aws.ToString(a.MessageId) == aws.ToString(b.MessageId) {
				h.T.Fatalf("same dedup id in another group was deduplicated under DeduplicationScope=messageGroup")
			}
			if c := h.SendFifo(url, "g1", "d", "x"); aws.ToString(c.MessageId) != aws.ToString(a.MessageId) {
				h.T.Fatalf("same dedup id in the same group was not deduplicated")
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupExplicit}, Name: "dedup-scope-queue-spans-groups", Run: func(h *H) {
			url := h.FifoQueue()
			a := h.SendFifo(url, "g1", "d", "x")
			if b := h.SendFifo(url, "g2", "d", "x"); aws.ToString(a.MessageId) != aws.ToString(b.MessageId) {
				h.T.Fatalf("queue-scoped dedup id reused in another group stored a new message")
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOSequenceNumber}, Name: "sequence-numbers-increase", Run: func(h *H) {
			// SQS promises an increase within a message group, not across groups.
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			prev := map[string]*big.Int{"g0": big.NewInt(-1), "g1": big.NewInt(-1)}
			sent := map[string]string{}
			for i := 0; i < 6; i++ {
				g := fmt.Sprint("g", i%2)
				out := h.SendFifo(url, g, "", bodyN(i))
				n, ok := new(big.Int).SetString(aws.ToString(out.SequenceNumber), 10)
				if !ok || n.Cmp(prev[g]) <= 0 {
					h.T.Fatalf("SequenceNumber %s in group %s after %s: want a larger decimal", aws.ToString(out.SequenceNumber), g, prev[g])
				}
				prev[g] = n
				sent[aws.ToString(out.MessageId)] = aws.ToString(out.SequenceNumber)
			}
			for _, m := range h.receiveN(url, 2, 30) {
				if got := h.SysAttr(m, "SequenceNumber"); got != sent[aws.ToString(m.MessageId)] {
					h.T.Fatalf("received SequenceNumber %s, sent %s", got, sent[aws.ToString(m.MessageId)])
				}
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			// None on send: received messages carry sequence numbers that increase within
			// their group.
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for i := 0; i < 6; i++ {
				h.SendFifo(url, fmt.Sprint("g", i%2), "", bodyN(i))
			}
			prev := map[string]*big.Int{}
			for got := 0; got < 6; {
				ms := h.Receive(url, 10, 30)
				if len(ms) == 0 {
					h.T.Fatalf("received %d of 6 messages", got)
				}
				for _, m := range ms {
					g := h.SysAttr(m, "MessageGroupId")
					n, ok := new(big.Int).SetString(h.SysAttr(m, "SequenceNumber"), 10)
					if !ok || (prev[g] != nil && n.Cmp(prev[g]) <= 0) {
						h.T.Fatalf("received SequenceNumber %q in group %s after %v: want a larger decimal", h.SysAttr(m, "SequenceNumber"), g, prev[g])
					}
					prev[g] = n
					h.Delete(url, m)
					got++
				}
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOSequenceNumber, capabilities.QueueFIFO}, Name: "fifo-system-attributes", Run: func(h *H) {
			url := h.FifoQueue()
			h.SendFifo(url, "grp", "ddp", "x")
			m := h.ReceiveOne(url, 0)
			if h.SysAttr(m, "MessageGroupId") != "grp" || h.SysAttr(m, "MessageDeduplicationId") != "ddp" {
				h.T.Fatalf("attributes %v: want MessageGroupId grp and MessageDeduplicationId ddp", m.Attributes)
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOReceiveAttempt}, Name: "receive-attempt-replay", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			for i := 0; i < 3; i++ {
				h.SendFifo(url, "g", "", bodyN(i))
			}
			recv := func() []types.Message {
				out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 2, ReceiveRequestAttemptId: aws.String("attempt-1")})
				h.Must(err, "ReceiveMessage with ReceiveRequestAttemptId")
				return out.Messages
			}
			first := recv()
			h.Advance(10 * time.Second)
			again := recv()
			if len(first) == 0 || len(again) != len(first) {
				h.T.Fatalf("replay returned %d messages, first call %d", len(again), len(first))
			}
			for i := range first {
				if aws.ToString(again[i].MessageId) != aws.ToString(first[i].MessageId) || aws.ToString(again[i].ReceiptHandle) != aws.ToString(first[i].ReceiptHandle) {
					h.T.Fatalf("replay entry %d differs: %s/%s vs %s/%s", i, aws.ToString(again[i].MessageId), aws.ToString(again[i].ReceiptHandle), aws.ToString(first[i].MessageId), aws.ToString(first[i].ReceiptHandle))
				}
			}
			h.Delete(url, again[0])
		}},
		{Caps: []capabilities.ID{capabilities.FIFOReceiveAttempt}, Name: "different-attempt-ids-differ", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "a", "", "a1")
			h.SendFifo(url, "b", "", "b1")
			ids := map[string]bool{}
			for _, att := range []string{"x", "y"} {
				out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 1, ReceiveRequestAttemptId: aws.String(att)})
				h.Must(err, "ReceiveMessage")
				if len(out.Messages) != 1 || ids[aws.ToString(out.Messages[0].MessageId)] {
					h.T.Fatalf("attempt %s: %v", att, Bodies(out.Messages))
				}
				ids[aws.ToString(out.Messages[0].MessageId)] = true
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOOrdering, capabilities.FIFOSequenceNumber}, Name: "send-batch-keeps-order", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			var entries []types.SendMessageBatchRequestEntry
			for i := 0; i < 5; i++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", i)), MessageBody: aws.String(bodyN(i)), MessageGroupId: aws.String("g")})
			}
			out, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			h.Must(err, "FIFO SendMessageBatch")
			if len(out.Successful) != 5 {
				h.T.Fatalf("FIFO batch: %d successful, failed %+v", len(out.Successful), out.Failed)
			}
			for _, s := range out.Successful {
				if aws.ToString(s.SequenceNumber) == "" && h.Level(capabilities.FIFOSequenceNumber) == capabilities.Native {
					h.T.Fatalf("batch entry %s has no SequenceNumber", aws.ToString(s.Id))
				}
			}
			var got []string
			for len(got) < 5 {
				ms := h.Receive(url, 10, 0)
				if len(ms) == 0 {
					break
				}
				for _, m := range ms {
					got = append(got, aws.ToString(m.Body))
					h.Delete(url, m)
				}
			}
			for i, b := range got {
				if b != bodyN(i) {
					h.T.Fatalf("batch received out of order: %v", got)
				}
			}
		}},
		{Caps: []capabilities.ID{capabilities.FIFOOrdering, capabilities.QueueFIFO}, Name: "send-batch-without-group-id-fails-whole-call", Run: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("a"), MessageBody: aws.String("a"), MessageGroupId: aws.String("g")},
				{Id: aws.String("b"), MessageBody: aws.String("b")},
			}})
			// SQS validates a FIFO batch as a whole: no entry is stored.
			h.WantErr(err, "FIFO SendMessageBatch with an entry without MessageGroupId", "InvalidParameterValue")
			h.ReceiveNone(url, "after the rejected batch")
		}},
		{Caps: []capabilities.ID{capabilities.FIFODedupExplicit}, Name: "send-batch-without-dedup-id-fails-whole-call", Run: func(h *H) {
			url := h.FifoQueue()
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("a"), MessageBody: aws.String("a"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")},
				{Id: aws.String("b"), MessageBody: aws.String("b"), MessageGroupId: aws.String("g")},
			}})
			h.WantErr(err, "FIFO SendMessageBatch with an entry without MessageDeduplicationId", "InvalidParameterValue")
			h.ReceiveNone(url, "after the rejected batch")
		}},
	}
}

// release sets m's visibility timeout to 0, so that it is receivable again at once.
func (h *H) release(url string, m types.Message) {
	h.T.Helper()
	_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
		ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
	h.Must(err, "ChangeMessageVisibility 0")
}
