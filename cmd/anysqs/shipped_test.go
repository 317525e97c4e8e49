package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testbed"
	"github.com/anysqs/anysqs/internal/testenv"
)

// TestServeShippedConfigs serves each backend's shipped configuration (configs/), on
// storage of its own, and talks to it as users do: aws-sdk-go-v2 (AWS JSON protocol) on
// a standard queue, then the AWS CLI (Query protocol) on a FIFO queue with content-based
// deduplication, sending to one group three times (the third a duplicate, which must
// echo the second) and receiving in order. /metrics names the backend.
func TestServeShippedConfigs(t *testing.T) {
	for _, b := range testbed.All {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			cli := testenv.AWSCLI(t)
			g, _ := testbed.Start(t, b.Name)
			ctx := context.Background()

			c := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(g.URL),
				Credentials: credentials.NewStaticCredentialsProvider("AKIDSERVE", "secret", "")})
			q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sdk-check")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("from the sdk")}); err != nil {
				t.Fatal(err)
			}
			got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 2})
			if err != nil || len(got.Messages) != 1 || aws.ToString(got.Messages[0].Body) != "from the sdk" {
				t.Fatalf("ReceiveMessage: %+v, %v", got, err)
			}
			if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: got.Messages[0].ReceiptHandle}); err != nil {
				t.Fatal(err)
			}

			// One attempt: a failed send must surface as the gateway answered it.
			cliRun := awsCLI(t, ctx, cli, g.URL, "AWS_MAX_ATTEMPTS=1")
			var created struct{ QueueUrl string }
			cliRun(&created, "create-queue", "--queue-name", "cli-check.fifo", "--attributes", "FifoQueue=true,ContentBasedDeduplication=true")
			type sent struct{ MessageId, SequenceNumber string }
			var s1, s2, s3 sent
			cliRun(&s1, "send-message", "--queue-url", created.QueueUrl, "--message-body", "first", "--message-group-id", "g")
			cliRun(&s2, "send-message", "--queue-url", created.QueueUrl, "--message-body", "second", "--message-group-id", "g")
			cliRun(&s3, "send-message", "--queue-url", created.QueueUrl, "--message-body", "second", "--message-group-id", "g")
			if s1.MessageId == "" || native(t, g.AdminURL, capabilities.FIFOSequenceNumber) &&
				(len(s1.SequenceNumber) != 20 || s2.SequenceNumber <= s1.SequenceNumber) {
				t.Fatalf("send-message answered %+v then %+v", s1, s2)
			}
			if s3 != s2 {
				t.Fatalf("a duplicate within the deduplication interval answered %+v, want the original %+v", s3, s2)
			}
			var bodies []string
			for len(bodies) < 2 {
				var recv struct {
					Messages []struct{ Body, ReceiptHandle string }
				}
				cliRun(&recv, "receive-message", "--queue-url", created.QueueUrl, "--wait-time-seconds", "2", "--max-number-of-messages", "10")
				if len(recv.Messages) == 0 {
					t.Fatalf("receive-message found nothing after %q", bodies)
				}
				for _, m := range recv.Messages {
					bodies = append(bodies, m.Body)
					cliRun(nil, "delete-message", "--queue-url", created.QueueUrl, "--receipt-handle", m.ReceiptHandle)
				}
			}
			if strings.Join(bodies, ",") != "first,second" {
				t.Fatalf("received %q, want first,second in order and once each", bodies)
			}
			attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(created.QueueUrl),
				AttributeNames: []types.QueueAttributeName{"All"}})
			if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "0" || attrs.Attributes["FifoQueue"] != "true" {
				t.Fatalf("GetQueueAttributes after the CLI's deletes: %v, %v", attrs, err)
			}

			resp, err := http.Get(g.AdminURL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			metrics, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := `anysqs_build_info{backend="` + b.Name + `"`; !strings.Contains(string(metrics), want) {
				t.Fatalf("/metrics lacks %s", want)
			}
		})
	}
}

// native says whether the gateway at admin declares capability id native.
func native(t *testing.T, admin string, id capabilities.ID) bool {
	t.Helper()
	resp, err := http.Get(admin + "/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d drivers.Description
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("GET /capabilities: %v", err)
	}
	for _, c := range d.Capabilities {
		if c.ID == id {
			return c.Level == capabilities.Native
		}
	}
	return false
}
