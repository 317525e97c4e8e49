package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/internal/mq"
)

// startGateway runs `anysqs serve` in process on SQLite in memory, with SigV4 auth on,
// and returns its endpoint. The mq commands are tested against it over HTTP.
func startGateway(t *testing.T) string {
	t.Helper()
	api, _ := serveT(t, t.TempDir(), "listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n"+
		"auth:\n  credentials:\n    - {access_key_id: AKIAMQTEST, secret_access_key: mq-secret}\n")
	return "http://" + api
}

// mqCLI runs `anysqs mq --endpoint EP <args>` with the gateway's credentials and returns
// stdout, or the error.
type mqCLI struct {
	t        *testing.T
	endpoint string
}

func (c mqCLI) run(args ...string) (string, error) {
	var out bytes.Buffer
	full := append([]string{"mq", "--endpoint", c.endpoint, "--region", "us-east-1",
		"--access-key-id", "AKIAMQTEST", "--secret-access-key", "mq-secret"}, args...)
	err := run(context.Background(), full, &out, io.Discard)
	return out.String(), err
}

func (c mqCLI) ok(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("anysqs mq %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// json runs with --output json and decodes the answer into v.
func (c mqCLI) json(v any, args ...string) {
	c.t.Helper()
	out := c.ok(append([]string{"--output", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("anysqs mq %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (c mqCLI) fails(want string, args ...string) {
	c.t.Helper()
	_, err := c.run(args...)
	if err == nil || !strings.Contains(err.Error(), want) {
		c.t.Fatalf("anysqs mq %s: got %v, want an error containing %q", strings.Join(args, " "), err, want)
	}
}

type received struct {
	Messages []mq.Message `json:"messages"`
}

func TestMQCommands(t *testing.T) {
	c := mqCLI{t, startGateway(t)}

	// create, list, attributes
	var created map[string]string
	c.json(&created, "create", "-q", "jobs", "--attr", "VisibilityTimeout=7")
	if !strings.HasSuffix(created["queue_url"], "/jobs") {
		t.Fatalf("create: %v", created)
	}
	c.ok("create", "-q", "events", "--fifo", "--attr", "ContentBasedDeduplication=true")
	var attrs struct{ Attributes map[string]string }
	c.json(&attrs, "attributes", "-q", "jobs")
	if attrs.Attributes["VisibilityTimeout"] != "7" {
		t.Fatalf("attributes: %v", attrs.Attributes)
	}
	c.json(&attrs, "attributes", "-q", "jobs", "--set", "VisibilityTimeout=9", "--set", "DelaySeconds=0")
	if attrs.Attributes["VisibilityTimeout"] != "9" {
		t.Fatalf("attributes --set: %v", attrs.Attributes)
	}
	if out := c.ok("attributes", "-q", "jobs"); !strings.Contains(out, "VisibilityTimeout") || !strings.Contains(out, "9") {
		t.Fatalf("attributes table:\n%s", out)
	}

	// send one, send a batch from stdin, one delayed; list shows the counts
	c.ok("send", "-q", "jobs", "--body", `{"id":1}`, "--attr", "type=created")
	stdin = strings.NewReader("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n")
	var sent struct {
		Sent []struct {
			MessageID string `json:"message_id"`
		}
	}
	c.json(&sent, "send", "-q", "jobs", "--body", "-", "--batch", "5")
	stdin = os.Stdin
	if len(sent.Sent) != 12 {
		t.Fatalf("send --body -: %d sent", len(sent.Sent))
	}
	c.ok("send", "-q", "jobs", "--body", "later", "--delay", "600")
	c.ok("send", "-q", "events.fifo", "--body", "e1", "--group", "g")
	var list struct{ Queues []mq.QueueCounts }
	c.json(&list, "list")
	counts := map[string]mq.QueueCounts{}
	for _, q := range list.Queues {
		counts[q.Name] = q
	}
	if j := counts["jobs"]; j.Visible != 13 || j.Delayed != 1 || counts["events.fifo"].Visible != 1 {
		t.Fatalf("list: %+v", list.Queues)
	}
	if out := c.ok("list", "--prefix", "ev"); !strings.Contains(out, "events.fifo") || strings.Contains(out, "jobs") ||
		!strings.HasPrefix(out, "NAME") {
		t.Fatalf("list table with prefix:\n%s", out)
	}

	// receive with attributes, visibility, delete via --delete and delete-batch
	var r received
	c.json(&r, "receive", "-q", "events.fifo", "-m", "10")
	if len(r.Messages) != 1 || r.Messages[0].Body != "e1" || r.Messages[0].System.MessageGroupID != "g" ||
		r.Messages[0].System.ApproximateReceiveCount != 1 || r.Messages[0].System.SequenceNumber == "" {
		t.Fatalf("receive FIFO: %+v", r)
	}
	c.json(&r, "receive", "-q", "jobs", "-m", "10", "--visibility", "300")
	if len(r.Messages) != 10 {
		t.Fatalf("receive -m 10: %d messages", len(r.Messages))
	}
	var handles []string
	for _, m := range r.Messages {
		handles = append(handles, m.ReceiptHandle)
	}
	c.ok("visibility", "-q", "jobs", "-r", handles[0], "-t", "0")
	var batch mq.BatchResult
	c.json(&batch, "delete-batch", "-q", "jobs", "-r", strings.Join(handles[1:], ","))
	if len(batch.Successful) != 9 || len(batch.Failed) != 0 {
		t.Fatalf("delete-batch: %+v", batch)
	}
	stdin = strings.NewReader("not-a-handle\n")
	c.fails("1 of 1 receipt handles not deleted", "delete-batch", "-q", "jobs", "-r", "-")
	stdin = os.Stdin
	if out := c.ok("receive", "-q", "jobs", "-m", "10", "--delete"); !strings.HasPrefix(out, "MESSAGE ID") || strings.Count(out, "\n") != 5 {
		t.Fatalf("receive --delete table (want a header and 4 messages):\n%s", out)
	}
	c.json(&r, "receive", "-q", "jobs", "-m", "10")
	if len(r.Messages) != 0 {
		t.Fatalf("receive --delete left %d messages", len(r.Messages))
	}

	// purge, delete
	c.ok("purge", "-q", "events.fifo")
	c.json(&list, "list", "--prefix", "events")
	if len(list.Queues) != 1 || list.Queues[0].Visible != 0 {
		t.Fatalf("after purge: %+v", list.Queues)
	}
	c.ok("delete", "-q", "events.fifo")
	c.json(&list, "list")
	if len(list.Queues) != 1 {
		t.Fatalf("after delete: %+v", list.Queues)
	}

	// errors name the queue and the SQS code
	c.fails("queue nope: AWS.SimpleQueueService.NonExistentQueue", "receive", "-q", "nope")
	c.fails("queue jobs: ReceiptHandleIsInvalid", "visibility", "-q", "jobs", "-r", "bogus", "-t", "5")
	c.fails("queue jobs: no dead-letter queue configured", "dlq", "-q", "jobs")
	c.fails("queue jobs: InvalidAttributeName", "attributes", "-q", "jobs", "--set", "Colour=red")

	// credentials are checked: a wrong secret is refused by the gateway's SigV4 check
	var out bytes.Buffer
	err := run(context.Background(), []string{"mq", "--endpoint", c.endpoint, "--access-key-id", "AKIAMQTEST",
		"--secret-access-key", "wrong", "list"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("wrong secret: %v", err)
	}
	// and from the AWS environment variables when no flag gives them
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAMQTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "mq-secret")
	t.Setenv("ANYSQS_ENDPOINT", c.endpoint)
	out.Reset()
	if err := run(context.Background(), []string{"mq", "list"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "jobs") {
		t.Fatalf("credentials and endpoint from the environment: %v\n%s", err, out.String())
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestMQPeek: mq peek lists messages across pages with their state, and a later receive
// sees each as never received.
func TestMQPeek(t *testing.T) {
	c := mqCLI{t, startGateway(t)}
	c.ok("create", "-q", "dead")
	for _, b := range []string{"one", "two", "three"} {
		c.ok("send", "-q", "dead", "--body", b, "--attr", "k=v")
	}
	var held received
	c.json(&held, "receive", "-q", "dead", "--visibility", "300")
	var got struct {
		Messages []struct {
			mq.Message
			State string `json:"state"`
		} `json:"messages"`
		NextToken string `json:"next_token"`
	}
	c.json(&got, "peek", "-q", "dead", "--limit", "2")
	if len(got.Messages) != 2 || got.NextToken == "" {
		t.Fatalf("peek --limit 2: %d messages, next token %q; want 2 and a token", len(got.Messages), got.NextToken)
	}
	first := got.Messages
	token := got.NextToken
	got.Messages = nil // decode the next page into a fresh slice, not over first
	c.json(&got, "peek", "-q", "dead", "--after", token)
	all := append(first, got.Messages...)
	states := map[string]string{}
	for _, m := range all {
		states[m.Body] = m.State
		if m.ReceiptHandle != "" || m.Attributes["k"] != "v" {
			t.Fatalf("peeked %q: handle %q, attributes %v", m.Body, m.ReceiptHandle, m.Attributes)
		}
	}
	if len(all) != 3 || got.NextToken != "" || states[held.Messages[0].Body] != "in-flight" {
		t.Fatalf("peek pages: %v (last token %q); want three, %q in flight", states, got.NextToken, held.Messages[0].Body)
	}
	var r received
	c.json(&r, "receive", "-q", "dead", "-m", "10")
	for _, m := range r.Messages {
		if m.System.ApproximateReceiveCount != 1 {
			t.Fatalf("%q received with count %d after peeks, want 1", m.Body, m.System.ApproximateReceiveCount)
		}
	}
	if out := c.ok("peek", "-q", "dead"); !strings.Contains(out, "in-flight") || !strings.Contains(out, "STATE") {
		t.Fatalf("peek table:\n%s", out)
	}
}
