package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startOnce runs `anysqs serve` in process with args, and stops it as soon as it logs
// that it listens. It returns serve's error and whether the gateway got that far.
func startOnce(t *testing.T, args ...string) (listened bool, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startWithin)
	defer cancel()
	log := &listenWatch{cancel: cancel}
	err = run(ctx, append([]string{"serve"}, args...), &strings.Builder{}, log)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("anysqs serve %v neither failed nor listened within %v", args, startWithin)
	}
	return log.listened(), err
}

// startWithin bounds a start: a hang guard for a loaded machine.
const startWithin = 60 * time.Second

// listenWatch is serve's log: it cancels the run once the gateway says it listens.
type listenWatch struct {
	mu     sync.Mutex
	buf    strings.Builder
	seen   bool
	cancel func()
}

func (w *listenWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && strings.Contains(w.buf.String(), "anysqs listening") {
		w.seen = true
		w.cancel()
	}
	return len(p), nil
}

func (w *listenWatch) listened() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// writeConfig writes body to anysqs.yaml in a new directory, with a data directory beside
// it, and returns the file and that data directory.
func writeConfig(t *testing.T, body string) (cfg, data string) {
	t.Helper()
	dir := t.TempDir()
	cfg = filepath.Join(dir, "anysqs.yaml")
	body += "backend:\n  name: sqlite\n  options:\n    data_dir: ./data\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, filepath.Join(dir, "data")
}

// Without access keys the gateway refuses every address but loopback, whether the
// address came from the file, ANYSQS_LISTEN or --listen (issue 39: --listen used to be
// applied after the check), and the refusal names what set the address and the ways
// out. It refuses before it binds or opens the backend.
func TestServeRefusesPublicListenWithoutKeys(t *testing.T) {
	for _, tc := range []struct {
		name, file, env string
		args            []string
		from            string
	}{
		{"flag 0.0.0.0", "listen: 127.0.0.1:0\n", "", []string{"--listen", "0.0.0.0:0"}, "--listen"},
		{"flag [::]", "listen: 127.0.0.1:0\n", "", []string{"--listen", "[::]:0"}, "--listen"},
		{"flag every interface", "listen: 127.0.0.1:0\n", "", []string{"--listen", ":0"}, "--listen"},
		{"flag over a loopback env", "", "127.0.0.1:0", []string{"--listen", "0.0.0.0:0"}, "--listen"},
		{"env 0.0.0.0", "listen: 127.0.0.1:0\n", "0.0.0.0:0", nil, "ANYSQS_LISTEN"},
		{"env every interface", "listen: 127.0.0.1:0\n", ":0", nil, "ANYSQS_LISTEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, data := writeConfig(t, tc.file)
			t.Setenv("ANYSQS_LISTEN", tc.env)
			listened, err := startOnce(t, append([]string{"--config", cfg}, tc.args...)...)
			if listened || err == nil {
				t.Fatalf("serve started without keys on a public address (err %v)", err)
			}
			for _, want := range []string{"listen (set by " + tc.from + "): ", " is reachable from other hosts and auth lists no credentials",
				"auth.credentials (or ANYSQS_AUTH_CREDENTIALS)", "bind 127.0.0.1", "auth.allow_unauthenticated: true"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("a refused start created %s: %v", data, err)
			}
		})
	}
}

// With access keys (from the file or ANYSQS_AUTH_CREDENTIALS), or with
// auth.allow_unauthenticated, the same addresses start; and a --listen on loopback
// makes a file's public address, which alone would be refused, acceptable.
func TestServePublicListenWithKeysStarts(t *testing.T) {
	const keys = "auth:\n  credentials:\n    - {access_key_id: AKIAEXPOSURE, secret_access_key: s}\n"
	for _, tc := range []struct {
		name, file, env, creds string
		args                   []string
	}{
		{"flag, keys in the file", "listen: 127.0.0.1:0\n" + keys, "", "", []string{"--listen", "0.0.0.0:0"}},
		{"flag, keys in the env", "listen: 127.0.0.1:0\n", "", "AKIAEXPOSURE:s", []string{"--listen", "0.0.0.0:0"}},
		{"env, keys in the file", "listen: 127.0.0.1:0\n" + keys, "0.0.0.0:0", "", nil},
		{"env, keys in the env", "listen: 127.0.0.1:0\n", ":0", "AKIAEXPOSURE:s", nil},
		{"flag, allow_unauthenticated", "listen: 127.0.0.1:0\nauth:\n  allow_unauthenticated: true\n", "", "", []string{"--listen", "0.0.0.0:0"}},
		{"flag narrows the file's address", "listen: 0.0.0.0:0\n", "", "", []string{"--listen", "127.0.0.1:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := writeConfig(t, tc.file)
			t.Setenv("ANYSQS_LISTEN", tc.env)
			t.Setenv("ANYSQS_AUTH_CREDENTIALS", tc.creds)
			if listened, err := startOnce(t, append([]string{"--config", cfg}, tc.args...)...); !listened || err != nil {
				t.Fatalf("serve did not start (listened %v): %v", listened, err)
			}
		})
	}
}

// The console is open to whoever reaches the admin listener when auth lists no keys:
// it lists every queue's messages and redrives them. So without keys it is refused on
// any admin address but loopback, however admin_listen and console were set. The
// admin listener without the console (metrics, health) stays allowed anywhere.
func TestServeRefusesPublicConsoleWithoutKeys(t *testing.T) {
	for _, tc := range []struct {
		name, file, admin, console, from string
	}{
		{"file", "admin_listen: 0.0.0.0:0\nconsole: true\n", "", "", "admin_listen: "},
		{"env admin_listen", "admin_listen: 127.0.0.1:0\nconsole: true\n", "0.0.0.0:0", "", "admin_listen (set by ANYSQS_ADMIN_LISTEN): "},
		{"env console", "admin_listen: ':0'\n", "", "true", "admin_listen: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, data := writeConfig(t, "listen: 127.0.0.1:0\n"+tc.file)
			t.Setenv("ANYSQS_ADMIN_LISTEN", tc.admin)
			t.Setenv("ANYSQS_CONSOLE", tc.console)
			listened, err := startOnce(t, "--config", cfg)
			if listened || err == nil {
				t.Fatalf("serve started an open console on a public address (err %v)", err)
			}
			for _, want := range []string{tc.from, "read every queue's messages in the console", "turn the console off"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("a refused start created %s: %v", data, err)
			}
		})
	}
	t.Run("with keys", func(t *testing.T) {
		cfg, _ := writeConfig(t, "listen: 127.0.0.1:0\nadmin_listen: 0.0.0.0:0\nconsole: true\n")
		t.Setenv("ANYSQS_AUTH_CREDENTIALS", "AKIAEXPOSURE:s")
		if listened, err := startOnce(t, "--config", cfg); !listened || err != nil {
			t.Fatalf("serve did not start (listened %v): %v", listened, err)
		}
	})
	t.Run("admin without console", func(t *testing.T) {
		cfg, _ := writeConfig(t, "listen: 127.0.0.1:0\nadmin_listen: 0.0.0.0:0\n")
		if listened, err := startOnce(t, "--config", cfg); !listened || err != nil {
			t.Fatalf("serve did not start (listened %v): %v", listened, err)
		}
	})
}

// migrate reads each side's overrides from its own variables: an error about a value
// one of them set names that variable, not the ANYSQS_* one serve reads.
func TestMigrateErrorNamesSideVariable(t *testing.T) {
	from, _ := writeConfig(t, "")
	to, _ := writeConfig(t, "")
	t.Setenv("ANYSQS_TO_LISTEN", "0.0.0.0:1")
	err := run(context.Background(), []string{"migrate", "--from", from, "--to", to, "--state", filepath.Join(t.TempDir(), "s.json")},
		&strings.Builder{}, &strings.Builder{})
	if want := "--to: listen (set by ANYSQS_TO_LISTEN): 0.0.0.0:1 is reachable"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// Go's profiles have no authentication, keys or not: --pprof on anything but loopback
// is refused, and on loopback it starts.
func TestServePprofLoopbackOnly(t *testing.T) {
	const keys = "listen: 127.0.0.1:0\nauth:\n  credentials:\n    - {access_key_id: AKIAEXPOSURE, secret_access_key: s}\n"
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		cfg, _ := writeConfig(t, keys)
		listened, err := startOnce(t, "--config", cfg, "--pprof", addr)
		if listened || err == nil || !strings.Contains(err.Error(), "--pprof "+addr) || !strings.Contains(err.Error(), "loopback only") {
			t.Errorf("--pprof %s with keys: listened %v, err %v; want a refusal naming --pprof", addr, listened, err)
		}
	}
	cfg, _ := writeConfig(t, keys)
	if listened, err := startOnce(t, "--config", cfg, "--pprof", "127.0.0.1:0"); !listened || err != nil {
		t.Errorf("--pprof 127.0.0.1:0: listened %v, err %v", listened, err)
	}
}
