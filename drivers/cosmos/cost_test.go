package cosmos_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestRequestCost runs each SQS operation once on a 1 KiB message and checks that its
// Cosmos requests and their RU charges (x-ms-request-charge, as the SDK reports it) show
// in the driver's metrics under the operation's name. It logs the table that
// docs/backends/cosmos.md quotes; on a real account (TestAccountRequestCost) the RU
// column is the account's actual charge.
func TestRequestCost(t *testing.T) { requestCost(t, emulatorTarget(t)) }

// TestAccountRequestCost is TestRequestCost on a real account; see TestAccountContract.
func TestAccountRequestCost(t *testing.T) { requestCost(t, accountTarget(t)) }

func requestCost(t *testing.T, tg target) {
	ctx := context.Background()
	d := newStorage(t, tg).open(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	body := strings.Repeat("x", 1024)
	step := func(op string, f func() error) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	for _, attrs := range []drivers.QueueAttributes{drivertest.StandardAttributes(), drivertest.FIFOAttributes()} {
		name := "cost-" + randomHex(3)
		if attrs.FifoQueue {
			name += ".fifo"
		}
		step("CreateQueue", func() error {
			_, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, CreatedAt: now, LastModified: now}})
			return err
		})
		before := metricValues(t, d)
		e := drivers.SendEntry{EntryID: "1", MessageID: randomHex(8), Body: body, MessageGroupID: "g", MessageDeduplicationID: randomHex(4)}
		step("SendMessages", func() error {
			_, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: []drivers.SendEntry{e}})
			return err
		})
		var handle string
		step("ReceiveMessages", func() error {
			res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 1, VisibilityTimeout: 30})
			if err == nil && len(res.Messages) != 1 {
				err = fmt.Errorf("%d messages", len(res.Messages))
			}
			if err == nil {
				handle = res.Messages[0].ReceiptHandle
			}
			return err
		})
		step("ChangeVisibility", func() error {
			_, err := d.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: name, Now: now,
				Entries: []drivers.ChangeVisibilityEntry{{EntryID: "1", ReceiptHandle: handle, VisibilityTimeout: 60}}})
			return err
		})
		step("DeleteMessages", func() error {
			_, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: []drivers.DeleteEntry{{EntryID: "1", ReceiptHandle: handle}}})
			return err
		})
		step("ReceiveMessages (empty)", func() error {
			_, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 1, VisibilityTimeout: 30})
			return err
		})
		step("QueueStats", func() error {
			_, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: name, Now: now})
			return err
		})
		after := metricValues(t, d)
		var ops []string
		for op := range after {
			if op != "open" && op != "CreateQueue" {
				ops = append(ops, op)
			}
		}
		sort.Strings(ops)
		kind := map[bool]string{false: "standard", true: "FIFO"}[attrs.FifoQueue]
		for _, op := range ops {
			req := after[op][0] - before[op][0]
			ru := after[op][1] - before[op][1]
			if req <= 0 || ru <= 0 {
				t.Fatalf("%s %s: %v requests, %v RU in the metrics; want both counted", kind, op, req, ru)
			}
			t.Logf("%-8s %-18s requests %3.0f  RU %7.2f", kind, op, req, ru)
		}
	}
}

// metricValues returns requests and RU per operation from the driver's metrics.
func metricValues(t *testing.T, d drivers.Driver) map[string][2]float64 {
	t.Helper()
	ms, err := d.Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, m := range ms {
		v := out[m.Labels[0].Value]
		switch m.Name {
		case "anysqs_cosmos_requests_total":
			v[0] = m.Value
		case "anysqs_cosmos_request_units_total":
			v[1] = m.Value
		}
		out[m.Labels[0].Value] = v
	}
	return out
}
