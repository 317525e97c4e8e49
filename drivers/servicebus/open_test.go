package servicebus_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/servicebus"
)

func TestDescribeIsConsistent(t *testing.T) {
	for _, o := range []servicebus.Options{
		{Model: newModelName(t)},
		{Model: newModelName(t), MaxVisibilitySeconds: 300, MaxMessageBytes: 1048576},
	} {
		d, err := servicebus.Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := d.Describe(context.Background())
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := capabilities.Validate(desc.Capabilities); err != nil {
			t.Fatal(err)
		}
		if err := desc.Check(); err != nil {
			t.Fatal(err)
		}
		if desc.Clock != drivers.ClockService || desc.ReceiptScope != drivers.ReceiptInstance || !desc.BlockingReceive || !desc.SharedStorage {
			t.Fatalf("description %+v", desc)
		}
		for _, c := range desc.Capabilities {
			if c.Level != capabilities.Native && c.Note == "" {
				t.Errorf("%s is %s without a note saying what differs", c.ID, c.Level)
			}
		}
		vis, _ := desc.Declaration(capabilities.VisibilityMax)
		size, _ := desc.Declaration(capabilities.MessageMaxSize)
		if o.MaxVisibilitySeconds == 300 && (vis.Level != capabilities.Degraded || vis.Limits["max_seconds"] != "300" || size.Level != capabilities.Native) {
			t.Errorf("with max_visibility_seconds 300 and 1 MiB messages: %+v, %+v", vis, size)
		}
	}
}

func TestOptions(t *testing.T) {
	t.Setenv(servicebus.ConnectionStringEnv, "")
	for _, c := range []struct {
		raw  map[string]any
		want string // part of the error; empty: opens
	}{
		{map[string]any{"model": "opt-ok", "entity_prefix": "p-", "lock_duration_seconds": 30}, ""},
		{map[string]any{"model": "x", "colour": "blue"}, "colour"},
		{map[string]any{}, "no namespace"},
		{map[string]any{"model": "x", "connection_string": "Endpoint=sb://x/"}, "only one"},
		{map[string]any{"model": "x", "lock_duration_seconds": 301}, "lock_duration_seconds"},
		{map[string]any{"model": "x", "lock_duration_seconds": 4}, "lock_duration_seconds"},
		{map[string]any{"model": "x", "max_visibility_seconds": 43201}, "max_visibility_seconds"},
		{map[string]any{"model": "x", "max_message_bytes": 2000000}, "max_message_bytes"},
	} {
		d, err := drivers.Open(context.Background(), "servicebus", c.raw)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.raw, err)
				continue
			}
			d.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.raw, err, c.want)
		}
	}
}
