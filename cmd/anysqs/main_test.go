package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
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

// TestServeAdminListener runs the gateway with admin_listen and checks what operators
// poll: /healthz, /readyz, and /metrics counting requests by action and outcome.
func TestServeAdminListener(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "admin.yaml")
	body := "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--config", cfg}, io.Discard, logw)
		logw.Close()
	}()
	// The log says where each listener is; both lines come before serving starts.
	addrs := map[string]string{}
	sc := bufio.NewScanner(logs)
	for len(addrs) < 2 && sc.Scan() {
		for _, what := range []string{"anysqs listening", "admin listening"} {
			if strings.Contains(sc.Text(), what) {
				_, addr, _ := strings.Cut(sc.Text(), " addr=")
				addrs[what], _, _ = strings.Cut(addr, " ")
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	api, adm := "http://"+addrs["anysqs listening"], "http://"+addrs["admin listening"]

	call := func(action, body string) int {
		req, _ := http.NewRequest(http.MethodPost, api+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(adm + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st := call("CreateQueue", `{"QueueName":"m"}`); st != 200 {
		t.Fatalf("CreateQueue: %d", st)
	}
	if st := call("GetQueueUrl", `{"QueueName":"missing"}`); st != 400 {
		t.Fatalf("GetQueueUrl of a missing queue: %d", st)
	}
	call("NoSuchAction", `{}`)
	for _, path := range []string{"/healthz", "/readyz"} {
		if st, b := get(path); st != 200 || b != "ok\n" {
			t.Fatalf("%s: %d %q", path, st, b)
		}
	}
	st, metrics := get("/metrics")
	for _, want := range []string{
		`anysqs_requests_total{action="CreateQueue",outcome="ok"} 1`,
		`anysqs_requests_total{action="GetQueueUrl",outcome="QueueDoesNotExist"} 1`,
		`anysqs_requests_total{action="other",outcome="InvalidAction"} 1`,
		`anysqs_request_duration_seconds_count{action="CreateQueue"} 1`,
		`anysqs_long_polls_waiting 0`,
		`anysqs_build_info{backend="sqlite",version="dev"} 1`,
		`go_goroutines `,
	} {
		if st != 200 || !strings.Contains(metrics, want) {
			t.Fatalf("/metrics (%d) lacks %q:\n%s", st, want, metrics)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
