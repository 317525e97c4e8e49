package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// TestInFlightEstimate: far below the limit a receive asks the backend once a minute;
// from half the limit once a second; when this receive could reach the limit, every
// time. Deletes through this instance count at once.
func TestInFlightEstimate(t *testing.T) {
	f := newInFlight(100)
	ctx, now := context.Background(), time.Unix(0, 0)
	var counts int
	backend := int64(0) // the backend's in-flight count
	stats := func(context.Context) (drivers.QueueStats, error) {
		counts++
		return drivers.QueueStats{NotVisible: backend}, nil
	}
	take := func(want int) int {
		t.Helper()
		n, err := f.room(ctx, "q", want, now, stats)
		if err == errAtInFlightLimit {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		f.received("q", n)
		backend += int64(n)
		return n
	}
	take(10)
	if counts != 1 {
		t.Fatalf("first receive: %d counts, want 1", counts)
	}
	for range 3 {
		take(10) // 40 in flight: below half
	}
	if counts != 1 {
		t.Fatalf("below half the limit: %d counts, want still 1", counts)
	}
	now = now.Add(inFlightRecountFar)
	take(10) // 50
	if counts != 2 {
		t.Fatalf("after a minute: %d counts, want 2", counts)
	}
	backend += 30 // another instance received 30: 80 in flight, this one estimates 50
	take(10)      // estimate 50 is half: a second old at most, no count
	if counts != 2 {
		t.Fatalf("within a second at half the limit: %d counts, want 2", counts)
	}
	now = now.Add(inFlightRecountNear)
	if n := take(10); n != 10 || counts != 3 { // counts 90, takes 10
		t.Fatalf("a second later: took %d with %d counts, want 10 with 3", n, counts)
	}
	if n := take(10); n != 0 || counts != 4 { // 100: at the limit, counted
		t.Fatalf("at the limit: took %d with %d counts, want 0 with 4", n, counts)
	}
	if full := f.released("q", 2); !full {
		t.Fatal("released at the limit: want it reported full")
	}
	backend -= 2
	if n := take(10); n != 2 {
		t.Fatalf("after 2 deletes: took %d, want 2", n)
	}
	f.forget("q")
	backend = 0
	if n := take(10); n != 10 {
		t.Fatalf("after forget on an empty backend: took %d, want 10", n)
	}
	if n, err := newInFlight(-1).room(ctx, "q", 10, now, nil); n != 10 || err != nil {
		t.Fatalf("no limit: %d, %v", n, err)
	}
}
