package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// serveT runs `anysqs serve` in process with body as its configuration, written to
// anysqs.yaml in dir (relative paths in it are beside that file), and stops it when the
// test ends, failing the test if serve returned an error. It returns the listen
// addresses the log names: the SQS API's and, when body sets admin_listen, the admin
// listener's (both are logged before serving starts).
func serveT(t *testing.T, dir, body string) (api, admin string) {
	t.Helper()
	cfg := filepath.Join(dir, "anysqs.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs, logw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--config", cfg}, io.Discard, logw); logw.Close() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	wantAdmin := strings.Contains(body, "admin_listen:")
	sc := bufio.NewScanner(logs)
	for (api == "" || wantAdmin && admin == "") && sc.Scan() {
		line := sc.Text()
		_, addr, ok := strings.Cut(line, " addr=")
		addr, _, _ = strings.Cut(addr, " ")
		switch {
		case !ok:
		case strings.Contains(line, "anysqs listening"):
			api = addr
		case strings.Contains(line, "admin listening"):
			admin = addr
		}
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	if api == "" || wantAdmin && admin == "" {
		t.Fatalf("serve stopped before listening (sqs %q, admin %q)", api, admin)
	}
	return api, admin
}

// awsCLI returns a runner of `aws sqs ARGS` against url with throwaway credentials and
// env added, decoding the JSON answer into out (nil: ignored); a failed command fails
// the test with the CLI's stderr.
func awsCLI(t *testing.T, ctx context.Context, cli, url string, env ...string) func(out any, args ...string) {
	return func(out any, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, cli, append([]string{"--endpoint-url", url, "--output", "json", "sqs"}, args...)...)
		cmd.Env = append(append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDSERVE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"), env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("aws sqs %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("aws sqs %s: %q: %v", strings.Join(args, " "), b, err)
			}
		}
	}
}
