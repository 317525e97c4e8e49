package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
	"github.com/anysqs/anysqs/internal/servetest"
)

// pluginRow runs a built-in driver as an out-of-process plugin: `anysqs driver serve
// <driver>`, started by drivers/plugin's host for every case (and again at a restart),
// so every call of the case crosses the gRPC boundary. Its capability cells are the
// in-process row's by construction, so the row is test-only: its report is generated
// and checked, and the matrix lists each backend once.
func pluginRow(driver string, target func(string) string, prepare func(t testing.TB) map[string]any) backend {
	return backend{name: driver + "-plugin", parallel: true, timeout: 10 * time.Minute, testOnly: true,
		target: func(v string) string {
			return target(v) + ", run as a plugin: anysqs driver serve " + driver + " over drivers/plugin's gRPC boundary"
		},
		prepare: func(t *testing.T) storage {
			config := prepare(t)
			bin, sum := anysqsBinary(t)
			return storage{open: func(ctx context.Context) (drivers.Driver, error) {
				return plugin.Open(ctx, plugin.Options{Path: bin, Args: []string{"driver", "serve", driver},
					Checksum: sum, Config: config})
			}}
		}}
}

// anysqsBinary is the anysqs binary the plugin rows run (internal/servetest's: built once
// per test run, or $ANYSQS_TEST_BINARY) and its checksum.
func anysqsBinary(t *testing.T) (path, checksum string) {
	t.Helper()
	return servetest.Binary(t), servetest.BinaryChecksum(t)
}
