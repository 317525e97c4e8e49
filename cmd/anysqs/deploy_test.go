package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/testbed"
)

// Every Kubernetes ConfigMap carries an anysqs.yaml that the binary accepts: the file's
// keys as config.Load checks them, and the backend's options as its driver decodes them
// (unknown keys and wrong types fail). The manifests' Kubernetes schema is checked by
// deploy/kubernetes/check; this checks what the gateway itself reads.
func TestKubernetesConfigMaps(t *testing.T) {
	options := map[string]func() any{}
	for _, b := range testbed.All {
		options[b.Name] = b.Options
	}
	files, _ := filepath.Glob("../../deploy/kubernetes/*/configmap.yaml")
	if len(files) != len(options) {
		t.Fatalf("%d ConfigMaps %v, want one per backend (%d)", len(files), files, len(options))
	}
	// The Deployments set the credentials from Secrets; the gateway refuses 0.0.0.0 without.
	getenv := func(k string) string {
		if k == "ANYSQS_AUTH_CREDENTIALS" {
			return "AKIDEXAMPLE:secret"
		}
		return ""
	}
	for _, f := range files {
		backend := filepath.Base(filepath.Dir(f))
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cm struct{ Data map[string]string }
		if err := yaml.Unmarshal(raw, &cm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		body, ok := cm.Data["anysqs.yaml"]
		if !ok {
			t.Fatalf("%s: no anysqs.yaml", f)
		}
		p := filepath.Join(t.TempDir(), "anysqs.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(p, getenv)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if cfg.Backend.Name != backend {
			t.Errorf("%s: backend %q in the %s directory", f, cfg.Backend.Name, backend)
			continue
		}
		if err := drivers.DecodeOptions(cfg.Backend.Options, options[backend]()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestKubernetesManifests decodes every kustomize manifest strictly into the k8s.io/api
// types (a misspelt field or a wrong type fails), through deploy/kubernetes/check.
func TestKubernetesManifests(t *testing.T) {
	files, _ := filepath.Glob("../../deploy/kubernetes/*/*.yaml")
	abs := make([]string, 0, len(files))
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			a, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			abs = append(abs, a)
		}
	}
	checkManifests(t, abs...)
}

// checkManifests runs deploy/kubernetes/check, a module of its own so that anysqs does not
// depend on the Kubernetes libraries, on files (absolute paths): the first run compiles
// k8s.io/api, about a minute; later ones take the build cache.
func checkManifests(t *testing.T, files ...string) {
	t.Helper()
	check := exec.Command("go", append([]string{"run", "."}, files...)...)
	check.Dir = "../../deploy/kubernetes/check"
	if out, err := check.CombinedOutput(); err != nil {
		var failed []string // its "FILE: ok" lines say nothing here
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !strings.HasSuffix(line, ": ok") {
				failed = append(failed, line)
			}
		}
		t.Errorf("deploy/kubernetes/check: %v\n%s", err, strings.Join(failed, "\n"))
	}
}
