package conformance

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Batches: per-entry results, partial failures, and the whole-request errors.
func batchCases() []tc {
	std := []capabilities.ID{capabilities.QueueStandard}
	return []tc{
		{Caps: std, Name: "send-batch", Run: func(h *H) {
			url := h.Queue()
			var entries []types.SendMessageBatchRequestEntry
			for i := 0; i < 10; i++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprintf("e%d", i)), MessageBody: aws.String(bodyN(i)),
					MessageAttributes: map[string]types.MessageAttributeValue{"i": {DataType: aws.String("Number"), StringValue: aws.String(fmt.Sprint(i))}}})
			}
			// The SDK checks every entry's MD5OfMessageBody and MD5OfMessageAttributes.
			out, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			h.Must(err, "SendMessageBatch")
			if len(out.Successful) != 10 || len(out.Failed) != 0 {
				h.T.Fatalf("SendMessageBatch: %d successful, %d failed, want 10, 0", len(out.Successful), len(out.Failed))
			}
			ids := map[string]bool{}
			for _, s := range out.Successful {
				ids[aws.ToString(s.Id)] = true
			}
			if len(ids) != 10 {
				h.T.Fatalf("result entry ids %v do not match the request's", ids)
			}
			got := h.drain(url, 10)
			if len(got) != 10 {
				h.T.Fatalf("received %d messages, want 10", len(got))
			}
		}},
		{Caps: std, Name: "send-batch-partial-failure", Run: func(h *H) {
			url := h.Queue()
			out, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("good1"), MessageBody: aws.String("ok-1")},
				{Id: aws.String("bad"), MessageBody: aws.String("nul\x00")},
				{Id: aws.String("good2"), MessageBody: aws.String("ok-2")},
			}})
			h.Must(err, "SendMessageBatch with one bad entry")
			if len(out.Successful) != 2 || len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "bad" || !out.Failed[0].SenderFault || aws.ToString(out.Failed[0].Code) == "" {
				h.T.Fatalf("SendMessageBatch: successful %d, failed %+v; want 2 and one sender-fault entry 'bad'", len(out.Successful), out.Failed)
			}
			if got := h.drain(url, 2); strings.Join(got, ",") != "ok-1,ok-2" {
				h.T.Fatalf("stored %v, want ok-1 and ok-2", got)
			}
		}},
		{Caps: std, Name: "send-batch-too-many-entries", Run: func(h *H) {
			url := h.Queue()
			var entries []types.SendMessageBatchRequestEntry
			for i := 0; i < 11; i++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", i)), MessageBody: aws.String("x")})
			}
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			h.WantErr(err, "SendMessageBatch of 11", "TooManyEntriesInBatchRequest")
			h.ReceiveNone(url, "after a rejected batch")
		}},
		{Caps: std, Name: "send-batch-empty", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{}})
			h.WantErr(err, "SendMessageBatch with no entries", "EmptyBatchRequest", "MissingParameter")
		}},
		{Caps: std, Name: "send-batch-ids-not-distinct", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("same"), MessageBody: aws.String("a")}, {Id: aws.String("same"), MessageBody: aws.String("b")}}})
			h.WantErr(err, "SendMessageBatch with duplicate ids", "BatchEntryIdsNotDistinct")
			h.ReceiveNone(url, "after a rejected batch")
		}},
		{Caps: std, Name: "send-batch-invalid-entry-id", Run: func(h *H) {
			url := h.Queue()
			for _, id := range []string{"has space", "dot.ted", strings.Repeat("x", 81)} {
				_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
					{Id: aws.String(id), MessageBody: aws.String("a")}}})
				h.WantErr(err, "SendMessageBatch entry id "+id, "InvalidBatchEntryId")
			}
		}},
		{Caps: []capabilities.ID{capabilities.MessageMaxSize}, Name: "send-batch-too-long", Run: func(h *H) {
			url := h.Queue("MaximumMessageSize", strconv.Itoa(h.maxMessageBytes()))
			var entries []types.SendMessageBatchRequestEntry
			for i := 0; i < 10; i++ { // each fits, together 1.2 MiB > the 1 MiB batch limit
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", i)), MessageBody: aws.String(strings.Repeat("b", 120*1024))})
			}
			_, err := h.SQS.SendMessageBatch(h.Ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			h.WantErr(err, "SendMessageBatch of 1.2 MiB", "BatchRequestTooLong")
			h.ReceiveNone(url, "after a rejected batch")
		}},
		{Caps: std, Name: "delete-batch-partial-failure", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "a")
			h.Send(url, "b")
			ms := h.receiveN(url, 2, 30)
			out, err := h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.DeleteMessageBatchRequestEntry{
				{Id: aws.String("ok"), ReceiptHandle: ms[0].ReceiptHandle},
				{Id: aws.String("bad"), ReceiptHandle: aws.String("garbage")},
			}})
			h.Must(err, "DeleteMessageBatch")
			if len(out.Successful) != 1 || aws.ToString(out.Successful[0].Id) != "ok" || len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "bad" ||
				!codeStringIs(aws.ToString(out.Failed[0].Code), "ReceiptHandleIsInvalid") || !out.Failed[0].SenderFault {
				h.T.Fatalf("DeleteMessageBatch: successful %+v failed %+v; want ok, and bad with ReceiptHandleIsInvalid", out.Successful, out.Failed)
			}
			h.Advance(31 * time.Second)
			if got := h.drain(url, 1); len(got) != 1 || got[0] != aws.ToString(ms[1].Body) {
				h.T.Fatalf("after batch delete, queue holds %v, want only %s", got, aws.ToString(ms[1].Body))
			}
		}},
		{Caps: std, Name: "delete-batch-too-many-and-duplicate-ids", Run: func(h *H) {
			url := h.Queue()
			var entries []types.DeleteMessageBatchRequestEntry
			for i := 0; i < 11; i++ {
				entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", i)), ReceiptHandle: aws.String("h")})
			}
			_, err := h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			h.WantErr(err, "DeleteMessageBatch of 11", "TooManyEntriesInBatchRequest")
			_, err = h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries[:1:1]})
			if err != nil {
				h.T.Fatalf("DeleteMessageBatch with one bad handle failed as a whole: %v (want a per-entry failure)", err)
			}
			_, err = h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.DeleteMessageBatchRequestEntry{entries[0], entries[0]}})
			h.WantErr(err, "DeleteMessageBatch with duplicate ids", "BatchEntryIdsNotDistinct")
		}},
		{Caps: []capabilities.ID{capabilities.VisibilityChange}, Name: "change-visibility-batch-partial-failure", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "a")
			h.Send(url, "b")
			ms := h.receiveN(url, 2, 30)
			out, err := h.SQS.ChangeMessageVisibilityBatch(h.Ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
				{Id: aws.String("release"), ReceiptHandle: ms[0].ReceiptHandle, VisibilityTimeout: 0},
				{Id: aws.String("extend"), ReceiptHandle: ms[1].ReceiptHandle, VisibilityTimeout: 300},
				{Id: aws.String("bad"), ReceiptHandle: aws.String("garbage"), VisibilityTimeout: 10},
			}})
			h.Must(err, "ChangeMessageVisibilityBatch")
			if len(out.Successful) != 2 || len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "bad" || !codeStringIs(aws.ToString(out.Failed[0].Code), "ReceiptHandleIsInvalid") {
				h.T.Fatalf("ChangeMessageVisibilityBatch: successful %+v failed %+v", out.Successful, out.Failed)
			}
			m := h.ReceiveOne(url, 30)
			if aws.ToString(m.Body) != aws.ToString(ms[0].Body) {
				h.T.Fatalf("released message %s not received; got %s", aws.ToString(ms[0].Body), aws.ToString(m.Body))
			}
			h.Delete(url, m)
			h.Advance(299 * time.Second)
			h.ReceiveNone(url, "extended message before its new timeout")
			h.Advance(2 * time.Second)
			if got := h.drain(url, 2); len(got) != 1 || got[0] != aws.ToString(ms[1].Body) {
				h.T.Fatalf("after the extended timeout, received %v, want [%s]", got, aws.ToString(ms[1].Body))
			}
		}},
		{Caps: std, Name: "delete-batch-empty", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.DeleteMessageBatch(h.Ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.DeleteMessageBatchRequestEntry{}})
			h.WantErr(err, "DeleteMessageBatch with no entries", "EmptyBatchRequest", "MissingParameter")
		}},
	}
}

// codeStringIs compares a batch entry's Code with an SQS error name in either protocol form.
func codeStringIs(code, want string) bool { return code == want || code == queryCodes[want] }

// receiveN receives until it holds exactly n messages, with visibility vis.
func (h *H) receiveN(url string, n int, vis int32) []types.Message {
	h.T.Helper()
	var got []types.Message
	for round := 0; round < 3*n+3 && len(got) < n; round++ {
		got = append(got, h.Receive(url, int32(min(10, n-len(got))), vis)...)
	}
	if len(got) != n {
		h.T.Fatalf("received %d messages, want %d", len(got), n)
	}
	return got
}

// drain receives and deletes every visible message (at most max), returning the bodies
// sorted.
func (h *H) drain(url string, max int) []string {
	h.T.Helper()
	var bodies []string
	for round := 0; round < max+3; round++ {
		ms := h.Receive(url, 10, 0)
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			bodies = append(bodies, aws.ToString(m.Body))
			h.Delete(url, m)
		}
		if len(bodies) > max {
			h.T.Fatalf("drain: more than %d messages: %v", max, bodies)
		}
	}
	sort.Strings(bodies)
	return bodies
}
