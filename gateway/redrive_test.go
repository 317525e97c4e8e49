package gateway_test

import (
	"strings"
	"testing"
)

// TestRedriveAndMoveTask: a message received maxReceiveCount times lands in the DLQ; a
// move task started on the DLQ brings it back, and a consumer long-polling the source
// is woken by the move.
func TestRedriveAndMoveTask(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"dlq"}`)
	st, _, b := e.jsonCall("CreateQueue", `{"QueueName":"src","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:missing\",\"maxReceiveCount\":1}"}}`)
	if st != 400 || !strings.Contains(b, "does not exist") {
		t.Fatalf("redrive to a missing DLQ: %d %s", st, b)
	}
	e.mustJSON("CreateQueue", `{"QueueName":"src","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\",\"maxReceiveCount\":1}"}}`)
	const src, dlq = `"QueueUrl":"/000000000000/src"`, `"QueueUrl":"/000000000000/dlq"`

	b = e.mustJSON("ListDeadLetterSourceQueues", `{`+dlq+`}`)
	if !strings.Contains(b, `"queueUrls":["http://sqs.test/000000000000/src"]`) {
		t.Fatalf("ListDeadLetterSourceQueues: %s", b)
	}
	st, _, b = e.jsonCall("StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:src"}`)
	if st != 400 || !strings.Contains(b, "UnsupportedOperation") {
		t.Fatalf("move task from a queue that is no DLQ: %d %s", st, b)
	}

	e.mustJSON("SendMessage", `{`+src+`,"MessageBody":"poison"}`)
	b = e.mustJSON("ReceiveMessage", `{`+src+`,"VisibilityTimeout":0}`)
	if !strings.Contains(b, "poison") {
		t.Fatalf("first receive: %s", b)
	}
	// Second attempt: the receive count reached maxReceiveCount, so the driver moves it.
	if b = e.mustJSON("ReceiveMessage", `{`+src+`}`); strings.Contains(b, "poison") {
		t.Fatalf("message past maxReceiveCount delivered again: %s", b)
	}
	b = e.mustJSON("ReceiveMessage", `{`+dlq+`,"VisibilityTimeout":0,"MessageSystemAttributeNames":["DeadLetterQueueSourceArn"]}`)
	if !strings.Contains(b, `"DeadLetterQueueSourceArn":"arn:aws:sqs:us-east-1:000000000000:src"`) {
		t.Fatalf("DLQ receive: %s", b)
	}

	got := e.receiveAsync(`{` + src + `,"WaitTimeSeconds":20}`)
	e.awaitWait("src")
	b = e.mustJSON("StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`)
	if between(b, `"TaskHandle":"`, `"`) == "" {
		t.Fatalf("StartMessageMoveTask: %s", b)
	}
	r := <-got
	if !strings.Contains(r.body, "poison") {
		t.Fatalf("long poll on the source after redrive: %d %s", r.status, r.body)
	}
	b = e.mustJSON("ListMessageMoveTasks", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`)
	if !strings.Contains(b, `"Status":"COMPLETED"`) || !strings.Contains(b, `"ApproximateNumberOfMessagesMoved":1`) {
		t.Fatalf("ListMessageMoveTasks: %s", b)
	}
}
