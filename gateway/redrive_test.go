package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// TestRedriveAndMoveTask: a message received maxReceiveCount times lands in the DLQ; a
// move task started on the DLQ brings it back, and a consumer long-polling the source
// is woken by the move. With the driver keeping the task (SQLite is a
// drivers.MoveTaskStore) and with a driver that is not one, whose tasks the gateway
// keeps in memory.
func TestRedriveAndMoveTask(t *testing.T) {
	t.Run("driver-store", func(t *testing.T) { testRedriveAndMoveTask(t, newEnv(t)) })
	t.Run("gateway-memory", func(t *testing.T) {
		testRedriveAndMoveTask(t, newEnvOn(t, func(inner drivers.Driver) drivers.Driver {
			return noMoveTaskStore{inner}
		}))
	})
}

// noMoveTaskStore is a driver that disclaims the MoveTaskStore ability, as a backend
// without a place for tasks would.
type noMoveTaskStore struct{ drivers.Driver }

func (d noMoveTaskStore) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.MoveTaskStore = false
	return desc, err
}

var errNoStore = drivers.Errorf(drivers.KindUnsupported, "no move task store")

func (noMoveTaskStore) StartMoveTask(context.Context, drivers.MoveTask) error { return errNoStore }
func (noMoveTaskStore) ReportMoveTask(context.Context, drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	return drivers.MoveTask{}, errNoStore
}
func (noMoveTaskStore) CancelMoveTask(context.Context, string) (drivers.MoveTask, error) {
	return drivers.MoveTask{}, errNoStore
}
func (noMoveTaskStore) ListMoveTasks(context.Context, string, int) ([]drivers.MoveTask, error) {
	return nil, errNoStore
}
func (noMoveTaskStore) AdoptMoveTasks(context.Context, string, time.Time, time.Time) ([]drivers.MoveTask, error) {
	return nil, errNoStore
}

func testRedriveAndMoveTask(t *testing.T, e *env) {
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
	r := awaitEvent(t, got, "the long poll's response")
	if !strings.Contains(r.body, "poison") {
		t.Fatalf("long poll on the source after redrive: %d %s", r.status, r.body)
	}
	b = e.mustJSON("ListMessageMoveTasks", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`)
	if !strings.Contains(b, `"Status":"COMPLETED"`) || !strings.Contains(b, `"ApproximateNumberOfMessagesMoved":1`) {
		t.Fatalf("ListMessageMoveTasks: %s", b)
	}

	// One running task per source: a task paced at 1 message/s on the gateway clock (which
	// does not move here) runs until cancelled, and a second one is refused meanwhile.
	for i := 0; i < 3; i++ {
		e.mustJSON("SendMessage", `{`+dlq+`,"MessageBody":"again"}`)
	}
	b = e.mustJSON("StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq","DestinationArn":"arn:aws:sqs:us-east-1:000000000000:src","MaxNumberOfMessagesPerSecond":1}`)
	handle := between(b, `"TaskHandle":"`, `"`)
	st, _, b = e.jsonCall("StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`)
	if st != 400 || !strings.Contains(b, "UnsupportedOperation") {
		t.Fatalf("a second running task: %d %s", st, b)
	}
	b = e.mustJSON("ListMessageMoveTasks", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq","MaxResults":10}`)
	if !strings.Contains(b, `"TaskHandle":"`+handle+`","Status":"RUNNING"`) || strings.Count(b, `"Status"`) != 2 {
		t.Fatalf("ListMessageMoveTasks with a running task: %s", b)
	}
	e.mustJSON("CancelMessageMoveTask", `{"TaskHandle":"`+handle+`"}`)
	b = e.mustJSON("ListMessageMoveTasks", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`)
	if !strings.Contains(b, `"Status":"CANCELLED"`) || strings.Contains(b, handle) {
		t.Fatalf("ListMessageMoveTasks after the cancel: %s", b)
	}
	if st, _, b = e.jsonCall("CancelMessageMoveTask", `{"TaskHandle":"`+handle+`"}`); st != 404 || !strings.Contains(b, "ResourceNotFound") {
		t.Fatalf("cancelling a cancelled task: %d %s", st, b)
	}
}
