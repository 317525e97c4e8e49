package declare_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/declare"
	"github.com/anysqs/anysqs/internal/testbed"
)

const sample = `queues:
  - name: orders
    attributes:
      VisibilityTimeout: 60
      RedrivePolicy: {deadLetterTargetArn: orders-dlq, maxReceiveCount: 5}
      Policy:
        Version: "2012-10-17"
        Statement:
          - {Effect: Allow, Principal: "*", Action: "sqs:SendMessage", Resource: "*"}
    tags: {team: payments}
  - name: events.fifo
    attributes:
      ContentBasedDeduplication: true
      RedrivePolicy: '{"deadLetterTargetArn":"events-dlq.fifo","maxReceiveCount":"3"}'
  - name: events-dlq.fifo
  - name: orders-dlq
    attributes: {MessageRetentionPeriod: 1209600}
`

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "queues.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// gatewayOn serves fresh storage of the embedded default backend through a gateway, in
// process, with the capability policy given.
func gatewayOn(t *testing.T, policy capabilities.Config) *gateway.Server {
	t.Helper()
	ctx := context.Background()
	b := testbed.All[0]
	drv, err := b.Open(ctx, b.Storage(t))
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(ctx, gateway.Config{Driver: drv, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close(); drv.Close() })
	return gw
}

// state is every queue's settable attributes and tags, as a client reads them.
func state(t *testing.T, client *sqs.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	list, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range list.QueueUrls {
		a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		tags, err := client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range a.Attributes {
			if !strings.Contains(k, "Timestamp") && !strings.HasPrefix(k, "Approximate") {
				out[u+" "+k] = v
			}
		}
		for k, v := range tags.Tags {
			out[u+" tag "+k] = v
		}
	}
	return out
}

func clientOf(t *testing.T, targets declare.Targets) *sqs.Client {
	t.Helper()
	tg, err := targets("")
	if err != nil {
		t.Fatal(err)
	}
	return tg.(*declare.SQS).Client
}

func applyAll(t *testing.T, targets declare.Targets, qs []declare.Queue) []declare.Change {
	t.Helper()
	ctx := context.Background()
	plan, err := declare.Plan(ctx, targets, qs)
	if err != nil {
		t.Fatal(err)
	}
	var done []declare.Change
	if err := declare.Apply(ctx, targets, plan, func(c declare.Change) { done = append(done, c) }); err != nil {
		t.Fatal(err)
	}
	return done
}

func TestApplyCreatesDeadLetterQueuesFirstThenConverges(t *testing.T) {
	qs, err := declare.ParseFile(write(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	targets := declare.InProcess(gatewayOn(t, capabilities.Config{}), "us-east-1", nil)
	done := applyAll(t, targets, qs)
	var order []string
	for _, c := range done {
		if c.Op != declare.Create {
			t.Errorf("%s: op %v, want create", c.Label(), c.Op)
		}
		order = append(order, c.Label())
	}
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	if len(order) != 4 || pos["orders-dlq"] > pos["orders"] || pos["events-dlq.fifo"] > pos["events.fifo"] {
		t.Fatalf("created %v: each dead-letter queue must come before its source", order)
	}
	client := clientOf(t, targets)
	first := state(t, client)
	u := "http://anysqs.internal/000000000000/"
	for k, want := range map[string]string{
		u + "orders VisibilityTimeout":          "60",
		u + "orders tag team":                   "payments",
		u + "orders RedrivePolicy":              `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":5}`,
		u + "events.fifo FifoQueue":             "true",
		u + "events.fifo RedrivePolicy":         `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:events-dlq.fifo","maxReceiveCount":3}`,
		u + "orders-dlq MessageRetentionPeriod": "1209600",
	} {
		if first[k] != want {
			t.Errorf("%s = %q, want %q", k, first[k], want)
		}
	}
	if !strings.Contains(first[u+"orders Policy"], `"sqs:SendMessage"`) {
		t.Errorf("orders Policy = %q", first[u+"orders Policy"])
	}

	// Applied again: nothing to do, nothing changed.
	plan, err := declare.Plan(context.Background(), targets, qs)
	if err != nil {
		t.Fatal(err)
	}
	if c, u, n, _ := declare.Counts(plan); c != 0 || u != 0 || n != 4 {
		var b bytes.Buffer
		declare.Print(&b, plan)
		t.Fatalf("second plan:\n%s", b.String())
	}
	if again := state(t, client); !equal(first, again) {
		t.Fatalf("state changed by an empty plan:\n%v\n%v", first, again)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestChangedAttributeAndTagAreUpdatedAndOthersLeftAlone(t *testing.T) {
	targets := declare.InProcess(gatewayOn(t, capabilities.Config{}), "us-east-1", nil)
	qs, err := declare.ParseFile(write(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	applyAll(t, targets, qs)
	client := clientOf(t, targets)
	ctx := context.Background()
	ordersURL := "http://anysqs.internal/000000000000/orders"
	// Set by hand, not declared: must survive.
	if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(ordersURL),
		Attributes: map[string]string{"DelaySeconds": "7"}}); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(sample, "VisibilityTimeout: 60", "VisibilityTimeout: 90", 1)
	changed = strings.Replace(changed, "team: payments", "team: billing", 1)
	qs, err = declare.ParseFile(write(t, changed))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := declare.Plan(ctx, targets, qs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	declare.Print(&b, plan)
	want := "~ update orders\n      VisibilityTimeout: 60 -> 90\n      tag team: payments -> billing\n"
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "Plan: 0 to create, 1 to update, 3 unchanged.") {
		t.Fatalf("plan:\n%s\nwant it to contain:\n%s", b.String(), want)
	}
	if err := declare.Apply(ctx, targets, plan, func(declare.Change) {}); err != nil {
		t.Fatal(err)
	}
	s := state(t, client)
	if s[ordersURL+" VisibilityTimeout"] != "90" || s[ordersURL+" tag team"] != "billing" || s[ordersURL+" DelaySeconds"] != "7" {
		t.Fatalf("after apply: VisibilityTimeout %q, team %q, DelaySeconds %q; want 90, billing, 7 (undeclared kept)",
			s[ordersURL+" VisibilityTimeout"], s[ordersURL+" tag team"], s[ordersURL+" DelaySeconds"])
	}
}

// Appliers racing on one store (gateways starting together) all succeed and agree.
func TestConcurrentAppliersConverge(t *testing.T) {
	qs, err := declare.ParseFile(write(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	targets := declare.InProcess(gatewayOn(t, capabilities.Config{}), "us-east-1", nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			plan, err := declare.Plan(ctx, targets, qs)
			if err == nil {
				err = declare.Apply(ctx, targets, plan, func(declare.Change) {})
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	plan, err := declare.Plan(context.Background(), targets, qs)
	if err != nil {
		t.Fatal(err)
	}
	if _, u, n, _ := declare.Counts(plan); u != 0 || n != 4 {
		t.Fatalf("after racing appliers: %d to update, %d unchanged; want 0, 4", u, n)
	}
}

// Each bad declaration fails with its file, line, queue and attribute.
func TestBadDeclarationsNameFileLineQueueAttribute(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown attribute", "queues:\n  - name: a\n    attributes:\n      VisibilityTimeot: 5\n",
			":4: queue a: attribute VisibilityTimeot: SQS has no such queue attribute"},
		{"read-only attribute", "queues:\n  - name: a\n    attributes:\n      QueueArn: x\n",
			":4: queue a: attribute QueueArn: read-only"},
		{"value out of range", "queues:\n  - name: a\n    attributes:\n      DelaySeconds: 0\n      VisibilityTimeout: 43201\n",
			":5: queue a: attribute VisibilityTimeout: Invalid value for the parameter VisibilityTimeout."},
		{"not a number", "queues:\n  - name: a\n    attributes:\n      MaximumMessageSize: big\n",
			":4: queue a: attribute MaximumMessageSize: Invalid value"},
		{"FIFO attribute on a standard queue", "queues:\n  - name: a\n    attributes:\n      ContentBasedDeduplication: true\n",
			":4: queue a: attribute ContentBasedDeduplication:"},
		{"YAML object for a scalar attribute", "queues:\n  - name: a\n    attributes:\n      DelaySeconds: {x: 1}\n",
			":4: queue a: attribute DelaySeconds: want a single value"},
		{"malformed redrive policy", "queues:\n  - name: a\n  - name: b\n    attributes:\n      RedrivePolicy: {deadLetterTargetArn: a}\n",
			":5: queue b: attribute RedrivePolicy:"},
		{"own dead-letter queue", "queues:\n  - name: a\n    attributes:\n      RedrivePolicy: {deadLetterTargetArn: a, maxReceiveCount: 2}\n",
			":4: queue a: attribute RedrivePolicy: a queue cannot be its own dead-letter queue"},
		{"dead-letter cycle", "queues:\n  - name: a\n    attributes:\n      RedrivePolicy: {deadLetterTargetArn: b, maxReceiveCount: 2}\n" +
			"  - name: b\n    attributes:\n      RedrivePolicy: {deadLetterTargetArn: a, maxReceiveCount: 2}\n",
			"attribute RedrivePolicy: dead-letter queues make a cycle"},
		{"bad name", "queues:\n  - name: no spaces\n", ":2: queue no spaces: name: Can only include alphanumeric characters"},
		{"FIFO name, standard type", "queues:\n  - name: a.fifo\n    attributes: {FifoQueue: false}\n", ":3: queue a.fifo: attribute FifoQueue:"},
		{"unknown key", "queues:\n  - name: a\n    attirbutes: {}\n", ":3: queue a: unknown key attirbutes"},
		{"no name", "queues:\n  - attributes: {DelaySeconds: 1}\n", ":2: the entry has no name"},
		{"declared twice", "queues:\n  - name: a\n  - name: a\n", ":3: queue a: declared twice (first at"},
		{"reserved tag", "queues:\n  - name: a\n    tags:\n      aws:team: x\n", ":4: queue a: tag aws:team: the aws: prefix is reserved"},
		{"bad account", "queues:\n  - name: a\n    account: 12\n", ":2: queue a: account: \"12\" is not 12 digits"},
		{"not a list", "queues: {name: a}\n", ":1: queues: want a list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, c.text)
			_, err := declare.ParseFile(path)
			if err == nil || !strings.HasPrefix(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s%s...", err, path, c.want)
			}
		})
	}
}

// A dead-letter queue neither declared nor existing fails the plan at RedrivePolicy's
// line, and nothing is created.
func TestMissingDeadLetterQueueFailsThePlan(t *testing.T) {
	path := write(t, "queues:\n  - name: first\n  - name: a\n    attributes:\n      RedrivePolicy: {deadLetterTargetArn: gone, maxReceiveCount: 2}\n")
	qs, err := declare.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	targets := declare.InProcess(gatewayOn(t, capabilities.Config{}), "us-east-1", nil)
	_, err = declare.Plan(context.Background(), targets, qs)
	if err == nil || !strings.Contains(err.Error(), path+":5: queue a: attribute RedrivePolicy: the dead-letter queue gone is neither declared nor existing") {
		t.Fatalf("got %v", err)
	}
	if s := state(t, clientOf(t, targets)); len(s) != 0 {
		t.Fatalf("queues exist after a failed plan: %v", s)
	}
}

// What the gateway refuses when applying (here, a capability the policy rejects) names
// the declaration.
func TestGatewayRefusalNamesTheDeclaration(t *testing.T) {
	path := write(t, "queues:\n  - name: a\n    attributes:\n      DelaySeconds: 5\n      KmsMasterKeyId: alias/x\n")
	qs, err := declare.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewayOn(t, capabilities.Config{Overrides: map[string]string{string(capabilities.AttrKMS): "strict"}})
	targets := declare.InProcess(gw, "us-east-1", nil)
	plan, err := declare.Plan(context.Background(), targets, qs)
	if err != nil {
		t.Fatal(err)
	}
	err = declare.Apply(context.Background(), targets, plan, func(declare.Change) {})
	if err == nil || !strings.Contains(err.Error(), path+":5: queue a: attribute KmsMasterKeyId:") {
		t.Fatalf("got %v, want the KmsMasterKeyId line", err)
	}
}

// What the backend only degrades is applied, and the change says so.
func TestDegradedDeclarationIsReported(t *testing.T) {
	qs, err := declare.ParseFile(write(t, "queues:\n  - name: a\n    attributes:\n      KmsMasterKeyId: alias/x\n"))
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewayOn(t, capabilities.Config{Overrides: map[string]string{string(capabilities.AttrKMS): "degrade"}})
	done := applyAll(t, declare.InProcess(gw, "us-east-1", nil), qs)
	if len(done) != 1 || strings.Join(done[0].Degraded, ",") != string(capabilities.AttrKMS) {
		t.Fatalf("changes %+v: want one create reporting %s degraded", done, capabilities.AttrKMS)
	}
}
