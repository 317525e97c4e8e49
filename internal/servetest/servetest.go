// Package servetest runs the anysqs binary as users run it, for tests: `anysqs serve
// --config FILE` with a shipped configuration from configs/, pointed at this machine's
// test services by environment variables only (ANYSQS_BACKEND_OPTIONS and friends), never
// by a configuration written for the test.
//
// The binary is $ANYSQS_TEST_BINARY when set (make test builds it once), else one built
// with `go build` the first time a test asks, into a directory that RemoveBuild deletes
// (call it from TestMain). Services are the ones scripts/test-env.sh starts and describes
// in its environment; a missing one skips the test, or fails it under CI=true.
package servetest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// root is the repository's top directory (the one holding go.mod).
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Config returns the absolute path of the shipped configuration configs/<name>.yaml.
func Config(name string) string { return filepath.Join(root(), "configs", name+".yaml") }

var (
	buildDir string
	build    = sync.OnceValues(func() (string, error) {
		if bin := os.Getenv("ANYSQS_TEST_BINARY"); bin != "" {
			if _, err := os.Stat(bin); err != nil {
				return "", fmt.Errorf("ANYSQS_TEST_BINARY: %w", err)
			}
			return bin, nil
		}
		dir, err := os.MkdirTemp("", "anysqs-servetest-")
		if err != nil {
			return "", err
		}
		buildDir = dir
		bin := filepath.Join(dir, "anysqs")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/anysqs")
		cmd.Dir = root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build ./cmd/anysqs: %v\n%s", err, out)
		}
		return bin, nil
	})
	checksum = sync.OnceValues(func() (string, error) {
		bin, err := build()
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(sum[:]), nil
	})
)

// Binary returns the anysqs executable the tests serve.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BinaryChecksum returns "sha256:<hex>" of Binary, as a plugin configuration names it.
func BinaryChecksum(t testing.TB) string {
	t.Helper()
	sum, err := checksum()
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// RemoveBuild deletes the binary Binary built, if it built one; TestMain calls it.
func RemoveBuild() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Gateway is one running `anysqs serve` process.
type Gateway struct {
	// URL is the SQS endpoint, http://127.0.0.1:PORT.
	URL string
	// AdminURL is the admin listener (/metrics, /healthz, /readyz, /capabilities).
	AdminURL string

	t      testing.TB
	config string
	env    []string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done is closed
	logs   *Tail
}

var (
	listeningRE = regexp.MustCompile(`anysqs listening.* addr=(\S+)`)
	adminRE     = regexp.MustCompile(`admin listening.* addr=(\S+)`)
)

// startGuard bounds the wait for a gateway to listen: a hang guard for a loaded
// machine, not a performance bound.
const startGuard = 90 * time.Second

// Start runs `anysqs serve --config config` with env added to the test's environment.
// The SQS and admin listeners take free loopback ports unless env sets ANYSQS_LISTEN or
// ANYSQS_ADMIN_LISTEN. It returns once the gateway logs that it listens; the process is
// killed when t ends, and its log is shown if t failed.
func Start(t testing.TB, config string, env ...string) *Gateway {
	t.Helper()
	g := &Gateway{t: t, config: config, env: env}
	g.start("127.0.0.1:0", "127.0.0.1:0")
	t.Cleanup(func() {
		g.Kill()
		if t.Failed() {
			t.Logf("gateway (%s) log tail:\n%s", filepath.Base(config), g.Logs())
		}
	})
	return g
}

func (g *Gateway) start(listen, admin string) {
	g.t.Helper()
	cmd := exec.Command(Binary(g.t), "serve", "--config", g.config)
	cmd.Env = append(os.Environ(), "ANYSQS_LISTEN="+listen, "ANYSQS_ADMIN_LISTEN="+admin)
	cmd.Env = append(cmd.Env, g.env...) // later entries win
	stderr, err := cmd.StderrPipe()
	if err != nil {
		g.t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		g.t.Fatalf("start anysqs serve: %v", err)
	}
	g.cmd, g.done, g.logs = cmd, make(chan struct{}), &Tail{}
	addrs := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		var api, adm string
		sent := false
		for sc.Scan() {
			line := sc.Text()
			g.logs.Add(line)
			if m := adminRE.FindStringSubmatch(line); m != nil {
				adm = m[1]
			}
			if m := listeningRE.FindStringSubmatch(line); m != nil && !sent {
				api, sent = m[1], true
				addrs <- [2]string{api, adm}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		g.err = cmd.Wait()
		close(g.done)
	}()
	select {
	case a := <-addrs:
		g.URL = "http://" + a[0]
		if a[1] != "" {
			g.AdminURL = "http://" + a[1]
		}
	case <-g.done:
		g.t.Fatalf("anysqs serve --config %s exited before listening (%v):\n%s", g.config, g.err, g.logs)
	case <-time.After(startGuard):
		g.Kill()
		g.t.Fatalf("anysqs serve --config %s did not listen within %v:\n%s", g.config, startGuard, g.logs)
	}
}

// Kill sends SIGKILL and waits until the process is gone, as a crash would end it.
func (g *Gateway) Kill() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.done
}

// Stop sends SIGTERM, waits for the graceful shutdown and returns its exit error.
func (g *Gateway) Stop() error {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.done
	return g.err
}

// Restart stops the gateway (SIGTERM) and starts it again with the same configuration
// and environment, on the same addresses, so queue URLs stay valid.
func (g *Gateway) Restart() {
	g.t.Helper()
	if err := g.Stop(); err != nil {
		g.t.Errorf("anysqs serve stopped with %v:\n%s", err, g.logs)
	}
	g.Relaunch()
}

// Relaunch starts a gateway that was stopped or killed again, with the same
// configuration and environment, on the same addresses.
func (g *Gateway) Relaunch() {
	g.t.Helper()
	admin := "127.0.0.1:0"
	if g.AdminURL != "" {
		admin = strings.TrimPrefix(g.AdminURL, "http://")
	}
	g.start(strings.TrimPrefix(g.URL, "http://"), admin)
}

// Logs returns the last lines the gateway logged.
func (g *Gateway) Logs() string { return g.logs.String() }

// Tail keeps the last 80 lines of a process's log, for failure messages; the zero value
// is ready to use, and its methods may be called from several goroutines.
type Tail struct {
	mu    sync.Mutex
	lines []string
}

// Add appends one line, dropping the oldest beyond 80.
func (b *Tail) Add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, s)
	if len(b.lines) > 80 {
		b.lines = b.lines[len(b.lines)-80:]
	}
}

// String returns the lines kept, joined by newlines.
func (b *Tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
