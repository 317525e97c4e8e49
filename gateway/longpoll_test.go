package gateway_test

import (
	"strings"
	"testing"
	"time"
)

type result struct {
	status int
	body   string
}

// receiveAsync starts a JSON ReceiveMessage and returns a channel with its result.
func (e *env) receiveAsync(body string) chan result {
	ch := make(chan result, 1)
	go func() {
		st, _, b := e.jsonCall("ReceiveMessage", body)
		ch <- result{st, b}
	}()
	return ch
}

func (e *env) mustJSON(action, body string) string {
	e.t.Helper()
	st, _, b := e.jsonCall(action, body)
	if st != 200 {
		e.t.Fatalf("%s: %d %s", action, st, b)
	}
	return b
}

// awaitWait blocks until a long poll on queue is parked. It waits on an event, not time.
func (e *env) awaitWait(queue string) {
	e.t.Helper()
	if q := awaitEvent(e.t, e.waits, "a long poll parking on "+queue); q != queue {
		e.t.Fatalf("long poll parked on %s, want %s", q, queue)
	}
}

const lpURL = "http://sqs.test/000000000000/lp"

// TestLongPollWokenBySend: the fake clock never moves, so only the send can end the wait.
func TestLongPollWokenBySend(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	got := e.receiveAsync(`{"QueueUrl":"` + lpURL + `","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	e.mustJSON("SendMessage", `{"QueueUrl":"`+lpURL+`","MessageBody":"wake"}`)
	r := awaitEvent(t, got, "the long poll's response")
	if r.status != 200 || !strings.Contains(r.body, `"Body":"wake"`) {
		t.Fatalf("long poll returned %d %s, want the sent message", r.status, r.body)
	}
}

// TestLongPollEmptyAtDeadline: nothing arrives; advancing the clock to the deadline ends
// the wait with an empty result.
func TestLongPollEmptyAtDeadline(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"lp","Attributes":{"ReceiveMessageWaitTimeSeconds":"5"}}`)
	// No WaitTimeSeconds: the queue's ReceiveMessageWaitTimeSeconds applies.
	got := e.receiveAsync(`{"QueueUrl":"` + lpURL + `"}`)
	e.awaitWait("lp")
	select {
	case r := <-got:
		t.Fatalf("long poll returned before the deadline: %d %s", r.status, r.body)
	default:
	}
	e.clock.Advance(5 * time.Second)
	r := awaitEvent(t, got, "the long poll's response")
	if r.status != 200 || strings.Contains(r.body, "MessageId") {
		t.Fatalf("long poll at deadline returned %d %s, want empty", r.status, r.body)
	}
}

// TestLongPollWokenByDelayEnd: a delayed message becomes visible at the driver's
// NextVisibleAt, and the parked receive wakes at that clock time.
func TestLongPollWokenByDelayEnd(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	e.mustJSON("SendMessage", `{"QueueUrl":"`+lpURL+`","MessageBody":"later","DelaySeconds":10}`)
	got := e.receiveAsync(`{"QueueUrl":"` + lpURL + `","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	e.clock.Advance(10 * time.Second)
	r := awaitEvent(t, got, "the long poll's response")
	if r.status != 200 || !strings.Contains(r.body, `"Body":"later"`) {
		t.Fatalf("long poll returned %d %s, want the delayed message", r.status, r.body)
	}
}

// TestLongPollWokenByVisibilityRelease: ChangeMessageVisibility to 0 makes the in-flight
// message visible at once and wakes the waiting receive.
func TestLongPollWokenByVisibilityRelease(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	e.mustJSON("SendMessage", `{"QueueUrl":"`+lpURL+`","MessageBody":"again"}`)
	b := e.mustJSON("ReceiveMessage", `{"QueueUrl":"`+lpURL+`"}`)
	handle := between(b, `"ReceiptHandle":"`, `"`)
	if handle == "" {
		t.Fatalf("no receipt handle in %s", b)
	}
	got := e.receiveAsync(`{"QueueUrl":"` + lpURL + `","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	e.mustJSON("ChangeMessageVisibility", `{"QueueUrl":"`+lpURL+`","ReceiptHandle":"`+handle+`","VisibilityTimeout":0}`)
	r := awaitEvent(t, got, "the long poll's response")
	if r.status != 200 || !strings.Contains(r.body, `"Body":"again"`) {
		t.Fatalf("long poll returned %d %s, want the released message", r.status, r.body)
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
