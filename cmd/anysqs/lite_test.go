//go:build anysqs_lite

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
)

// TestLiteBuildNamesWhatIsLeftOut: in a lite build a cloud backend fails to open with
// the tag that left it out and how to get it, and the embedded backend still opens.
func TestLiteBuildNamesWhatIsLeftOut(t *testing.T) {
	_, err := drivers.Open(context.Background(), "spanner", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "anysqs_lite") || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("opening spanner in a lite build: %v", err)
	}
	d, err := drivers.Open(context.Background(), "sqlite", map[string]any{"data_dir": ":memory:"})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}
