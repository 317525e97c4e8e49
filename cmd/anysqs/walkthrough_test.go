package main

import (
	"strings"
	"testing"

	"github.com/anysqs/anysqs/internal/mq"
)

// TestSeedWalkthrough scripts the guide "Receiving, Visibility, and the DLQ"
// (shared/seeds/000): receive, the visibility loop, batch acks, the DLQ loop with
// --max-receives 2, then redrive, with `anysqs mq` against a live gateway. Waiting for a
// visibility timeout to lapse is a long poll that ends when the message is back, not a
// sleep. Where the guide's tool differs from SQS (error names, body shown as an object),
// SQS's behaviour is what is checked.
func TestSeedWalkthrough(t *testing.T) {
	c := mqCLI{t, startGateway(t)}
	c.ok("create", "-q", "order-processing", "--dlq", "failed-orders", "--max-receives", "2",
		"--attr", "VisibilityTimeout=1")

	// Receiving: -m caps the batch, -w long-polls, --visibility overrides the timeout.
	c.ok("send", "-q", "order-processing", "--body", `{"order_id":123,"total":49.99}`, "--attr", "type=created")
	var r received
	c.json(&r, "receive", "-q", "order-processing", "-m", "10", "-w", "20", "--visibility", "60")
	if len(r.Messages) != 1 {
		t.Fatalf("receive: %+v", r)
	}
	m := r.Messages[0]
	if m.Body != `{"order_id":123,"total":49.99}` || m.Attributes["type"] != "created" ||
		m.System.ApproximateReceiveCount != 1 || m.System.SentTimestamp == "" || m.System.FirstReceiveTimestamp == "" {
		t.Fatalf("received message: %+v", m)
	}
	c.ok("delete-batch", "-q", "order-processing", "-r", m.ReceiptHandle)
	c.json(&r, "receive", "-q", "order-processing", "-w", "0")
	if len(r.Messages) != 0 {
		t.Fatalf("an empty queue with -w 0 returned %+v", r)
	}

	// The visibility loop: hidden during the window, back after it with a new handle
	// and receive count 2.
	c.ok("send", "-q", "order-processing", "--body", "loop")
	c.json(&r, "receive", "-q", "order-processing", "-w", "5")
	first := r.Messages[0]
	c.json(&r, "receive", "-q", "order-processing", "-w", "0")
	if len(r.Messages) != 0 {
		t.Fatalf("a receive during the window returned %+v", r)
	}
	c.json(&r, "receive", "-q", "order-processing", "-w", "10")
	if len(r.Messages) != 1 || r.Messages[0].MessageID != first.MessageID ||
		r.Messages[0].ReceiptHandle == first.ReceiptHandle || r.Messages[0].System.ApproximateReceiveCount != 2 {
		t.Fatalf("after the window lapsed: %+v (first %+v)", r, first)
	}
	c.ok("delete-batch", "-q", "order-processing", "-r", r.Messages[0].ReceiptHandle)

	// Moving the deadline: -t 120 keeps it hidden, -t 0 gives it back at once.
	c.ok("send", "-q", "order-processing", "--body", "held")
	c.json(&r, "receive", "-q", "order-processing", "-w", "5")
	held := r.Messages[0]
	c.ok("visibility", "-q", "order-processing", "-r", held.ReceiptHandle, "-t", "120")
	c.json(&r, "receive", "-q", "order-processing", "-w", "0")
	if len(r.Messages) != 0 {
		t.Fatalf("after -t 120 an immediate receive returned %+v", r)
	}
	c.ok("visibility", "-q", "order-processing", "-r", held.ReceiptHandle, "-t", "0")
	c.json(&r, "receive", "-q", "order-processing", "-w", "0")
	if len(r.Messages) != 1 || r.Messages[0].MessageID != held.MessageID || r.Messages[0].System.ApproximateReceiveCount != 2 {
		t.Fatalf("after -t 0: %+v", r)
	}

	// Acks batch too; the answer lists successful and failed handles.
	var batch mq.BatchResult
	out, err := c.run("--output", "json", "delete-batch", "-q", "order-processing", "-r", r.Messages[0].ReceiptHandle+",rh_never-issued")
	if err == nil || !strings.Contains(err.Error(), "1 of 2 receipt handles not deleted") {
		t.Fatalf("delete-batch with a bogus handle: %v", err)
	}
	if jsonErr := jsonUnmarshal(out, &batch); jsonErr != nil || len(batch.Successful) != 1 || len(batch.Failed) != 1 ||
		batch.Failed[0].Code != "ReceiptHandleIsInvalid" {
		t.Fatalf("delete-batch answer %q: %v", out, jsonErr)
	}

	// The DLQ loop: two un-acked receives, then the third finds nothing and the message
	// is in the DLQ.
	c.ok("send", "-q", "order-processing", "--body", `{"order_id":666,"poison":true}`)
	c.json(&r, "receive", "-q", "order-processing", "-w", "5")
	poison := r.Messages[0].MessageID
	c.json(&r, "receive", "-q", "order-processing", "-w", "10")
	if len(r.Messages) != 1 || r.Messages[0].System.ApproximateReceiveCount != 2 {
		t.Fatalf("second receive of the poison message: %+v", r)
	}
	var dlq struct {
		Source  string       `json:"source_queue"`
		DLQ     string       `json:"dlq_name"`
		Count   int          `json:"approximate_message_count"`
		Samples []mq.Message `json:"sample_messages"`
	}
	for i := 0; dlq.Count == 0; i++ { // the move happens on a receive after the second window lapses
		if i == 10 {
			t.Fatal("the poison message never reached the DLQ")
		}
		c.json(&r, "receive", "-q", "order-processing", "-w", "2")
		if len(r.Messages) != 0 {
			t.Fatalf("a third receive returned %+v", r)
		}
		c.json(&dlq, "dlq", "-q", "order-processing")
	}
	if dlq.Source != "order-processing" || dlq.DLQ != "failed-orders" || dlq.Count != 1 || len(dlq.Samples) != 1 ||
		dlq.Samples[0].MessageID != poison || dlq.Samples[0].System.ApproximateReceiveCount < 2 {
		t.Fatalf("dlq: %+v", dlq)
	}
	// Pointing dlq at the DLQ itself is the mistake the guide warns of.
	c.fails("queue failed-orders: no dead-letter queue configured", "dlq", "-q", "failed-orders")

	// Redrive: everything back to the source queue, with a full retry budget.
	var redriven struct {
		Moved int64  `json:"messages_redriven"`
		Dest  string `json:"destination_queue"`
	}
	c.json(&redriven, "redrive", "-q", "order-processing")
	if redriven.Moved != 1 || redriven.Dest != "order-processing" {
		t.Fatalf("redrive: %+v", redriven)
	}
	c.json(&r, "receive", "-q", "order-processing", "-w", "10")
	if len(r.Messages) != 1 || r.Messages[0].Body != `{"order_id":666,"poison":true}` || r.Messages[0].System.ApproximateReceiveCount != 1 {
		t.Fatalf("the redriven message: %+v", r)
	}
	c.json(&dlq, "dlq", "-q", "order-processing", "--sample", "0")
	if dlq.Count != 0 {
		t.Fatalf("the DLQ after redrive: %+v", dlq)
	}
}
