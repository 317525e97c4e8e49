package plugin

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// wire sends m through protobuf's encoding, as the boundary does.
func wire[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	someTime = time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.UTC)
	rate     = int32(0) // a pointer to zero is not a nil pointer
)

// TestRoundTrip sends values through the protobuf form and back: zero times, nil and
// empty maps, nil pointers and pointers to zero, nil and empty binary values survive.
func TestRoundTrip(t *testing.T) {
	queues := []drivers.Queue{
		{}, // every field zero: zero times, nil tags, nil redrive policy
		{Name: "q", Tags: map[string]string{}, CreatedAt: someTime, LastModified: time.Unix(0, 0).UTC(),
			Attributes: drivers.QueueAttributes{DelaySeconds: 1, MaximumMessageSize: 2, MessageRetentionPeriod: 3,
				ReceiveMessageWaitTimeSeconds: 4, VisibilityTimeout: 5, RedrivePolicy: &drivers.RedrivePolicy{},
				RedriveAllowPolicy: "{}", Policy: "p", FifoQueue: true, ContentBasedDeduplication: true,
				DeduplicationScope: "messageGroup", FifoThroughputLimit: "perQueue", KmsMasterKeyID: "k",
				KmsDataKeyReusePeriodSeconds: 6, SqsManagedSseEnabled: true}},
		{Name: "t", Tags: map[string]string{"a": "", "b": "c"},
			Attributes: drivers.QueueAttributes{RedrivePolicy: &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 3}}},
	}
	for _, q := range queues {
		if got := fromQueue(wire(t, toQueue(q))); !reflect.DeepEqual(got, q) {
			t.Errorf("queue:\n got %#v\nwant %#v", got, q)
		}
	}

	attrs := []map[string]drivers.MessageAttribute{
		nil, {},
		{"s": {DataType: "String", StringValue: "v"}, "b0": {DataType: "Binary", BinaryValue: []byte{}},
			"b": {DataType: "Binary.x", BinaryValue: []byte{0, 1}}, "n": {DataType: "Number"}},
	}
	for _, a := range attrs {
		m := drivers.Message{MessageID: "m", ReceiptHandle: "r", Body: "", Attributes: a, SystemAttributes: a,
			SenderID: "s", SentAt: someTime, ReceiveCount: 2, MessageGroupID: "g", MessageDeduplicationID: "d",
			SequenceNumber: "1", DeadLetterSource: "src"}
		if got := fromMessage(wire(t, toMessage(m))); !reflect.DeepEqual(got, m) {
			t.Errorf("message:\n got %#v\nwant %#v", got, m)
		}
		e := drivers.SendEntry{EntryID: "e", MessageID: "m", Body: "b", Attributes: a, SystemAttributes: a,
			DelaySeconds: 3, MessageGroupID: "g", MessageDeduplicationID: "d", SenderID: "s"}
		if got := fromSendEntry(wire(t, toSendEntry(e))); !reflect.DeepEqual(got, e) {
			t.Errorf("send entry:\n got %#v\nwant %#v", got, e)
		}
	}

	desc := drivers.Description{Name: "n", Version: "1", ServiceVersion: "s", Clock: drivers.ClockService,
		ReceiptScope: drivers.ReceiptInstance, SharedStorage: true, Activity: drivers.ActivityPoll,
		PollInterval: 1500 * time.Millisecond, BlockingReceive: true, MoveTaskStore: true,
		Capabilities: []capabilities.Declaration{
			{ID: capabilities.QueueStandard, Level: capabilities.Native},
			{ID: capabilities.QueueTags, Level: capabilities.Degraded, Limits: map[string]string{}, Note: "n"},
			{ID: capabilities.VisibilityMax, Level: capabilities.Emulated, Limits: map[string]string{"max_seconds": "43200"}},
		},
		Warnings: []string{"w"},
		Operations: capabilities.Operations{Durability: "1", Availability: "2", ScaleOut: "3", Ordering: "4",
			Throughput: "5", CostDrivers: "6", RunsWhere: "7"}}
	for _, d := range []drivers.Description{{}, desc} {
		if got := fromDescription(wire(t, toDescription(d))); !reflect.DeepEqual(got, d) {
			t.Errorf("description:\n got %#v\nwant %#v", got, d)
		}
	}

	for _, task := range []drivers.MoveTask{{}, {Handle: "h", Source: "s", Destination: "d", Rate: &rate, Started: someTime,
		ToMove: 4, Moved: 2, Status: drivers.MoveTaskRunning, Failure: "f", Owner: "o", LeaseUntil: someTime.Add(time.Hour)}} {
		if got := fromMoveTask(wire(t, toMoveTask(task))); !reflect.DeepEqual(got, task) {
			t.Errorf("move task:\n got %#v\nwant %#v", got, task)
		}
	}

	metrics := []drivers.Metric{{Name: "a", Help: "h", Type: drivers.Counter, Value: 1.5,
		Labels: []drivers.Label{{Name: "l", Value: ""}}}, {Name: "b", Type: drivers.Gauge}}
	for _, ms := range [][]drivers.Metric{nil, metrics} {
		if got := fromMetrics(wire(t, toMetrics(ms))); !reflect.DeepEqual(got, ms) {
			t.Errorf("metrics:\n got %#v\nwant %#v", got, ms)
		}
	}

	batch := drivers.BatchResult{Entries: []drivers.EntryResult{{EntryID: "ok"},
		{EntryID: "bad", Err: &drivers.Error{Kind: drivers.KindInvalidReceiptHandle, Message: "m"}}}}
	if got := fromBatchResult(wire(t, toBatchResult(batch))); !reflect.DeepEqual(got, batch) {
		t.Errorf("batch:\n got %#v\nwant %#v", got, batch)
	}
	sent := drivers.SendEntryResult{EntryID: "e", MessageID: "m", SequenceNumber: "9", Duplicate: true,
		Err: &drivers.Error{Kind: drivers.KindThrottled, RetryAfter: time.Second}}
	if got := fromSendEntryResult(wire(t, toSendEntryResult(sent))); !reflect.DeepEqual(got, sent) {
		t.Errorf("send result:\n got %#v\nwant %#v", got, sent)
	}
}

// TestErrorsCrossIntact sends every kind, and context errors, through the gRPC status
// encoding: kind, message, cause text, retry hint and context identity survive.
func TestErrorsCrossIntact(t *testing.T) {
	ctx := context.Background()
	for k := drivers.KindUnknown; k <= drivers.KindAborted; k++ {
		for _, in := range []*drivers.Error{
			{Kind: k, Message: "msg " + k.String()},
			{Kind: k, Message: "wrapped", Err: errors.New("native cause"), RetryAfter: 1500 * time.Millisecond},
		} {
			out := fromStatus(ctx, "p", wireStatus(t, toStatus(in)))
			var de *drivers.Error
			if !errors.As(out, &de) {
				t.Fatalf("%v: got %T %v, want *drivers.Error", k, out, out)
			}
			if de.Kind != in.Kind || de.Message != in.Message || de.RetryAfter != in.RetryAfter || de.Error() != in.Error() {
				t.Errorf("%v: got %#v (%q), want %#v (%q)", k, de, de, in, in)
			}
			if (de.Err == nil) != (in.Err == nil) {
				t.Errorf("%v: cause %v, want %v", k, de.Err, in.Err)
			}
		}
	}
	for _, want := range []error{context.Canceled, context.DeadlineExceeded} {
		// With the caller's context live, the plugin's side gave up or the connection
		// closed under the call (a restart): retryable, never an internal error.
		got := fromStatus(ctx, "p", wireStatus(t, toStatus(want)))
		if !errors.Is(got, want) || drivers.KindOf(got) != drivers.KindUnavailable {
			t.Errorf("got %v (kind %v), want KindUnavailable wrapping %v", got, drivers.KindOf(got), want)
		}
		closing := status.Error(codes.Canceled, "grpc: the client connection is closing")
		if got := fromStatus(ctx, "p", closing); drivers.KindOf(got) != drivers.KindUnavailable {
			t.Errorf("a call cut by its connection closing: got %v (kind %v), want KindUnavailable", got, drivers.KindOf(got))
		}
		// A deadline gRPC saw pass before the context did is the caller's own.
		if got := fromStatus(pastDeadline{ctx}, "p", status.Error(codes.DeadlineExceeded, "context deadline exceeded")); got != context.DeadlineExceeded {
			t.Errorf("caller's deadline passed, context not yet done: got %v, want context.DeadlineExceeded", got)
		}
		// The caller's own end is returned as it is.
		done, cancel := context.WithCancel(ctx)
		cancel()
		if got := fromStatus(done, "p", wireStatus(t, toStatus(want))); got != context.Canceled {
			t.Errorf("caller cancelled: got %v, want context.Canceled", got)
		}
		wrapped := drivers.Wrap(drivers.KindUnavailable, want, "waiting")
		got = fromStatus(ctx, "p", wireStatus(t, toStatus(wrapped)))
		if !errors.Is(got, want) || drivers.KindOf(got) != drivers.KindUnavailable || got.Error() != wrapped.Error() {
			t.Errorf("got %v (kind %v), want %v wrapping %v", got, drivers.KindOf(got), wrapped, want)
		}
	}
	plain := errors.New("not a driver error")
	if got := fromStatus(ctx, "p", wireStatus(t, toStatus(plain))); got.Error() != plain.Error() || drivers.KindOf(got) != drivers.KindUnknown {
		t.Errorf("got %v, want %v", got, plain)
	}
	// gRPC reports some broken connections as Unknown with no detail: the plugin said
	// nothing, so the outcome is unknown and the call is retryable, not an internal error.
	broken := status.Error(codes.Unknown, "unexpected EOF")
	if got := fromStatus(ctx, "p", broken); drivers.KindOf(got) != drivers.KindUnavailable {
		t.Errorf("a detail-less Unknown status: got %v (kind %v), want KindUnavailable", got, drivers.KindOf(got))
	}
}

// wireStatus encodes a status as grpc does on the wire (status proto with Any details).
func wireStatus(t *testing.T, err error) error {
	t.Helper()
	st, ok := statusOf(err)
	if !ok {
		t.Fatalf("%v is not a status", err)
	}
	return statusFromProto(wire(t, st))
}

// pastDeadline is a context whose deadline has passed but which does not say so yet, as
// in the moment between gRPC's deadline timer and the context's own.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }
