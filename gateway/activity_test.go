package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// notifying is a driver with cross-instance notifications fed from a channel.
type notifying struct {
	drivers.Driver
	activity chan []string
}

func (d notifying) AwaitActivity(ctx context.Context, _ drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	select {
	case qs := <-d.activity:
		return drivers.AwaitActivityResult{Queues: qs}, nil
	case <-ctx.Done():
		return drivers.AwaitActivityResult{}, ctx.Err()
	}
}

// Describe declares shared storage with notifications for every queue.
func (d notifying) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.SharedStorage, desc.Activity = true, drivers.ActivityNotify
	return desc, err
}

// TestLongPollWokenByOtherInstance: a message written by "another gateway" (straight into
// the driver, so this gateway's waiters are not told) reaches a parked long poll when the
// driver reports activity on its queue.
func TestLongPollWokenByOtherInstance(t *testing.T) {
	ctx := context.Background()
	var d notifying
	e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver {
		d = notifying{Driver: inner, activity: make(chan []string)}
		return d
	})
	clk := e.clock

	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	got := e.receiveAsync(`{"QueueUrl":"/000000000000/lp","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	_, err := d.Driver.SendMessages(ctx, drivers.SendMessagesRequest{Name: "lp", Now: clk.Now(),
		Entries: []drivers.SendEntry{{MessageID: "m-1", Body: "from elsewhere"}}})
	if err != nil {
		t.Fatal(err)
	}
	d.activity <- []string{"lp"}
	r := awaitEvent(t, got, "the long poll's response")
	if r.status != 200 || !strings.Contains(r.body, "from elsewhere") {
		t.Fatalf("long poll returned %d %s", r.status, r.body)
	}
}

// watching is a driver that reports activity only for watched queues. Its WatchActivity
// can run a hook: a write by another instance that commits just before the watch.
type watching struct {
	notifying
	watches chan drivers.WatchActivityRequest
	before  func()
}

// Describe declares notifications for watched queues only.
func (d watching) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.notifying.Describe(ctx)
	desc.Activity = drivers.ActivityWatch
	return desc, err
}

func (d watching) WatchActivity(_ context.Context, req drivers.WatchActivityRequest) error {
	if d.before != nil {
		d.before()
	}
	d.watches <- req
	return nil
}

// TestLongPollWatchesBeforeWaiting: before its first wait a long poll takes a watch that
// covers its deadline, then receives once more, so another instance's send that
// committed before the watch (and so notified nobody) is returned without waiting.
// Back-to-back polls reuse the watch.
func TestLongPollWatchesBeforeWaiting(t *testing.T) {
	ctx := context.Background()
	var d watching
	var clk *clock.Fake
	e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver {
		d = watching{notifying: notifying{Driver: inner, activity: make(chan []string)},
			watches: make(chan drivers.WatchActivityRequest, 10)}
		d.before = func() {
			if _, err := inner.SendMessages(ctx, drivers.SendMessagesRequest{Name: "lp", Now: clk.Now(),
				Entries: []drivers.SendEntry{{MessageID: "m-1", Body: "just before the watch"}}}); err != nil {
				t.Error(err)
			}
		}
		return d
	})
	clk = e.clock

	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	_, _, body := e.jsonCall("ReceiveMessage", `{"QueueUrl":"/000000000000/lp","WaitTimeSeconds":20}`)
	if !strings.Contains(body, "just before the watch") {
		t.Fatalf("long poll returned %s", body)
	}
	if w := awaitEvent(t, d.watches, "WatchActivity on lp"); w.Name != "lp" || w.Until.Before(start.Add(20*time.Second)) {
		t.Fatalf("watch %+v does not cover the poll", w)
	}
	select {
	case q := <-e.waits:
		t.Fatalf("the poll waited on %s although a message was there after the watch", q)
	default:
	}

	// The next poll is covered by the watch: it waits without taking another, and a
	// reported send wakes it.
	got := e.receiveAsync(`{"QueueUrl":"/000000000000/lp","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	if _, err := d.Driver.SendMessages(ctx, drivers.SendMessagesRequest{Name: "lp", Now: clk.Now(),
		Entries: []drivers.SendEntry{{MessageID: "m-2", Body: "from elsewhere"}}}); err != nil {
		t.Fatal(err)
	}
	d.activity <- []string{"lp"}
	if r := awaitEvent(t, got, "the long poll's response"); r.status != 200 || !strings.Contains(r.body, "from elsewhere") {
		t.Fatalf("long poll returned %d %s", r.status, r.body)
	}
	select {
	case w := <-d.watches:
		t.Fatalf("second poll took another watch %+v", w)
	default:
	}
}

// TestWatchedQueuesArePruned: the gateway forgets watches that have lapsed once it
// remembers many, so long polls on ever new queues do not grow it without bound, and
// keeps those still running.
func TestWatchedQueuesArePruned(t *testing.T) {
	const watchLasts = 20*time.Second + time.Minute + time.Second // the poll, the slack, and then some
	var d watching
	e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver {
		d = watching{notifying: notifying{Driver: inner, activity: make(chan []string)},
			watches: make(chan drivers.WatchActivityRequest, 1)}
		go func() {
			for range d.watches {
			}
		}()
		t.Cleanup(func() { close(d.watches) })
		return d
	})
	// Polls on 5,000 queues, 100 at a time, each batch lapsed before the next.
	const n, batch = 5000, 100
	for i := range n {
		if i > 0 && i%batch == 0 {
			e.clock.Advance(watchLasts)
		}
		took, err := gateway.Watch(e.gw, fmt.Sprintf("q-%d", i), e.clock.Now().Add(20*time.Second))
		if err != nil || !took {
			t.Fatalf("watch %d: took %v, %v", i, took, err)
		}
		if got := gateway.Watched(e.gw); got > 1024 {
			t.Fatalf("after %d watches the gateway remembers %d, although at most %d run", i+1, got, batch)
		}
	}
	if took, err := gateway.Watch(e.gw, fmt.Sprintf("q-%d", n-1), e.clock.Now().Add(20*time.Second)); err != nil || took {
		t.Fatalf("a live watch was forgotten: took another (%v, %v)", took, err)
	}
}

// polled is a driver of shared storage with no notification at all (ActivityPoll).
type polled struct {
	drivers.Driver
	interval time.Duration
}

func (d polled) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.SharedStorage, desc.Activity, desc.PollInterval = true, drivers.ActivityPoll, d.interval
	for i, c := range desc.Capabilities {
		if c.ID == capabilities.LongPolling {
			desc.Capabilities[i] = capabilities.Declaration{ID: c.ID, Level: capabilities.Degraded,
				Limits: map[string]string{"mode": "polled", "max_overrun_ms": fmt.Sprint(d.interval.Milliseconds())},
				Note:   "waiting receives re-check the store"}
		}
	}
	return desc, err
}

// TestLongPollRechecksWithoutNotifications: a message written by another instance (into
// the driver directly) reaches a parked long poll once the gateway re-checks, which it
// does within the declared poll interval of gateway clock time.
func TestLongPollRechecksWithoutNotifications(t *testing.T) {
	ctx := context.Background()
	var d polled
	e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver {
		d = polled{Driver: inner, interval: 2 * time.Second}
		return d
	})
	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	got := e.receiveAsync(`{"QueueUrl":"/000000000000/lp","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	if _, err := d.Driver.SendMessages(ctx, drivers.SendMessagesRequest{Name: "lp", Now: e.clock.Now(),
		Entries: []drivers.SendEntry{{MessageID: "m-1", Body: "from elsewhere"}}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(d.interval) // the worst case; the first re-check is due sooner
	r := awaitEvent(t, got, "the long poll's response")
	if r.status != 200 || !strings.Contains(r.body, "from elsewhere") {
		t.Fatalf("long poll returned %d %s", r.status, r.body)
	}
}

// TestPollActivityMustDeclareOverrun: a driver that only polls but declares native long
// polling does not start: its waits can overrun by the poll interval.
func TestPollActivityMustDeclareOverrun(t *testing.T) {
	d := struct{ drivers.Driver }{memDriver(t)}
	_, err := gateway.New(context.Background(), gateway.Config{Driver: pollNoOverrun{d}})
	if err == nil || !strings.Contains(err.Error(), "max_overrun_ms") {
		t.Fatalf("New: %v, want a description error naming max_overrun_ms", err)
	}
}

type pollNoOverrun struct{ drivers.Driver }

func (d pollNoOverrun) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.SharedStorage, desc.Activity = true, drivers.ActivityPoll
	return desc, err
}

// blocking is a driver whose receive waits in the backend (BlockingReceive); it reports
// the wait each receive was given.
type blocking struct {
	drivers.Driver
	waits chan time.Duration
}

func (d blocking) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.BlockingReceive = true
	return desc, err
}

func (d blocking) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	d.waits <- req.WaitTime
	return d.Driver.ReceiveMessages(ctx, req)
}

// TestBlockingReceiveGetsTheWait: a long poll hands a BlockingReceive driver the time
// left to wait; a short poll hands it none.
func TestBlockingReceiveGetsTheWait(t *testing.T) {
	d := blocking{waits: make(chan time.Duration, 10)}
	e := newEnvOn(t, func(inner drivers.Driver) drivers.Driver {
		d.Driver = inner
		return d
	})
	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	e.mustJSON("ReceiveMessage", `{"QueueUrl":"/000000000000/lp"}`)
	if w := awaitEvent(t, d.waits, "the short poll's ReceiveMessages"); w != 0 {
		t.Fatalf("short poll: WaitTime %v, want 0", w)
	}
	got := e.receiveAsync(`{"QueueUrl":"/000000000000/lp","WaitTimeSeconds":20}`)
	if w := awaitEvent(t, d.waits, "the long poll's ReceiveMessages"); w != 20*time.Second {
		t.Fatalf("long poll: WaitTime %v, want the whole 20s", w)
	}
	e.awaitWait("lp")
	e.clock.Advance(20 * time.Second)
	if r := awaitEvent(t, got, "the long poll's response"); r.status != 200 {
		t.Fatalf("long poll: %d %s", r.status, r.body)
	}
}
