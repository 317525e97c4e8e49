package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultsWithoutFile(t *testing.T) {
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.Backend.Name != "sqlite" || c.Policy.Mode != "degrade" {
		t.Fatalf("unexpected defaults: %+v", c)
	}
}

func TestUnknownKeyIsNamed(t *testing.T) {
	p := write(t, "listen: 127.0.0.1:1\nlisten_adress: x\n")
	_, err := Load(p, nil)
	if err == nil || !strings.Contains(err.Error(), "listen_adress") {
		t.Fatalf("want an error naming listen_adress, got %v", err)
	}
}

func TestFileThenEnv(t *testing.T) {
	p := write(t, "listen: 127.0.0.1:1000\nadmin_listen: 127.0.0.1:1001\nbackend:\n  name: postgres\n  options:\n    dsn: postgres://x\n")
	c, err := Load(p, env(map[string]string{"ANYSQS_LISTEN": "0.0.0.0:2000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "0.0.0.0:2000" || c.AdminListen != "127.0.0.1:1001" {
		t.Errorf("env did not override listen, or admin_listen not from the file: %q, %q", c.Listen, c.AdminListen)
	}
	if c, err := Load(p, env(map[string]string{"ANYSQS_ADMIN_LISTEN": "127.0.0.1:3000"})); err != nil || c.AdminListen != "127.0.0.1:3000" {
		t.Errorf("env did not override admin_listen: %q, %v", c.AdminListen, err)
	}
	if c.Backend.Name != "postgres" || c.Backend.Options["dsn"] != "postgres://x" {
		t.Errorf("backend not taken from file: %+v", c.Backend)
	}
	c, err = Load(p, env(map[string]string{"ANYSQS_BACKEND": "sqlite"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend.Name != "sqlite" || c.Backend.Options != nil {
		t.Errorf("switching backend by env must drop the other backend's options: %+v", c.Backend)
	}
}

func TestInvalidValues(t *testing.T) {
	for _, body := range []string{
		"listen: nonsense\n",
		"admin_listen: 9325\n",
		"account_id: '12'\n",
		"log_level: loud\n",
		"policy:\n  mode: lenient\n",
		"policy:\n  overrides:\n    fifo.ordering: maybe\n",
	} {
		if _, err := Load(write(t, body), nil); err == nil {
			t.Errorf("%q: want an error", body)
		}
	}
}

func TestExampleConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../configs/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example configs found")
	}
	for _, f := range files {
		if _, err := Load(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
