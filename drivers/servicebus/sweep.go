package servicebus

import (
	"context"

	"github.com/anysqs/anysqs/drivers"
)

// Sweep has nothing to do: the entities' time-to-live expires messages, and Service Bus
// keeps the duplicate-detection history.
func (d *Driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	d.mu.Lock()
	now := d.now()
	for k, v := range d.dedups {
		if !v.holds(now) {
			delete(d.dedups, k)
		}
	}
	for k, at := range d.deleted {
		if d.now().Sub(at) > drivers.QueueNameReuseDelay {
			delete(d.deleted, k)
		}
	}
	d.mu.Unlock()
	return drivers.SweepResult{}, nil
}
