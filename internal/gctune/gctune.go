// Package gctune holds the garbage-collection target that anysqs serve and anysqs-load
// run with, so the gateway and the instrument that measures it stay alike.
package gctune

import "runtime/debug"

// Percent is the garbage-collection target used unless GOGC is set. The gateway's live
// heap is small (a few MB), so letting it grow to five times that before collecting costs
// little memory, and it cut the gateway's CPU per message by 14% (median of 3 interleaved
// pairs, closed loop, batch 10, on PostgreSQL; docs/performance.md). In the load
// generator, Go's default let the SDK's collections add about half a millisecond to the
// gateway path's p99 at 1,000 calls/s.
const Percent = 400

// Apply sets Percent unless getenv reports GOGC set, which Go has already applied.
func Apply(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
}
