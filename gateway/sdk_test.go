package gateway_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

func (e *env) sdk() *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(e.http.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
}

// TestSDKTypedErrors checks that aws-sdk-go-v2 recognises our JSON errors as its typed
// errors and reports the Query code, which is what awsQueryCompatible clients expose.
func TestSDKTypedErrors(t *testing.T) {
	e := newEnv(t)
	c := e.sdk()
	ctx := context.Background()
	_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("missing")})
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) {
		t.Fatalf("GetQueueUrl of a missing queue: %v, want *types.QueueDoesNotExist", err)
	}
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "AWS.SimpleQueueService.NonExistentQueue" || api.ErrorFault() != smithy.FaultClient {
		t.Fatalf("error code %v, want AWS.SimpleQueueService.NonExistentQueue/client", err)
	}

	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q1"),
		Attributes: map[string]string{"VisibilityTimeout": "30"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q1"),
		Attributes: map[string]string{"VisibilityTimeout": "31"}})
	var qne *types.QueueNameExists
	if !errors.As(err, &qne) {
		t.Fatalf("CreateQueue with other attributes: %v, want *types.QueueNameExists", err)
	}
}

// TestSDKRoundTrip sends and receives through the SDK with checksum validation on, so a
// wrong MD5 of body or attributes fails the call.
func TestSDKRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := e.sdk()
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("round")})
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]types.MessageAttributeValue{
		"s": {DataType: aws.String("String"), StringValue: aws.String("värde")},
		"n": {DataType: aws.String("Number.int"), StringValue: aws.String("42")},
		"b": {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 255}},
	}
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("hello\r\nworld"),
		MessageAttributes: attrs,
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String("Root=1-5759e988-bd862e3fe1be46a994272793")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(sent.MD5OfMessageSystemAttributes) == "" {
		t.Error("no MD5OfMessageSystemAttributes")
	}
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("received %d messages, want 1", len(got.Messages))
	}
	m := got.Messages[0]
	if aws.ToString(m.Body) != "hello\r\nworld" || aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) {
		t.Errorf("received %q id %s", aws.ToString(m.Body), aws.ToString(m.MessageId))
	}
	if aws.ToString(m.MD5OfMessageAttributes) != aws.ToString(sent.MD5OfMessageAttributes) {
		t.Errorf("MD5OfMessageAttributes %s on receive, %s on send", aws.ToString(m.MD5OfMessageAttributes), aws.ToString(sent.MD5OfMessageAttributes))
	}
	for _, a := range []string{"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp", "AWSTraceHeader"} {
		if m.Attributes[a] == "" {
			t.Errorf("system attribute %s missing: %v", a, m.Attributes)
		}
	}
	if len(m.MessageAttributes) != 3 || string(m.MessageAttributes["b"].BinaryValue) != string([]byte{0, 1, 2, 255}) {
		t.Errorf("message attributes %v", m.MessageAttributes)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}

	// Batch with one invalid entry: per-entry failure, the rest stored.
	b, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q.QueueUrl, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("ok"), MessageBody: aws.String("one")},
		{Id: aws.String("bad"), MessageBody: aws.String("two"), DelaySeconds: 901},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Successful) != 1 || len(b.Failed) != 1 || aws.ToString(b.Failed[0].Id) != "bad" || !b.Failed[0].SenderFault {
		t.Fatalf("batch result %+v", b)
	}
}

func TestSDKFIFO(t *testing.T) {
	e := newEnv(t)
	c := e.sdk()
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("f.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x"), MessageGroupId: aws.String("g")})
	if err == nil {
		t.Fatal("FIFO send without dedup id on a queue without ContentBasedDeduplication succeeded")
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "MissingParameter" {
		t.Fatalf("FIFO send without group: %v, want MissingParameter", err)
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x"), MessageGroupId: aws.String("g"),
		MessageDeduplicationId: aws.String("d"), DelaySeconds: 5})
	if !errors.As(err, &api) || api.ErrorCode() != "InvalidParameterValue" {
		t.Fatalf("FIFO send with per-message delay: %v, want InvalidParameterValue", err)
	}
	first, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")})
	if err != nil {
		t.Fatal(err)
	}
	dup, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(dup.MessageId) != aws.ToString(first.MessageId) || aws.ToString(dup.SequenceNumber) != aws.ToString(first.SequenceNumber) || aws.ToString(first.SequenceNumber) == "" {
		t.Errorf("duplicate send returned %s/%s, first %s/%s", aws.ToString(dup.MessageId), aws.ToString(dup.SequenceNumber), aws.ToString(first.MessageId), aws.ToString(first.SequenceNumber))
	}
}
