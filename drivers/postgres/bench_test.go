package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// BenchmarkCycle compares send+receive+delete cycles through the driver with the same
// cycle written directly in SQL (pgmq style: INSERT; UPDATE ... FOR UPDATE SKIP LOCKED
// RETURNING; DELETE) on the same database, 16 concurrent workers, batches of 1 and 10.
// Both run in the same benchmark, in alternating rounds, so that their ratio is measured
// under the same conditions:
//
//	go test ./drivers/postgres -run '^$' -bench Cycle -benchtime 20000x
//
// Metrics: raw_msgs/s, driver_msgs/s and driver/raw (the ratio).
func BenchmarkCycle(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			dsn := newDatabase(b)
			d := openDriver(b, dsn)
			createQueue(b, d, "bench", stdAttrs())
			pool, err := pgxpool.New(context.Background(), dsn+"&pool_max_conns=16")
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			if _, err := pool.Exec(context.Background(), rawSchema); err != nil {
				b.Fatal(err)
			}
			msgs := b.N * batch
			b.ResetTimer()
			// Alternate short rounds so that both sides see the same background load.
			var raw, drv time.Duration
			for round := 0; round < benchRounds; round++ {
				n := b.N / benchRounds
				if round == 0 {
					n += b.N % benchRounds
				}
				raw += runWorkers(b, n, func(ctx context.Context) error { return rawCycle(ctx, pool, batch) })
				drv += runWorkers(b, n, func(ctx context.Context) error { return driverCycle(ctx, d, batch) })
			}
			b.StopTimer()
			rawRate, drvRate := float64(msgs)/raw.Seconds(), float64(msgs)/drv.Seconds()
			b.ReportMetric(rawRate, "raw_msgs/s")
			b.ReportMetric(drvRate, "driver_msgs/s")
			b.ReportMetric(drvRate/rawRate, "driver/raw")
		})
	}
}

const (
	benchWorkers = 16
	benchRounds  = 10
)

// runWorkers runs n cycles on benchWorkers goroutines and returns the elapsed time.
func runWorkers(b testing.TB, n int, cycle func(context.Context) error) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for w := 0; w < benchWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := cycle(context.Background()); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

var benchSeq atomic.Int64

func driverCycle(ctx context.Context, d drivers.Driver, batch int) error {
	now := time.Now()
	entries := make([]drivers.SendEntry, batch)
	for i := range entries {
		n := benchSeq.Add(1)
		entries[i] = drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: fmt.Sprintf("bench-%d", n), Body: "payload of a benchmark message"}
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "bench", Now: now, Entries: entries}); err != nil {
		return err
	}
	r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "bench", Now: now, MaxMessages: batch, VisibilityTimeout: 30})
	if err != nil {
		return err
	}
	if len(r.Messages) == 0 {
		return nil
	}
	del := drivers.DeleteMessagesRequest{Name: "bench", Now: now}
	for i, m := range r.Messages {
		del.Entries = append(del.Entries, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
	}
	_, err = d.DeleteMessages(ctx, del)
	return err
}

const rawSchema = `CREATE TABLE raw_q (id bigserial PRIMARY KEY, vt timestamptz NOT NULL DEFAULT now(),
	read_ct int NOT NULL DEFAULT 0, enqueued_at timestamptz NOT NULL DEFAULT now(), message text NOT NULL)
	WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000,
		autovacuum_vacuum_cost_delay = 0, vacuum_truncate = false);
CREATE INDEX raw_q_vt ON raw_q (vt)`

func rawCycle(ctx context.Context, pool *pgxpool.Pool, batch int) error {
	bodies := make([]string, batch)
	for i := range bodies {
		bodies[i] = "payload of a benchmark message"
	}
	if _, err := pool.Exec(ctx, `INSERT INTO raw_q (message) SELECT unnest($1::text[])`, bodies); err != nil {
		return err
	}
	rows, err := pool.Query(ctx, `UPDATE raw_q SET vt = now() + interval '30 seconds', read_ct = read_ct + 1
		WHERE id IN (SELECT id FROM raw_q WHERE vt <= now() ORDER BY vt LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING id, message, read_ct, enqueued_at, vt`, batch)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int64, error) {
		var id int64
		var msg string
		var ct int32
		var enq, vt time.Time
		err := r.Scan(&id, &msg, &ct, &enq, &vt)
		return id, err
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	_, err = pool.Exec(ctx, `DELETE FROM raw_q WHERE id = ANY($1)`, ids)
	return err
}

// BenchmarkCycleFIFO runs the driver's cycle on a FIFO queue with 1,000 message groups
// (16 workers; sends of 10 spread over 10 groups), reporting msgs/s.
func BenchmarkCycleFIFO(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			d := newDriver(b)
			createQueue(b, d, "bench.fifo", fifoAttrs())
			b.ResetTimer()
			elapsed := runWorkers(b, b.N, func(ctx context.Context) error { return fifoCycle(ctx, d, batch) })
			b.StopTimer()
			b.ReportMetric(float64(b.N*batch)/elapsed.Seconds(), "driver_msgs/s")
		})
	}
}

func fifoCycle(ctx context.Context, d drivers.Driver, batch int) error {
	now := time.Now()
	entries := make([]drivers.SendEntry, batch)
	for i := range entries {
		n := benchSeq.Add(1)
		entries[i] = drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: fmt.Sprintf("bench-%d", n),
			Body: "payload of a benchmark message", MessageGroupID: fmt.Sprintf("g%d", n%1000),
			MessageDeduplicationID: fmt.Sprintf("d%d", n)}
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "bench.fifo", Now: now, Entries: entries}); err != nil {
		return err
	}
	r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "bench.fifo", Now: now, MaxMessages: batch, VisibilityTimeout: 30})
	if err != nil || len(r.Messages) == 0 {
		return err
	}
	del := drivers.DeleteMessagesRequest{Name: "bench.fifo", Now: now}
	for i, m := range r.Messages {
		del.Entries = append(del.Entries, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
	}
	res, err := d.DeleteMessages(ctx, del)
	if err != nil {
		return err
	}
	for _, e := range res.Entries {
		if e.Err != nil {
			return e.Err
		}
	}
	return nil
}

// BenchmarkFIFODeepBacklog times FIFO claims against a deep backlog: 20,000 messages
// queued in 50 groups, half of the groups held in flight by earlier receives. Each
// iteration receives up to 10 messages and deletes them (the delete is not timed);
// the metric is the median time of one receive.
//
//	go test ./drivers/postgres -run '^$' -bench FIFODeepBacklog -benchtime 200x
func BenchmarkFIFODeepBacklog(b *testing.B) {
	const queued, groups = 20000, 50
	d := newDriver(b)
	createQueue(b, d, "deep.fifo", fifoAttrs())
	ctx := context.Background()
	now := time.Now()
	for i := 0; i < queued; i += 10 {
		entries := make([]drivers.SendEntry, 10)
		for j := range entries {
			n := i + j
			entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: fmt.Sprintf("m%d", n), Body: "payload",
				MessageGroupID: fmt.Sprintf("g%d", n%groups), MessageDeduplicationID: fmt.Sprintf("d%d", n)}
		}
		if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "deep.fifo", Now: now, Entries: entries}); err != nil {
			b.Fatal(err)
		}
	}
	// Hold half of the groups in flight for the whole run.
	for held := map[string]bool{}; len(held) < groups/2; {
		r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "deep.fifo", Now: now, MaxMessages: 1, VisibilityTimeout: 3600})
		if err != nil || len(r.Messages) == 0 {
			b.Fatal("holding groups:", err)
		}
		held[r.Messages[0].MessageGroupID] = true
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "deep.fifo", Now: now, MaxMessages: 10, VisibilityTimeout: 30})
		times = append(times, time.Since(start))
		if err != nil || len(r.Messages) == 0 {
			b.Fatal("receive:", err)
		}
		del := drivers.DeleteMessagesRequest{Name: "deep.fifo", Now: now}
		for k, m := range r.Messages {
			del.Entries = append(del.Entries, drivers.DeleteEntry{EntryID: fmt.Sprint(k), ReceiptHandle: m.ReceiptHandle})
		}
		if _, err := d.DeleteMessages(ctx, del); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median_ms/claim")
}

// BenchmarkFairReceive: what fair queues cost a receive (drivertest.BenchFairReceive).
//
//	go test ./drivers/postgres -run '^$' -bench FairReceive -benchtime 2000x
func BenchmarkFairReceive(b *testing.B) {
	drivertest.BenchFairReceive(b, func(b *testing.B) drivers.Driver { return newDriver(b) })
}
