package drivertest

import (
	"fmt"
	"sync"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

var concurrencyCases = []testCase{
	{Caps: one(capabilities.QueueStandard), Name: "concurrent-receivers-exactly-once", Run: func(e *env) {
		q := e.standard("q")
		const total = 60
		for i := 0; i < total; i += 10 {
			var batch []drivers.SendEntry
			for j := i; j < i+10; j++ {
				batch = append(batch, msg(fmt.Sprintf("m%d", j)))
			}
			e.send(q, 0, batch...)
		}
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
			errs = make(chan error, 8)
		)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					// Every receiver uses the same Now and a long timeout: nothing can come back,
					// so a message seen twice means two receives claimed it.
					res, err := e.d.ReceiveMessages(e.ctx, drivers.ReceiveMessagesRequest{Name: q, Now: e.at(time.Second),
						MaxMessages: 1 + w%3*4, VisibilityTimeout: 300})
					if err != nil {
						errs <- err
						return
					}
					if len(res.Messages) == 0 {
						return
					}
					handles := make([]drivers.DeleteEntry, len(res.Messages))
					mu.Lock()
					for i, m := range res.Messages {
						seen[m.Body]++
						handles[i] = drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle}
					}
					mu.Unlock()
					del, err := e.d.DeleteMessages(e.ctx, drivers.DeleteMessagesRequest{Name: q, Now: e.at(2 * time.Second), Entries: handles})
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
			e.t.Fatalf("worker: %v", err)
		}
		if len(seen) != total {
			e.t.Fatalf("received %d distinct messages, want %d", len(seen), total)
		}
		for body, n := range seen {
			if n != 1 {
				e.t.Fatalf("message %s received %d times", body, n)
			}
		}
		// At the deletes' time: a message claimed but not deleted would count as in flight.
		e.expectStats(q, 3*time.Second, drivers.QueueStats{})
	}},
	{Caps: one(capabilities.FIFOOrdering), Name: "concurrent-receivers-keep-group-order", Run: func(e *env) {
		q := e.fifo("q")
		const groups, perGroup = 4, 10
		for i := range perGroup {
			var batch []drivers.SendEntry
			for g := range groups {
				batch = append(batch, fifoMsg(fmt.Sprintf("g%d", g), fmt.Sprintf("g%d-%02d", g, i)))
			}
			e.send(q, 0, batch...)
		}
		var (
			mu    sync.Mutex
			order = map[string][]string{}
			wg    sync.WaitGroup
			errs  = make(chan error, 4)
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for idle := 0; idle < 3; {
					res, err := e.d.ReceiveMessages(e.ctx, drivers.ReceiveMessagesRequest{Name: q, Now: e.at(time.Second), MaxMessages: 3, VisibilityTimeout: 300})
					if err != nil {
						errs <- err
						return
					}
					if len(res.Messages) == 0 {
						idle++ // another worker may still hold a group; look again a few times
						continue
					}
					idle = 0
					handles := make([]drivers.DeleteEntry, len(res.Messages))
					mu.Lock()
					for i, m := range res.Messages {
						order[m.MessageGroupID] = append(order[m.MessageGroupID], m.Body)
						handles[i] = drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle}
					}
					mu.Unlock()
					if _, err := e.d.DeleteMessages(e.ctx, drivers.DeleteMessagesRequest{Name: q, Now: e.at(2 * time.Second), Entries: handles}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			e.t.Fatalf("worker: %v", err)
		}
		// Drain whatever the workers left when they gave up, then check each group's order.
		for {
			res := e.receive(q, 3*time.Second, 10, 300)
			if len(res.Messages) == 0 {
				break
			}
			for _, m := range res.Messages {
				order[m.MessageGroupID] = append(order[m.MessageGroupID], m.Body)
				e.mustDelete(q, 3*time.Second, m.ReceiptHandle)
			}
		}
		for g := range groups {
			got := order[fmt.Sprintf("g%d", g)]
			if len(got) != perGroup {
				e.t.Fatalf("group g%d: %d messages, want %d", g, len(got), perGroup)
			}
			for i, b := range got {
				if want := fmt.Sprintf("g%d-%02d", g, i); b != want {
					e.t.Fatalf("group g%d out of order: %v", g, got)
				}
			}
		}
	}},
}
