package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// TestServeFirestoreConfig runs `anysqs serve` with configs/firestore.yaml, as shipped
// but on a fresh emulator project and free ports, and talks to it with aws-sdk-go-v2
// (AWS JSON protocol) and the AWS CLI (Query protocol): queues, send, receive, delete.
func TestServeFirestoreConfig(t *testing.T) {
	emu := os.Getenv("FIRESTORE_EMULATOR_HOST")
	cli := awsCLIPath()
	missing := ""
	if c, err := net.DialTimeout("tcp", emu, 2*time.Second); emu == "" || err != nil {
		missing = "the Firestore emulator (scripts/services/firestore.sh start)"
	} else {
		c.Close()
	}
	if _, err := os.Stat(cli); err != nil {
		missing = "the AWS CLI at " + cli
	}
	requireService(t, missing)
	raw, err := os.ReadFile("../../configs/firestore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	project := "anysqs-serve-" + hex.EncodeToString(b)
	cfgText := regexp.MustCompile(`(?m)^listen: .*$`).ReplaceAllString(string(raw), "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0")
	cfgText = regexp.MustCompile(`(?m)^(\s+project:) \S+`).ReplaceAllString(cfgText, "$1 "+project)
	cfgText = regexp.MustCompile(`(?m)^(\s+emulator_host:) \S+`).ReplaceAllString(cfgText, "$1 "+emu)
	api, admin := serveT(t, t.TempDir(), cfgText)
	url := "http://" + api
	ctx := context.Background()

	// aws-sdk-go-v2, JSON protocol.
	c := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSERVE", "secret", "")})
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sdk-check")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("from the sdk")}); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 1})
	if err != nil || len(got.Messages) != 1 || aws.ToString(got.Messages[0].Body) != "from the sdk" {
		t.Fatalf("ReceiveMessage: %+v, %v", got, err)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: got.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}

	// The AWS CLI, Query protocol, on a FIFO queue.
	cliRun := awsCLI(t, ctx, cli, url)
	var created struct{ QueueUrl string }
	cliRun(&created, "create-queue", "--queue-name", "cli-check.fifo", "--attributes", "FifoQueue=true,ContentBasedDeduplication=true")
	var sent struct{ MessageId, SequenceNumber string }
	cliRun(&sent, "send-message", "--queue-url", created.QueueUrl, "--message-body", "from the cli", "--message-group-id", "g")
	if sent.MessageId == "" || len(sent.SequenceNumber) != 20 {
		t.Fatalf("send-message answered %+v", sent)
	}
	var recv struct {
		Messages []struct{ Body, ReceiptHandle string }
	}
	cliRun(&recv, "receive-message", "--queue-url", created.QueueUrl, "--wait-time-seconds", "1")
	if len(recv.Messages) != 1 || recv.Messages[0].Body != "from the cli" {
		t.Fatalf("receive-message: %+v", recv)
	}
	cliRun(nil, "delete-message", "--queue-url", created.QueueUrl, "--receipt-handle", recv.Messages[0].ReceiptHandle)
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(created.QueueUrl), AttributeNames: []types.QueueAttributeName{"All"}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "0" || attrs.Attributes["ApproximateNumberOfMessagesNotVisible"] != "0" || attrs.Attributes["FifoQueue"] != "true" {
		t.Fatalf("GetQueueAttributes after the CLI's delete: %v, %v", attrs, err)
	}

	// The driver's own series reach /metrics.
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"anysqs_firestore_transaction_aborts_total", `anysqs_build_info{backend="firestore"`} {
		if !strings.Contains(string(metrics), want) {
			t.Fatalf("/metrics lacks %s", want)
		}
	}
}
