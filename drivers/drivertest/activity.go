package drivertest

import (
	"slices"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// activityWait bounds how long the cross-instance case waits for a send to be reported.
const activityWait = 10 * time.Second

var activityCases = []testCase{
	{Caps: one(capabilities.LongPolling), Name: "activity-across-instances", Run: activityAcrossInstances,
		Degraded: asNative(activityAcrossInstances)},
}

// activityAcrossInstances checks what the description's Activity mode promises: with
// notify or watch, a send through instance B is reported by instance A's AwaitActivity
// (after A's WatchActivity, for watch); with local or poll, both methods answer
// KindUnsupported, since the gateway does not call them.
func activityAcrossInstances(e *env) {
	mode := e.description.Activity
	q := e.standard("q")
	if mode != drivers.ActivityNotify && mode != drivers.ActivityWatch {
		_, err := e.d.AwaitActivity(e.ctx, drivers.AwaitActivityRequest{Timeout: time.Millisecond})
		checkAbility(e, "AwaitActivity", false, err)
		checkAbility(e, "WatchActivity", false, e.d.WatchActivity(e.ctx, drivers.WatchActivityRequest{Name: q, Until: e.stamp(time.Minute)}))
		return
	}
	if e.h.NewDriverOnSameStorage == nil {
		e.t.Skip("not Run: the harness has no NewDriverOnSameStorage hook to open a second instance")
	}
	b := e.h.NewDriverOnSameStorage(e.t, e.d)
	e.t.Cleanup(func() { _ = b.Close() })
	if mode == drivers.ActivityWatch {
		if err := e.d.WatchActivity(e.ctx, drivers.WatchActivityRequest{Name: q, Until: e.stamp(time.Minute)}); err != nil {
			e.t.Fatalf("WatchActivity: %v", err)
		}
	}
	if _, err := b.SendMessages(e.ctx, drivers.SendMessagesRequest{Name: q, Now: e.at(0), Entries: []drivers.SendEntry{msg("x")}}); err != nil {
		e.t.Fatalf("SendMessages through instance B: %v", err)
	}
	// Reports may name other queues (storage is shared between cases) or come in parts.
	for end := time.Now().Add(activityWait); time.Now().Before(end); {
		res, err := e.d.AwaitActivity(e.ctx, drivers.AwaitActivityRequest{Timeout: time.Until(end)})
		if err != nil {
			e.t.Fatalf("AwaitActivity: %v", err)
		}
		if slices.Contains(res.Queues, q) {
			return
		}
	}
	e.t.Fatalf("instance A's AwaitActivity did not report a send to %s through instance B within %v", q, activityWait)
}
