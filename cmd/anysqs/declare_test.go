package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

// declared are the queues of the served tests: standard and FIFO, each dead-letter
// queue declared after its source, tags and a policy.
const declared = `
queue_metrics: {interval: 1s}
queues:
  - name: orders
    attributes:
      VisibilityTimeout: 60
      RedrivePolicy: {deadLetterTargetArn: orders-dlq, maxReceiveCount: 5}
      Policy:
        Version: "2012-10-17"
        Statement:
          - {Effect: Allow, Principal: {AWS: "111122223333"}, Action: "sqs:SendMessage", Resource: "*"}
    tags: {team: payments, env: test}
  - name: events.fifo
    attributes:
      ContentBasedDeduplication: true
      RedrivePolicy: {deadLetterTargetArn: events-dlq.fifo, maxReceiveCount: 3}
  - name: orders-dlq
    attributes: {MessageRetentionPeriod: 1209600}
  - name: events-dlq.fifo
`

// sharedBackend is the first backend of the table whose storage several gateways share
// and whose service is no emulator: the production database.
func sharedBackend(t *testing.T) testbed.Backend {
	for _, b := range testbed.All {
		if b.Shared && !b.Emulated {
			return b
		}
	}
	t.Fatal("no shared backend in testbed.All")
	return testbed.Backend{}
}

// declaredConfig writes backend's shipped configuration with extra appended.
func declaredConfig(t *testing.T, dir, backend, extra string) string {
	t.Helper()
	shipped, err := os.ReadFile(testbed.ConfigOf(backend))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "anysqs.yaml")
	if err := os.WriteFile(p, append(shipped, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sdkClient(url string) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDDECLARE", "secret", "")})
}

// queueState is every queue's settable attributes and tags, by queue name.
func queueState(t *testing.T, url string) map[string]string {
	t.Helper()
	ctx := context.Background()
	c := sdkClient(url)
	list, err := c.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, u := range list.QueueUrls {
		name := u[strings.LastIndexByte(u, '/')+1:]
		a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range a.Attributes {
			if !strings.Contains(k, "Timestamp") && !strings.HasPrefix(k, "Approximate") {
				out[name+" "+k] = v
			}
		}
		tags, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tags.Tags {
			out[name+" tag "+k] = v
		}
	}
	return out
}

func sameState(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s = %q, was %q", what, k, b[k], v)
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s = %q appeared", what, k, v)
		}
	}
}

// TestDeclaredQueuesServed starts the shipped configuration of the production database
// (sharedBackend) with declared queues: twice in a row, then as two gateways at once on fresh storage, each time
// reaching the same state without an error; then with a changed attribute, which the
// restart applies.
func TestDeclaredQueuesServed(t *testing.T) {
	dir := t.TempDir()
	backend := sharedBackend(t).Name
	config := declaredConfig(t, dir, backend, declared)
	env := testbed.Env(t, backend)
	g := servetest.Start(t, config, env...)
	first := queueState(t, g.URL)
	for k, want := range map[string]string{
		"orders VisibilityTimeout":              "60",
		"orders tag team":                       "payments",
		"orders RedrivePolicy":                  `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":5}`,
		"events.fifo FifoQueue":                 "true",
		"events.fifo ContentBasedDeduplication": "true",
		"orders-dlq MessageRetentionPeriod":     "1209600",
		"events-dlq.fifo FifoQueue":             "true",
	} {
		if first[k] != want {
			t.Errorf("%s = %q, want %q", k, first[k], want)
		}
	}
	if !strings.Contains(first["orders Policy"], "111122223333") {
		t.Errorf("orders Policy = %q", first["orders Policy"])
	}
	if !strings.Contains(g.Logs(), `msg="declared queues" created=4 updated=0 unchanged=0`) {
		t.Errorf("first start's log:\n%s", g.Logs())
	}

	// The served /metrics shows the declared queues' depth once a collection has run.
	c := sdkClient(g.URL)
	for range 2 {
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{
			QueueUrl: aws.String(g.URL + "/000000000000/orders"), MessageBody: aws.String("x")}); err != nil {
			t.Fatal(err)
		}
	}
	awaitMetric(t, g.AdminURL, `anysqs_queue_messages_visible{account="000000000000",queue="orders"} 2`)
	awaitMetric(t, g.AdminURL, `anysqs_queue_messages_sent_total{account="000000000000",queue="orders"} 2`)

	g.Restart()
	if !strings.Contains(g.Logs(), `msg="declared queues" created=0 updated=0 unchanged=4`) {
		t.Errorf("second start's log:\n%s", g.Logs())
	}
	sameState(t, "after a restart", first, queueState(t, g.URL))

	// A changed attribute and tag, applied by the next start.
	declaredConfig(t, dir, backend, strings.Replace(strings.Replace(declared, "VisibilityTimeout: 60", "VisibilityTimeout: 75", 1),
		"env: test", "env: prod", 1))
	g.Restart()
	for _, line := range []string{
		`msg="declared queue attribute changed" queue=orders attribute=VisibilityTimeout from=60 to=75`,
		`msg="declared queue tag changed" queue=orders tag=env from=test to=prod`,
		`msg="declared queues" created=0 updated=1 unchanged=3`,
	} {
		if !strings.Contains(g.Logs(), line) {
			t.Errorf("log lacks %s:\n%s", line, g.Logs())
		}
	}
	changed := queueState(t, g.URL)
	if changed["orders VisibilityTimeout"] != "75" || changed["orders tag env"] != "prod" {
		t.Errorf("after the changed start: VisibilityTimeout %q, env %q", changed["orders VisibilityTimeout"], changed["orders tag env"])
	}
	g.Kill()

	// Two gateways starting together on fresh storage.
	env2 := testbed.Env(t, backend)
	declaredConfig(t, dir, backend, declared)
	var wg sync.WaitGroup
	gs := make([]*servetest.Gateway, 2)
	for i := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gs[i] = servetest.Start(t, config, env2...)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	a, b := queueState(t, gs[0].URL), queueState(t, gs[1].URL)
	sameState(t, "two gateways at once, gateway b against a", a, b)
	sameState(t, "two gateways at once against one alone", first, a)
	for i, g := range gs {
		if strings.Contains(g.Logs(), "level=ERROR") {
			t.Errorf("gateway %d logged an error:\n%s", i, g.Logs())
		}
	}
}

// awaitMetric scrapes admin's /metrics until a line is line, each scrape after the
// previous answer; the guard bounds a hang, it asserts nothing about time.
func awaitMetric(t *testing.T, admin, line string) {
	t.Helper()
	guard := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(guard) {
		resp, err := http.Get(admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = string(body)
		for _, l := range strings.Split(last, "\n") {
			if l == line {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("/metrics never showed %s; last scrape's queue series:\n%s", line, grepLines(last, "anysqs_queue"))
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestApplyPlanAgainstAGateway runs anysqs apply against a served gateway: --dry-run
// prints the plan, exits 2 and changes nothing; apply carries it out; a second dry run
// finds nothing to do and exits 0.
func TestApplyPlanAgainstAGateway(t *testing.T) {
	g, _ := testbed.Start(t, testbed.All[0].Name)
	ctx := context.Background()
	c := sdkClient(g.URL)
	// orders exists with another visibility timeout and one of its tags.
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders-dlq")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders"),
		Attributes: map[string]string{"VisibilityTimeout": "30"}, Tags: map[string]string{"team": "payments"}}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "queues.yaml")
	if err := os.WriteFile(file, []byte(declared), 0o600); err != nil {
		t.Fatal(err)
	}
	before := queueState(t, g.URL)
	apply := func(extra ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"apply", "-f", file, "--endpoint", g.URL,
			"--access-key-id", "AKIDAPPLY", "--secret-access-key", "x"}, extra...), &out, io.Discard)
		return out.String(), err
	}
	out, err := apply("--dry-run")
	if code := cli.ExitCode(err); code != 2 {
		t.Fatalf("apply --dry-run with changes: exit %d (%v), want 2\n%s", code, err, out)
	}
	sameState(t, "after apply --dry-run", before, queueState(t, g.URL))
	policy := `{"Statement":[{"Action":"sqs:SendMessage","Effect":"Allow","Principal":{"AWS":"111122223333"},"Resource":"*"}],"Version":"2012-10-17"}`
	wantPlan := `~ update orders-dlq
      MessageRetentionPeriod: 345600 -> 1209600
~ update orders
      Policy: (none) -> ` + policy + `
      RedrivePolicy: (none) -> {"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":5}
      VisibilityTimeout: 30 -> 60
      tag env: (none) -> test
+ create events-dlq.fifo
      FifoQueue = true
+ create events.fifo
      ContentBasedDeduplication = true
      FifoQueue = true
      RedrivePolicy = {"deadLetterTargetArn":"(the ARN of events-dlq.fifo, created first)","maxReceiveCount":3}
Plan: 2 to create, 2 to update, 0 unchanged.
`
	if out != wantPlan {
		t.Fatalf("plan:\n%s\nwant:\n%s", out, wantPlan)
	}
	if out, err = apply(); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if !strings.HasSuffix(out, "Applied: 2 created, 2 updated.\n") {
		t.Errorf("apply's output:\n%s", out)
	}
	after := queueState(t, g.URL)
	if after["orders VisibilityTimeout"] != "60" || after["events.fifo FifoQueue"] != "true" || after["orders tag team"] != "payments" {
		t.Errorf("after apply: %v", after)
	}
	if out, err = apply("--dry-run"); err != nil || !strings.HasSuffix(out, "Plan: 0 to create, 0 to update, 4 unchanged.\n") {
		t.Fatalf("second dry run: %v\n%s", err, out)
	}
}

// TestBadDeclarationFailsServe: the binary refuses to start, naming the file and line.
func TestBadDeclarationFailsServe(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "anysqs.yaml")
	text := "backend: {name: " + testbed.All[0].Name + ", options: {data_dir: ./data}}\nqueues:\n  - name: a\n    attributes:\n      VisibilityTimeout: 43201\n"
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(servetest.Binary(t), "serve", "--config", config).CombinedOutput()
	want := config + ":5: queue a: attribute VisibilityTimeout: Invalid value for the parameter VisibilityTimeout."
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("serve: %v\n%s\nwant %s", err, out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Errorf("a refused configuration created the data directory")
	}
}
