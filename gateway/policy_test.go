package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// declaring is a driver whose declarations are overridden, to exercise the policy.
type declaring struct {
	drivers.Driver
	levels map[capabilities.ID]capabilities.Level
}

func (d declaring) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	for i, c := range desc.Capabilities {
		if l, ok := d.levels[c.ID]; ok {
			desc.Capabilities[i].Level = l
			desc.Capabilities[i].Note = "test override"
		}
	}
	return desc, err
}

func policyEnv(t *testing.T, mode string) *env {
	ctx := context.Background()
	d := declaring{Driver: memDriver(t), levels: map[capabilities.ID]capabilities.Level{
		capabilities.QueuePurge: capabilities.Unsupported,
		capabilities.QueueTags:  capabilities.Degraded,
	}}
	clk := clock.NewFake(start)
	gw, err := gateway.New(ctx, gateway.Config{Driver: d, Clock: clk, Policy: capabilities.Config{Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, gw: gw, clock: clk, http: httptest.NewServer(gw)}
	t.Cleanup(func() { e.http.Close(); _ = gw.Close() })
	return e
}

func TestCapabilityPolicy(t *testing.T) {
	t.Run("unsupported is rejected", func(t *testing.T) {
		e := policyEnv(t, "degrade")
		e.mustJSON("CreateQueue", `{"QueueName":"p"}`)
		st, _, b := e.jsonCall("PurgeQueue", `{"QueueUrl":"/000000000000/p"}`)
		if st != 400 || !strings.Contains(b, "UnsupportedOperation") || !strings.Contains(b, "queue.purge") {
			t.Errorf("PurgeQueue on a backend without purge: %d %s", st, b)
		}
	})
	t.Run("degraded proceeds with a header", func(t *testing.T) {
		e := policyEnv(t, "degrade")
		e.mustJSON("CreateQueue", `{"QueueName":"p"}`)
		st, h, b := e.jsonCall("TagQueue", `{"QueueUrl":"/000000000000/p","Tags":{"k":"v"}}`)
		if st != 200 || h.Get(capabilities.HeaderDegraded) != string(capabilities.QueueTags) {
			t.Errorf("TagQueue degraded: %d %q %s", st, h.Get(capabilities.HeaderDegraded), b)
		}
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/", strings.NewReader(`{"QueueUrl":"/000000000000/p"}`))
		req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueueTags")
		req.Header.Set(capabilities.HeaderExplain, "1")
		_, h, _ = e.do(req)
		if !strings.Contains(h.Get(capabilities.HeaderExplain), "queue.tags=degraded:degrade") || h.Get(capabilities.HeaderBackend) != "sqlite" {
			t.Errorf("explain headers: %v", h)
		}
	})
	t.Run("degraded under strict is rejected", func(t *testing.T) {
		e := policyEnv(t, "strict")
		e.mustJSON("CreateQueue", `{"QueueName":"p"}`)
		st, _, b := e.jsonCall("TagQueue", `{"QueueUrl":"/000000000000/p","Tags":{"k":"v"}}`)
		if st != 400 || !strings.Contains(b, "strict") {
			t.Errorf("TagQueue strict: %d %s", st, b)
		}
		st, _, b = e.jsonCall("CreateQueue", `{"QueueName":"t","tags":{"k":"v"}}`)
		if st != 400 {
			t.Errorf("CreateQueue with tags, strict: %d %s", st, b)
		}
	})
}

// warning is a driver whose Describe reports a setup warning.
type warning struct{ drivers.Driver }

func (d warning) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.Warnings = append(desc.Warnings, "the test backend is set up badly; fix it")
	return desc, err
}

func TestBackendWarningsLoggedAtStart(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	gw, err := gateway.New(context.Background(), gateway.Config{Driver: warning{memDriver(t)}, Clock: clock.NewFake(start), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if !strings.Contains(logs.String(), `level=WARN msg="backend setup" backend=sqlite warning="the test backend is set up badly; fix it"`) {
		t.Errorf("log: %s", logs.String())
	}
}

// TestFIFOSendNeedsSequenceNumber: a backend that sends FIFO messages without a
// SequenceNumber says so on every FIFO send, and strict rejects the send.
func TestFIFOSendNeedsSequenceNumber(t *testing.T) {
	for _, mode := range []string{"degrade", "strict"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			d := declaring{Driver: memDriver(t), levels: map[capabilities.ID]capabilities.Level{
				capabilities.FIFOSequenceNumber: capabilities.Degraded}}
			clk := clock.NewFake(start)
			gw, err := gateway.New(ctx, gateway.Config{Driver: d, Clock: clk, Policy: capabilities.Config{Mode: mode}})
			if err != nil {
				t.Fatal(err)
			}
			e := &env{t: t, gw: gw, clock: clk, http: httptest.NewServer(gw)}
			t.Cleanup(func() { e.http.Close(); _ = gw.Close() })
			e.mustJSON("CreateQueue", `{"QueueName":"f.fifo","Attributes":{"FifoQueue":"true"}}`)
			e.mustJSON("CreateQueue", `{"QueueName":"s"}`)
			st, h, b := e.jsonCall("SendMessage", `{"QueueUrl":"/000000000000/f.fifo","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"d"}`)
			switch {
			case mode == "degrade" && (st != 200 || h.Get(capabilities.HeaderDegraded) != string(capabilities.FIFOSequenceNumber)):
				t.Errorf("FIFO send: %d %q %s; want 200 naming %s", st, h.Get(capabilities.HeaderDegraded), b, capabilities.FIFOSequenceNumber)
			case mode == "strict" && (st != 400 || !strings.Contains(b, string(capabilities.FIFOSequenceNumber))):
				t.Errorf("FIFO send under strict: %d %s; want a rejection naming %s", st, b, capabilities.FIFOSequenceNumber)
			}
			if st, h, b := e.jsonCall("SendMessage", `{"QueueUrl":"/000000000000/s","MessageBody":"x"}`); st != 200 || h.Get(capabilities.HeaderDegraded) != "" {
				t.Errorf("standard send: %d %q %s; want 200 and no degradation", st, h.Get(capabilities.HeaderDegraded), b)
			}
		})
	}
}
