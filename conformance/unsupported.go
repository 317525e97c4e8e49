package conformance

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// wantRejected asserts the rejection a backend owes for an Unsupported capability: the
// catalog's RejectCode, and a message naming the capability.
func (h *H) wantRejected(err error, id capabilities.ID, what string) {
	h.T.Helper()
	e, ok := capabilities.Lookup(id)
	if !ok {
		h.T.Fatalf("capability %s not in the catalog", id)
	}
	h.WantErr(err, what+" with "+string(id)+" unsupported", e.RejectCode)
	if !strings.Contains(err.Error(), string(id)) {
		h.T.Fatalf("%s: error %q does not name the capability %s", what, err.Error(), id)
	}
}

// unsupportedProbes make, for a capability declared Unsupported, the request that needs
// it, and check the rejection and that the backend did not change.
func unsupportedProbes() map[capabilities.ID]func(*H) {
	p := map[capabilities.ID]func(*H){
		capabilities.QueueFIFO: func(h *H) {
			name := h.FifoName("nofifo")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"FifoQueue": "true"}})
			h.wantRejected(err, capabilities.QueueFIFO, "CreateQueue FIFO")
			h.wantNoQueue(name)
		},
		capabilities.QueueStandard: func(h *H) {
			name := h.Name("nostd")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
			h.wantRejected(err, capabilities.QueueStandard, "CreateQueue standard")
			h.wantNoQueue(name)
		},
		capabilities.QueueCreate: func(h *H) {
			name := h.Name("nocreate")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
			h.wantRejected(err, capabilities.QueueCreate, "CreateQueue")
			h.wantNoQueue(name)
		},
		capabilities.VisibilityRelease: func(h *H) {
			url := h.Queue()
			h.Send(url, "x")
			m := h.ReceiveOne(url, 60)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			h.wantRejected(err, capabilities.VisibilityRelease, "ChangeMessageVisibility 0")
			h.ReceiveNone(url, "message whose release was rejected")
		},
		capabilities.FIFODedupExplicit: func(h *H) {
			url := h.FifoQueue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")})
			h.wantRejected(err, capabilities.FIFODedupExplicit, "SendMessage MessageDeduplicationId")
			h.wantEmpty(url)
		},
		capabilities.RedriveDLQ: func(h *H) {
			dlq, src := h.Queue(), h.Queue()
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(src), Attributes: map[string]string{"RedrivePolicy": redrivePolicy(h.Arn(dlq), 2)}})
			h.wantRejected(err, capabilities.RedriveDLQ, "SetQueueAttributes RedrivePolicy")
			if got := h.Attr(src, types.QueueAttributeNameRedrivePolicy); got != "" {
				h.T.Fatalf("rejected RedrivePolicy was stored: %s", got)
			}
		},
		capabilities.QueueBrowse: unsupportedPeek,
		capabilities.QueuePurge: func(h *H) {
			url := h.Queue()
			h.Send(url, "kept")
			_, err := h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.wantRejected(err, capabilities.QueuePurge, "PurgeQueue")
			h.ReceiveOne(url, 0)
		},
		capabilities.QueueTags: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.TagQueue(h.Ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"a": "1"}})
			h.wantRejected(err, capabilities.QueueTags, "TagQueue")
			name := h.Name("tagged")
			_, err = h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: map[string]string{"a": "1"}})
			h.wantRejected(err, capabilities.QueueTags, "CreateQueue with tags")
			h.wantNoQueue(name)
		},
		capabilities.DelayMessage: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), DelaySeconds: 5})
			h.wantRejected(err, capabilities.DelayMessage, "SendMessage DelaySeconds")
			h.wantEmpty(url)
		},
		capabilities.VisibilityChange: func(h *H) {
			url := h.Queue()
			h.Send(url, "x")
			m := h.ReceiveOne(url, 60)
			_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			h.wantRejected(err, capabilities.VisibilityChange, "ChangeMessageVisibility")
			h.ReceiveNone(url, "message whose visibility change was rejected")
		},
		capabilities.RedriveMoveTasks: func(h *H) {
			dl, _ := h.withDLQ(1)
			_, err := h.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dl))})
			h.wantRejected(err, capabilities.RedriveMoveTasks, "StartMessageMoveTask")
		},
		capabilities.FIFOReceiveAttempt: func(h *H) {
			url := h.FifoQueue("ContentBasedDeduplication", "true")
			h.SendFifo(url, "g", "", "x")
			_, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), ReceiveRequestAttemptId: aws.String("a")})
			h.wantRejected(err, capabilities.FIFOReceiveAttempt, "ReceiveMessage ReceiveRequestAttemptId")
			h.ReceiveOne(url, 0)
		},
		capabilities.LongPolling: func(h *H) {
			url := h.Queue()
			// Run as a poll with the clock moving, so a gateway that waits instead of
			// rejecting fails the case rather than hanging it.
			r := h.pollResultAdvancing(h.longPoll(url, 5))
			h.wantRejected(r.err, capabilities.LongPolling, "ReceiveMessage WaitTimeSeconds")
		},
		capabilities.MessageAttrs: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"),
				MessageAttributes: map[string]types.MessageAttributeValue{"a": {DataType: aws.String("String"), StringValue: aws.String("1")}}})
			h.wantRejected(err, capabilities.MessageAttrs, "SendMessage with attributes")
			h.wantEmpty(url)
		},
		capabilities.FIFODedupContent: func(h *H) {
			// The gateway may refuse the queue attribute, or the send that relies on it.
			name := h.FifoName("cbd")
			out, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}})
			if err != nil {
				h.wantRejected(err, capabilities.FIFODedupContent, "CreateQueue ContentBasedDeduplication")
				h.wantNoQueue(name)
				return
			}
			_, err = h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("x"), MessageGroupId: aws.String("g")})
			h.wantRejected(err, capabilities.FIFODedupContent, "SendMessage relying on content-based deduplication")
			h.wantEmpty(aws.ToString(out.QueueUrl))
		},
		capabilities.FIFODedupScopeGroup: func(h *H) {
			name := h.FifoName("scope")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"FifoQueue": "true", "DeduplicationScope": "messageGroup"}})
			h.wantRejected(err, capabilities.FIFODedupScopeGroup, "CreateQueue DeduplicationScope=messageGroup")
			h.wantNoQueue(name)
		},
	}
	// Each settable attribute: setting it is rejected and the queue keeps its value.
	for _, e := range capabilities.All() {
		name, ok := strings.CutPrefix(string(e.ID), "attribute.")
		if !ok {
			continue
		}
		id := e.ID
		p[id] = func(h *H) {
			url := h.Queue()
			if fifoOnlyAttr(name) {
				url = h.FifoQueue()
			}
			before := h.Attrs(url, types.QueueAttributeNameAll)
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{name: sampleAttr(h, name)}})
			h.wantRejected(err, id, "SetQueueAttributes "+name)
			after := h.Attrs(url, types.QueueAttributeNameAll)
			if before[name] != after[name] {
				h.T.Fatalf("rejected %s changed it from %q to %q", name, before[name], after[name])
			}
		}
	}
	return p
}

// fifoOnlyAttr says SQS accepts the attribute only on FIFO queues.
func fifoOnlyAttr(name string) bool {
	return name == "ContentBasedDeduplication" || name == "DeduplicationScope" || name == "FifoThroughputLimit"
}

// sampleAttr is a valid value for a settable attribute (on a standard queue).
func sampleAttr(h *H, name string) string {
	switch name {
	case "RedrivePolicy":
		return redrivePolicy(h.Arn(h.Queue()), 3)
	case "RedriveAllowPolicy":
		return `{"redrivePermission":"denyAll"}`
	case "Policy":
		return `{"Version":"2012-10-17","Statement":[]}`
	case "ContentBasedDeduplication", "SqsManagedSseEnabled":
		return "true"
	case "DeduplicationScope":
		return "messageGroup"
	case "FifoThroughputLimit":
		return "perQueue" // perMessageGroupId would also need DeduplicationScope=messageGroup
	case "KmsMasterKeyId":
		return "alias/aws/sqs"
	case "MaximumMessageSize":
		return "2048"
	case "MessageRetentionPeriod", "KmsDataKeyReusePeriodSeconds":
		return "600"
	default:
		return "7"
	}
}

func (h *H) wantNoQueue(name string) {
	h.T.Helper()
	_, err := h.SQS.GetQueueUrl(h.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	h.WantErr(err, "GetQueueUrl of a queue whose creation was rejected", "QueueDoesNotExist")
}

func (h *H) wantEmpty(url string) {
	h.T.Helper()
	h.ReceiveNone(url, "after a rejected send")
	h.WantCounts(url, 0, 0, 0)
}
