package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Fair queues (docs.aws.amazon.com, "How Amazon SQS fair queues work"): on a standard
// queue MessageGroupId names a tenant. A tenant holding 30 or more in-flight messages and
// over 10% of them is noisy, and so is one that took over 10% of the consumers' recent
// processing time; the quiet tenants' messages are delivered first, then the noisy ones',
// the tenant with the fewest messages in flight first. A tenant that sent nothing for 5
// minutes is quiet again.
func fairCases() []tc {
	fair := []capabilities.ID{capabilities.FairQueues}
	return []tc{
		{Caps: fair, Name: "noisy-groups-fewest-in-flight-first", Run: func(h *H) {
			url := h.Queue()
			// a's backlog outlasts every receive below, so a queue that ignores groups
			// hands out a's older messages throughout.
			h.sendGroup(url, "a", 100)
			h.receiveN(url, 40, 600)
			h.sendGroup(url, "b", 60)
			// a is noisy (40 in flight, all of them): b's messages come first until b holds
			// 32, over 10% of the 72 in flight, and is noisy too.
			h.receiveN(url, 32, 600)
			got := Bodies(h.Receive(url, 10, 600))
			for _, b := range got {
				if !strings.HasPrefix(b, "b-") {
					h.T.Fatalf("with a (40 in flight) and b (32) both noisy, a receive returned %v: "+
						"want b's messages, the noisy group with the fewest in flight first", got)
				}
			}
			if len(got) != 10 {
				h.T.Fatalf("received %d messages, want 10 of b's 28 waiting", len(got))
			}
		}, Degraded: fairDegraded},
		{Caps: fair, Name: "noisy-group-quiet-after-five-minutes-without-sends", Run: func(h *H) {
			url := h.Queue()
			h.sendGroup(url, "noisy", 60)
			h.receiveN(url, 35, 600)
			// Five minutes without a send from it: the group is quiet again, and its older
			// messages come before a newer one of another group, in send order.
			h.Advance(5*time.Minute + time.Second)
			h.sendGroup(url, "other", 1)
			got := Bodies(h.Receive(url, 10, 600))
			if slices.Contains(got, "other-0") {
				h.T.Fatalf("a group that sent nothing for 5 minutes is still held back: a receive of 10 returned %v "+
					"with 25 of its older messages waiting", got)
			}
		}, Degraded: fairDegraded},
		{Caps: fair, Name: "slow-group-noisy-by-processing-time", Run: func(h *H) {
			url := h.Queue()
			// slow's consumer takes 100 s a message, fast's none: slow takes nearly all of
			// the processing time, though never 30 messages in flight.
			for range 3 {
				h.sendGroup(url, "slow", 1)
				h.sendGroup(url, "fast", 1)
				var slow []types.Message
				for _, m := range h.Receive(url, 10, 600) {
					if strings.HasPrefix(aws.ToString(m.Body), "slow-") {
						slow = append(slow, m)
					} else {
						h.Delete(url, m)
					}
				}
				h.Advance(100 * time.Second)
				for _, m := range slow {
					h.Delete(url, m)
				}
			}
			h.sendGroup(url, "slow", 5)
			h.sendGroup(url, "fast", 1)
			got := Bodies(h.Receive(url, 1, 600))
			if len(got) != 1 || got[0] != "fast-0" {
				h.T.Fatalf("after slow's messages took 100 s each and fast's none, a receive of 1 returned %v: "+
					"want fast-0, ahead of the slow group's older messages", got)
			}
		}, Degraded: fairDegraded},
		{Caps: fair, Name: "quiet-group-before-noisy-backlog", Run: func(h *H) {
			url := h.Queue()
			h.sendGroup(url, "noisy", 60)
			// 35 of the noisy group's messages in flight: 30 or more, and every in-flight one.
			for held := 0; held < 35; {
				ms := h.Receive(url, int32(min(10, 35-held)), 600)
				if len(ms) == 0 {
					h.T.Fatalf("receive %d of the noisy group's 60 messages: the queue answered empty after %d", 35, held)
				}
				held += len(ms)
			}
			h.sendGroup(url, "quiet", 1)
			got := Bodies(h.Receive(url, 10, 600))
			if !slices.Contains(got, "quiet-0") {
				h.T.Fatalf("with 35 of the noisy group's messages in flight and 25 waiting, a receive of 10 returned %v: "+
					"the quiet group's message waits behind the noisy backlog", got)
			}
		}, Degraded: fairDegraded},
	}
}

// fairDegraded is the fallback of every fair-queue case: the group is kept and returned,
// delivery ignores it, and the response says so.
func fairDegraded(h *H, _ capabilities.Declaration) {
	url := h.Queue()
	h.sendGroup(url, "tenant-a", 1)
	if got := h.LastHeader("X-Anysqs-Degraded"); !strings.Contains(got, string(capabilities.FairQueues)) {
		h.T.Fatalf("SendMessage with a MessageGroupId on a standard queue: X-Anysqs-Degraded = %q, want it to name %s",
			got, capabilities.FairQueues)
	}
	m := h.ReceiveOne(url, 30)
	if g := h.SysAttr(m, "MessageGroupId"); g != "tenant-a" {
		h.T.Fatalf("received MessageGroupId %q, want tenant-a", g)
	}
}

// sendGroup sends n messages <group>-0 ... to a standard queue in message group group,
// in batches of ten.
func (h *H) sendGroup(url, group string, n int) {
	h.T.Helper()
	for i := 0; i < n; i += 10 {
		var entries []types.SendMessageBatchRequestEntry
		for j := i; j < min(i+10, n); j++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(j)),
				MessageBody: aws.String(fmt.Sprintf("%s-%d", group, j)), MessageGroupId: aws.String(group)})
		}
		out, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
		h.Must(err, "SendMessageBatch")
		if len(out.Failed) > 0 {
			h.T.Fatalf("SendMessageBatch of group %s: %d failed, first %s: %s", group, len(out.Failed),
				aws.ToString(out.Failed[0].Code), aws.ToString(out.Failed[0].Message))
		}
	}
}
