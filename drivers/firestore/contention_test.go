package firestore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/firestore"
)

// TestContentionTwoInstances runs 16 receivers, 8 on each of two driver instances (two
// gateways) sharing one storage, against one queue: every message is delivered exactly
// once (all receives share one Now and a long visibility timeout, so nothing can come
// back), none is lost, and the aborts Firestore answered are counted in Metrics.
// The FIFO variant spreads its messages over 20 groups, whose documents both instances
// write.
func TestContentionTwoInstances(t *testing.T) {
	t.Run("standard", func(t *testing.T) { contention(t, false, 200) })
	t.Run("fifo", func(t *testing.T) { contention(t, true, 200) })
}

func contention(t *testing.T, fifo bool, total int) {
	o := testOptions(t)
	a, b := openDriver(t, o), openDriver(t, o)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	attrs, name := drivertest.StandardAttributes(), "contended"
	if fifo {
		attrs, name = drivertest.FIFOAttributes(), "contended.fifo"
	}
	if _, err := a.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < total; i += 10 {
		var batch []drivers.SendEntry
		for j := i; j < i+10; j++ {
			e := drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: fmt.Sprintf("m-%d", j), Body: fmt.Sprint(j)}
			if fifo {
				e.MessageGroupID, e.MessageDeduplicationID = fmt.Sprint("g", j%20), fmt.Sprint(j)
			}
			batch = append(batch, e)
		}
		res, err := a.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: batch})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Entries {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
		errs = make(chan error, 16)
		// retryable counts calls answered KindAborted (contention outlasted the driver's
		// retries), which clients retry: allowed, and reported.
		retryable atomic.Int64
	)
	at := now.Add(time.Second)
	for w := range 16 {
		d := []*firestore.Driver{a, b}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for empty := 0; empty < 3; {
				res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: at, MaxMessages: 1 + w%4*3, VisibilityTimeout: 3600})
				if drivers.KindOf(err) == drivers.KindAborted {
					retryable.Add(1) // as an SDK retries ServiceUnavailable
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if len(res.Messages) == 0 {
					empty++ // others may hold the rest for a moment: look again
					continue
				}
				entries := make([]drivers.DeleteEntry, len(res.Messages))
				mu.Lock()
				for i, m := range res.Messages {
					seen[m.Body]++
					entries[i] = drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle}
				}
				mu.Unlock()
				del, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: at, Entries: entries})
				for drivers.KindOf(err) == drivers.KindAborted {
					retryable.Add(1)
					del, err = d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: at, Entries: entries})
				}
				if err != nil {
					errs <- err
					return
				}
				for _, r := range del.Entries {
					if r.Err != nil {
						errs <- r.Err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("receiver: %v", err)
	}
	// A last receive picks up anything the receivers gave up on: nothing may be left.
	for {
		res, err := a.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: at, MaxMessages: 10, VisibilityTimeout: 3600})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			break
		}
		for _, m := range res.Messages {
			seen[m.Body]++
		}
	}
	doubles := 0
	for _, n := range seen {
		if n > 1 {
			doubles++
		}
	}
	if doubles > 0 || len(seen) != total {
		t.Fatalf("%d distinct messages delivered of %d, %d more than once", len(seen), total, doubles)
	}
	s, err := a.QueueStats(ctx, drivers.QueueStatsRequest{Name: name, Now: at})
	if err != nil || s != (drivers.QueueStats{}) {
		t.Fatalf("counts after draining: %+v, %v", s, err)
	}
	t.Logf("calls answered KindAborted and retried by the receivers: %d", retryable.Load())
	for i, d := range []*firestore.Driver{a, b} {
		ms, _ := d.Metrics(ctx)
		for _, m := range ms {
			t.Logf("instance %d: %s = %v", i, m.Name, m.Value)
		}
	}
}
