package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

// TestClaimExclusive has two driver instances (two gateways) and 8 receivers claim
// from one standard queue with a long visibility timeout: every message must be
// claimed exactly once.
func TestClaimExclusive(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a, b := openDriver(t, dsn), openDriver(t, dsn)
	createQueue(t, a, "q", stdAttrs())
	const n = 1000
	for i := 0; i < n; i += 10 {
		var batch []drivers.SendEntry
		for j := i; j < i+10; j++ {
			batch = append(batch, drivers.SendEntry{Body: fmt.Sprint(j)})
		}
		send(t, a, "q", epoch, batch...)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		d := a
		if w%2 == 1 {
			d = b
		}
		// Receives of different sizes, merged by each driver (batcher.go), must each get
		// no more than they asked for.
		max := 3 + w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := d.ReceiveMessages(context.Background(), drivers.ReceiveMessagesRequest{Name: "q", Now: epoch,
					MaxMessages: max, VisibilityTimeout: 3600})
				if err != nil {
					errs <- err
					return
				}
				if len(r.Messages) > max {
					errs <- fmt.Errorf("a receive of %d got %d messages", max, len(r.Messages))
					return
				}
				if len(r.Messages) == 0 {
					return
				}
				mu.Lock()
				for _, m := range r.Messages {
					seen[m.Body]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("claimed %d distinct messages, want %d", len(seen), n)
	}
	for body, c := range seen {
		if c != 1 {
			t.Fatalf("message %s claimed %d times", body, c)
		}
	}
}

// TestFIFOConcurrentConsumers runs 8 consumers over two driver instances on a FIFO
// queue with 20 groups: each group's messages must be processed in order and never two
// of one group at the same time.
func TestFIFOConcurrentConsumers(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a, b := openDriver(t, dsn), openDriver(t, dsn)
	createQueue(t, a, "q.fifo", fifoAttrs())
	const groups, perGroup = 20, 15
	for i := 0; i < perGroup; i++ {
		var batch []drivers.SendEntry
		for g := 0; g < groups; g++ {
			batch = append(batch, drivers.SendEntry{Body: fmt.Sprintf("%d", i), MessageGroupID: fmt.Sprintf("g%d", g),
				MessageDeduplicationID: fmt.Sprintf("%d-%d", g, i)})
			if len(batch) == 10 {
				send(t, a, "q.fifo", epoch, batch...)
				batch = nil
			}
		}
		if len(batch) > 0 {
			send(t, a, "q.fifo", epoch, batch...)
		}
	}
	var mu sync.Mutex
	next := map[string]int{}  // group -> next expected index
	busy := map[string]bool{} // group -> a consumer holds messages of it
	var failures []string
	done := 0
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		d := a
		if w%2 == 1 {
			d = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for {
				mu.Lock()
				finished := done == groups*perGroup || len(failures) > 0
				mu.Unlock()
				if finished {
					return
				}
				r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q.fifo", Now: epoch,
					MaxMessages: 3, VisibilityTimeout: 3600})
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				mu.Lock()
				for _, m := range r.Messages {
					g := m.MessageGroupID
					if busy[g] {
						failures = append(failures, "group "+g+" delivered while in flight")
					}
					if m.Body != fmt.Sprint(next[g]) {
						failures = append(failures, fmt.Sprintf("group %s: got %s, want %d", g, m.Body, next[g]))
					}
					next[g]++
				}
				for _, m := range r.Messages {
					busy[m.MessageGroupID] = true
				}
				mu.Unlock()
				req := drivers.DeleteMessagesRequest{Name: "q.fifo", Now: epoch}
				for i, m := range r.Messages {
					req.Entries = append(req.Entries, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
				}
				// Mark groups free before deleting: a receive that follows the delete may
				// legitimately return the group's next message at once.
				mu.Lock()
				for _, m := range r.Messages {
					busy[m.MessageGroupID] = false
				}
				done += len(r.Messages)
				mu.Unlock()
				if len(req.Entries) > 0 {
					res, err := d.DeleteMessages(ctx, req)
					if err == nil {
						for _, e := range res.Entries {
							if e.Err != nil {
								err = e.Err
							}
						}
					}
					if err != nil {
						mu.Lock()
						failures = append(failures, err.Error())
						mu.Unlock()
						return
					}
				}
			}
		}()
	}
	waitDone := make(chan struct{})
	go func() { wg.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(2 * time.Minute): // a hang, not a timing assertion
		t.Fatal("consumers did not finish")
	}
	if len(failures) > 0 {
		t.Fatalf("%d failures, first: %s", len(failures), failures[0])
	}
	for g := 0; g < groups; g++ {
		if next[fmt.Sprintf("g%d", g)] != perGroup {
			t.Fatalf("group g%d: %d delivered, want %d", g, next[fmt.Sprintf("g%d", g)], perGroup)
		}
	}
}

// TestConcurrentFIFOSends: FIFO sends from many goroutines (merged into shared
// transactions by the driver) each get their own result. Every call with one
// deduplication id gets the same message and sequence number, only one of them as new;
// sequence numbers are unique and rise in each sender's order; each group delivers its
// messages in sequence order.
func TestConcurrentFIFOSends(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	createQueue(t, d, "q.fifo", fifoAttrs())
	const senders, each = 24, 15
	type sent struct {
		group, body string
		seq         string
	}
	var mu sync.Mutex
	var all []sent
	shared := map[string]int{} // message id:sequence of the shared dedup id -> calls that got it
	newShared := 0
	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			last := ""
			for i := 0; i < each; i++ {
				e := drivers.SendEntry{MessageID: fmt.Sprintf("m-%d-%d", s, i), Body: fmt.Sprintf("%d-%d", s, i),
					MessageGroupID: fmt.Sprintf("g%d", (s+i)%6), MessageDeduplicationID: fmt.Sprintf("d-%d-%d", s, i)}
				res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q.fifo", Now: epoch, Entries: []drivers.SendEntry{e}})
				if err != nil || res.Entries[0].Err != nil || res.Entries[0].Duplicate {
					t.Errorf("send %s: %v %+v", e.Body, err, res)
					return
				}
				seq := res.Entries[0].SequenceNumber
				if seq <= last { // 20-digit strings: order is numeric order
					t.Errorf("sender %d: sequence %s after %s", s, seq, last)
				}
				last = seq
				mu.Lock()
				all = append(all, sent{e.MessageGroupID, e.Body, seq})
				mu.Unlock()
			}
			res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q.fifo", Now: epoch, Entries: []drivers.SendEntry{{
				MessageID: fmt.Sprintf("shared-%d", s), Body: "shared", MessageGroupID: "gs", MessageDeduplicationID: "same"}}})
			if err != nil || res.Entries[0].Err != nil {
				t.Errorf("shared send: %v %+v", err, res)
				return
			}
			mu.Lock()
			shared[res.Entries[0].MessageID+":"+res.Entries[0].SequenceNumber]++
			if !res.Entries[0].Duplicate {
				newShared++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(shared) != 1 || newShared != 1 {
		t.Fatalf("the shared deduplication id gave %v, %d of them new; want one message for all %d calls", shared, newShared, senders)
	}
	seqs := map[string]bool{}
	bySeq := map[string]sent{}
	for _, m := range all {
		if seqs[m.seq] {
			t.Fatalf("sequence number %s given twice", m.seq)
		}
		seqs[m.seq] = true
		bySeq[m.body] = m
	}
	// Each group delivers in sequence order.
	lastSeq := map[string]string{}
	for got := 0; got < len(all)+1; {
		r := receive(t, d, "q.fifo", epoch, 10, 3600)
		if len(r.Messages) == 0 {
			t.Fatalf("nothing to receive after %d of %d", got, len(all)+1)
		}
		for _, m := range r.Messages {
			if m.SequenceNumber <= lastSeq[m.MessageGroupID] {
				t.Fatalf("group %s: %s delivered after %s", m.MessageGroupID, m.SequenceNumber, lastSeq[m.MessageGroupID])
			}
			if s, ok := bySeq[m.Body]; ok && s.seq != m.SequenceNumber {
				t.Fatalf("%s delivered with sequence %s, sent as %s", m.Body, m.SequenceNumber, s.seq)
			}
			lastSeq[m.MessageGroupID] = m.SequenceNumber
			del(t, d, "q.fifo", epoch, m.ReceiptHandle)
			got++
		}
	}
}

// TestFIFOLockOrderAnyCollation: on a database whose collation orders group ids unlike
// byte order (ICU en-US: "a" < "B"), sends and deletes that each touch the rows of groups
// "a" and "B" run concurrently without deadlocking: every statement locks group rows in
// one order.
func TestFIFOLockOrderAnyCollation(t *testing.T) {
	t.Parallel()
	requireServer(t)
	conn, err := pgx.Connect(context.Background(), adminDSN())
	if err != nil {
		t.Fatal(err)
	}
	var icu bool
	err = conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i')`).Scan(&icu)
	conn.Close(context.Background())
	if err != nil || !icu {
		t.Skipf("this PostgreSQL has no ICU collations (%v)", err)
	}
	d := openDriver(t, newDatabaseWith(t, "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"))
	createQueue(t, d, "q.fifo", fifoAttrs())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sends, deletes atomic.Int64
	// Enough of both have overlapped: stop.
	enough := func() {
		if sends.Load() >= 400 && deletes.Load() >= 100 {
			cancel()
		}
	}
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() { // sender: batches with both groups
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var entries []drivers.SendEntry
				for _, g := range []string{"a", "B"} {
					entries = append(entries, drivers.SendEntry{MessageID: fmt.Sprintf("%d-%d-%s", w, i, g), Body: g,
						MessageGroupID: g, MessageDeduplicationID: fmt.Sprintf("%d-%d-%s", w, i, g)})
				}
				res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q.fifo", Now: epoch, Entries: entries})
				if err != nil && ctx.Err() == nil {
					errs <- fmt.Errorf("send: %w", err)
					cancel()
					return
				}
				if err == nil && res.Entries[0].Err == nil {
					sends.Add(1)
					enough()
				}
			}
		}()
		go func() { // consumer: receives from both groups, deletes in one batch
			defer wg.Done()
			for ctx.Err() == nil {
				r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q.fifo", Now: epoch, MaxMessages: 10, VisibilityTimeout: 60})
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("receive: %w", err)
						cancel()
					}
					return
				}
				req := drivers.DeleteMessagesRequest{Name: "q.fifo", Now: epoch}
				for i, m := range r.Messages {
					req.Entries = append(req.Entries, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
				}
				if len(req.Entries) == 0 {
					continue
				}
				if _, err := d.DeleteMessages(ctx, req); err != nil && ctx.Err() == nil {
					errs <- fmt.Errorf("delete: %w", err)
					cancel()
					return
				}
				deletes.Add(1)
				enough()
			}
		}()
	}
	wg.Wait() // each goroutine returns at its first error or once enough() cancelled
	select {
	case err := <-errs:
		t.Fatalf("after %d sends and %d deletes: %v", sends.Load(), deletes.Load(), err)
	default:
	}
}
