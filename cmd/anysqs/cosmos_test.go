package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers/cosmos"
	"github.com/anysqs/anysqs/internal/servetest"
)

// TestServeCosmosConfigFIFO runs `anysqs serve` with configs/cosmos.yaml as shipped, the
// emulator's endpoint and options given by ANYSQS_BACKEND_OPTIONS and its key by
// ANYSQS_COSMOS_KEY, as a user pointing the file at scripts/services/cosmos.sh's
// emulator would. Through the AWS CLI (Query protocol) it creates a FIFO queue with
// content-based deduplication and sends to one group three times (the first send
// creates the queue's sequence head, the later ones replace it, the third is a
// duplicate), then receives them in order: every FIFO send used to fail on
// @vercel/cosmosdb-server, which reads a batch's partition key per operation.
func TestServeCosmosConfigFIFO(t *testing.T) {
	endpoint := os.Getenv("ANYSQS_TEST_COSMOS_ENDPOINT")
	cli := awsCLIPath()
	missing := ""
	if endpoint == "" {
		missing = "the Cosmos DB emulator (ANYSQS_TEST_COSMOS_ENDPOINT; scripts/services/cosmos.sh start)"
	} else if _, err := os.Stat(cli); err != nil {
		missing = "the AWS CLI at " + cli
	}
	requireService(t, missing)
	raw, err := os.ReadFile("../../configs/cosmos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	o := cosmos.Options{Endpoint: endpoint, Key: servetest.CosmosEmulatorKey, Database: "anysqs-serve", Container: "s" + hex.EncodeToString(b),
		CreateContainer: true, InsecureSkipVerify: true, QueryReads: os.Getenv("ANYSQS_TEST_COSMOS_QUERY_READS") == "1",
		BatchPartitionKeys: os.Getenv("ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS") == "1"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cosmos.DropContainer(ctx, o); err != nil {
			t.Logf("drop container %s: %v", o.Container, err)
		}
	})
	opts := map[string]any{"endpoint": o.Endpoint, "database": o.Database, "container": o.Container,
		"create_container": true, "insecure_skip_verify": true, "query_reads": o.QueryReads}
	if o.BatchPartitionKeys {
		opts["batch_partition_keys"] = true
	}
	js, _ := json.Marshal(opts)
	t.Setenv("ANYSQS_BACKEND_OPTIONS", string(js))
	t.Setenv("ANYSQS_COSMOS_KEY", servetest.CosmosEmulatorKey)
	t.Setenv("ANYSQS_LISTEN", "127.0.0.1:0")
	t.Setenv("ANYSQS_ADMIN_LISTEN", "127.0.0.1:0")
	api, _ := serveT(t, t.TempDir(), string(raw))
	url := "http://" + api

	ctx := context.Background()
	// One attempt: a failed send must surface as the gateway answered it.
	cliRun := awsCLI(t, ctx, cli, url, "AWS_MAX_ATTEMPTS=1")
	var created struct{ QueueUrl string }
	cliRun(&created, "create-queue", "--queue-name", "orders.fifo", "--attributes", "FifoQueue=true,ContentBasedDeduplication=true")
	type sent struct{ MessageId, SequenceNumber string }
	var s1, s2, s3 sent
	cliRun(&s1, "send-message", "--queue-url", created.QueueUrl, "--message-body", "first", "--message-group-id", "g")
	cliRun(&s2, "send-message", "--queue-url", created.QueueUrl, "--message-body", "second", "--message-group-id", "g")
	cliRun(&s3, "send-message", "--queue-url", created.QueueUrl, "--message-body", "second", "--message-group-id", "g")
	if s1.MessageId == "" || len(s1.SequenceNumber) != 20 || s2.SequenceNumber <= s1.SequenceNumber {
		t.Fatalf("send-message answered %+v then %+v", s1, s2)
	}
	if s3 != s2 {
		t.Fatalf("a duplicate within the deduplication interval answered %+v, want the original %+v", s3, s2)
	}
	var got []string
	for len(got) < 2 {
		var recv struct {
			Messages []struct{ Body, ReceiptHandle string }
		}
		cliRun(&recv, "receive-message", "--queue-url", created.QueueUrl, "--wait-time-seconds", "2", "--max-number-of-messages", "10")
		if len(recv.Messages) == 0 {
			t.Fatalf("receive-message found nothing after %q", got)
		}
		for _, m := range recv.Messages {
			got = append(got, m.Body)
			cliRun(nil, "delete-message", "--queue-url", created.QueueUrl, "--receipt-handle", m.ReceiptHandle)
		}
	}
	if strings.Join(got, ",") != "first,second" {
		t.Fatalf("received %q, want first,second in order and once each", got)
	}
}
