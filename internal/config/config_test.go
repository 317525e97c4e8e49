package config

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
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
	c, err := Load(p, env(map[string]string{"ANYSQS_LISTEN": "127.0.0.2:2000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.2:2000" || c.AdminListen != "127.0.0.1:1001" {
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

// TestBackendOptionsEnv: ANYSQS_BACKEND_OPTIONS merges over the file's options key by
// key (null removes one), and a value that is not a mapping is an error.
func TestBackendOptionsEnv(t *testing.T) {
	p := write(t, "backend:\n  name: postgres\n  options:\n    dsn: postgres://x\n    schema: a\n    max_conns: 4\n")
	c, err := Load(p, env(map[string]string{"ANYSQS_BACKEND_OPTIONS": `{schema: b, max_conns: null, pool: 2}`}))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Backend.Options
	if o["dsn"] != "postgres://x" || o["schema"] != "b" || o["pool"] != 2 || len(o) != 3 {
		t.Errorf("merged options = %v, want dsn from the file, schema and pool from the env, no max_conns", o)
	}
	for _, bad := range []string{"[1, 2]", "just text", "{unclosed"} {
		if _, err := Load(p, env(map[string]string{"ANYSQS_BACKEND_OPTIONS": bad})); err == nil {
			t.Errorf("ANYSQS_BACKEND_OPTIONS=%q accepted", bad)
		}
	}
}

func TestInvalidValues(t *testing.T) {
	for _, body := range []string{
		"listen: nonsense\n",
		"admin_listen: 9325\n",
		"auth:\n  credentials:\n    - access_key_id: A\n",
		"auth:\n  credentials:\n    - secret_access_key: s\n",
		"auth:\n  credentials:\n    - {access_key_id: A, secret_access_key: s}\n    - {access_key_id: A, secret_access_key: t}\n",
		"auth:\n  credentials:\n    - {access_key_id: A, secret_access_key_env: ANYSQS_TEST_UNSET_SECRET}\n",
		"account_id: '12'\n",
		"log_level: loud\n",
		"console: true\n", // needs admin_listen
		"policy:\n  mode: lenient\n",
		"policy:\n  overrides:\n    fifo.ordering: maybe\n",
		"limits:\n  requests_per_second: -1\n",
		"listen: 0.0.0.0:9324\n", // every interface without credentials
		"listen: ':9324'\n",
		"listen: 10.0.0.5:9324\n",
		"limits:\n  max_long_polls: -5\n",
		"limits:\n  max_in_flight: -1\n",
		"limits:\n  max_long_pols: 5\n",
	} {
		if _, err := Load(write(t, body), nil); err == nil {
			t.Errorf("%q: want an error", body)
		}
	}
}

func TestExampleConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../configs/*.yaml")
	container, _ := filepath.Glob("../../deploy/container/*.yaml")
	files = append(files, container...)
	if len(files) == 0 {
		t.Fatal("no example configs found")
	}
	// A container listens on every interface, so it needs keys: its deployment sets them.
	keys := env(map[string]string{"ANYSQS_AUTH_CREDENTIALS": "AKIDEXAMPLE:secret"})
	for _, f := range files {
		if _, err := Load(f, keys); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestAuthCredentials: credentials come from the file, with secrets inline or from a named
// variable, or from ANYSQS_AUTH_CREDENTIALS, which replaces the file's list.
func TestAuthCredentials(t *testing.T) {
	p := write(t, "auth:\n  credentials:\n    - {access_key_id: A, secret_access_key: s}\n    - {access_key_id: B, secret_access_key_env: B_SECRET}\n")
	c, err := Load(p, env(map[string]string{"B_SECRET": "from-env"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Auth.Secrets(); len(got) != 2 || got["A"] != "s" || got["B"] != "from-env" {
		t.Fatalf("secrets %v", got)
	}
	c, err = Load(p, env(map[string]string{"B_SECRET": "x", "ANYSQS_AUTH_CREDENTIALS": "K1:s1, K2:s2:with-colon"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Auth.Secrets(); len(got) != 2 || got["K1"] != "s1" || got["K2"] != "s2:with-colon" {
		t.Fatalf("secrets from ANYSQS_AUTH_CREDENTIALS %v", got)
	}
	if _, err := Load("", env(map[string]string{"ANYSQS_AUTH_CREDENTIALS": "no-colon"})); err == nil {
		t.Fatal("a malformed ANYSQS_AUTH_CREDENTIALS must fail")
	}
	if c, err := Load("", nil); err != nil || c.Auth.Secrets() != nil {
		t.Fatalf("default: %v, %v; want no credentials", c.Auth.Secrets(), err)
	}
}

// docs/configuration.md is where operators look the overrides up: it must name every one.
func TestReadmeNamesEveryEnvOverride(t *testing.T) {
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range EnvNames() {
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("docs/configuration.md does not name %s", name)
		}
	}
}

func TestEveryStringOverride(t *testing.T) {
	for name, tc := range map[string]struct {
		value string
		got   func(Config) string
	}{
		"ANYSQS_LISTEN":               {"127.0.0.1:7001", func(c Config) string { return c.Listen }},
		"ANYSQS_ADMIN_LISTEN":         {"127.0.0.1:7002", func(c Config) string { return c.AdminListen }},
		"ANYSQS_PUBLIC_URL":           {"https://sqs.example.com", func(c Config) string { return c.PublicURL }},
		"ANYSQS_ACCOUNT_ID":           {"123456789012", func(c Config) string { return c.AccountID }},
		"ANYSQS_REGION":               {"eu-west-3", func(c Config) string { return c.Region }},
		"ANYSQS_LOG_LEVEL":            {"warn", func(c Config) string { return c.LogLevel }},
		"ANYSQS_POLICY_MODE":          {"strict", func(c Config) string { return c.Policy.Mode }},
		"ANYSQS_BACKEND":              {"postgres", func(c Config) string { return c.Backend.Name }},
		"ANYSQS_LIMITS_MAX_IN_FLIGHT": {"25", func(c Config) string { return strconv.FormatInt(c.Limits.MaxInFlight, 10) }},
	} {
		c, err := Load("", env(map[string]string{name: tc.value}))
		if err != nil {
			t.Errorf("%s=%s: %v", name, tc.value, err)
			continue
		}
		if got := tc.got(c); got != tc.value {
			t.Errorf("%s=%s: got %q", name, tc.value, got)
		}
	}
}

// Mistakes are told in the file's terms: its name, the line, the dotted key, what the
// section has; never a Go type.
func TestErrorsNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"listen: 127.0.0.1:1\nlistn: x\n", ":2: listn: unknown key (did you mean listen?); this section has: "},
		{"policy:\n  mode: strict\n  requir: [a]\n", ":3: policy.requir: unknown key (did you mean require?)"},
		{"auth:\n  credentials:\n    - {access_key_id: A, secret: s}\n", ":3: auth.credentials[0].secret: unknown key"},
		{"policy:\n  require: fifo.ordering\n", ":2: policy.require: want a list, got \"fifo.ordering\""},
		{"backend: sqlite\n", ":1: backend: want a mapping, got \"sqlite\""},
		{"listen: [a, b]\n", ":1: listen: want a single value, got a list"},
		{"log_level: loud\n", ":1: log_level: \"loud\" is not one of debug, info, warn, error"},
		{"policy:\n  overrides:\n    fifo.ordering: maybe\n", ":3: policy.overrides.fifo.ordering: \"maybe\" is not strict or degrade"},
		{"listen: [unclosed\n", ":1: did not find expected ',' or ']'"},
	} {
		p := write(t, tc.body)
		_, err := Load(p, nil)
		if err == nil || !strings.Contains(err.Error(), p+tc.want) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s%s", tc.body, err, p, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "[]string")) {
			t.Errorf("%q: the error speaks Go: %v", tc.body, err)
		}
	}
}

// Locate points a driver's complaint about one of its options at the option's line, or
// at the nearest enclosing key the file has.
func TestLocateBackendOption(t *testing.T) {
	p := write(t, "backend:\n  name: postgres\n  options:\n    dsn: postgres://x\n    tls:\n      mode: sure\n")
	c, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"backend.options.tls.mode": p + ":6: backend.options.tls.mode: bad",
		"backend.options.dsn":      p + ":4: backend.options.dsn: bad",
		"backend.options.schema":   p + ":3: backend.options.schema: bad",
	} {
		if got := c.Locate(key, "bad").Error(); got != want {
			t.Errorf("Locate(%s) = %s, want %s", key, got, want)
		}
	}
}

// Path options are relative to the file that holds them; other strings, absolute paths
// and ":memory:" are left alone.
func TestPathsRelativeToFile(t *testing.T) {
	p := write(t, "backend:\n  name: x\n  options:\n    data_dir: ./data\n    dsn: ./not-a-path\n"+
		"    mem_dir: \":memory:\"\n    abs_dir: /var/lib/anysqs\n    tls:\n      ca_file: certs/ca.pem\n")
	c, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	o := c.Backend.Options
	if o["data_dir"] != filepath.Join(dir, "data") || o["dsn"] != "./not-a-path" || o["mem_dir"] != ":memory:" ||
		o["abs_dir"] != "/var/lib/anysqs" || o["tls"].(map[string]any)["ca_file"] != filepath.Join(dir, "certs/ca.pem") {
		t.Fatalf("options %v", o)
	}
}

func TestLogFormat(t *testing.T) {
	if c, err := Load(write(t, "log_format: json\n"), nil); err != nil || c.LogFormat != "json" {
		t.Fatalf("%v %q", err, c.LogFormat)
	}
	if c, err := Load("", env(map[string]string{"ANYSQS_LOG_FORMAT": "json"})); err != nil || c.LogFormat != "json" {
		t.Fatalf("%v %q", err, c.LogFormat)
	}
	if _, err := Load(write(t, "log_format: xml\n"), nil); err == nil {
		t.Fatal("log_format xml must fail")
	}
}

// TestLimits: per-key limits come from the file; unset ones keep their defaults.
func TestLimits(t *testing.T) {
	cfg, err := Load(write(t, "limits:\n  requests_per_second: 50\n  burst: 100\n  max_in_flight: 7\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Limits{RequestsPerSecond: 50, Burst: 100, MaxLongPolls: DefaultMaxLongPolls, MaxInFlight: 7}); cfg.Limits != want {
		t.Fatalf("limits %+v, want %+v", cfg.Limits, want)
	}
}

// TestUnauthenticatedOnlyOnLoopback: without credentials the gateway listens on loopback
// only, unless the configuration says so in as many words.
func TestUnauthenticatedOnlyOnLoopback(t *testing.T) {
	for _, body := range []string{
		"listen: 127.0.0.1:9324\n",
		"listen: '[::1]:9324'\n",
		"listen: localhost:9324\n",
		"listen: 0.0.0.0:9324\nauth:\n  allow_unauthenticated: true\n",
		"listen: 0.0.0.0:9324\nauth:\n  credentials:\n    - {access_key_id: A, secret_access_key: s}\n",
		"admin_listen: 0.0.0.0:9325\n", // metrics and health checks only
		"admin_listen: 127.0.0.1:9325\nconsole: true\n",
		"admin_listen: 0.0.0.0:9325\nconsole: true\nauth:\n  allow_unauthenticated: true\n",
		"admin_listen: 0.0.0.0:9325\nconsole: true\nauth:\n  credentials:\n    - {access_key_id: A, secret_access_key: s}\n",
	} {
		if _, err := Load(write(t, body), nil); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
	_, err := Load(write(t, "listen: 0.0.0.0:9324\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "auth.allow_unauthenticated") {
		t.Errorf("0.0.0.0 without credentials: %v, want the reason and the ways out", err)
	}
	// The console, open without keys, lists and redrives every queue's messages.
	p := write(t, "admin_listen: 0.0.0.0:9325\nconsole: true\n")
	_, err = Load(p, nil)
	if want := p + ":1: admin_listen: 0.0.0.0:9325 is reachable from other hosts"; err == nil || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "turn the console off") {
		t.Errorf("the console on 0.0.0.0 without credentials: %v, want %q and the ways out", err, want)
	}
}

// TestCredentialAccountsAndSecretFiles: a key's account and a secret read from a file
// (relative to the configuration, its trailing newline dropped); the environment's
// KEY:SECRET:ACCOUNT form; what is refused.
func TestCredentialAccountsAndSecretFiles(t *testing.T) {
	cfgPath := write(t, "auth:\n  credentials:\n    - {access_key_id: A, secret_access_key_file: a.secret, account_id: \"000000000001\"}\n"+
		"    - {access_key_id: B, secret_access_key: b}\ntls:\n  cert_file: c.pem\n  key_file: /k.pem\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfgPath), "a.secret"), []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Auth.Secrets(); s["A"] != "from-file" || s["B"] != "b" {
		t.Errorf("secrets %v", s)
	}
	if a := cfg.Auth.Accounts(); len(a) != 1 || a["A"] != "000000000001" {
		t.Errorf("accounts %v", a)
	}
	if cfg.TLS.CertFile != filepath.Join(filepath.Dir(cfgPath), "c.pem") || cfg.TLS.KeyFile != "/k.pem" {
		t.Errorf("tls %+v", cfg.TLS)
	}
	env := map[string]string{"ANYSQS_AUTH_CREDENTIALS": "K1:s1:000000000002,K2:s:2"}
	cfg, err = Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if a, s := cfg.Auth.Accounts(), cfg.Auth.Secrets(); a["K1"] != "000000000002" || s["K1"] != "s1" || a["K2"] != "" || s["K2"] != "s:2" {
		t.Errorf("from the environment: accounts %v, secrets %v", a, s)
	}
	for body, want := range map[string]string{
		"auth:\n  credentials:\n    - {access_key_id: A, secret_access_key: s, account_id: \"12\"}\n":    "must be 12 digits",
		"auth:\n  credentials:\n    - {access_key_id: A, secret_access_key_file: /nonexistent/secret}\n": "secret_access_key_file",
		"tls:\n  cert_file: c.pem\n": "cert_file and key_file",
	} {
		if _, err := Load(write(t, body), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// TestOverridesAreValidated: a command-line override (serve's --listen) is applied over
// the file and the environment before the checks, so a gateway without keys refuses a
// public address given by flag as it does one in the file, and an error about the value
// names the flag; a loopback flag over a public file address is accepted.
func TestOverridesAreValidated(t *testing.T) {
	flag := func(v string) Override { return Override{Flag: "--listen", Key: "listen", Value: v} }
	p := write(t, "listen: 127.0.0.1:9324\n")
	_, err := Load(p, env(map[string]string{"ANYSQS_LISTEN": "127.0.0.2:1"}), flag("0.0.0.0:9324"))
	if want := "listen (set by --listen): 0.0.0.0:9324 is reachable from other hosts"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("--listen 0.0.0.0 without credentials: %v, want %q", err, want)
	}
	if c, err := Load(write(t, "listen: 0.0.0.0:9324\n"), nil, flag("127.0.0.1:1")); err != nil || c.Listen != "127.0.0.1:1" {
		t.Errorf("--listen 127.0.0.1:1 over a public file address: %q, %v", c.Listen, err)
	}
	if c, err := Load(p, env(map[string]string{"ANYSQS_AUTH_CREDENTIALS": "K:s"}), flag("0.0.0.0:1")); err != nil || c.Listen != "0.0.0.0:1" {
		t.Errorf("--listen 0.0.0.0:1 with credentials: %q, %v", c.Listen, err)
	}
	if c, err := Load(p, nil, flag("")); err != nil || c.Listen != "127.0.0.1:9324" {
		t.Errorf("an empty override must leave the file's value: %q, %v", c.Listen, err)
	}
	if _, err := Load("", nil, flag("nonsense")); err == nil || !strings.HasPrefix(err.Error(), "listen (set by --listen): \"nonsense\" is not HOST:PORT") {
		t.Errorf("--listen nonsense: %v", err)
	}
	if _, err := Load("", nil, Override{Flag: "--bogus", Key: "bogus", Value: "x"}); err == nil {
		t.Error("an override of a key no flag sets must fail")
	}
}

// An error about a value an environment variable set names the variable, not the line
// of the file whose value it replaced; with no file as well.
func TestErrorsNameTheEnvironmentVariable(t *testing.T) {
	p := write(t, "listen: 127.0.0.1:9324\naccount_id: \"000000000000\"\nbackend:\n  name: postgres\n  options:\n    dsn: postgres://x\n    schema: a\n")
	for _, tc := range []struct {
		path string
		env  map[string]string
		want string
	}{
		{p, map[string]string{"ANYSQS_LISTEN": "0.0.0.0:9324"}, "listen (set by ANYSQS_LISTEN): 0.0.0.0:9324 is reachable from other hosts"},
		{"", map[string]string{"ANYSQS_LISTEN": "0.0.0.0:9324"}, "listen (set by ANYSQS_LISTEN): 0.0.0.0:9324 is reachable from other hosts"},
		{p, map[string]string{"ANYSQS_ACCOUNT_ID": "12"}, "account_id (set by ANYSQS_ACCOUNT_ID): \"12\" must be 12 digits"},
		{p, map[string]string{"ANYSQS_AUTH_CREDENTIALS": "K:s,K:t"}, "auth.credentials (set by ANYSQS_AUTH_CREDENTIALS): access key K is listed twice"},
		{p, map[string]string{"ANYSQS_CONSOLE": "true"}, "console (set by ANYSQS_CONSOLE): needs admin_listen"},
	} {
		_, err := Load(tc.path, env(tc.env))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v over %q: %v, want %q", tc.env, tc.path, err, tc.want)
		}
	}
	// A driver's complaint about an option: the variable when it set the option, the
	// file's line otherwise; a backend switched by ANYSQS_BACKEND has no file lines.
	c, err := Load(p, env(map[string]string{"ANYSQS_BACKEND_OPTIONS": "{schema: b}"}))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"backend.options.schema": "backend.options.schema (set by ANYSQS_BACKEND_OPTIONS): bad",
		"backend.options.dsn":    p + ":6: backend.options.dsn: bad",
	} {
		if got := c.Locate(key, "bad").Error(); got != want {
			t.Errorf("Locate(%s) = %s, want %s", key, got, want)
		}
	}
	c, err = Load(p, env(map[string]string{"ANYSQS_BACKEND": "sqlite"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Locate("backend.options.dsn", "bad").Error(), "backend.options.dsn (set by ANYSQS_BACKEND): bad"; got != want {
		t.Errorf("Locate after a switch = %s, want %s", got, want)
	}
}

// TestCheckBound: the address a listener bound is held to Validate's rule, so a host
// name that resolved to a public address (localhost mapped elsewhere) is refused.
func TestCheckBound(t *testing.T) {
	public := &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 9324}
	lo := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 9324}
	c, err := Load(write(t, "listen: localhost:9324\nadmin_listen: localhost:9325\nconsole: true\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckBound("listen", lo); err != nil {
		t.Errorf("loopback: %v", err)
	}
	if err := c.CheckBound("listen", public); err == nil || !strings.Contains(err.Error(), "listen: 10.0.0.5:9324 (bound for localhost:9324) is reachable") {
		t.Errorf("listen bound to 10.0.0.5: %v", err)
	}
	if err := c.CheckBound("admin_listen", public); err == nil || !strings.Contains(err.Error(), "the console") {
		t.Errorf("the console bound to 10.0.0.5: %v", err)
	}
	if c, err = Load(write(t, "listen: localhost:9324\nadmin_listen: localhost:9325\n"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckBound("admin_listen", public); err != nil {
		t.Errorf("the admin listener without the console: %v", err)
	}
	for _, body := range []string{"auth:\n  allow_unauthenticated: true\n", "auth:\n  credentials:\n    - {access_key_id: A, secret_access_key: s}\n"} {
		c, err := Load(write(t, "listen: localhost:9324\n"+body), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckBound("listen", public); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

func TestRoutedBackends(t *testing.T) {
	routed := "backends:\n  local: {name: sqlite, options: {data_dir: d}}\n  main: {name: postgres, options: {dsn: postgres://x}}\n" +
		"routes:\n  - queues: \"orders*\"\n    backend: main\n  - backend: local\n"
	p := write(t, routed)
	c, err := Load(p, env(map[string]string{"ANYSQS_BACKENDS_OPTIONS": "{main: {schema: q2, dsn: null}}"}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Routed() || c.Backend.Name != "" || strings.Join(c.BackendNames(), ",") != "local,main" {
		t.Fatalf("routed: %v, backend %q, backends %v", c.Routed(), c.Backend.Name, c.BackendNames())
	}
	if got := c.Backends["local"].Options["data_dir"]; got != filepath.Join(filepath.Dir(p), "d") {
		t.Errorf("a backend's relative path is not resolved against the file: %v", got)
	}
	if o := c.Backends["main"].Options; o["schema"] != "q2" || o["dsn"] != nil {
		t.Errorf("ANYSQS_BACKENDS_OPTIONS not merged: %v", o)
	}
	if len(c.Routes) != 2 || c.Routes[0] != (Route{Queues: "orders*", Backend: "main"}) {
		t.Errorf("routes: %+v", c.Routes)
	}

	for _, tc := range []struct{ file, env, want string }{
		{routed + "backend: {name: sqlite}\n", "", "set backend or backends"},
		{strings.Replace(routed, "backend: main", "backend: other", 1), "", `routes[0].backend: "other" is not one of backends: local, main`},
		{strings.Replace(routed, "  - backend: local\n", "", 1), "", "exactly one route must have no queues"},
		{routed + "  - backend: main\n", "", "exactly one route must have no queues"},
		{strings.Replace(routed, `"orders*"`, `"orders["`, 1), "", "routes[0].queues"},
		{"backend: {name: sqlite}\nroutes:\n  - backend: local\n", "", "routes: need backends:"},
		{routed, "ANYSQS_BACKEND=postgres", "ANYSQS_BACKEND: the configuration routes queues"},
		{routed, "ANYSQS_BACKENDS_OPTIONS={other: {a: b}}", `no backend "other"`},
	} {
		vars := map[string]string{}
		if k, v, ok := strings.Cut(tc.env, "="); ok {
			vars[k] = v
		}
		_, err := Load(write(t, tc.file), env(vars))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q with %q: %v; want an error containing %q", tc.file, tc.env, err, tc.want)
		}
	}
}
