package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/plugin"
)

// bin and sum are the plugin binary, built once for the whole test run, and its checksum.
var bin, sum string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "counting-plugin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "counting-plugin")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := sha256.Sum256(b)
	sum = "sha256:" + hex.EncodeToString(s[:])
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// openPlugin starts the built plugin as the gateway would, on data in dir.
func openPlugin(t *testing.T, dir string) *plugin.Host {
	t.Helper()
	h, err := plugin.Open(context.Background(), plugin.Options{Path: bin, Checksum: sum,
		Config: map[string]any{"data_dir": dir}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestDriverContract runs anysqs's driver contract suite against the plugin, through
// the plugin boundary.
func TestDriverContract(t *testing.T) {
	dirs := map[drivers.Driver]string{}
	newDriver := func(t *testing.T, dir string) drivers.Driver {
		h := openPlugin(t, dir)
		dirs[h] = dir
		return h
	}
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: func(t *testing.T) drivers.Driver { return newDriver(t, t.TempDir()) },
		Reopen: func(t *testing.T, old drivers.Driver) drivers.Driver {
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			return newDriver(t, dirs[old])
		},
	})
}

// TestMetricCrosses checks the plugin's own series reaches the host.
func TestMetricCrosses(t *testing.T) {
	h := openPlugin(t, t.TempDir())
	defer h.Close()
	ms, err := h.Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == "counting_plugin_messages_stored_total" {
			return
		}
	}
	t.Errorf("metrics %v lack counting_plugin_messages_stored_total", ms)
}

// TestBadConfig: an unknown config key fails the gateway's start with the driver's message.
func TestBadConfig(t *testing.T) {
	_, err := plugin.Open(context.Background(), plugin.Options{Path: bin, Checksum: sum,
		Config: map[string]any{"data_dri": t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), `data_dri: unknown key`) {
		t.Fatalf("a misspelt option: got %v, want the driver's refusal naming it", err)
	}
}
