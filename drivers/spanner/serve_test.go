package spanner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/internal/testenv"
)

var listeningRE = regexp.MustCompile(`anysqs listening.* addr=(\S+)`)

// TestServeConfig builds anysqs, serves configs/spanner.yaml (on an instance and database
// of its own, which the driver creates on the emulator) and drives it with the AWS CLI
// (Query protocol) and aws-sdk-go-v2 (JSON protocol).
func TestServeConfig(t *testing.T) {
	o := newDatabase(t)
	o.Instance = "serve-" + o.Database[1:9] // a missing instance: the driver creates it too
	cfg, err := os.ReadFile("../../configs/spanner.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(cfg), "instance: anysqs ", "instance: "+o.Instance+" ", 1)
	text = strings.Replace(text, "database: anysqs ", "database: "+o.Database+" ", 1)
	if text == string(cfg) {
		t.Fatal("configs/spanner.yaml no longer has the instance and database lines this test rewrites")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "spanner.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "anysqs")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/anysqs/anysqs/cmd/anysqs").CombinedOutput(); err != nil {
		t.Fatalf("build anysqs: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--config", path)
	cmd.Env = append(os.Environ(), "ANYSQS_LISTEN=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	var logs []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs = append(logs, sc.Text())
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	url, ok := <-addr
	if !ok {
		t.Fatalf("anysqs exited before listening:\n%s", strings.Join(logs, "\n"))
	}
	endpoint := "http://" + url

	t.Run("aws-cli-query", func(t *testing.T) {
		aws := testenv.AWSCLI(t)
		run := func(v any, args ...string) {
			t.Helper()
			c := exec.Command(aws, append(append([]string{"sqs"}, args...), "--endpoint-url", endpoint, "--output", "json")...)
			c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "AWS_ACCESS_KEY_ID=AKIDSERVE", "AWS_SECRET_ACCESS_KEY=secret",
				"AWS_DEFAULT_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
			out, err := c.Output()
			if err != nil {
				t.Fatalf("aws sqs %s: %v %s", strings.Join(args, " "), err, out)
			}
			if v != nil {
				if err := json.Unmarshal(out, v); err != nil {
					t.Fatalf("aws sqs %s: %q: %v", strings.Join(args, " "), out, err)
				}
			}
		}
		var q struct{ QueueUrl string }
		run(&q, "create-queue", "--queue-name", "cli")
		run(nil, "send-message", "--queue-url", q.QueueUrl, "--message-body", "from the CLI")
		var r struct {
			Messages []struct{ Body, ReceiptHandle string }
		}
		run(&r, "receive-message", "--queue-url", q.QueueUrl, "--wait-time-seconds", "5")
		if len(r.Messages) != 1 || r.Messages[0].Body != "from the CLI" {
			t.Fatalf("received %+v, want the message sent", r.Messages)
		}
		run(nil, "delete-message", "--queue-url", q.QueueUrl, "--receipt-handle", r.Messages[0].ReceiptHandle)
		var f struct{ QueueUrl string }
		run(&f, "create-queue", "--queue-name", "cli.fifo", "--attributes", "FifoQueue=true,ContentBasedDeduplication=true")
		var s1, s2 struct{ MessageId, SequenceNumber string }
		run(&s1, "send-message", "--queue-url", f.QueueUrl, "--message-body", "once", "--message-group-id", "g")
		run(&s2, "send-message", "--queue-url", f.QueueUrl, "--message-body", "once", "--message-group-id", "g")
		if s1.MessageId == "" || s1.MessageId != s2.MessageId || s1.SequenceNumber != s2.SequenceNumber {
			t.Fatalf("a duplicate send answered %+v, the first %+v: want the same ids", s2, s1)
		}
	})

	t.Run("aws-sdk-go-v2-json", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
		defer cancel()
		c := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider("AKIDSERVE", "secret", "")})
		q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sdk")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("from the SDK")}); err != nil {
			t.Fatal(err)
		}
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) != 1 || aws.ToString(r.Messages[0].Body) != "from the SDK" {
			t.Fatalf("received %+v, want the message sent", r.Messages)
		}
		if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: r.Messages[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	})
}
