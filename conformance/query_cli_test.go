package conformance

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/internal/testenv"
)

// The core flows through real clients of other SDK generations: Debian's AWS CLI v2.9 and
// boto3 1.26 speak the Query protocol (form-encoded requests, XML responses); a newer
// boto3 speaks AWS JSON 1.0. They run against the embedded backend only: the protocol is
// the gateway's, not the backend's.

// awsCLI is Debian's AWS CLI, or ANYSQS_TEST_AWSCLI (set by scripts/test-env.sh).
func awsCLI() string {
	if p := os.Getenv("ANYSQS_TEST_AWSCLI"); p != "" {
		return p
	}
	return "/usr/bin/aws"
}

// cli runs the AWS CLI against one gateway.
type cli struct {
	t   *testing.T
	h   *H
	env []string
}

func newCLI(t *testing.T, h *H) *cli {
	if _, err := os.Stat(awsCLI()); err != nil {
		testenv.Unavailable(t, "%s (Debian package awscli; scripts/test-env.sh installs it): %v", awsCLI(), err)
	}
	home := t.TempDir()
	return &cli{t: t, h: h, env: append(cleanAWSEnv(),
		"HOME="+home,
		"AWS_ACCESS_KEY_ID=AKIDCONFORMANCE",
		"AWS_SECRET_ACCESS_KEY=conformance-secret",
		"AWS_DEFAULT_REGION="+testRegion,
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"),
		"AWS_PAGER=",
	)}
}

// cleanAWSEnv is the environment without AWS_* variables, so the machine's own
// configuration cannot leak into the test.
func cleanAWSEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return env
}

// run runs `aws sqs <args> --endpoint-url URL --output json` and returns stdout, stderr
// and the exit code.
func (c *cli) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.h.Ctx, 2*time.Minute) // a hang guard, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, awsCLI(), append(append([]string{"sqs"}, args...), "--endpoint-url", c.h.URL, "--output", "json")...)
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		c.t.Fatalf("aws %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and decodes its JSON output into v (if not nil).
func (c *cli) ok(v any, args ...string) {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("aws sqs %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(stdout), v); err != nil {
			c.t.Fatalf("aws sqs %s: output %q: %v", strings.Join(args, " "), stdout, err)
		}
	}
}

func TestQueryProtocolAWSCLI(t *testing.T) {
	t.Parallel()
	takeCPUSlot(t)
	h := newHarness(t, sqliteBackend())
	c := newCLI(t, h)
	name := h.Name("cli")

	var created struct{ QueueUrl string }
	c.ok(&created, "create-queue", "--queue-name", name, "--attributes", "VisibilityTimeout=45")
	if want := h.URL + "/" + h.Account + "/" + name; created.QueueUrl != want {
		t.Fatalf("create-queue QueueUrl = %q, want %q", created.QueueUrl, want)
	}
	url := created.QueueUrl

	var listed struct{ QueueUrls []string }
	c.ok(&listed, "list-queues", "--queue-name-prefix", name)
	if len(listed.QueueUrls) != 1 || listed.QueueUrls[0] != url {
		t.Fatalf("list-queues = %v, want [%s]", listed.QueueUrls, url)
	}

	var got struct{ QueueUrl string }
	c.ok(&got, "get-queue-url", "--queue-name", name)
	if got.QueueUrl != url {
		t.Fatalf("get-queue-url = %q, want %q", got.QueueUrl, url)
	}

	body := "hello from the AWS CLI \u00e9"
	var sent struct{ MessageId, MD5OfMessageBody, MD5OfMessageAttributes string }
	c.ok(&sent, "send-message", "--queue-url", url, "--message-body", body, "--message-attributes",
		`{"color":{"DataType":"String","StringValue":"blue"},"count":{"DataType":"Number","StringValue":"3"},"blob":{"DataType":"Binary","BinaryValue":"AAEC"}}`)
	sum := md5.Sum([]byte(body))
	if sent.MessageId == "" || sent.MD5OfMessageBody != hex.EncodeToString(sum[:]) || sent.MD5OfMessageAttributes == "" {
		t.Fatalf("send-message output %+v; want an id and MD5 %x", sent, sum)
	}

	var recv struct {
		Messages []struct {
			MessageId, ReceiptHandle, Body, MD5OfBody, MD5OfMessageAttributes string
			Attributes                                                        map[string]string
			MessageAttributes                                                 map[string]struct{ DataType, StringValue, BinaryValue string }
		}
	}
	c.ok(&recv, "receive-message", "--queue-url", url, "--attribute-names", "All", "--message-attribute-names", "All")
	if len(recv.Messages) != 1 {
		t.Fatalf("receive-message returned %d messages", len(recv.Messages))
	}
	m := recv.Messages[0]
	if m.Body != body || m.MessageId != sent.MessageId || m.MD5OfMessageAttributes != sent.MD5OfMessageAttributes ||
		m.MessageAttributes["color"].StringValue != "blue" || m.MessageAttributes["count"].StringValue != "3" ||
		m.MessageAttributes["blob"].BinaryValue != "AAEC" || m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("receive-message returned %+v", m)
	}
	c.ok(nil, "delete-message", "--queue-url", url, "--receipt-handle", m.ReceiptHandle)

	var attrs struct{ Attributes map[string]string }
	c.ok(nil, "set-queue-attributes", "--queue-url", url, "--attributes", "DelaySeconds=5,MaximumMessageSize=2048")
	c.ok(&attrs, "get-queue-attributes", "--queue-url", url, "--attribute-names", "All")
	if a := attrs.Attributes; a["VisibilityTimeout"] != "45" || a["DelaySeconds"] != "5" || a["MaximumMessageSize"] != "2048" || a["ApproximateNumberOfMessages"] != "0" {
		t.Fatalf("get-queue-attributes = %v", a)
	}

	var batch struct {
		Successful []struct{ Id, MessageId string }
		Failed     []struct{ Id, Code string }
	}
	c.ok(&batch, "send-message-batch", "--queue-url", url, "--entries", "Id=a,MessageBody=one", "Id=b,MessageBody=two")
	if len(batch.Successful) != 2 || len(batch.Failed) != 0 {
		t.Fatalf("send-message-batch = %+v", batch)
	}
	h.Advance(6 * time.Second) // the queue now delays 5 s
	if got := h.drain(url, 2); strings.Join(got, ",") != "one,two" {
		t.Fatalf("batch messages read back with the Go SDK: %v", got)
	}

	_, stderr, code := c.run("get-queue-url", "--queue-name", h.Name("missing"))
	if code != 254 || !strings.Contains(stderr, "AWS.SimpleQueueService.NonExistentQueue") {
		t.Fatalf("get-queue-url of a missing queue: exit %d, stderr %q; want 254 and AWS.SimpleQueueService.NonExistentQueue", code, stderr)
	}
	_, stderr, code = c.run("receive-message", "--queue-url", url, "--max-number-of-messages", "11")
	if code != 254 || !strings.Contains(stderr, "InvalidParameterValue") {
		t.Fatalf("receive-message --max-number-of-messages 11: exit %d, stderr %q; want 254 and InvalidParameterValue", code, stderr)
	}

	c.ok(nil, "delete-queue", "--queue-url", url)
	if _, _, code := c.run("get-queue-url", "--queue-name", name); code != 254 {
		t.Fatalf("get-queue-url after delete-queue: exit %d, want 254", code)
	}
}

func TestQueryProtocolAWSCLIFifo(t *testing.T) {
	t.Parallel()
	takeCPUSlot(t)
	h := newHarness(t, sqliteBackend())
	c := newCLI(t, h)
	var created struct{ QueueUrl string }
	c.ok(&created, "create-queue", "--queue-name", h.FifoName("clififo"), "--attributes", "FifoQueue=true,ContentBasedDeduplication=true")
	var a, b struct{ MessageId, SequenceNumber string }
	c.ok(&a, "send-message", "--queue-url", created.QueueUrl, "--message-body", "same", "--message-group-id", "g")
	c.ok(&b, "send-message", "--queue-url", created.QueueUrl, "--message-body", "same", "--message-group-id", "g")
	if a.SequenceNumber == "" || a != b {
		t.Fatalf("content-deduplicated sends returned %+v and %+v, want the same id and sequence number", a, b)
	}
	var tags struct{ Tags map[string]string }
	c.ok(nil, "tag-queue", "--queue-url", created.QueueUrl, "--tags", "team=core")
	c.ok(&tags, "list-queue-tags", "--queue-url", created.QueueUrl)
	if tags.Tags["team"] != "core" {
		t.Fatalf("list-queue-tags = %v", tags.Tags)
	}
	c.ok(nil, "purge-queue", "--queue-url", created.QueueUrl)
	_, stderr, code := c.run("purge-queue", "--queue-url", created.QueueUrl)
	if code != 254 || !strings.Contains(stderr, "PurgeQueueInProgress") {
		t.Fatalf("second purge-queue: exit %d, stderr %q", code, stderr)
	}
}

// boto3 flows: testdata/boto3_flow.py asserts the flows itself and exits non-zero on the
// first difference. Debian's boto3 (Query) is set up by scripts/test-env.sh; a newer boto3
// speaking JSON is used when the python3 on PATH has one, and skipped otherwise (it is
// extra evidence, not a service this project installs).
func TestBoto3(t *testing.T) {
	for _, py := range []struct {
		name, exe, protocol string
		required            bool
	}{
		{"debian-boto3-query", "/usr/bin/python3", "query", true},
		{"boto3-json", "python3", "json", false},
	} {
		t.Run(py.name, func(t *testing.T) {
			t.Parallel()
			takeCPUSlot(t)
			exe, err := exec.LookPath(py.exe)
			if err == nil {
				err = exec.Command(exe, "-c", "import boto3").Run()
			}
			if err != nil {
				if py.required {
					testenv.Unavailable(t, "boto3 for %s (Debian package python3-boto3): %v", py.exe, err)
				}
				t.Skipf("no boto3 for %s: %v", py.exe, err)
			}
			out, err := exec.Command(exe, "-c", "import boto3; print(boto3.client('sqs', region_name='us-east-1').meta.service_model.protocol)").Output()
			if got := strings.TrimSpace(string(out)); err != nil || got != py.protocol {
				if py.required {
					t.Fatalf("boto3 of %s speaks %q (%v), want %s", exe, got, err, py.protocol)
				}
				t.Skipf("the boto3 of %s speaks %q, not %s", exe, got, py.protocol)
			}
			h := newHarness(t, sqliteBackend())
			ctx, cancel := context.WithTimeout(h.Ctx, 2*time.Minute) // hang guard
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "testdata/boto3_flow.py", h.URL, h.prefix, py.protocol)
			cmd.Env = append(cleanAWSEnv(), "HOME="+t.TempDir(), "AWS_ACCESS_KEY_ID=AKIDCONFORMANCE",
				"AWS_SECRET_ACCESS_KEY=conformance-secret", "AWS_DEFAULT_REGION="+testRegion)
			combined, err := cmd.CombinedOutput()
			t.Logf("%s", combined)
			if err != nil {
				t.Fatalf("boto3 flow with %s: %v", exe, err)
			}
		})
	}
}
