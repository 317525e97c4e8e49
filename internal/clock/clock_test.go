package clock

import (
	"testing"
	"time"
)

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
	got := map[int]bool{<-fired: true, <-fired: true}
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
	<-done
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
	<-fired // at start+5s exactly, not 2 s later
	past := make(chan struct{})
	c.AfterFuncAt(start, func() { close(past) })
	<-past
}
