package clients_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/testenv"
)

// jsModules returns the node_modules that scripts/test-env.sh installed from js/'s lock
// file ($ANYSQS_TEST_CLIENTS_JS), or skips (fails under CI) when node or that install is
// missing or stale.
func jsModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Unavailable(t, "node, 20 or later (scripts/test-env.sh installs Debian's nodejs)")
	}
	dir := os.Getenv("ANYSQS_TEST_CLIENTS_JS")
	if dir == "" {
		testenv.Unavailable(t, "sqs-consumer and sqs-producer: ANYSQS_TEST_CLIENTS_JS is not set "+
			"(eval \"$(scripts/test-env.sh)\" runs npm ci of conformance/clients/js)")
	}
	// test-env.sh keeps the lock file it installed from beside node_modules.
	installed, err1 := os.ReadFile(filepath.Join(dir, "..", "package-lock.json"))
	want, err2 := os.ReadFile(filepath.Join("js", "package-lock.json"))
	if err2 != nil {
		t.Fatal(err2)
	}
	if err1 != nil || !bytes.Equal(installed, want) {
		testenv.Unavailable(t, "sqs-consumer and sqs-producer as js/package-lock.json pins them: "+
			"%s holds another install (rerun scripts/test-env.sh)", dir)
	}
	return dir
}

// scenario runs js/scenario.cjs MODE NAME [ARGS] against the gateway at endpoint.
func scenario(t *testing.T, endpoint, nodeModules, mode, name string, args ...string) *process {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("js", "scenario.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{script, mode, name}, args...)...)
	cmd.Env = clientEnv(t, "NODE_PATH="+nodeModules, "ANYSQS_ENDPOINT="+endpoint)
	return start(t, "node scenario.cjs "+mode, cmd)
}

// queueURL finds the URL the scenario printed for its queue called name.
func queueURL(t *testing.T, evs []event, name string) string {
	t.Helper()
	for _, e := range filter(evs, "event", "queue") {
		if e.str("name") == name {
			return e.str("url")
		}
	}
	t.Fatalf("the scenario printed no URL for queue %s", name)
	return ""
}

// jsStandard: 25 messages sent by sqs-producer in batches, each handled exactly once by
// sqs-consumer with its message attribute, and deleted.
func jsStandard(t *testing.T, endpoint string, c *sqs.Client, nodeModules string) {
	evs := scenario(t, endpoint, nodeModules, "standard", "js-standard").events()
	sent := filter(evs, "event", "sent")
	if len(sent) != 25 {
		t.Fatalf("sqs-producer reported %d messages sent, want 25", len(sent))
	}
	idOf := map[string]string{} // body -> message ID the producer got
	for _, s := range sent {
		i := strings.TrimPrefix(s.str("entry"), "m")
		idOf["standard-"+i] = s.str("id")
	}
	seen := map[string]int{}
	for _, h := range filter(evs, "event", "handled") {
		body := h.str("body")
		seen[body]++
		if want, ok := idOf[body]; !ok || h.str("id") != want {
			t.Errorf("handled %q as message %s; the producer sent it as %q", body, h.str("id"), want)
		}
		if want := strings.TrimPrefix(body, "standard-"); h.str("seq") != want {
			t.Errorf("handled %q with attribute seq=%q, want %q", body, h.str("seq"), want)
		}
	}
	for body := range idOf {
		if seen[body] != 1 {
			t.Errorf("%q handled %d times, want once", body, seen[body])
		}
	}
	if n := len(filter(evs, "event", "processed")); n != 25 {
		t.Errorf("sqs-consumer deleted %d messages, want 25", n)
	}
	wantEmpty(t, c, queueURL(t, evs, "js-standard"))
}

// jsFIFO: three message groups sent interleaved, then duplicates of each group's first
// deduplication ID; each group handled in send order, each message once, no duplicate.
func jsFIFO(t *testing.T, endpoint string, c *sqs.Client, nodeModules string) {
	evs := scenario(t, endpoint, nodeModules, "fifo", "js-fifo").events()
	sent := filter(evs, "event", "sent")
	firstID := map[string]string{} // group -> message ID of its first message
	for _, s := range sent {
		if e := s.str("entry"); len(e) == 2 && e[1] == '0' {
			firstID[e[:1]] = s.str("id")
		}
	}
	dups := filter(evs, "event", "duplicate")
	if len(sent) != 18 || len(dups) != 3 || len(firstID) != 3 {
		t.Fatalf("sqs-producer reported %d sends and %d duplicates, want 18 and 3", len(sent), len(dups))
	}
	for _, d := range dups {
		g := strings.TrimPrefix(d.str("entry"), "dup")
		if d.str("id") != firstID[g] {
			t.Errorf("a duplicate deduplication ID in group %s was answered with message %s, want the first send's %s", g, d.str("id"), firstID[g])
		}
	}
	order := map[string][]string{} // group -> bodies in handling order
	lastSeq := map[string]string{}
	for _, h := range filter(evs, "event", "handled") {
		g, body, seq := h.str("group"), h.str("body"), h.str("seq")
		if !strings.HasPrefix(body, g+"-") {
			t.Errorf("handled %q with MessageGroupId %q", body, g)
		}
		if prev := lastSeq[g]; prev != "" && !seqLess(prev, seq) {
			t.Errorf("group %s: sequence number %s handled after %s", g, seq, prev)
		}
		lastSeq[g] = seq
		order[g] = append(order[g], body)
	}
	for _, g := range []string{"a", "b", "c"} {
		var want []string
		for i := range 6 {
			want = append(want, fmt.Sprintf("%s-%d", g, i))
		}
		if !slices.Equal(order[g], want) {
			t.Errorf("group %s handled as %v, want %v (send order, once each, no duplicate)", g, order[g], want)
		}
	}
	if n := len(filter(evs, "event", "processed")); n != 18 {
		t.Errorf("sqs-consumer deleted %d messages, want 18", n)
	}
	wantEmpty(t, c, queueURL(t, evs, "js-fifo.fifo"))
}

// seqLess compares two SQS sequence numbers, decimal strings of up to 128 bits.
func seqLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// maxReceiveCount is the redrive policy's in the DLQ scenario.
const maxReceiveCount = 2

// jsDLQ: three messages the handler accepts and three it always refuses, on a queue whose
// redrive policy says maxReceiveCount 2. The test receives the refused three from the
// DLQ through the SQS API, each with the source's receives kept (ApproximateReceiveCount
// 3 at this first DLQ receive), then lets the consumer stop: each refused message was
// handled exactly twice, each accepted one once and deleted.
func jsDLQ(t *testing.T, endpoint string, c *sqs.Client, nodeModules string) {
	const name = "js-redrive"
	p := scenario(t, endpoint, nodeModules, "dlq", name, strconv.Itoa(maxReceiveCount))
	// The scenario prints each queue as it creates it, the DLQ first.
	dlqURL := p.waitEvent("name", name+"-dlq").str("url")
	srcURL := p.waitEvent("name", name).str("url")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(srcURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	srcArn := attrs.Attributes[string(types.QueueAttributeNameQueueArn)]
	var dead []types.Message
	for len(dead) < 3 {
		if p.exited() {
			t.Fatalf("the scenario exited (%v) with %d of 3 messages in the DLQ:\n%s", p.err, len(dead), p.stderr)
		}
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 2, VisibilityTimeout: 60,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatalf("receive from the DLQ: %v", err)
		}
		dead = append(dead, out.Messages...)
	}
	if err := p.stdin.Close(); err != nil { // the consumer may stop now
		t.Fatal(err)
	}
	evs := p.events()

	sentID := map[string]string{} // body -> message ID the producer got
	for _, s := range filter(evs, "event", "sent") {
		entry := s.str("entry") // ok0, fail0, ...
		sentID[entry[:len(entry)-1]+"-"+entry[len(entry)-1:]] = s.str("id")
	}
	deadBodies := map[string]int{}
	for _, m := range dead {
		body := aws.ToString(m.Body)
		deadBodies[body]++
		if id := aws.ToString(m.MessageId); id != sentID[body] {
			t.Errorf("DLQ message %q has ID %s, the producer sent it as %s", body, id, sentID[body])
		}
		if got, want := m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)], fmt.Sprint(maxReceiveCount+1); got != want {
			t.Errorf("DLQ message %q: ApproximateReceiveCount %s, want %s (the source's %d receives kept, plus this one)",
				body, got, want, maxReceiveCount)
		}
		if got := m.Attributes[string(types.MessageSystemAttributeNameDeadLetterQueueSourceArn)]; got != srcArn {
			t.Errorf("DLQ message %q: DeadLetterQueueSourceArn %q, want %s", body, got, srcArn)
		}
	}
	want := map[string]int{"fail-0": 1, "fail-1": 1, "fail-2": 1}
	if fmt.Sprint(deadBodies) != fmt.Sprint(want) {
		t.Errorf("the DLQ received %v, want each refused message once: %v", deadBodies, want)
	}
	receives := map[string][]string{}
	for _, h := range filter(evs, "event", "handled") {
		receives[h.str("body")] = append(receives[h.str("body")], h.str("receives"))
	}
	var wantReceives []string // each receive of a refused message, up to maxReceiveCount
	for n := 1; n <= maxReceiveCount; n++ {
		wantReceives = append(wantReceives, strconv.Itoa(n))
	}
	for i := range 3 {
		if got := receives[fmt.Sprintf("ok-%d", i)]; !slices.Equal(got, []string{"1"}) {
			t.Errorf("ok-%d handled at receive counts %v, want once, at 1", i, got)
		}
		if got := receives[fmt.Sprintf("fail-%d", i)]; !slices.Equal(got, wantReceives) {
			t.Errorf("fail-%d handled at receive counts %v, want %v (maxReceiveCount %d), then the DLQ", i, got, wantReceives, maxReceiveCount)
		}
	}
	if n := len(filter(evs, "event", "failed")); n != 3*maxReceiveCount {
		t.Errorf("sqs-consumer reported %d processing errors, want %d", n, 3*maxReceiveCount)
	}
	if n := len(filter(evs, "event", "processed")); n != 3 {
		t.Errorf("sqs-consumer deleted %d messages, want the 3 accepted", n)
	}
	wantEmpty(t, c, srcURL)
	if got := queueCounts(t, c, dlqURL); got != (counts{inFlight: 3}) {
		t.Errorf("the DLQ holds %+v, want the 3 dead letters, in flight to the test", got)
	}
}
