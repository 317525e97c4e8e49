package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/internal/cli"
)

// Help is asked for in every usual way, on every command, and answers on stdout with
// exit 0; a usage mistake says what and where to look on stderr with exit 2.
func TestHelpAndExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		code    int
		stdout  string // a substring of stdout; "" wants it empty
		errPart string // a substring of the error
	}{
		{[]string{"--help"}, 0, "Commands:", ""},
		{[]string{"-h"}, 0, "Commands:", ""},
		{[]string{"help"}, 0, "Commands:", ""},
		{[]string{"help", "serve"}, 0, "Usage: anysqs serve", ""},
		{[]string{"help", "mq", "send"}, 0, "Usage: anysqs mq send", ""},
		{[]string{"serve", "--help"}, 0, "--config FILE", ""},
		{[]string{"serve", "-h"}, 0, "--listen HOST:PORT", ""},
		{[]string{"report", "--help"}, 0, "--backends", ""},
		{[]string{"version", "--help"}, 0, "--short", ""},
		{[]string{"completion", "--help"}, 0, "bash", ""},
		{[]string{"mq", "--help"}, 0, "receive", ""},
		{[]string{"mq", "receive", "--help"}, 0, "  -w SECONDS", ""},
		{[]string{"--version"}, 0, "anysqs ", ""},
		{[]string{"version"}, 0, "(commit ", ""},
		{[]string{"completion", "bash"}, 0, "complete -F _anysqs anysqs", ""},
		{[]string{}, 2, "", "no command"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"serve", "--bogus"}, 2, "", "bogus"},
		{[]string{"serve", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"report", "--from", "x.json"}, 2, "", "--declarations"},
		{[]string{"completion", "tcsh"}, 2, "", "tcsh"},
		{[]string{"mq"}, 2, "", "subcommand"},
		{[]string{"mq", "frob"}, 2, "", `unknown mq subcommand "frob"`},
		{[]string{"mq", "send", "-q", "q"}, 2, "", "--body is required"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, &out, &errOut)
		if got := cli.ExitCode(err); got != tc.code {
			t.Errorf("anysqs %v: exit %d, want %d (err %v)", tc.args, got, tc.code, err)
			continue
		}
		if tc.stdout == "" && out.Len() > 0 {
			t.Errorf("anysqs %v: printed on stdout %q", tc.args, out.String())
		}
		if !strings.Contains(out.String(), tc.stdout) {
			t.Errorf("anysqs %v: stdout lacks %q:\n%s", tc.args, tc.stdout, out.String())
		}
		if tc.errPart != "" && (err == nil || !strings.Contains(err.Error(), tc.errPart)) {
			t.Errorf("anysqs %v: error %v lacks %q", tc.args, err, tc.errPart)
		}
	}
}

// The built binary, as the Makefile builds it: stamped version and commit, exit codes
// of the process itself, help on stdout and mistakes on stderr.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "anysqs")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7 -X main.commit=0123456789abcdef", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"version"}, 0, "anysqs v9.8.7 (commit 0123456789ab, go1.", ""},
		{[]string{"version", "--short"}, 0, "v9.8.7\n", ""},
		{[]string{"--help"}, 0, "Usage: anysqs COMMAND", ""},
		{[]string{"serve", "--help"}, 0, "Usage: anysqs serve", ""},
		{[]string{"serve", "--nope"}, 2, "", "anysqs: serve: flag provided but not defined: -nope"},
		{[]string{"nope"}, 2, "", `anysqs: unknown command "nope"`},
		{[]string{"serve", "--config", "/nonexistent/anysqs.yaml"}, 1, "", "/nonexistent/anysqs.yaml"},
	} {
		cmd := exec.Command(bin, tc.args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("anysqs %v: exit %d, stdout %q, stderr %q; want %d, %q, %q",
				tc.args, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
		}
		if tc.code == 0 && errOut.Len() > 0 {
			t.Errorf("anysqs %v: stderr %q on success", tc.args, errOut.String())
		}
	}
}

// A start that fails on a busy port leaves nothing behind: the listener is bound
// before the backend opens. Relative paths are the config file's, not the cwd's.
func TestServeBusyPortWritesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "anysqs.yaml")
	body := "listen: " + busy.Addr().String() + "\nbackend:\n  name: sqlite\n  options:\n    data_dir: ./data\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"serve", "--config", cfg}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("want a listen error, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Fatalf("a failed start created %s/data: %v", dir, err)
	}
}

// data_dir: ./data in a config file means beside that file, wherever anysqs runs.
func TestServeDataDirRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "anysqs.yaml")
	body := "listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: ./data\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--config", cfg}, io.Discard, logw); logw.Close() }()
	sc := bufio.NewScanner(logs)
	for sc.Scan() && !strings.Contains(sc.Text(), "anysqs listening") {
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "anysqs.db")); err != nil {
		t.Fatalf("the database is not beside the config file: %v", err)
	}
}

// A typo among a driver's options names the file, the line and the key.
func TestServeBackendOptionTypoNamesLine(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "typo.yaml")
	body := "listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dirr: ./data\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "--config", cfg}, io.Discard, io.Discard)
	want := cfg + ":5: backend.options.data_dirr: unknown key (backend sqlite)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// A backend that cannot deliver a required capability must stop the gateway before it
// listens, naming the capability: surfacing incompatibility at start-up, not at runtime.
func TestServeRefusesBackendMissingRequiredCapability(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "strict.yaml")
	body := "listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n" +
		"policy:\n  mode: strict\n  require: [attribute.KmsMasterKeyId]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--config", cfg}, &bytes.Buffer{}, &errOut)
	if err == nil || !strings.Contains(err.Error(), "attribute.KmsMasterKeyId") {
		t.Fatalf("want a start-up error naming attribute.KmsMasterKeyId, got %v", err)
	}
}

func TestServeRejectsUnknownConfigKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(cfg, []byte("lissten: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "--config", cfg}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), cfg+":1: lissten: unknown key (did you mean listen?)") {
		t.Fatalf("want an error naming lissten, got %v", err)
	}
}

// TestServeAdminListener runs the gateway with admin_listen and checks what operators
// poll: /healthz, /readyz, and /metrics counting requests by action and outcome.
func TestServeAdminListener(t *testing.T) {
	api, adm := serveT(t, t.TempDir(), "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n")
	api, adm = "http://"+api, "http://"+adm

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
		`anysqs_build_info{backend="sqlite",commit="unknown",goversion="` + runtime.Version() + `",version="dev"} 1`,
		`go_goroutines `,
	} {
		if st != 200 || !strings.Contains(metrics, want) {
			t.Fatalf("/metrics (%d) lacks %q:\n%s", st, want, metrics)
		}
	}
}

// At log_level debug every request logs one line with its action, queue, outcome,
// duration and request id; log_format json makes each line a JSON object.
func TestServeDebugRequestLogJSON(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "debug.yaml")
	body := "listen: 127.0.0.1:0\nlog_level: debug\nlog_format: json\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--config", cfg}, io.Discard, logw); logw.Close() }()
	// Lines are read as they come: a log write blocks until read, and the request
	// line is written before the response is sent.
	lines := make(chan map[string]any, 100)
	go func() {
		dec := json.NewDecoder(logs)
		for {
			var line map[string]any
			if err := dec.Decode(&line); err != nil {
				close(lines)
				_, _ = io.Copy(io.Discard, logs)
				return
			}
			lines <- line
		}
	}()
	next := func(msg string) map[string]any {
		for line := range lines {
			if line["msg"] == msg {
				return line
			}
		}
		t.Fatalf("no %q line (or a line that is not JSON)", msg)
		return nil
	}
	api := "http://" + next("anysqs listening")["addr"].(string)
	req, _ := http.NewRequest(http.MethodPost, api+"/", strings.NewReader(`{"QueueUrl":"`+api+`/000000000000/missing"}`))
	req.Header.Set("X-Amz-Target", "AmazonSQS.GetQueueAttributes")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	line := next("request")
	if line["level"] != "DEBUG" || line["action"] != "GetQueueAttributes" || line["queue"] != "missing" ||
		line["outcome"] != "QueueDoesNotExist" || line["request_id"] != resp.Header.Get("x-amzn-RequestId") || line["duration"] == nil {
		t.Fatalf("request line %v (request id header %q)", line, resp.Header.Get("x-amzn-RequestId"))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
