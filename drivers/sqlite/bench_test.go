package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

// BenchmarkCycle measures one send, receive and delete of a batch, on disk (WAL,
// synchronous=FULL: each of the three calls waits for an fsync) and in memory.
func BenchmarkCycle(b *testing.B) {
	for _, mode := range []string{"file", "memory"} {
		for _, fifo := range []bool{false, true} {
			for _, batch := range []int{1, 10} {
				kind := "standard"
				if fifo {
					kind = "fifo"
				}
				b.Run(fmt.Sprintf("%s/%s/batch=%d", mode, kind, batch), func(b *testing.B) {
					benchCycle(b, mode, fifo, batch)
				})
			}
		}
	}
}

func benchCycle(b *testing.B, mode string, fifo bool, batch int) {
	ctx := context.Background()
	dir := sqlite.MemoryDataDir
	if mode == "file" {
		dir = b.TempDir()
	}
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	attrs, name := drivertest.StandardAttributes(), "bench"
	if fifo {
		attrs, name = drivertest.FIFOAttributes(), "bench.fifo"
	}
	now := time.Unix(1_800_000_000, 0)
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, CreatedAt: now, LastModified: now}}); err != nil {
		b.Fatal(err)
	}
	entries := make([]drivers.SendEntry, batch)
	dels := make([]drivers.DeleteEntry, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Millisecond)
		for j := range entries {
			id := fmt.Sprintf("m-%d-%d", i, j)
			entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: id, Body: "benchmark message body",
				MessageGroupID: fmt.Sprintf("g%d", j%3), MessageDeduplicationID: id}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: entries}); err != nil {
			b.Fatal(err)
		}
		res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: batch, VisibilityTimeout: 30})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Messages) != batch {
			b.Fatalf("received %d, want %d", len(res.Messages), batch)
		}
		for j, m := range res.Messages {
			dels[j] = drivers.DeleteEntry{EntryID: fmt.Sprint(j), ReceiptHandle: m.ReceiptHandle}
		}
		out, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: dels[:len(res.Messages)]})
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range out.Entries {
			if e.Err != nil {
				b.Fatal(e.Err)
			}
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkFIFOBacklog receives from a FIFO queue holding 10,000 messages in 20 groups
// while other receivers hold groups in flight: the group checks must not scan the backlog.
func BenchmarkFIFOBacklog(b *testing.B) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: sqlite.MemoryDataDir})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	now := time.Unix(1_800_000_000, 0)
	const name = "backlog.fifo"
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: drivertest.FIFOAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		b.Fatal(err)
	}
	n := 0
	sendBatch := func() {
		entries := make([]drivers.SendEntry, 10)
		for j := range entries {
			n++
			id := fmt.Sprint("m", n)
			entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: id, Body: "x", MessageGroupID: fmt.Sprint("g", n%20), MessageDeduplicationID: id}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: entries}); err != nil {
			b.Fatal(err)
		}
	}
	for range 1000 {
		sendBatch()
	}
	// Half the groups stay in flight for the whole benchmark.
	for range 10 {
		if _, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 1, VisibilityTimeout: 43200}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 30})
		if err != nil || len(res.Messages) == 0 {
			b.Fatalf("receive: %d messages, %v", len(res.Messages), err)
		}
		dels := make([]drivers.DeleteEntry, len(res.Messages))
		for j, m := range res.Messages {
			dels[j] = drivers.DeleteEntry{EntryID: fmt.Sprint(j), ReceiptHandle: m.ReceiptHandle}
		}
		if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: dels}); err != nil {
			b.Fatal(err)
		}
		sendBatch()
	}
}

// BenchmarkStandardBacklog cycles on a standard queue holding 100,000 messages, with
// QueueStats (a scan of the queue) measured separately.
func BenchmarkStandardBacklog(b *testing.B) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: sqlite.MemoryDataDir})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	now := time.Unix(1_800_000_000, 0)
	const name = "backlog"
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: drivertest.StandardAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		b.Fatal(err)
	}
	entries := make([]drivers.SendEntry, 10)
	n := 0
	send := func() {
		for j := range entries {
			n++
			entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: fmt.Sprint("m", n), Body: "x"}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: entries}); err != nil {
			b.Fatal(err)
		}
	}
	for range 10000 {
		send()
	}
	b.Run("cycle", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 30})
			if err != nil || len(res.Messages) != 10 {
				b.Fatalf("receive: %d messages, %v", len(res.Messages), err)
			}
			dels := make([]drivers.DeleteEntry, len(res.Messages))
			for j, m := range res.Messages {
				dels[j] = drivers.DeleteEntry{EntryID: fmt.Sprint(j), ReceiptHandle: m.ReceiptHandle}
			}
			if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: dels}); err != nil {
				b.Fatal(err)
			}
			send()
		}
	})
	b.Run("stats", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: name, Now: now}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParallelSend sends single messages from 32 goroutines on disk: concurrent
// writes share transactions (group commit), so throughput is not one fsync per send.
func BenchmarkParallelSend(b *testing.B) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	now := time.Unix(1_800_000_000, 0)
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: drivertest.StandardAttributes()}}); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now,
				Entries: []drivers.SendEntry{{EntryID: "e", MessageID: "m", Body: "x"}}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
}

// BenchmarkFIFODelayed receives from a FIFO queue whose 50,000 newest messages are still
// in their queue delay while 10 groups have visible messages.
func BenchmarkFIFODelayed(b *testing.B) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: sqlite.MemoryDataDir})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	now := time.Unix(1_800_000_000, 0)
	const name = "delayed.fifo"
	attrs := drivertest.FIFOAttributes()
	attrs.DelaySeconds = 900
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, CreatedAt: now, LastModified: now}}); err != nil {
		b.Fatal(err)
	}
	n := 0
	send := func(at time.Time, delay int32) {
		entries := make([]drivers.SendEntry, 10)
		for j := range entries {
			n++
			id := fmt.Sprint("m", n)
			entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: id, Body: "x", DelaySeconds: delay,
				MessageGroupID: fmt.Sprint("g", n%1000), MessageDeduplicationID: id}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: at, Entries: entries}); err != nil {
			b.Fatal(err)
		}
	}
	for range 100 {
		send(now.Add(-time.Hour), 0) // visible now
	}
	for range 5000 {
		send(now, 900)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 0})
		if err != nil || len(res.Messages) == 0 {
			b.Fatalf("receive: %d messages, %v", len(res.Messages), err)
		}
	}
}

// BenchmarkFairReceive: what fair queues cost a receive (drivertest.BenchFairReceive),
// in memory.
func BenchmarkFairReceive(b *testing.B) {
	drivertest.BenchFairReceive(b, func(b *testing.B) drivers.Driver {
		d, err := sqlite.Open(context.Background(), sqlite.Options{DataDir: sqlite.MemoryDataDir})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { d.Close() })
		return d
	})
}
