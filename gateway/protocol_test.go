package gateway_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestProtocolErrors(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name       string
		call       func() (int, http.Header, string)
		status     int
		wantInBody string
	}{
		{"json unknown action", func() (int, http.Header, string) { return e.jsonCall("Frobnicate", `{}`) },
			400, `"__type":"com.amazonaws.sqs#InvalidAction"`},
		{"json malformed body", func() (int, http.Header, string) { return e.jsonCall("ListQueues", `{"MaxResults":`) },
			400, `InvalidParameterValue`},
		{"json wrong member type", func() (int, http.Header, string) { return e.jsonCall("ListQueues", `{"MaxResults":"ten"}`) },
			400, `MaxResults`},
		{"query unknown action", func() (int, http.Header, string) {
			return e.queryCall("/", url.Values{"Action": {"Frobnicate"}})
		}, 400, `<Code>InvalidAction</Code>`},
		{"query missing action", func() (int, http.Header, string) { return e.queryCall("/", url.Values{}) },
			400, `<Code>MissingParameter</Code>`},
		{"query non-integer", func() (int, http.Header, string) {
			return e.queryCall("/", url.Values{"Action": {"ListQueues"}, "MaxResults": {"x"}})
		}, 400, `parameter MaxResults`},
		{"query malformed key", func() (int, http.Header, string) {
			return e.queryCall("/", url.Values{"Action": {"CreateQueue"}, "QueueName": {"a"}, "Attribute..Name": {"x"}})
		}, 400, `malformed parameter name`},
		{"another account in queue URL", func() (int, http.Header, string) {
			return e.jsonCall("GetQueueAttributes", `{"QueueUrl":"http://x/123456789012/q"}`)
		}, 403, `AccessDenied`},
		{"no account in queue URL", func() (int, http.Header, string) {
			return e.jsonCall("GetQueueAttributes", `{"QueueUrl":"http://x/orders/q"}`)
		}, 400, `QueueDoesNotExist`},
		{"queue URL without account", func() (int, http.Header, string) {
			return e.jsonCall("PurgeQueue", `{"QueueUrl":"http://x/q"}`)
		}, 404, `InvalidAddress`},
		{"list queues MaxResults out of range", func() (int, http.Header, string) {
			return e.jsonCall("ListQueues", `{"MaxResults":1001}`)
		}, 400, `MaxResults is invalid`},
		{"receive MaxNumberOfMessages out of range", func() (int, http.Header, string) {
			e.mustJSON("CreateQueue", `{"QueueName":"p"}`)
			return e.jsonCall("ReceiveMessage", `{"QueueUrl":"/000000000000/p","MaxNumberOfMessages":11}`)
		}, 400, `MaxNumberOfMessages`},
		{"visibility over 12 hours", func() (int, http.Header, string) {
			return e.jsonCall("ChangeMessageVisibility", `{"QueueUrl":"/000000000000/p","ReceiptHandle":"h","VisibilityTimeout":43201}`)
		}, 400, `VisibilityTimeout`},
		{"body over the request limit", func() (int, http.Header, string) {
			return e.jsonCall("SendMessage", `{"MessageBody":"`+strings.Repeat("x", 9<<20)+`"}`)
		}, 400, `larger than`},
		{"remove permission of an unknown label", func() (int, http.Header, string) {
			return e.jsonCall("RemovePermission", `{"QueueUrl":"/000000000000/p","Label":"l"}`)
		}, 400, `Value l for parameter Label is invalid. Reason: can't find label.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, _, body := tc.call()
			if st != tc.status || !strings.Contains(body, tc.wantInBody) {
				t.Errorf("got %d %s, want %d containing %q", st, body, tc.status, tc.wantInBody)
			}
		})
	}
}

// TestQueueURLForms: SDKs send the queue URL with whatever host they were configured
// with, and the Query protocol may address the queue by path with GET.
func TestQueueURLForms(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"forms"}`)
	for _, u := range []string{
		"http://sqs.test/000000000000/forms",
		"http://localhost:9324/000000000000/forms",
		"https://sqs.us-east-1.amazonaws.com/000000000000/forms",
		"/000000000000/forms",
	} {
		if st, _, b := e.jsonCall("SendMessage", `{"QueueUrl":"`+u+`","MessageBody":"m"}`); st != 200 {
			t.Errorf("SendMessage to %s: %d %s", u, st, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.http.URL+"/000000000000/forms?Action=GetQueueAttributes&AttributeName.1=ApproximateNumberOfMessages&Version=2012-11-05", nil)
	st, _, b := e.do(req)
	if st != 200 || !strings.Contains(b, "<Name>ApproximateNumberOfMessages</Name><Value>4</Value>") {
		t.Errorf("GET Query to the queue URL: %d %s", st, b)
	}
}

// TestCreateQueueIdempotent: same attributes succeed, different ones fail naming the attribute.
func TestCreateQueueIdempotent(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"idem","Attributes":{"DelaySeconds":"5"}}`)
	e.mustJSON("CreateQueue", `{"QueueName":"idem","Attributes":{"DelaySeconds":"5"}}`)
	st, h, b := e.jsonCall("CreateQueue", `{"QueueName":"idem","Attributes":{"DelaySeconds":"6"}}`)
	if st != 400 || h.Get("x-amzn-query-error") != "QueueAlreadyExists;Sender" || !strings.Contains(b, "DelaySeconds") {
		t.Errorf("got %d %s %s", st, h.Get("x-amzn-query-error"), b)
	}
}

// TestListQueuesPaging walks the pages with NextToken.
func TestListQueuesPaging(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"pa", "pb", "pc", "other"} {
		e.mustJSON("CreateQueue", `{"QueueName":"`+n+`"}`)
	}
	var got []string
	token := ""
	for i := 0; i < 5; i++ {
		body := `{"QueueNamePrefix":"p","MaxResults":2`
		if token != "" {
			body += `,"NextToken":"` + token + `"`
		}
		b := e.mustJSON("ListQueues", body+"}")
		for _, part := range strings.Split(b, `"http://sqs.test/000000000000/`)[1:] {
			got = append(got, part[:2])
		}
		token = between(b, `"NextToken":"`, `"`)
		if token == "" {
			break
		}
	}
	if strings.Join(got, ",") != "pa,pb,pc" {
		t.Errorf("pages gave %v, want pa,pb,pc", got)
	}
}

// TestReceiveAttributeSelection: "prefix.*" selects attributes by prefix, and the digest
// returned covers exactly the attributes returned (it equals the send-time digest of a
// message carrying only those).
func TestReceiveAttributeSelection(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"sel"}`)
	e.mustJSON("CreateQueue", `{"QueueName":"ref"}`)
	attr := func(v string) string { return `{"DataType":"String","StringValue":"` + v + `"}` }
	e.mustJSON("SendMessage", `{"QueueUrl":"/000000000000/sel","MessageBody":"m","MessageAttributes":{"a.x":`+attr("1")+`,"a.y":`+attr("2")+`,"b":`+attr("3")+`}}`)
	ref := e.mustJSON("SendMessage", `{"QueueUrl":"/000000000000/ref","MessageBody":"m","MessageAttributes":{"a.x":`+attr("1")+`,"a.y":`+attr("2")+`}}`)
	got := e.mustJSON("ReceiveMessage", `{"QueueUrl":"/000000000000/sel","MessageAttributeNames":["a.*"]}`)
	if strings.Contains(got, `"b":`) || !strings.Contains(got, `"a.x":`) || !strings.Contains(got, `"a.y":`) {
		t.Fatalf("prefix selection returned %s", got)
	}
	want := between(ref, `"MD5OfMessageAttributes":"`, `"`)
	if g := between(got, `"MD5OfMessageAttributes":"`, `"`); g != want || want == "" {
		t.Errorf("MD5OfMessageAttributes %q, want %q", g, want)
	}
	e.mustJSON("SendMessage", `{"QueueUrl":"/000000000000/sel","MessageBody":"n","MessageAttributes":{"b":`+attr("3")+`}}`)
	got = e.mustJSON("ReceiveMessage", `{"QueueUrl":"/000000000000/sel"}`)
	if strings.Contains(got, "MessageAttributes") || strings.Contains(got, "MD5OfMessageAttributes") || strings.Contains(got, `"Attributes"`) {
		t.Errorf("receive without attribute names returned attributes: %s", got)
	}
}

// TestEveryActionWired: each SQS action reaches its handler in both protocols (no
// InvalidAction), and an empty request never makes one answer 5xx.
func TestEveryActionWired(t *testing.T) {
	e := newEnv(t)
	for _, a := range []string{"CreateQueue", "GetQueueUrl", "ListQueues", "DeleteQueue",
		"GetQueueAttributes", "SetQueueAttributes", "PurgeQueue", "TagQueue", "UntagQueue",
		"ListQueueTags", "ListDeadLetterSourceQueues", "SendMessage", "SendMessageBatch",
		"ReceiveMessage", "DeleteMessage", "DeleteMessageBatch", "ChangeMessageVisibility",
		"ChangeMessageVisibilityBatch", "StartMessageMoveTask", "ListMessageMoveTasks",
		"CancelMessageMoveTask", "AddPermission", "RemovePermission"} {
		st, _, b := e.jsonCall(a, `{}`)
		if st >= 500 || strings.Contains(b, "InvalidAction") {
			t.Errorf("JSON %s: %d %s", a, st, b)
		}
		st, _, b = e.queryCall("/", url.Values{"Action": {a}, "Version": {"2012-11-05"}})
		if st >= 500 || strings.Contains(b, "InvalidAction") {
			t.Errorf("Query %s: %d %s", a, st, b)
		}
	}
}

// TestQueueNameReuseDelay: a deleted queue's name is free again 60 s (clock time) later.
func TestQueueNameReuseDelay(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"gone"}`)
	e.mustJSON("DeleteQueue", `{"QueueUrl":"/000000000000/gone"}`)
	st, h, b := e.jsonCall("CreateQueue", `{"QueueName":"gone"}`)
	if st != 400 || h.Get("x-amzn-query-error") != "AWS.SimpleQueueService.QueueDeletedRecently;Sender" {
		t.Fatalf("recreate at once: %d %s %s", st, h.Get("x-amzn-query-error"), b)
	}
	e.clock.Advance(60 * time.Second)
	e.mustJSON("CreateQueue", `{"QueueName":"gone"}`)
}

// TestInvalidJSONBody: a body that is not JSON is InvalidParameterValue for every action,
// including those anysqs does not support, and changes nothing.
func TestInvalidJSONBody(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ action, body string }{
		{"CreateQueue", `{"QueueName":"q"`},
		{"CreateQueue", `QueueName=q`},
		{"SendMessage", `{"QueueUrl":"/000000000000/q","MessageBody":"x"}}`},
		{"AddPermission", `{`},
	} {
		status, _, body := e.jsonCall(c.action, c.body)
		if status != http.StatusBadRequest || !strings.Contains(body, "InvalidParameterValue") ||
			!strings.Contains(body, "not valid JSON") {
			t.Errorf("%s %s: %d %s, want 400 InvalidParameterValue naming invalid JSON", c.action, c.body, status, body)
		}
	}
	if b := e.mustJSON("ListQueues", `{}`); strings.Contains(b, "QueueUrls") {
		t.Errorf("a rejected request created a queue: %s", b)
	}
}
