package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionAndUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "anysqs ") {
		t.Fatalf("version printed %q", out.String())
	}
	if err := run(context.Background(), []string{"frobnicate"}, &out, &errOut); err == nil {
		t.Fatal("an unknown command must fail")
	}
}

// A backend that cannot deliver a required capability must stop the gateway before it
// listens, naming the capability: surfacing incompatibility at start-up, not at runtime.
func TestServeRefusesBackendMissingRequiredCapability(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "strict.yaml")
	body := "listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n" +
		"policy:\n  mode: strict\n  require: [attribute.Policy]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--config", cfg}, &bytes.Buffer{}, &errOut)
	if err == nil || !strings.Contains(err.Error(), "attribute.Policy") {
		t.Fatalf("want a start-up error naming attribute.Policy, got %v", err)
	}
}

func TestServeRejectsUnknownConfigKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(cfg, []byte("lissten: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "--config", cfg}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "lissten") {
		t.Fatalf("want an error naming lissten, got %v", err)
	}
}
