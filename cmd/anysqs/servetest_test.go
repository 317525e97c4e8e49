package main

import (
	"bufio"
	"context"
	"io"
	"os"
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
