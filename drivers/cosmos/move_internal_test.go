package cosmos

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// TestMoveRetriedAfterCrash: a move that stopped after writing the copy (the gateway
// died before deleting the source) is retried by the next MoveMessages; the message
// then exists once in the destination, under its MessageId, and not in the source.
func TestMoveRetriedAfterCrash(t *testing.T) {
	ep := os.Getenv("ANYSQS_TEST_COSMOS_ENDPOINT")
	if ep == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("service not available here: ANYSQS_TEST_COSMOS_ENDPOINT is not set (CI=true: not skipping)")
		}
		t.Skip("service not available here: ANYSQS_TEST_COSMOS_ENDPOINT is not set")
	}
	ctx := context.Background()
	o := Options{Endpoint: ep, Key: os.Getenv("ANYSQS_TEST_COSMOS_KEY"), Database: "anysqs-test", Container: "mv" + newID(),
		CreateContainer: true, InsecureSkipVerify: true, QueryReads: os.Getenv("ANYSQS_TEST_COSMOS_QUERY_READS") == "1", BatchPartitionKeys: os.Getenv("ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS") == "1"}
	if o.Key == "" {
		o.Key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
	}
	d, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = DropContainer(context.Background(), o) })
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, fifo := range []bool{false, true} {
		attrs := drivers.QueueAttributes{MessageRetentionPeriod: 3600, VisibilityTimeout: 30}
		suffix := ""
		if fifo {
			attrs.FifoQueue, attrs.DeduplicationScope, suffix = true, "queue", ".fifo"
		}
		src, dst := "src"+newID()[:6]+suffix, "dst"+newID()[:6]+suffix
		for _, n := range []string{src, dst} {
			if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: n, Attributes: attrs, CreatedAt: now}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: src, Now: now, Entries: []drivers.SendEntry{
			{EntryID: "1", MessageID: "mid-1", Body: "b", MessageGroupID: "g", MessageDeduplicationID: "d"}}}); err != nil {
			t.Fatal(err)
		}
		sq, _, _ := d.loadQueue(ctx, "test", src)
		dq, _, _ := d.loadQueue(ctx, "test", dst)
		var m msgDoc
		if _, found, err := d.readItem(ctx, "test", sq.pk(), msgItemID("mid-1"), &m); err != nil || !found {
			t.Fatalf("read source message: %v %v", found, err)
		}
		// The first step of a move, then the "crash".
		n := m
		n.PK, n.ETag, n.Gen, n.Vis = dq.pk(), "", dq.Gen, ms(now)
		if err := d.writeCopy(ctx, "test", dq, n, now); err != nil {
			t.Fatal(err)
		}
		res, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: src, Destination: dst, Now: now, Limit: 10})
		if err != nil || res.Moved != 1 {
			t.Fatalf("retried MoveMessages: %+v, %v; want 1 moved", res, err)
		}
		for _, c := range []struct {
			q    queueDoc
			want int
		}{{sq, 0}, {dq, 1}} {
			q, want := c.q, c.want
			items, err := d.query(ctx, "test", q.pk(), "SELECT c.mid FROM c WHERE c.kind = 'msg'", nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != want {
				t.Fatalf("fifo=%v: %s holds %d messages after the retried move, want %d", fifo, q.Name, len(items), want)
			}
			if want == 1 {
				var v struct {
					MID string `json:"mid"`
				}
				_ = json.Unmarshal(items[0], &v)
				if v.MID != "mid-1" {
					t.Fatalf("the moved message is %q, want mid-1", v.MID)
				}
			}
		}
	}
}
