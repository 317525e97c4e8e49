package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Fair queues: on a standard queue MessageGroupId names a tenant, and a tenant holding
// 30 or more in-flight messages and over 10% of them is noisy; the quiet tenants'
// messages are delivered first.
func fairCases() []tc {
	fair := []capabilities.ID{capabilities.FairQueues}
	return []tc{
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
		}, Degraded: func(h *H, _ capabilities.Declaration) {
			// The fallback: the group is kept and returned, delivery ignores it.
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
		}},
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
