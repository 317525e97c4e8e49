// Package clock gives the gateway an injectable source of time, so that behaviour that
// needs minutes of queue time (visibility, delay, retention, dedup windows, purge
// cooldown) is tested in milliseconds by advancing a fake clock.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is the time source the gateway and drivers read.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed on this clock. Stop on the
	// returned timer reports whether it prevented the call.
	AfterFunc(d time.Duration, f func()) Timer
	// AfterFuncAt calls f in its own goroutine once this clock reads t or later. Waiting
	// for an absolute time leaves no window in which the clock moves between reading Now
	// and arming a relative timer.
	AfterFuncAt(t time.Time, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// AfterFuncAt wraps time.AfterFunc with the time left until t.
func (Real) AfterFuncAt(t time.Time, f func()) Timer { return time.AfterFunc(time.Until(t), f) }

// Fake is a manually advanced clock for tests. Its zero value is not usable; use NewFake.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	seq     int
	pending []*fakeTimer
}

type fakeTimer struct {
	c     *Fake
	at    time.Time
	seq   int
	f     func()
	fired bool
}

// NewFake returns a fake clock that reads start until advanced.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for when the fake time reaches Now()+d. A non-positive d fires at once.
func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	return c.schedule(c.now.Add(d), f)
}

// AfterFuncAt schedules f for when the fake time reaches t; a t not after Now fires at once.
func (c *Fake) AfterFuncAt(t time.Time, f func()) Timer {
	c.mu.Lock()
	return c.schedule(t, f)
}

// schedule registers f for at; c.mu is held on entry and released on return.
func (c *Fake) schedule(at time.Time, f func()) Timer {
	c.seq++
	t := &fakeTimer{c: c, at: at, seq: c.seq, f: f}
	if !at.After(c.now) {
		t.fired = true
		c.mu.Unlock()
		go f()
		return t
	}
	c.pending = append(c.pending, t)
	c.mu.Unlock()
	return t
}

// Advance moves the fake time forward by d and fires, in time order, every timer that falls due.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, keep []*fakeTimer
	for _, t := range c.pending {
		if !t.at.After(c.now) {
			t.fired = true
			due = append(due, t)
		} else {
			keep = append(keep, t)
		}
	}
	c.pending = keep
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool {
		if due[i].at.Equal(due[j].at) {
			return due[i].seq < due[j].seq
		}
		return due[i].at.Before(due[j].at)
	})
	for _, t := range due {
		go t.f()
	}
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired {
		return false
	}
	for i, p := range t.c.pending {
		if p == t {
			t.c.pending = append(t.c.pending[:i], t.c.pending[i+1:]...)
			break
		}
	}
	t.fired = true
	return true
}
