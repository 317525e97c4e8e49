package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestConcurrentWritesCommitIndependently runs many writers at once on disk, some of
// them failing (missing queue, purge too soon): each gets its own outcome, and every
// acknowledged send is stored exactly once.
func TestConcurrentWritesCommitIndependently(t *testing.T) {
	ctx := context.Background()
	d := openT(t, t.TempDir())
	defer d.Close()
	now := time.Unix(1_800_000_000, 0)
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: drivertest.StandardAttributes()}}); err != nil {
		t.Fatal(err)
	}
	if err := d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: "q", Now: now}); err != nil {
		t.Fatal(err)
	}
	const writers, sends = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*sends*3)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range sends {
				id := fmt.Sprintf("w%d-%d", w, i)
				_, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now.Add(time.Second),
					Entries: []drivers.SendEntry{{EntryID: "e", MessageID: id, Body: id}}})
				if err != nil {
					errs <- fmt.Errorf("send %s: %w", id, err)
				}
				if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "missing", Now: now,
					Entries: []drivers.SendEntry{{EntryID: "e", MessageID: "x", Body: "x"}}}); drivers.KindOf(err) != drivers.KindNotFound {
					errs <- fmt.Errorf("send to a missing queue: %v, want NotFound", err)
				}
				if err := d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: "q", Now: now.Add(time.Second)}); drivers.KindOf(err) != drivers.KindPurgeInProgress {
					errs <- fmt.Errorf("purge within 60 s: %v, want PurgeInProgress", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: "q", Now: now.Add(time.Second)})
	if err != nil || s.Visible != writers*sends {
		t.Fatalf("stats %+v, %v; want %d visible", s, err, writers*sends)
	}
}
