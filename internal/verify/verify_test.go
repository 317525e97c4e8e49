package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

func TestMain(m *testing.M) {
	code := m.Run()
	servetest.RemoveBuild()
	os.Exit(code)
}

// quickCases are 64 cases that wait for no queue time (a case that does waits in real
// time under verify), so TestVerifyConfig takes seconds.
const quickCases = `^(queue\.create-runtime|queue\.tags|message\.|attribute\.)`

// verify runs the anysqs binary's verify command; it returns stdout+stderr and the
// exit status.
func verify(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(servetest.Binary(t), append([]string{"verify"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

func client(url string) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("anysqs", "anysqs", "")})
}

// queuesUnder lists the queue URLs whose names start with prefix.
func queuesUnder(t *testing.T, c *sqs.Client, prefix string) []string {
	t.Helper()
	out, err := c.ListQueues(context.Background(), &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix), MaxResults: aws.Int32(1000)})
	if err != nil {
		t.Fatal(err)
	}
	return out.QueueUrls
}

// bystander is a queue that exists before a run, with messages, attributes and tags;
// a run must leave all of it as it was.
type bystander struct {
	url   string
	attrs map[string]string
	tags  map[string]string
}

func makeBystander(t *testing.T, c *sqs.Client) *bystander {
	t.Helper()
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("keep-" + strings.ToLower(t.Name()[4:10])),
		Attributes: map[string]string{"VisibilityTimeout": "77", "MaximumMessageSize": "4096"},
		Tags:       map[string]string{"team": "payments"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(fmt.Sprint("kept-", i))}); err != nil {
			t.Fatal(err)
		}
	}
	b := &bystander{url: aws.ToString(q.QueueUrl)}
	b.attrs, b.tags = b.state(t, c)
	return b
}

func (b *bystander) state(t *testing.T, c *sqs.Client) (attrs, tags map[string]string) {
	t.Helper()
	ctx := context.Background()
	a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(b.url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(b.url)})
	if err != nil {
		t.Fatal(err)
	}
	return a.Attributes, tg.Tags
}

// check fails t unless the bystander's attributes, tags and messages are as they were.
func (b *bystander) check(t *testing.T, c *sqs.Client) {
	t.Helper()
	attrs, tags := b.state(t, c)
	if fmt.Sprint(attrs) != fmt.Sprint(b.attrs) || fmt.Sprint(tags) != fmt.Sprint(b.tags) {
		t.Errorf("the pre-existing queue changed:\nattributes %v\n      were %v\ntags %v, were %v", attrs, b.attrs, tags, b.tags)
	}
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.url), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
	}
	sort.Strings(bodies)
	if fmt.Sprint(bodies) != "[kept-0 kept-1 kept-2]" {
		t.Errorf("the pre-existing queue holds %v, want its three messages", bodies)
	}
}

// embedded is the table's first row, the embedded default backend.
var embedded = testbed.All[0].Name

// servedEmbedded serves the embedded backend's shipped configuration on fresh storage.
func servedEmbedded(t *testing.T) (*servetest.Gateway, []string) { return testbed.Start(t, embedded) }

// prefixOf reads the run's queue prefix from its first line.
func prefixOf(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "queues under ")
	if !ok {
		t.Fatalf("no prefix in the output:\n%s", out)
	}
	return strings.Fields(rest)[0]
}

// TestVerifyConfig runs anysqs verify on the shipped embedded configuration: its
// verdicts are the served row's in docs/compat, case by case, and a queue that was
// there before is untouched, and no queue of the run is left.
func TestVerifyConfig(t *testing.T) {
	g, env := servedEmbedded(t)
	c := client(g.URL)
	b := makeBystander(t, c)
	if err := g.Stop(); err != nil { // one process per data directory of the embedded backend
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, code := verify(t, env, "--config", testbed.ConfigOf(embedded), "--cases", quickCases, "--report", dir)
	if code != 0 {
		t.Fatalf("verify exited %d:\n%s", code, out)
	}
	got, want := verdicts(t, filepath.Join(dir, embedded+".json")), verdicts(t, filepath.Join("..", "..", "docs", "compat", embedded+"-served.json"))
	if len(got) < 40 {
		t.Fatalf("the report has %d cases:\n%s", len(got), out)
	}
	for name, v := range got {
		if want[name] != v {
			t.Errorf("%s: verify says %s, the committed %s-served report %q", name, v, embedded, want[name])
		}
	}
	g.Relaunch()
	b.check(t, c)
	if left := queuesUnder(t, c, prefixOf(t, out)); len(left) > 0 {
		t.Errorf("the run left %d queues: %v", len(left), first(left))
	}
}

// first is the start of a long list, for a message.
func first(urls []string) []string {
	if len(urls) > 3 {
		return urls[:3]
	}
	return urls
}

// verdicts reads a report's case statuses by <capabilities>/<case>.
func verdicts(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Capabilities []struct {
			Cases []struct{ Test, Status string }
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range r.Capabilities {
		for _, k := range c.Cases {
			parts := strings.SplitN(k.Test, "/", 3)
			out[parts[len(parts)-1]] = k.Status
		}
	}
	return out
}

// startRun starts anysqs verify against url with prefix, and returns once the run has
// created a queue.
func startRun(t *testing.T, c *sqs.Client, url, prefix string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(servetest.Binary(t), "verify", "--endpoint", url, "--prefix", prefix)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // may have ended
	guard := time.Now().Add(2 * time.Minute)             // hang guard for a loaded machine
	for len(queuesUnder(t, c, prefix)) < 5 {
		if time.Now().After(guard) {
			t.Fatalf("the run created no queue:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling another process's work
	}
	return cmd
}

// TestVerifyInterrupted: SIGINT mid-run leaves no queue of the run behind, and the
// pre-existing queue as it was.
func TestVerifyInterrupted(t *testing.T) {
	g, _ := servedEmbedded(t)
	c := client(g.URL)
	b := makeBystander(t, c)
	prefix := "vint-" + fmt.Sprint(time.Now().UnixNano()%1e6) + "-"
	cmd := startRun(t, c, g.URL, prefix)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("an interrupted run exited with %v, want status 1", err)
	}
	if left := queuesUnder(t, c, prefix); len(left) > 0 {
		t.Errorf("an interrupted run left %d queues: %v", len(left), first(left))
	}
	b.check(t, c)
}

// TestVerifyCleanupAfterKill: a killed run leaves queues; --cleanup --prefix deletes
// them and nothing else.
func TestVerifyCleanupAfterKill(t *testing.T) {
	g, _ := servedEmbedded(t)
	c := client(g.URL)
	b := makeBystander(t, c)
	prefix := "vkill-" + fmt.Sprint(time.Now().UnixNano()%1e6) + "-"
	cmd := startRun(t, c, g.URL, prefix)
	cmd.Process.Kill() //nolint:errcheck // checked by what is left
	cmd.Wait()         //nolint:errcheck // killed
	if left := queuesUnder(t, c, prefix); len(left) == 0 {
		t.Fatal("the killed run left no queue: nothing to clean up")
	}
	out, code := verify(t, nil, "--endpoint", g.URL, "--cleanup", "--prefix", prefix)
	if code != 0 {
		t.Fatalf("--cleanup exited %d:\n%s", code, out)
	}
	if left := queuesUnder(t, c, prefix); len(left) > 0 {
		t.Errorf("--cleanup left %d queues: %v", len(left), first(left))
	}
	b.check(t, c)
}

// TestVerifyDryRun: --dry-run lists what a run would do, and changes nothing.
func TestVerifyDryRun(t *testing.T) {
	g, _ := servedEmbedded(t)
	c := client(g.URL)
	b := makeBystander(t, c)
	before := queuesUnder(t, c, "")
	out, code := verify(t, nil, "--endpoint", g.URL, "--dry-run", "--cases", `^queue\.`)
	if code != 0 || !strings.Contains(out, "total:") || !strings.Contains(out, "queue.standard/") {
		t.Fatalf("--dry-run exited %d:\n%s", code, out)
	}
	if after := queuesUnder(t, c, ""); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("--dry-run changed the queues: %v, were %v", after, before)
	}
	b.check(t, c)
}

// TestVerifyEveryBackend runs anysqs verify --config on every backend of
// internal/testbed, each on fresh storage of this machine's service or emulator, and
// compares each report with the committed served row's, case by case. It takes
// minutes per backend, so it runs only with ANYSQS_VERIFY_ALL=1 (make verify-all).
func TestVerifyEveryBackend(t *testing.T) {
	if os.Getenv("ANYSQS_VERIFY_ALL") == "" {
		t.Skip("set ANYSQS_VERIFY_ALL=1 (make verify-all) to verify every backend")
	}
	var table []string
	for _, b := range testbed.All {
		t.Run(b.Name, func(t *testing.T) {
			env := testbed.Env(t, b.Name)
			dir := t.TempDir()
			start := time.Now()
			out, code := verify(t, env, "--config", testbed.ConfigOf(b.Name), "--report", dir)
			wall := time.Since(start).Round(time.Second)
			t.Log(out)
			if code != 0 {
				t.Errorf("verify exited %d", code)
			}
			got := verdicts(t, filepath.Join(dir, b.Name+".json"))
			want := verdicts(t, filepath.Join("..", "..", "docs", "compat", b.Name+"-served.json"))
			differ := 0
			for name, v := range got {
				if want[name] != v {
					differ++
					t.Logf("%s: verify says %s, the committed %s-served report %q", name, v, b.Name, want[name])
				}
			}
			counts := map[string]int{}
			for _, v := range got {
				counts[v]++
			}

			// The same backend served from its shipped configuration, judged black box
			// against SQS: its differences are what the backend declares degraded.
			g, _ := testbed.Start(t, b.Name)
			edir := t.TempDir()
			start = time.Now()
			eout, _ := verify(t, nil, "--endpoint", g.URL, "--name", b.Name, "--report", edir)
			ewall := time.Since(start).Round(time.Second)
			var differs []string
			for name, v := range verdicts(t, filepath.Join(edir, b.Name+".json")) {
				if v == "fail" {
					differs = append(differs, name)
				}
			}
			sort.Strings(differs)
			t.Logf("--endpoint differs from SQS in %d cases: %s\n%s", len(differs), strings.Join(differs, ", "), eout)
			table = append(table, fmt.Sprintf("| %s | %v | %d | %d | %d | %d | %v | %d |", b.Name, wall, len(got),
				counts["pass"], counts["needs-gateway-clock"], differ, ewall, len(differs)))
		})
	}
	t.Log("\n| backend | --config wall time | cases | pass | needs a gateway clock | differ from the served row | --endpoint wall time | differ from SQS |\n" +
		"|---|---|---|---|---|---|---|---|\n" + strings.Join(table, "\n"))
}
