package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
)

// pluginRow runs a built-in driver as an out-of-process plugin: `anysqs driver serve
// <driver>`, started by drivers/plugin's host for every case (and again at a restart),
// so every call of the case crosses the gRPC boundary. Its capability cells are the
// in-process row's by construction, so the row is test-only: its report is generated
// and checked, and the matrix lists each backend once.
func pluginRow(driver string, target func(string) string, prepare func(t *testing.T) map[string]any) backend {
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

func sqlitePluginRow() backend {
	return pluginRow("sqlite", func(v string) string { return "SQLite " + v + " embedded" },
		func(t *testing.T) map[string]any { return map[string]any{"data_dir": t.TempDir()} })
}

func postgresPluginRow() backend {
	return pluginRow("postgres", func(v string) string { return "PostgreSQL " + v + " local server" },
		func(t *testing.T) map[string]any {
			return map[string]any{"dsn": postgresDSN(), "schema": postgresCaseSchema(t), "max_conns": 4}
		})
}

// The anysqs binary the plugin rows run, built once per test run into a directory that
// TestMain removes.
var (
	pluginBuildDir string
	pluginBuild    = sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "anysqs-conformance-plugin-")
		if err != nil {
			return "", err
		}
		pluginBuildDir = dir
		bin := filepath.Join(dir, "anysqs")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/anysqs/anysqs/cmd/anysqs")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", &buildError{err: err, out: string(out)}
		}
		return bin, nil
	})
	pluginSum = sync.OnceValues(func() (string, error) {
		bin, err := pluginBuild()
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			return "", err
		}
		s := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(s[:]), nil
	})
)

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ./cmd/anysqs: " + e.err.Error() + "\n" + e.out }

func anysqsBinary(t *testing.T) (path, checksum string) {
	t.Helper()
	bin, err := pluginBuild()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := pluginSum()
	if err != nil {
		t.Fatal(err)
	}
	return bin, sum
}

// removePluginBuild deletes the binary the plugin rows built, if they did.
func removePluginBuild() {
	if pluginBuildDir != "" {
		os.RemoveAll(pluginBuildDir)
	}
}
