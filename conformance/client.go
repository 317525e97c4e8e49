package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/anysqs/anysqs/capabilities"
)

// queryCodes maps the AWS JSON error names to the Query protocol codes that the SDK
// reports instead when the gateway sends the x-amzn-query-error header (as SQS does).
// Taken from the SQS API model, independently of the gateway's own table.
var queryCodes = map[string]string{
	"QueueDoesNotExist":            "AWS.SimpleQueueService.NonExistentQueue",
	"QueueNameExists":              "QueueAlreadyExists",
	"PurgeQueueInProgress":         "AWS.SimpleQueueService.PurgeQueueInProgress",
	"MessageNotInflight":           "AWS.SimpleQueueService.MessageNotInflight",
	"TooManyEntriesInBatchRequest": "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
	"BatchEntryIdsNotDistinct":     "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
	"EmptyBatchRequest":            "AWS.SimpleQueueService.EmptyBatchRequest",
	"InvalidBatchEntryId":          "AWS.SimpleQueueService.InvalidBatchEntryId",
	"BatchRequestTooLong":          "AWS.SimpleQueueService.BatchRequestTooLong",
	"UnsupportedOperation":         "AWS.SimpleQueueService.UnsupportedOperation",
	"QueueDeletedRecently":         "AWS.SimpleQueueService.QueueDeletedRecently",
}

// codeOf returns the error code the SDK reports for err ("" if err is not an API error).
func codeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// codeIs says whether err carries SQS error code want (JSON name) in either form.
func codeIs(err error, want string) bool {
	c := codeOf(err)
	return c != "" && (c == want || c == queryCodes[want])
}

// WantErr fails unless err is the SQS error want (one of several accepted codes).
func (h *H) WantErr(err error, what string, want ...string) {
	h.T.Helper()
	if err == nil {
		h.T.Fatalf("%s: succeeded, want error %s", what, strings.Join(want, " or "))
	}
	for _, w := range want {
		if codeIs(err, w) {
			return
		}
	}
	h.T.Fatalf("%s: got error %v (code %q), want %s", what, err, codeOf(err), strings.Join(want, " or "))
}

// WantErrMessage fails unless err is the SQS error code with exactly the message msg.
func (h *H) WantErrMessage(err error, what, code, msg string) {
	h.T.Helper()
	h.WantErr(err, what, code)
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorMessage() != msg {
		h.T.Fatalf("%s: message %q, want %q", what, ae.ErrorMessage(), msg)
	}
}

// WantFailedEntry fails unless the batch's only failed entry is id with code and msg.
func (h *H) WantFailedEntry(failed []types.BatchResultErrorEntry, what, id, code, msg string) {
	h.T.Helper()
	if len(failed) != 1 || aws.ToString(failed[0].Id) != id || aws.ToString(failed[0].Code) != code || aws.ToString(failed[0].Message) != msg {
		var got []string
		for _, f := range failed {
			got = append(got, fmt.Sprintf("%s %s %q", aws.ToString(f.Id), aws.ToString(f.Code), aws.ToString(f.Message)))
		}
		h.T.Fatalf("%s: failed entries %v, want %s %s %q", what, got, id, code, msg)
	}
}

// Must fails the case on err.
func (h *H) Must(err error, what string) {
	h.T.Helper()
	if err != nil {
		h.T.Fatalf("%s: %v", what, err)
	}
}

// CreateQueue creates a queue with attributes and returns its URL.
func (h *H) CreateQueue(name string, attrs map[string]string) string {
	h.T.Helper()
	out, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	h.Must(err, "CreateQueue "+name)
	if out.QueueUrl == nil || !strings.HasSuffix(*out.QueueUrl, "/"+name) {
		h.T.Fatalf("CreateQueue %s: QueueUrl %v does not end in /%s", name, aws.ToString(out.QueueUrl), name)
	}
	return *out.QueueUrl
}

// Queue creates a standard queue with a unique name and optional attributes.
func (h *H) Queue(attrs ...string) string {
	h.T.Helper()
	return h.CreateQueue(h.Name("q"), pairs(attrs))
}

// FifoQueue creates a FIFO queue with a unique name and optional attributes.
func (h *H) FifoQueue(attrs ...string) string {
	h.T.Helper()
	m := pairs(attrs)
	m["FifoQueue"] = "true"
	return h.CreateQueue(h.FifoName("f"), m)
}

func pairs(kv []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Send sends body and returns the output; the SDK has verified MD5OfMessageBody.
func (h *H) Send(url, body string) *sqs.SendMessageOutput {
	h.T.Helper()
	out, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)})
	h.Must(err, "SendMessage")
	if aws.ToString(out.MessageId) == "" {
		h.T.Fatalf("SendMessage: no MessageId")
	}
	return out
}

// SendFifo sends body to a FIFO queue in group with dedup id (empty: content-based).
func (h *H) SendFifo(url, group, dedup, body string) *sqs.SendMessageOutput {
	h.T.Helper()
	in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body), MessageGroupId: aws.String(group)}
	if dedup != "" {
		in.MessageDeduplicationId = aws.String(dedup)
	}
	out, err := h.SQS.SendMessage(h.Ctx, in)
	h.Must(err, "SendMessage (FIFO)")
	if aws.ToString(out.SequenceNumber) == "" && h.Level(capabilities.FIFOSequenceNumber) == capabilities.Native {
		h.T.Fatalf("SendMessage (FIFO): no SequenceNumber")
	}
	return out
}

// Receive does a short receive of up to max messages with all attributes; vis 0 means the
// queue default.
func (h *H) Receive(url string, max, vis int32) []types.Message {
	h.T.Helper()
	out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: max, VisibilityTimeout: vis,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	h.Must(err, "ReceiveMessage")
	return out.Messages
}

// ReceiveOne receives exactly one message, failing otherwise.
func (h *H) ReceiveOne(url string, vis int32) types.Message {
	h.T.Helper()
	ms := h.Receive(url, 1, vis)
	if len(ms) != 1 {
		h.T.Fatalf("ReceiveMessage: got %d messages, want 1", len(ms))
	}
	return ms[0]
}

// ReceiveNone asserts a short receive returns nothing.
func (h *H) ReceiveNone(url, why string) {
	h.T.Helper()
	if ms := h.Receive(url, 10, 0); len(ms) != 0 {
		h.T.Fatalf("%s: received %d message(s) (first body %q), want none", why, len(ms), aws.ToString(ms[0].Body))
	}
}

// ReceiveNoneBefore asserts that a short receive returns nothing while the gateway's
// clock reads before due: take due from h.Now() before the request that started the
// visibility timeout or delay, so that a receive answered after due, which a slow
// request on a real clock may be, is not mistaken for an early delivery.
//
// A message received after due (a slow request on a real clock) is made visible again
// at once, so that the rest of the case finds the queue as it would have, but for one
// more receive of each: ReceiveNoneBefore returns how many it took, for a case that
// counts receives.
func (h *H) ReceiveNoneBefore(url string, due time.Time, why string) (late int) {
	h.T.Helper()
	ms := h.Receive(url, 10, 0)
	if len(ms) == 0 {
		return 0
	}
	if h.Before(due) {
		h.T.Fatalf("%s: received %d message(s) (first body %q) before the deadline, want none", why, len(ms), aws.ToString(ms[0].Body))
	}
	for _, m := range ms {
		_, err := h.SQS.ChangeMessageVisibility(h.Ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
			ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		h.Must(err, "ChangeMessageVisibility 0 of a message received after the deadline")
	}
	return len(ms)
}

// Delete deletes a received message.
func (h *H) Delete(url string, m types.Message) {
	h.T.Helper()
	_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
	h.Must(err, "DeleteMessage")
}

// Attrs returns the named queue attributes.
func (h *H) Attrs(url string, names ...types.QueueAttributeName) map[string]string {
	h.T.Helper()
	out, err := h.SQS.GetQueueAttributes(h.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
	h.Must(err, "GetQueueAttributes")
	return out.Attributes
}

// Attr returns one queue attribute.
func (h *H) Attr(url string, name types.QueueAttributeName) string {
	h.T.Helper()
	return h.Attrs(url, name)[string(name)]
}

// SetAttrs sets queue attributes.
func (h *H) SetAttrs(url string, kv ...string) {
	h.T.Helper()
	_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: pairs(kv)})
	h.Must(err, "SetQueueAttributes")
}

// Counts returns ApproximateNumberOfMessages, ...NotVisible and ...Delayed.
func (h *H) Counts(url string) (visible, notVisible, delayed int) {
	h.T.Helper()
	a := h.Attrs(url, types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed)
	return h.atoi(a, "ApproximateNumberOfMessages"), h.atoi(a, "ApproximateNumberOfMessagesNotVisible"),
		h.atoi(a, "ApproximateNumberOfMessagesDelayed")
}

// WantCounts asserts the three approximate counts, when the backend declares them exact
// enough to compare (counts.approximate Native or Emulated).
func (h *H) WantCounts(url string, visible, notVisible, delayed int) {
	h.T.Helper()
	h.WantCountsBefore(url, time.Time{}, visible, notVisible, delayed)
}

// WantCountsBefore is WantCounts for counts that hold only until due (a visibility or
// delay deadline): counts read after due prove nothing. A zero due never passes.
func (h *H) WantCountsBefore(url string, due time.Time, visible, notVisible, delayed int) {
	h.T.Helper()
	if l := h.Level("counts.approximate"); l != "native" && l != "emulated" {
		return
	}
	v, n, d := h.Counts(url)
	if (v != visible || n != notVisible || d != delayed) && (due.IsZero() || h.Before(due)) {
		h.T.Fatalf("counts (visible, not visible, delayed) = (%d, %d, %d), want (%d, %d, %d)", v, n, d, visible, notVisible, delayed)
	}
}

func (h *H) atoi(m map[string]string, k string) int {
	h.T.Helper()
	s, ok := m[k]
	if !ok {
		h.T.Fatalf("attribute %s missing from %v", k, m)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		h.T.Fatalf("attribute %s = %q: not an integer", k, s)
	}
	return n
}

// Arn returns the queue's QueueArn.
func (h *H) Arn(url string) string {
	h.T.Helper()
	return h.Attr(url, types.QueueAttributeNameQueueArn)
}

// Bodies returns the bodies of ms.
func Bodies(ms []types.Message) []string {
	var b []string
	for _, m := range ms {
		b = append(b, aws.ToString(m.Body))
	}
	return b
}

// SysAttr returns a message system attribute, failing when absent.
func (h *H) SysAttr(m types.Message, name string) string {
	h.T.Helper()
	v, ok := m.Attributes[name]
	if !ok {
		h.T.Fatalf("message %s has no system attribute %s (has %v)", aws.ToString(m.MessageId), name, m.Attributes)
	}
	return v
}

// ReceiveCount returns ApproximateReceiveCount.
func (h *H) ReceiveCount(m types.Message) int {
	h.T.Helper()
	n, err := strconv.Atoi(h.SysAttr(m, "ApproximateReceiveCount"))
	if err != nil {
		h.T.Fatalf("ApproximateReceiveCount: %v", err)
	}
	return n
}

// bodyN is the n-th test body.
func bodyN(n int) string { return fmt.Sprintf("message-%03d", n) }

// withExplicitZeroDelay makes a SendMessage carry DelaySeconds=0, which the SDK leaves
// out as the field's zero value; it rewrites the serialized body of either protocol.
func withExplicitZeroDelay(o *sqs.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Build.Add(middleware.BuildMiddlewareFunc("ExplicitZeroDelay",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				req, ok := in.Request.(*smithyhttp.Request)
				if !ok {
					return next.HandleBuild(ctx, in)
				}
				b, err := io.ReadAll(req.GetStream())
				if err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				if bytes.HasSuffix(b, []byte("}")) {
					b = append(b[:len(b)-1], `,"DelaySeconds":0}`...)
				} else {
					b = append(b, "&DelaySeconds=0"...)
				}
				if req, err = req.SetStream(bytes.NewReader(b)); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				req.ContentLength = int64(len(b))
				in.Request = req
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	})
}
