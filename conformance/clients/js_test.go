//go:build clients

package clients_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// jsModules returns the node_modules that scripts/test-env.sh installed from js/'s lock
// file, or skips (fails under CI) when node or that install is missing or stale.
func jsModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node (Debian package nodejs, 20 or later; scripts/test-env.sh installs it)")
	}
	dir := os.Getenv("ANYSQS_TEST_CLIENTS_NODE_MODULES")
	if dir == "" {
		unavailable(t, "sqs-consumer and sqs-producer: ANYSQS_TEST_CLIENTS_NODE_MODULES is not set (eval \"$(scripts/test-env.sh)\" runs npm ci of conformance/clients/js)")
	}
	// test-env.sh keeps the lock file it installed from beside node_modules.
	if !sameFile(filepath.Join(dir, "..", "package-lock.json"), filepath.Join("js", "package-lock.json")) {
		unavailable(t, "sqs-consumer and sqs-producer as js/package-lock.json pins them: %s holds another install (rerun scripts/test-env.sh)", dir)
	}
	return dir
}

// scenario runs js/scenario.cjs MODE NAME against the run's gateway.
func scenario(t *testing.T, r *runEnv, nodeModules, mode, name string) *process {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("js", "scenario.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, mode, name)
	cmd.Env = clientEnv(t.TempDir(), "NODE_PATH="+nodeModules, "ANYSQS_ENDPOINT="+r.g.url)
	return start(t, "node scenario.cjs "+mode, cmd, true)
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
func jsStandard(t *testing.T, r *runEnv, nodeModules string) {
	name := r.prefix + "-js-standard"
	evs := scenario(t, r, nodeModules, "standard", name).events()
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
	wantEmpty(t, r.sqs, queueURL(t, evs, name))
}

// jsFIFO: three message groups sent interleaved, then duplicates of each group's first
// deduplication ID; each group handled in send order, each message once, no duplicate.
func jsFIFO(t *testing.T, r *runEnv, nodeModules string) {
	name := r.prefix + "-js-fifo"
	evs := scenario(t, r, nodeModules, "fifo", name).events()
	firstID := map[string]string{} // group -> message ID of its first message
	for _, s := range filter(evs, "event", "sent") {
		if e := s.str("entry"); strings.HasSuffix(e, "0") && len(e) == 2 {
			firstID[e[:1]] = s.str("id")
		}
	}
	dups := filter(evs, "event", "duplicate")
	if len(filter(evs, "event", "sent")) != 18 || len(dups) != 3 || len(firstID) != 3 {
		t.Fatalf("sqs-producer reported %d sends and %d duplicates, want 18 and 3", len(filter(evs, "event", "sent")), len(dups))
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
		for i := 0; i < 6; i++ {
			want = append(want, fmt.Sprintf("%s-%d", g, i))
		}
		if !slices.Equal(order[g], want) {
			t.Errorf("group %s handled as %v, want %v (send order, once each, no duplicate)", g, order[g], want)
		}
	}
	if n := len(filter(evs, "event", "processed")); n != 18 {
		t.Errorf("sqs-consumer deleted %d messages, want 18", n)
	}
	wantEmpty(t, r.sqs, queueURL(t, evs, name+".fifo"))
}

// seqLess compares two SQS sequence numbers, decimal strings of up to 128 bits.
func seqLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// jsDLQ: three messages the handler accepts and three it always refuses, on a queue whose
// redrive policy says maxReceiveCount 2. The test waits until the refused three are in
// the DLQ (received there through the SQS API), then lets the consumer stop: each refused
// message was handled exactly twice, each accepted one once and deleted.
func jsDLQ(t *testing.T, r *runEnv, nodeModules string) {
	name := r.prefix + "-js-redrive"
	p := scenario(t, r, nodeModules, "dlq", name)
	// The scenario prints each queue as it creates it, the DLQ first.
	dlqURL := p.waitEvent("name", name+"-dlq").str("url")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	dead := map[string]int{}
	for len(dead) < 3 {
		out, err := r.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 2, VisibilityTimeout: 60})
		if err != nil {
			t.Fatalf("receive from the DLQ: %v", err)
		}
		for _, m := range out.Messages {
			dead[aws.ToString(m.Body)]++
		}
	}
	if err := p.stdin.Close(); err != nil { // the consumer may stop now
		t.Fatal(err)
	}
	evs := p.events()
	want := map[string]int{"fail-0": 1, "fail-1": 1, "fail-2": 1}
	if fmt.Sprint(dead) != fmt.Sprint(want) {
		t.Errorf("the DLQ received %v, want each refused message once: %v", dead, want)
	}
	receives := map[string][]string{}
	for _, h := range filter(evs, "event", "handled") {
		receives[h.str("body")] = append(receives[h.str("body")], h.str("receives"))
	}
	for i := 0; i < 3; i++ {
		if got := receives[fmt.Sprintf("ok-%d", i)]; !slices.Equal(got, []string{"1"}) {
			t.Errorf("ok-%d handled at receive counts %v, want once, at 1", i, got)
		}
		if got := receives[fmt.Sprintf("fail-%d", i)]; !slices.Equal(got, []string{"1", "2"}) {
			t.Errorf("fail-%d handled at receive counts %v, want 1 and 2 (maxReceiveCount 2), then the DLQ", i, got)
		}
	}
	if n := len(filter(evs, "event", "failed")); n != 6 {
		t.Errorf("sqs-consumer reported %d processing errors, want 6", n)
	}
	if n := len(filter(evs, "event", "processed")); n != 3 {
		t.Errorf("sqs-consumer deleted %d messages, want the 3 accepted", n)
	}
	wantEmpty(t, r.sqs, queueURL(t, evs, name))
	if got := queueCounts(t, r.sqs, dlqURL); got != (counts{inFlight: 3}) {
		t.Errorf("the DLQ holds %+v, want the 3 dead letters, in flight to the test", got)
	}
}
