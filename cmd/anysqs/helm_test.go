package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
	"github.com/anysqs/anysqs/drivers/sqlite"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/testbed"
	"github.com/anysqs/anysqs/internal/testenv"
)

const helmChart = "../../deploy/helm/anysqs"

// backendOptions gives each backend's options type (internal/testbed's), and the plugin
// host's, for the driver's own decoding rules.
var backendOptions = func() map[string]func() any {
	m := map[string]func() any{"plugin": func() any { return &plugin.Options{} }}
	for _, b := range testbed.All {
		m[b.Name] = b.Options
	}
	return m
}()

// TestHelmChart lints and renders deploy/helm/anysqs with each examples/<backend>.yaml,
// then checks what a cluster and the gateway would make of the result: the manifests
// decode strictly into the k8s.io/api types (deploy/kubernetes/check, a module of its own
// so that anysqs does not depend on Kubernetes), the ConfigMap's anysqs.yaml is accepted
// by config.Load and the backend's driver, and the workload keeps the chart's promises
// (probes on the admin listener, one SQLite gateway with its volume, secrets only by
// reference, non-root on a read-only root filesystem, a PDB with more than one replica).
func TestHelmChart(t *testing.T) {
	helm := os.Getenv("ANYSQS_TEST_HELM")
	if helm == "" {
		helm, _ = exec.LookPath("helm")
	}
	if helm == "" {
		testenv.Unavailable(t, "helm (scripts/test-env.sh installs it and sets $ANYSQS_TEST_HELM)")
	}
	examples, _ := filepath.Glob(helmChart + "/examples/*.yaml")
	var names []string
	for _, f := range examples {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	for b := range backendOptions {
		if !slices.Contains(names, b) {
			t.Errorf("no %s/examples/%s.yaml: one values file per backend", helmChart, b)
		}
	}
	dir := t.TempDir()
	var rendered []string
	for _, f := range examples {
		backend := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(backend, func(t *testing.T) {
			runHelm(t, helm, "lint", "--strict", helmChart, "-f", f)
			out := runHelm(t, helm, "template", "anysqs", helmChart, "-f", f, "--namespace", "queues")
			p := filepath.Join(dir, backend+".yaml")
			if err := os.WriteFile(p, out, 0o600); err != nil {
				t.Fatal(err)
			}
			rendered = append(rendered, p)
			checkRelease(t, backend, parseManifests(t, out))
		})
	}
	if len(rendered) == 0 {
		return
	}
	// The Kubernetes schema, strictly: an unknown or misspelt field fails.
	checkManifests(t, rendered...)

	// A second SQLite gateway cannot open the data directory: the chart refuses to render one.
	refuse := exec.Command(helm, "template", "anysqs", helmChart, "--set", "backend.name=sqlite", "--set", "replicaCount=2")
	if out, err := refuse.CombinedOutput(); err == nil || !bytes.Contains(out, []byte("one gateway per data directory")) {
		t.Errorf("helm template with sqlite and replicaCount=2: %v, want a refusal\n%s", err, out)
	}
}

func runHelm(t *testing.T, helm string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// manifest holds the fields of a rendered object that checkRelease looks at; the full
// schema is deploy/kubernetes/check's business.
type manifest struct {
	Kind     string
	Metadata struct{ Name string }
	Data     map[string]string
	Spec     struct {
		Replicas *int
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		}
		Template struct {
			Metadata struct{ Labels map[string]string }
			Spec     podSpec
		}
		VolumeClaimTemplates []struct{ Metadata struct{ Name string } } `yaml:"volumeClaimTemplates"`
		Ports                []struct {
			Name       string
			TargetPort string `yaml:"targetPort"`
		}
		Endpoints []struct{ Port, Path string }
	}
}

type podSpec struct {
	SecurityContext struct {
		RunAsNonRoot bool `yaml:"runAsNonRoot"`
	} `yaml:"securityContext"`
	Containers []struct {
		Env []struct {
			Name, Value string
			ValueFrom   *struct {
				SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		}
		Ports []struct {
			Name          string
			ContainerPort int `yaml:"containerPort"`
		}
		ReadinessProbe  probe `yaml:"readinessProbe"`
		LivenessProbe   probe `yaml:"livenessProbe"`
		SecurityContext struct {
			ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		} `yaml:"securityContext"`
		VolumeMounts []volumeMount `yaml:"volumeMounts"`
	}
	Volumes []struct {
		Name   string
		Secret *struct {
			SecretName string `yaml:"secretName"`
			Items      []struct{ Key, Path string }
		}
	}
}

type volumeMount struct {
	Name      string
	MountPath string `yaml:"mountPath"`
}

type probe struct {
	HTTPGet *struct {
		Path string
		Port string
	} `yaml:"httpGet"`
}

func parseManifests(t *testing.T, out []byte) map[string][]manifest {
	t.Helper()
	byKind := map[string][]manifest{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var m manifest
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return byKind
			}
			t.Fatalf("rendered chart: %v", err)
		}
		if m.Kind != "" {
			byKind[m.Kind] = append(byKind[m.Kind], m)
		}
	}
}

// checkRelease checks one backend's rendered release.
func checkRelease(t *testing.T, backend string, objs map[string][]manifest) {
	if len(objs["Secret"]) > 0 {
		t.Errorf("the chart renders a Secret: secrets are referenced, never values")
	}
	workloads := append(objs["Deployment"], objs["StatefulSet"]...)
	// The gateway's ConfigMap holds its configuration; another may hold the Grafana dashboard.
	var configs []manifest
	for _, m := range objs["ConfigMap"] {
		if _, ok := m.Data["anysqs.yaml"]; ok {
			configs = append(configs, m)
		} else if _, ok := m.Data["anysqs-queues.json"]; !ok {
			t.Errorf("a ConfigMap with neither the configuration nor the dashboard: %v", m.Data)
		}
	}
	if len(workloads) != 1 || len(configs) != 1 || len(objs["Service"]) != 1 {
		t.Fatalf("want one workload, ConfigMap and Service, got %d, %d, %d",
			len(workloads), len(configs), len(objs["Service"]))
	}
	objs["ConfigMap"] = configs
	w, pod := workloads[0], workloads[0].Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	cfg := loadRenderedConfig(t, backend, objs["ConfigMap"][0].Data["anysqs.yaml"], pod)

	// The listeners the config opens are the ports the pod, its probes and the Service name.
	if port := listenPort(t, cfg.Listen); ports["sqs"] != port {
		t.Errorf("container port sqs %d, config listen %s", ports["sqs"], cfg.Listen)
	}
	if port := listenPort(t, cfg.AdminListen); ports["admin"] != port {
		t.Errorf("container port admin %d, config admin_listen %s", ports["admin"], cfg.AdminListen)
	}
	for name, want := range map[string]struct {
		p    probe
		path string
	}{"readiness": {c.ReadinessProbe, "/readyz"}, "liveness": {c.LivenessProbe, "/healthz"}} {
		switch {
		case want.p.HTTPGet == nil:
			t.Errorf("no %s probe over HTTP", name)
		case want.p.HTTPGet.Path != want.path:
			t.Errorf("%s probe on %s, want %s", name, want.p.HTTPGet.Path, want.path)
		case want.p.HTTPGet.Port != "admin" && want.p.HTTPGet.Port != strconv.Itoa(ports["admin"]):
			t.Errorf("%s probe on port %s, want the admin listener's (admin, %d)", name, want.p.HTTPGet.Port, ports["admin"])
		}
	}
	for _, p := range objs["Service"][0].Spec.Ports {
		if _, ok := ports[p.TargetPort]; !ok {
			t.Errorf("Service port %s targets %q, not a container port", p.Name, p.TargetPort)
		}
	}

	if !pod.SecurityContext.RunAsNonRoot || !c.SecurityContext.ReadOnlyRootFilesystem ||
		c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("want non-root, a read-only root filesystem and no privilege escalation")
	}
	for k, v := range w.Spec.Selector.MatchLabels {
		if w.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the selector's %s=%s is not a pod label", k, v)
		}
	}

	replicas := 1
	if w.Spec.Replicas != nil {
		replicas = *w.Spec.Replicas
	}
	if backend == "sqlite" {
		opts := sqlite.Options{}
		_ = drivers.DecodeOptions(cfg.Backend.Options, &opts)
		if w.Kind != "StatefulSet" || replicas != 1 || len(w.Spec.VolumeClaimTemplates) != 1 {
			t.Errorf("sqlite: a %s of %d with %d volume claims, want a StatefulSet of 1 with its volume",
				w.Kind, replicas, len(w.Spec.VolumeClaimTemplates))
		} else if !slices.ContainsFunc(c.VolumeMounts, func(m volumeMount) bool {
			return m.Name == w.Spec.VolumeClaimTemplates[0].Metadata.Name && m.MountPath == opts.DataDir
		}) {
			t.Errorf("sqlite: data_dir %s is not the volume claim's mount", opts.DataDir)
		}
	} else if w.Kind != "Deployment" || replicas < 2 {
		t.Errorf("%s: a %s of %d, want a Deployment of several gateways", backend, w.Kind, replicas)
	}
	if pdbs := len(objs["PodDisruptionBudget"]); (replicas > 1) != (pdbs == 1) {
		t.Errorf("%d replicas and %d PodDisruptionBudgets", replicas, pdbs)
	}
	for _, sm := range objs["ServiceMonitor"] {
		for _, e := range sm.Spec.Endpoints {
			if ports[e.Port] != ports["admin"] || e.Path != "/metrics" {
				t.Errorf("ServiceMonitor scrapes %s on %s, want /metrics on admin", e.Path, e.Port)
			}
		}
	}
}

// loadRenderedConfig loads anysqs.yaml as `anysqs serve` would in the pod: the environment
// from the container's env (a Secret's value as a placeholder), each secret_access_key_file
// from the Secret volume mounted there; then the backend's options by its driver's rules.
func loadRenderedConfig(t *testing.T, backend, body string, pod podSpec) config.Config {
	t.Helper()
	env := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			if e.ValueFrom.SecretKeyRef.Name == "" {
				t.Errorf("env %s: a secretKeyRef without a Secret name", e.Name)
			}
			env[e.Name] = "from-a-secret"
			if e.Name == "ANYSQS_AUTH_CREDENTIALS" {
				env[e.Name] = "AKIDEXAMPLE:secret"
			}
		}
	}
	secretEnv := map[string]string{}
	for _, b := range testbed.All {
		secretEnv[b.Name] = b.SecretEnv
	}
	secretEnv["plugin"] = secretEnv["postgres"] // examples/plugin.yaml runs the postgres driver as a plugin
	want := secretEnv[backend]
	if want != "" && env[want] == "" {
		t.Errorf("no %s from a Secret", want)
	}

	// Each key file must be an item of a Secret volume; a copy in the temporary directory
	// stands in for it.
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("anysqs.yaml: %v", err)
	}
	dir := t.TempDir()
	if auth, ok := doc["auth"].(map[string]any); ok {
		creds, _ := auth["credentials"].([]any)
		for _, cr := range creds {
			cr := cr.(map[string]any)
			file, ok := cr["secret_access_key_file"].(string)
			if !ok {
				continue
			}
			if !secretFileMounted(pod, file) {
				t.Errorf("secret_access_key_file %s is no mounted Secret's item", file)
			}
			local := filepath.Join(dir, filepath.Base(filepath.Dir(file))+"-"+filepath.Base(file))
			if err := os.WriteFile(local, []byte("secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cr["secret_access_key_file"] = local
		}
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "anysqs.yaml")
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the rendered anysqs.yaml: %v\n%s", err, body)
	}
	if cfg.Backend.Name != backend {
		t.Errorf("backend %q from examples/%s.yaml", cfg.Backend.Name, backend)
	}
	if err := drivers.DecodeOptions(cfg.Backend.Options, backendOptions[backend]()); err != nil {
		t.Errorf("backend.options: %v", err)
	}
	if backend == "plugin" { // the plugin's own options, when it is a built-in driver
		var po plugin.Options
		_ = drivers.DecodeOptions(cfg.Backend.Options, &po)
		if len(po.Args) == 3 && po.Args[0] == "driver" && backendOptions[po.Args[2]] != nil {
			if err := drivers.DecodeOptions(po.Config, backendOptions[po.Args[2]]()); err != nil {
				t.Errorf("backend.options.config (%s): %v", po.Args[2], err)
			}
		}
	}
	return cfg
}

// secretFileMounted reports whether file is an item of a Secret volume the container mounts.
func secretFileMounted(pod podSpec, file string) bool {
	for _, m := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			for _, it := range v.Secret.Items {
				if filepath.Join(m.MountPath, it.Path) == file {
					return true
				}
			}
		}
	}
	return false
}

func listenPort(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	n, err2 := strconv.Atoi(port)
	if err != nil || err2 != nil {
		t.Fatalf("listen address %q", addr)
	}
	return n
}
