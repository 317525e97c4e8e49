package gateway_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// TestEveryCatalogLimitIsEnforcedOrInformational: a limit a driver declares is either
// checked by the gateway or documented as the driver's own behaviour, so that a new
// catalog limit cannot be silently ignored.
func TestEveryCatalogLimitIsEnforcedOrInformational(t *testing.T) {
	enforced := gateway.EnforcedLimits()
	seen := map[string]bool{}
	for _, e := range capabilities.All() {
		for _, k := range e.Limits {
			ref := string(e.ID) + "/" + k.Key
			seen[ref] = true
			switch in := slices.Contains(enforced, ref); {
			case in && k.Informational():
				t.Errorf("%s is enforced by the gateway but its Doc says informational: %q", ref, k.Doc)
			case !in && !k.Informational():
				t.Errorf("%s is neither enforced by the gateway nor marked informational in its Doc: %q", ref, k.Doc)
			}
		}
	}
	for _, ref := range enforced {
		if !seen[ref] {
			t.Errorf("the gateway enforces %s, which is no catalog limit", ref)
		}
	}
}

// TestDefaultDeclarationsEnforceNothing: SQLite declares SQS's own limits, so no limit
// check can fire and every other test of the package runs as before.
func TestDefaultDeclarationsEnforceNothing(t *testing.T) {
	e := newEnv(t)
	if b := gateway.DeclaredBounds(e.gw); len(b) != 0 {
		t.Errorf("bounds from SQLite's declarations: %v", b)
	}
}

// declared overrides one capability's declaration: its level ("" keeps the driver's)
// and limits.
type declared struct {
	level  capabilities.Level
	limits map[string]string
}

// limited is a driver declaring other levels and limits, which reports the Limit of
// each MoveMessages call on moves. Every other method, and every other fact of the
// Description, is SQLite's: move tasks are kept in its database (MoveTaskStore).
type limited struct {
	drivers.Driver
	decls map[capabilities.ID]declared
	moves chan int
}

func (d limited) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	for i, c := range desc.Capabilities {
		if o, ok := d.decls[c.ID]; ok {
			if o.level != "" {
				desc.Capabilities[i].Level = o.level
			}
			desc.Capabilities[i].Limits = o.limits
			desc.Capabilities[i].Note = "test override"
		}
	}
	return desc, err
}

func (d limited) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	select {
	case d.moves <- req.Limit:
	default:
	}
	return d.Driver.MoveMessages(ctx, req)
}

func limitEnv(t *testing.T, mode capabilities.Mode, decls map[capabilities.ID]declared) (*env, chan int) {
	t.Helper()
	d := limited{Driver: memDriver(t), decls: decls, moves: make(chan int, 10)}
	clk := clock.NewFake(start)
	gw, err := gateway.New(context.Background(), gateway.Config{Driver: d, Clock: clk, PublicURL: "http://sqs.test",
		Policy: capabilities.Config{Mode: string(mode)}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, gw: gw, clock: clk, http: httptest.NewServer(gw)}
	t.Cleanup(func() { e.http.Close(); _ = gw.Close() })
	return e, d.moves
}

// hardLimits declares every enforced limit below SQS's, at levels where a limit is a
// plain statement of what the backend can do.
var hardLimits = map[capabilities.ID]declared{
	capabilities.VisibilityMax:    {capabilities.Native, map[string]string{"max_seconds": "300"}},
	capabilities.DelayQueue:       {capabilities.Native, map[string]string{"max_seconds": "60"}},
	capabilities.DelayMessage:     {capabilities.Native, map[string]string{"max_seconds": "60"}},
	capabilities.RetentionPeriod:  {capabilities.Degraded, map[string]string{"min_seconds": "120", "max_seconds": "3600"}},
	capabilities.MessageMaxSize:   {capabilities.Degraded, map[string]string{"max_bytes": "65536"}},
	capabilities.MessageAttrs:     {capabilities.Native, map[string]string{"max_count": "2"}},
	capabilities.RedriveDLQ:       {capabilities.Native, map[string]string{"max_receive_count": "5"}},
	capabilities.QueueTags:        {capabilities.Native, map[string]string{"max_tags": "2"}},
	capabilities.RedriveMoveTasks: {capabilities.Native, map[string]string{"max_messages_per_second": "10"}},
}

const (
	limQ   = `"QueueUrl":"/000000000000/q"`
	limDLQ = "arn:aws:sqs:us-east-1:000000000000:dlq"
)

// TestLimitsReject: a request beyond a declared limit fails with the SQS error a client
// expects, naming the parameter, the value, the backend's limit and the capability, and
// changes nothing; a request at the limit succeeds; SQS's own range keeps its messages.
func TestLimitsReject(t *testing.T) {
	for _, mode := range []capabilities.Mode{capabilities.Degrade, capabilities.Strict} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			e, _ := limitEnv(t, mode, hardLimits)
			e.mustJSON("CreateQueue", `{"QueueName":"q"}`)
			e.mustJSON("CreateQueue", `{"QueueName":"dlq"}`)
			e.mustJSON("SendMessage", `{`+limQ+`,"MessageBody":"kept"}`)
			handle := between(e.mustJSON("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":30}`), `"ReceiptHandle":"`, `"`)
			for _, c := range []struct{ action, body, code, message string }{
				{"ReceiveMessage", `{` + limQ + `,"VisibilityTimeout":301}`, "InvalidParameterValue",
					"Value 301 for parameter VisibilityTimeout is invalid. Reason: backend sqlite holds messages invisible for at most 300 seconds (capability visibility.max)."},
				{"ChangeMessageVisibility", `{` + limQ + `,"ReceiptHandle":"` + handle + `","VisibilityTimeout":301}`, "InvalidParameterValue",
					"Value 301 for parameter VisibilityTimeout is invalid. Reason: backend sqlite holds messages invisible for at most 300 seconds (capability visibility.max)."},
				{"SendMessage", `{` + limQ + `,"MessageBody":"x","DelaySeconds":61}`, "InvalidParameterValue",
					"Value 61 for parameter DelaySeconds is invalid. Reason: backend sqlite delays a message for at most 60 seconds (capability delay.message)."},
				{"SendMessage", `{` + limQ + `,"MessageBody":"` + strings.Repeat("x", 65537) + `"}`, "InvalidParameterValue",
					"One or more parameters are invalid. Reason: Message must be shorter than 65536 bytes: backend sqlite stores messages of at most 65536 bytes (capability message.max-size)."},
				{"SendMessage", `{` + limQ + `,"MessageBody":"x","MessageAttributes":{"a":{"DataType":"String","StringValue":"1"},"b":{"DataType":"String","StringValue":"2"},"c":{"DataType":"String","StringValue":"3"}}}`, "InvalidParameterValue",
					"Number of message attributes [3] exceeds the allowed maximum [2]: backend sqlite stores at most 2 message attributes per message (capability message.attributes)."},
				{"CreateQueue", `{"QueueName":"bad","Attributes":{"VisibilityTimeout":"301"}}`, "InvalidAttributeValue",
					"Value 301 for parameter VisibilityTimeout is invalid. Reason: backend sqlite holds messages invisible for at most 300 seconds (capability visibility.max)."},
				{"CreateQueue", `{"QueueName":"bad","Attributes":{"DelaySeconds":"61"}}`, "InvalidAttributeValue",
					"Value 61 for parameter DelaySeconds is invalid. Reason: backend sqlite delays messages for at most 60 seconds (capability delay.queue)."},
				{"CreateQueue", `{"QueueName":"bad","Attributes":{"MessageRetentionPeriod":"119"}}`, "InvalidAttributeValue",
					"Value 119 for parameter MessageRetentionPeriod is invalid. Reason: backend sqlite retains messages for at least 120 seconds (capability retention.period)."},
				{"CreateQueue", `{"QueueName":"bad","Attributes":{"MessageRetentionPeriod":"3601"}}`, "InvalidAttributeValue",
					"Value 3601 for parameter MessageRetentionPeriod is invalid. Reason: backend sqlite retains messages for at most 3600 seconds (capability retention.period)."},
				{"CreateQueue", `{"QueueName":"bad","Attributes":{"MaximumMessageSize":"65537"}}`, "InvalidAttributeValue",
					"Value 65537 for parameter MaximumMessageSize is invalid. Reason: backend sqlite stores messages of at most 65536 bytes (capability message.max-size)."},
				{"CreateQueue", `{"QueueName":"bad","tags":{"a":"1","b":"2","c":"3"}}`, "InvalidParameterValue",
					"Too many tags: 3; backend sqlite keeps at most 2 tags per queue (capability queue.tags)."},
				{"SetQueueAttributes", `{` + limQ + `,"Attributes":{"VisibilityTimeout":"301"}}`, "InvalidAttributeValue",
					"Value 301 for parameter VisibilityTimeout is invalid."},
				{"SetQueueAttributes", `{` + limQ + `,"Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"` + limDLQ + `\",\"maxReceiveCount\":6}"}}`, "InvalidParameterValue",
					`for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: 6; backend sqlite counts at most 5 receives of a message (capability redrive.dlq).`},
				{"TagQueue", `{` + limQ + `,"Tags":{"a":"1","b":"2","c":"3"}}`, "InvalidParameterValue",
					"Too many tags: 3; backend sqlite keeps at most 2 tags per queue (capability queue.tags)."},
				{"StartMessageMoveTask", `{"SourceArn":"` + limDLQ + `","MaxNumberOfMessagesPerSecond":11}`, "InvalidParameterValue",
					"Value 11 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: backend sqlite moves at most 10 messages per second (capability redrive.move-tasks)."},
				// Beyond SQS's own range, SQS's message as before.
				{"ReceiveMessage", `{` + limQ + `,"VisibilityTimeout":43201}`, "InvalidParameterValue",
					"Value 43201 for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided."},
			} {
				st, _, b := e.jsonCall(c.action, c.body)
				if st != 400 || !strings.Contains(b, `"com.amazonaws.sqs#`+c.code+`"`) || !strings.Contains(b, c.message) {
					t.Errorf("%s %.120s: %d %.400s\nwant %s %q", c.action, c.body, st, b, c.code, c.message)
				}
			}

			// Nothing changed: no queue "bad", q's attributes and tags as created, the
			// message still in flight under its 30 s timeout, and no other message.
			e.wantError("QueueDoesNotExist", "GetQueueUrl", `{"QueueName":"bad"}`)
			if b := e.mustJSON("GetQueueAttributes", `{`+limQ+`,"AttributeNames":["VisibilityTimeout","RedrivePolicy"]}`); b != `{"Attributes":{"VisibilityTimeout":"30"}}` {
				t.Errorf("attributes after rejected changes: %s", b)
			}
			if b := e.mustJSON("ListQueueTags", `{`+limQ+`}`); strings.Contains(b, `"a"`) {
				t.Errorf("tags after a rejected TagQueue: %s", b)
			}
			if b := e.mustJSON("ReceiveMessage", `{`+limQ+`}`); strings.Contains(b, "MessageId") {
				t.Errorf("receive before the 30 s timeout: %s", b)
			}
			e.clock.Advance(31 * time.Second)
			if b := e.mustJSON("ReceiveMessage", `{`+limQ+`,"MaxNumberOfMessages":10}`); strings.Count(b, "MessageId") != 1 || !strings.Contains(b, "kept") {
				t.Errorf("receive after the 30 s timeout: %s", b)
			}

			// At the limits everything is accepted.
			e.mustJSON("CreateQueue", `{"QueueName":"ok","Attributes":{"VisibilityTimeout":"300","DelaySeconds":"60","MessageRetentionPeriod":"120","MaximumMessageSize":"65536"},"tags":{"a":"1","b":"2"}}`)
			e.mustJSON("SetQueueAttributes", `{`+limQ+`,"Attributes":{"MessageRetentionPeriod":"3600","RedrivePolicy":"{\"deadLetterTargetArn\":\"`+limDLQ+`\",\"maxReceiveCount\":5}"}}`)
			e.mustJSON("SendMessage", `{`+limQ+`,"MessageBody":"`+strings.Repeat("x", 65536)+`","DelaySeconds":60}`)
			e.mustJSON("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":300}`)
			e.mustJSON("StartMessageMoveTask", `{"SourceArn":"`+limDLQ+`","MaxNumberOfMessagesPerSecond":10}`)
		})
	}
}

// TestLimitsRejectPerBatchEntry: in a batch, an entry beyond a limit fails on its own,
// as SQS renders per-entry failures, and the other entries proceed.
func TestLimitsRejectPerBatchEntry(t *testing.T) {
	e, _ := limitEnv(t, capabilities.Degrade, hardLimits)
	e.mustJSON("CreateQueue", `{"QueueName":"q"}`)
	b := e.mustJSON("SendMessageBatch", `{`+limQ+`,"Entries":[{"Id":"far","MessageBody":"x","DelaySeconds":61},{"Id":"near","MessageBody":"y"}]}`)
	if !strings.Contains(b, `"Failed":[{"Id":"far","SenderFault":true,"Code":"InvalidParameterValue","Message":"Value 61 for parameter DelaySeconds is invalid. Reason: backend sqlite delays a message for at most 60 seconds (capability delay.message)."}]`) ||
		!strings.Contains(b, `"Successful":[{"Id":"near"`) {
		t.Fatalf("SendMessageBatch: %s", b)
	}
	b = e.mustJSON("ReceiveMessage", `{`+limQ+`,"MaxNumberOfMessages":10,"VisibilityTimeout":30}`)
	if strings.Count(b, "MessageId") != 1 || !strings.Contains(b, `"Body":"y"`) {
		t.Fatalf("receive after the batch: %s", b)
	}
	handle := between(b, `"ReceiptHandle":"`, `"`)
	b = e.mustJSON("ChangeMessageVisibilityBatch", `{`+limQ+`,"Entries":[{"Id":"far","ReceiptHandle":"`+handle+`","VisibilityTimeout":301}]}`)
	if b != `{"Successful":[],"Failed":[{"Id":"far","SenderFault":true,"Code":"InvalidParameterValue","Message":"Value 301 for parameter VisibilityTimeout is invalid. Reason: backend sqlite holds messages invisible for at most 300 seconds (capability visibility.max)."}]}` {
		t.Fatalf("ChangeMessageVisibilityBatch: %s", b)
	}
	e.clock.Advance(31 * time.Second)
	if b := e.mustJSON("ReceiveMessage", `{`+limQ+`}`); !strings.Contains(b, `"Body":"y"`) {
		t.Fatalf("the rejected change changed the visibility: %s", b)
	}
}

// softLimits declares the clamping limits degraded: the backend honours longer
// timeouts and delays only up to its limits.
var softLimits = map[capabilities.ID]declared{
	capabilities.VisibilityMax: {capabilities.Degraded, map[string]string{"max_seconds": "300"}},
	capabilities.DelayMessage:  {capabilities.Degraded, map[string]string{"max_seconds": "60"}},
}

// TestLimitsClampVisibly: in degrade mode a timeout or delay beyond a degraded limit is
// clamped to it, the response names the capability in X-Anysqs-Degraded, and the message
// really reappears (or appears) at the limit, not at the time asked for.
func TestLimitsClampVisibly(t *testing.T) {
	e, _ := limitEnv(t, capabilities.Degrade, softLimits)
	wantHidden := func(what string) {
		t.Helper()
		if b := e.mustJSON("ReceiveMessage", `{`+limQ+`}`); strings.Contains(b, "MessageId") {
			t.Fatalf("%s: received %s", what, b)
		}
	}
	// call sends a request that must succeed with the degraded header naming want.
	call := func(action, body, want string) string {
		t.Helper()
		st, h, b := e.jsonCall(action, body)
		if st != 200 || h.Get(capabilities.HeaderDegraded) != want {
			t.Fatalf("%s: %d %s=%q %s, want 200 and %q", action, st, capabilities.HeaderDegraded, h.Get(capabilities.HeaderDegraded), b, want)
		}
		return b
	}
	call("CreateQueue", `{"QueueName":"q"}`, "")

	t.Run("ReceiveMessage", func(t *testing.T) {
		call("SendMessage", `{`+limQ+`,"MessageBody":"r"}`, "")
		call("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":43200}`, "visibility.max")
		e.clock.Advance(299 * time.Second)
		wantHidden("299 s into a timeout clamped to 300 s")
		e.clock.Advance(2 * time.Second)
		b := call("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":300}`, "")
		if !strings.Contains(b, `"Body":"r"`) {
			t.Fatalf("301 s into a timeout clamped to 300 s: %s", b)
		}
		call("ChangeMessageVisibility", `{`+limQ+`,"ReceiptHandle":"`+between(b, `"ReceiptHandle":"`, `"`)+`","VisibilityTimeout":0}`, "")
	})
	t.Run("ChangeMessageVisibility", func(t *testing.T) {
		b := call("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":10}`, "")
		handle := between(b, `"ReceiptHandle":"`, `"`)
		call("ChangeMessageVisibilityBatch", `{`+limQ+`,"Entries":[{"Id":"1","ReceiptHandle":"`+handle+`","VisibilityTimeout":43200}]}`, "visibility.max")
		e.clock.Advance(299 * time.Second)
		wantHidden("299 s into a change clamped to 300 s")
		e.clock.Advance(2 * time.Second)
		b = call("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":0}`, "")
		if !strings.Contains(b, `"Body":"r"`) {
			t.Fatalf("301 s into a change clamped to 300 s: %s", b)
		}
	})
	t.Run("VisibilityTimeout attribute", func(t *testing.T) {
		// Stored and returned as set; each receive that uses it is held to 300 s.
		call("SetQueueAttributes", `{`+limQ+`,"Attributes":{"VisibilityTimeout":"43200"}}`, "visibility.max")
		if b := call("GetQueueAttributes", `{`+limQ+`,"AttributeNames":["VisibilityTimeout"]}`, ""); !strings.Contains(b, `"VisibilityTimeout":"43200"`) {
			t.Fatalf("GetQueueAttributes: %s", b)
		}
		call("ReceiveMessage", `{`+limQ+`}`, "visibility.max")
		e.clock.Advance(299 * time.Second)
		wantHidden("299 s into the queue's timeout clamped to 300 s")
		e.clock.Advance(2 * time.Second)
		if b := call("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":0}`, ""); !strings.Contains(b, `"Body":"r"`) {
			t.Fatalf("301 s into the queue's timeout clamped to 300 s: %s", b)
		}
		call("SetQueueAttributes", `{`+limQ+`,"Attributes":{"VisibilityTimeout":"30"}}`, "")
		call("DeleteMessage", `{`+limQ+`,"ReceiptHandle":"`+between(e.mustJSON("ReceiveMessage", `{`+limQ+`}`), `"ReceiptHandle":"`, `"`)+`"}`, "")
	})
	t.Run("SendMessage DelaySeconds", func(t *testing.T) {
		call("SendMessage", `{`+limQ+`,"MessageBody":"d","DelaySeconds":900}`, "delay.message")
		e.clock.Advance(59 * time.Second)
		wantHidden("59 s into a delay clamped to 60 s")
		e.clock.Advance(2 * time.Second)
		if b := call("ReceiveMessage", `{`+limQ+`}`, ""); !strings.Contains(b, `"Body":"d"`) {
			t.Fatalf("61 s into a delay clamped to 60 s: %s", b)
		}
	})
}

// TestLimitsStrict: under a strict policy the same requests are rejected, and nothing
// is stored.
func TestLimitsStrict(t *testing.T) {
	e, _ := limitEnv(t, capabilities.Strict, softLimits)
	e.mustJSON("CreateQueue", `{"QueueName":"q"}`)
	e.mustJSON("SendMessage", `{`+limQ+`,"MessageBody":"s"}`)
	e.wantError("InvalidParameterValue", "ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":43200}`)
	handle := between(e.mustJSON("ReceiveMessage", `{`+limQ+`,"VisibilityTimeout":10}`), `"ReceiptHandle":"`, `"`)
	e.wantError("InvalidParameterValue", "ChangeMessageVisibility", `{`+limQ+`,"ReceiptHandle":"`+handle+`","VisibilityTimeout":301}`)
	e.wantError("InvalidAttributeValue", "CreateQueue", `{"QueueName":"long","Attributes":{"VisibilityTimeout":"43200"}}`)
	e.wantError("QueueDoesNotExist", "GetQueueUrl", `{"QueueName":"long"}`)
	e.wantError("InvalidAttributeValue", "SetQueueAttributes", `{`+limQ+`,"Attributes":{"VisibilityTimeout":"301"}}`)
	e.wantError("InvalidParameterValue", "SendMessage", `{`+limQ+`,"MessageBody":"x","DelaySeconds":61}`)
	e.clock.Advance(11 * time.Second)
	if b := e.mustJSON("ReceiveMessage", `{`+limQ+`,"MaxNumberOfMessages":10,"AttributeNames":["VisibilityTimeout"]}`); strings.Count(b, "MessageId") != 1 {
		t.Fatalf("after the rejected requests: %s", b)
	}
}

// TestMoveTaskDefaultRateIsTheBackendLimit: a task naming no rate moves at the backend's
// limit, not SQS's 500 per second.
func TestMoveTaskDefaultRateIsTheBackendLimit(t *testing.T) {
	e, moves := limitEnv(t, capabilities.Degrade, map[capabilities.ID]declared{
		capabilities.RedriveMoveTasks: {capabilities.Native, map[string]string{"max_messages_per_second": "2"}},
	})
	e.mustJSON("CreateQueue", `{"QueueName":"dlq"}`)
	e.mustJSON("CreateQueue", `{"QueueName":"src","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"`+limDLQ+`\",\"maxReceiveCount\":1}"}}`)
	e.mustJSON("SendMessage", `{"QueueUrl":"/000000000000/dlq","MessageBody":"m"}`)
	e.mustJSON("StartMessageMoveTask", `{"SourceArn":"`+limDLQ+`"}`)
	if got := awaitEvent(t, moves, "the move task's first MoveMessages"); got != 2 {
		t.Fatalf("MoveMessages Limit = %d, want the backend's 2", got)
	}
}
