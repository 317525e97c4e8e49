package cosmos_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestContention has receivers on four driver instances (four gateways) race for the
// same messages on the emulator that honours If-Match. With a visibility timeout far
// beyond the test, a message delivered twice could only come from two claims both
// succeeding: the count must be exactly one per message.
func TestContention(t *testing.T) {
	tg := emulatorTarget(t)
	for _, tc := range []struct {
		name  string
		attrs drivers.QueueAttributes
	}{
		{"standard", drivertest.StandardAttributes()},
		{"fifo", drivertest.FIFOAttributes()},
	} {
		t.Run(tc.name, func(t *testing.T) { contend(t, tg, tc.attrs) })
	}
}

func contend(t *testing.T, tg target, attrs drivers.QueueAttributes) {
	const instances, receiversPer, groups, perGroup = 4, 2, 4, 12
	ctx := context.Background()
	s := newStorage(t, tg)
	ds := make([]drivers.Driver, instances)
	for i := range ds {
		ds[i] = s.open(t)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	name := "contend-" + randomHex(4)
	if attrs.FifoQueue {
		name += ".fifo"
	}
	if _, err := ds[0].CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	total := groups * perGroup
	for g := 0; g < groups; g++ {
		var entries []drivers.SendEntry
		for i := 0; i < perGroup; i++ {
			e := drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: fmt.Sprintf("g%d-m%02d-%s", g, i, randomHex(3)), Body: fmt.Sprintf("%d/%02d", g, i)}
			if attrs.FifoQueue {
				e.MessageGroupID, e.MessageDeduplicationID = fmt.Sprint(g), e.Body
			}
			entries = append(entries, e)
			if len(entries) == 10 || i == perGroup-1 {
				res, err := ds[g%instances].SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: entries})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res.Entries {
					if r.Err != nil {
						t.Fatalf("send %s: %v", r.EntryID, r.Err)
					}
				}
				entries = nil
			}
		}
	}
	var (
		mu        sync.Mutex
		delivered = map[string]int{}
		order     = map[string][]string{} // FIFO: bodies per group in delivery order
		wg        sync.WaitGroup
		errs      = make(chan error, instances*receiversPer)
	)
	done := func() bool { mu.Lock(); defer mu.Unlock(); return len(delivered) == total }
	for i := 0; i < instances*receiversPer; i++ {
		d := ds[i%instances]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for empty := 0; !done() && empty < 200; {
				res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 3, VisibilityTimeout: 600})
				if err != nil {
					if drivers.KindOf(err) == drivers.KindAborted {
						continue
					}
					errs <- err
					return
				}
				if len(res.Messages) == 0 {
					empty++
					continue
				}
				mu.Lock()
				for _, m := range res.Messages {
					delivered[m.MessageID]++
					order[m.MessageGroupID] = append(order[m.MessageGroupID], m.Body)
				}
				mu.Unlock()
				// FIFO groups stay blocked until their messages are deleted.
				var del []drivers.DeleteEntry
				for j, m := range res.Messages {
					del = append(del, drivers.DeleteEntry{EntryID: fmt.Sprint(j), ReceiptHandle: m.ReceiptHandle})
				}
				if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: del}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("receiver: %v", err)
	}
	doubles := 0
	for id, n := range delivered {
		if n != 1 {
			doubles++
			t.Errorf("message %s delivered %d times", id, n)
		}
	}
	if len(delivered) != total {
		t.Fatalf("%d of %d messages delivered", len(delivered), total)
	}
	if attrs.FifoQueue {
		for g, bodies := range order {
			for i := 1; i < len(bodies); i++ {
				if bodies[i] <= bodies[i-1] {
					t.Fatalf("group %s delivered out of order: %v", g, bodies)
				}
			}
		}
	}
	t.Logf("%d messages, %d receivers on %d instances: %d double deliveries", total, instances*receiversPer, instances, doubles)
}
