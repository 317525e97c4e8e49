package clock

import (
	"testing"
	"time"
)

// hangGuard bounds each wait for a timer callback. A due callback runs within
// microseconds; only a broken clock leaves one waiting this long, and the test then
// fails saying which callback never ran instead of hanging until go test's timeout.
const hangGuard = time.Minute

// await returns the next value on ch, failing the test if none comes within hangGuard.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
	}
	t.Fatalf("%s: not called within %v", what, hangGuard)
	var zero T
	return zero
}

func TestFakeFiresDueTimersInOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewFake(start)
	fired := make(chan int, 3)
	c.AfterFunc(3*time.Second, func() { fired <- 3 })
	c.AfterFunc(1*time.Second, func() { fired <- 1 })
	late := c.AfterFunc(10*time.Second, func() { fired <- 10 })

	c.Advance(500 * time.Millisecond)
	select {
	case v := <-fired:
		t.Fatalf("timer %d fired before it was due", v)
	default:
	}
	c.Advance(3 * time.Second)
	got := map[int]bool{await(t, fired, "first due timer"): true, await(t, fired, "second due timer"): true}
	if !got[1] || !got[3] {
		t.Fatalf("want timers 1 and 3 fired, got %v", got)
	}
	if !late.Stop() {
		t.Fatal("Stop on a pending timer must report true")
	}
	c.Advance(time.Hour)
	if late.Stop() {
		t.Fatal("Stop twice must report false")
	}
	if want := start.Add(time.Hour + 3500*time.Millisecond); !c.Now().Equal(want) {
		t.Fatalf("Now = %v, want %v", c.Now(), want)
	}
	select {
	case v := <-fired:
		t.Fatalf("stopped timer %d fired", v)
	default:
	}
}

func TestFakeNonPositiveDelayFiresAtOnce(t *testing.T) {
	c := NewFake(time.Unix(0, 0))
	done := make(chan struct{})
	tm := c.AfterFunc(0, func() { close(done) })
	await(t, done, "AfterFunc(0)")
	if tm.Stop() {
		t.Fatal("a fired timer cannot be stopped")
	}
}

func TestFakeAfterFuncAtIsAbsolute(t *testing.T) {
	start := time.Unix(1000, 0)
	c := NewFake(start)
	due := start.Add(5 * time.Second)
	c.Advance(2 * time.Second) // the clock moves between computing due and arming
	fired := make(chan struct{})
	c.AfterFuncAt(due, func() { close(fired) })
	c.Advance(3 * time.Second)
	await(t, fired, "AfterFuncAt(start+5s) with the clock at start+5s") // at start+5s exactly, not 2 s later
	past := make(chan struct{})
	c.AfterFuncAt(start, func() { close(past) })
	await(t, past, "AfterFuncAt of a past time")
}
