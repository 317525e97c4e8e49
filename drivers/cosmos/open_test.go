package cosmos_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/cosmos"
)

// TestOpenMissingContainer: without create_container, a missing container is a start-up
// error that says what to do.
func TestOpenMissingContainer(t *testing.T) {
	o := emulatorTarget(t).opts
	o.Container, o.CreateContainer = "missing"+randomHex(4), false
	_, err := cosmos.Open(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Open of a missing container: %v, want an error saying it does not exist", err)
	}
}

// TestOptionsDecode: options come from YAML through drivers.DecodeOptions, unknown keys
// rejected by name.
func TestOptionsDecode(t *testing.T) {
	_, err := drivers.Open(context.Background(), "cosmos", map[string]any{"endpoint": "https://x/", "no_such_option": 1})
	if err == nil || !strings.Contains(err.Error(), "no_such_option") {
		t.Fatalf("unknown option: %v, want an error naming it", err)
	}
	_, err = drivers.Open(context.Background(), "cosmos", map[string]any{"endpoint": "https://x/", "key": "a2V5", "request_timeout": "soon"})
	if err == nil || !strings.Contains(err.Error(), "request_timeout") {
		t.Fatalf("bad request_timeout: %v, want an error naming it", err)
	}
}
