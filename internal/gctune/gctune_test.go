package gctune_test

import (
	"runtime/debug"
	"testing"

	"github.com/anysqs/anysqs/internal/gctune"
)

func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	gctune.Apply(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != gctune.Percent {
		t.Fatalf("GC percent %d without GOGC, want %d", got, gctune.Percent)
	}
	gctune.Apply(func(k string) string { return map[string]string{"GOGC": "50"}[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent %d with GOGC set, want it left alone (100)", got)
	}
}
