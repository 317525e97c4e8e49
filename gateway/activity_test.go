package gateway_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqlite"
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
		return drivers.AwaitActivityResult{Queues: qs, Supported: true}, nil
	case <-ctx.Done():
		return drivers.AwaitActivityResult{}, ctx.Err()
	}
}

// TestLongPollWokenByOtherInstance: a message written by "another gateway" (straight into
// the driver, so this gateway's waiters are not told) reaches a parked long poll when the
// driver reports activity on its queue.
func TestLongPollWokenByOtherInstance(t *testing.T) {
	ctx := context.Background()
	inner, err := sqlite.Open(ctx, sqlite.Options{DataDir: sqlite.MemoryDataDir})
	if err != nil {
		t.Fatal(err)
	}
	d := notifying{Driver: inner, activity: make(chan []string)}
	clk := clock.NewFake(start)
	gw, err := gateway.New(ctx, gateway.Config{Driver: d, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, gw: gw, clock: clk, http: httptest.NewServer(gw), waits: make(chan string, 10)}
	gateway.SetOnWait(gw, func(q string) { e.waits <- q })
	t.Cleanup(func() { e.http.Close(); _ = gw.Close(); _ = inner.Close() })

	e.mustJSON("CreateQueue", `{"QueueName":"lp"}`)
	got := e.receiveAsync(`{"QueueUrl":"/000000000000/lp","WaitTimeSeconds":20}`)
	e.awaitWait("lp")
	_, err = inner.SendMessages(ctx, drivers.SendMessagesRequest{Name: "lp", Now: clk.Now(),
		Entries: []drivers.SendEntry{{MessageID: "m-1", Body: "from elsewhere"}}})
	if err != nil {
		t.Fatal(err)
	}
	d.activity <- []string{"lp"}
	r := <-got
	if r.status != 200 || !strings.Contains(r.body, "from elsewhere") {
		t.Fatalf("long poll returned %d %s", r.status, r.body)
	}
}
