package drivertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// BenchFairReceive runs two sub-benchmarks on a fresh driver from open each: receive and
// delete 10 messages at a time from a standard queue holding 10,000 messages, then send
// 10. "ungrouped" has no message groups; in "noisy-group" one group sends 90% of them and
// holds 300 in flight (noisy), and the rest are spread over 100 quiet groups. It measures
// what fair queues cost a receive.
func BenchFairReceive(b *testing.B, open func(b *testing.B) drivers.Driver) {
	for _, grouped := range []bool{false, true} {
		name := "ungrouped"
		if grouped {
			name = "noisy-group"
		}
		b.Run(name, func(b *testing.B) { benchFairReceive(b, open(b), grouped) })
	}
}

func benchFairReceive(b *testing.B, d drivers.Driver, grouped bool) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	const name = "fair"
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name,
		Attributes: StandardAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		b.Fatal(err)
	}
	entries := make([]drivers.SendEntry, 10)
	n := 0
	send := func() {
		for j := range entries {
			n++
			entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: fmt.Sprint("m", n), Body: "x"}
			if grouped {
				entries[j].MessageGroupID = "noisy"
				if n%10 == 0 {
					entries[j].MessageGroupID = fmt.Sprint("quiet-", n%1000)
				}
			}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: entries}); err != nil {
			b.Fatal(err)
		}
	}
	receive := func(vis int32) []drivers.Message {
		res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: vis})
		if err != nil || len(res.Messages) != 10 {
			b.Fatalf("receive: %d messages, %v", len(res.Messages), err)
		}
		return res.Messages
	}
	for range 1000 {
		send()
	}
	for range 30 { // 300 held in flight for the whole run, most of the noisy group
		receive(43200)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := receive(30)
		dels := make([]drivers.DeleteEntry, len(res))
		for j, m := range res {
			dels[j] = drivers.DeleteEntry{EntryID: fmt.Sprint(j), ReceiptHandle: m.ReceiptHandle}
		}
		if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: dels}); err != nil {
			b.Fatal(err)
		}
		send()
	}
}
