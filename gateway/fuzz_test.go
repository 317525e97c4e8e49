package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/gateway"
)

// fuzzEnv is a gateway whose long polls end at once: when one parks, the hook moves the
// fake clock past any wait, so fuzzed ReceiveMessage calls never block.
func fuzzEnv(f *testing.F) *env {
	e := newEnv(f)
	gateway.SetOnWait(e.gw, func(string) { e.clock.Advance(21 * time.Second) })
	for _, q := range []string{"fz", "fz.fifo"} {
		attrs := ""
		if strings.HasSuffix(q, ".fifo") {
			attrs = `,"Attributes":{"FifoQueue":"true","ContentBasedDeduplication":"true"}`
		}
		st, _, b := e.jsonCall("CreateQueue", `{"QueueName":"`+q+`"`+attrs+`}`)
		if st != 200 {
			f.Fatalf("CreateQueue %s: %d %s", q, st, b)
		}
	}
	return e
}

// checkServed fails on a server error: every fuzzed request is the client's doing, so
// the gateway must answer it with success or a 4xx, never a 5xx (and never panic).
func checkServed(t *testing.T, rec *httptest.ResponseRecorder) {
	if rec.Code >= 500 {
		t.Fatalf("status %d for a client request: %s", rec.Code, rec.Body.String())
	}
}

func FuzzJSONDecode(f *testing.F) {
	e := fuzzEnv(f)
	f.Add("SendMessage", `{"QueueUrl":"http://h/000000000000/fz","MessageBody":"x","MessageAttributes":{"a":{"DataType":"Number","StringValue":"1"}}}`)
	f.Add("SendMessageBatch", `{"QueueUrl":"/000000000000/fz.fifo","Entries":[{"Id":"1","MessageBody":"x","MessageGroupId":"g"}]}`)
	f.Add("ReceiveMessage", `{"QueueUrl":"http://h/000000000000/fz","WaitTimeSeconds":1,"MaxNumberOfMessages":10,"MessageAttributeNames":["a.*"]}`)
	f.Add("CreateQueue", `{"QueueName":"n","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:fz\",\"maxReceiveCount\":1}"}}`)
	f.Add("ChangeMessageVisibility", `{"QueueUrl":"http://h/000000000000/fz","ReceiptHandle":"x","VisibilityTimeout":43201}`)
	f.Add("StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:fz"}`)
	f.Add("ListQueues", `{"MaxResults":0,"NextToken":"%%%"}`)
	f.Add("SendMessage", `{"QueueUrl":5}`)
	f.Add("Nope", `[`)
	f.Fuzz(func(t *testing.T, action, body string) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		rec := httptest.NewRecorder()
		e.gw.ServeHTTP(rec, req)
		checkServed(t, rec)
	})
}

func FuzzQueryDecode(f *testing.F) {
	e := fuzzEnv(f)
	f.Add("/", "Action=SendMessage&QueueUrl=http%3A%2F%2Fh%2F000000000000%2Ffz&MessageBody=x&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=v")
	f.Add("/000000000000/fz.fifo", "Action=SendMessageBatch&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x&SendMessageBatchRequestEntry.1.MessageGroupId=g")
	f.Add("/000000000000/fz", "Action=ReceiveMessage&WaitTimeSeconds=2&AttributeName.1=All&MessageAttributeName.1=All")
	f.Add("/", "Action=CreateQueue&QueueName=q&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=x&Tag.1.Key=k")
	f.Add("/", "Action=SetQueueAttributes&QueueUrl=fz&Attribute.0.Name=a&Attribute..Value=b")
	f.Add("/", "Action=ListQueues&MaxResults=99999999999")
	f.Add("/", "Action=TagQueue&QueueUrl=/000000000000/fz&Tag.1.Value=v&Tag.1=x")
	f.Add("/x/y/z", "Action=DeleteMessage&ReceiptHandle=%zz")
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(http.MethodPost, "http://sqs.test", strings.NewReader(body))
		if err != nil {
			return
		}
		req.URL.Path = path
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		e.gw.ServeHTTP(rec, req)
		checkServed(t, rec)
	})
}
