package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// sweepRecorder is a driver that reports each Sweep call and says More for the first one.
type sweepRecorder struct {
	drivers.Driver
	calls chan time.Time
	n     int
}

func (d *sweepRecorder) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	d.n++
	d.calls <- req.Now
	return drivers.SweepResult{More: d.n == 1}, nil
}

func TestSweepLoop(t *testing.T) {
	ctx := context.Background()
	d := &sweepRecorder{Driver: memDriver(t), calls: make(chan time.Time, 10)}
	clk := clock.NewFake(start)
	gw, err := gateway.New(ctx, gateway.Config{Driver: d, Clock: clk, SweepInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	armed := make(chan struct{}, 10)
	gateway.SetOnSweepArmed(gw, func() { armed <- struct{}{} })
	clk.Advance(time.Minute)
	// First pass: More on the first call, so a second call follows at once.
	for i := 0; i < 2; i++ {
		if now := awaitEvent(t, d.calls, "sweep call of the first pass"); !now.Equal(start.Add(time.Minute)) {
			t.Fatalf("sweep %d at %v, want %v", i, now, start.Add(time.Minute))
		}
	}
	// The pass over, the loop re-arms on the clock; the next pass runs a minute later.
	awaitEvent(t, armed, "the sweep loop re-arming")
	select {
	case now := <-d.calls:
		t.Fatalf("extra sweep at %v before the clock moved", now)
	default:
	}
	clk.Advance(time.Minute)
	if now := awaitEvent(t, d.calls, "the second pass"); !now.Equal(start.Add(2 * time.Minute)) {
		t.Fatalf("second pass at %v, want %v", now, start.Add(2*time.Minute))
	}
}
