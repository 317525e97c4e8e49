// Package config loads the anysqs gateway configuration: a YAML file, then environment
// overrides for the common keys. Unknown keys are errors that name the file, the line and
// the key, so a typo never silently falls back to a default. Relative paths in a file are
// relative to that file, so a configuration means the same wherever anysqs is started.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/anysqs/anysqs/internal/declare"
)

// DefaultListen is where the gateway listens when nothing says otherwise. 9324 is the
// port SQS emulators conventionally use, so existing local setups keep working.
const DefaultListen = "127.0.0.1:9324"

// Config is the whole gateway configuration.
type Config struct {
	// Listen is the HOST:PORT the HTTP listener binds.
	Listen string `yaml:"listen"`
	// AdminListen, when set, is the HOST:PORT of a second listener for operators:
	// /metrics (Prometheus), /healthz (the process is up) and /readyz (the backend
	// answers). Off by default; it is not authenticated, so keep it off public networks.
	AdminListen string `yaml:"admin_listen"`
	// Console serves a read-mostly web console at /console on the admin listener: queues
	// and their counts, DLQs with a redrive button, the capability matrix, request rates.
	// Behind HTTP Basic with an access key ID and secret from auth when auth lists any.
	Console bool `yaml:"console"`
	// PublicURL is the base of queue URLs handed to clients, e.g. "http://queues.internal:9324".
	// Empty: derived from each request's Host header.
	PublicURL string `yaml:"public_url"`
	// AccountID appears in queue URLs and ARNs.
	AccountID string `yaml:"account_id"`
	// Region appears in ARNs.
	Region string `yaml:"region"`
	// LogLevel is debug, info, warn or error. At debug every request logs one line.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text (logfmt-style key=value) or json (one object a line).
	LogFormat string `yaml:"log_format"`
	// Backend selects and configures the storage driver.
	Backend Backend `yaml:"backend"`
	// Backends, instead of Backend, configure several drivers by a name of the file's
	// choosing, and Routes say which serves each queue: the first route whose glob
	// matches the queue's name, else the one route without queues.
	Backends map[string]Backend `yaml:"backends"`
	Routes   []Route            `yaml:"routes"`
	// Policy says what to do with capabilities the backend only degrades.
	Policy Policy `yaml:"policy"`
	// Auth, when it lists credentials, makes the gateway verify every request's AWS
	// Signature Version 4 against them.
	Auth Auth `yaml:"auth"`
	// Limits bound what the holder of one access key may ask of the gateway.
	Limits Limits `yaml:"limits"`
	// TLS, when its files are set, serves the SQS listener over HTTPS; AdminTLS the admin
	// listener. The files are read again when they change, so a renewed certificate
	// needs no restart.
	TLS      TLS `yaml:"tls"`
	AdminTLS TLS `yaml:"admin_tls"`
	// Queues are the queues declared by the file's queues: list and by the file its
	// queues_file names (package declare says how they are written and applied): the
	// gateway creates what is missing and brings what differs into line at start.
	Queues     []declare.Queue `yaml:"-"`
	QueuesFile string          `yaml:"queues_file"`
	// QueueMetrics configures the per-queue series of /metrics (on admin_listen).
	QueueMetrics QueueMetrics `yaml:"queue_metrics"`

	// src is where the file's keys are, for errors raised after loading (driver options).
	src *source
}

// Auth lists the access keys clients may sign with.
type Auth struct {
	Credentials []Credential `yaml:"credentials"`
	// AllowUnauthenticated lets a gateway without credentials listen on an address other
	// than loopback, where anyone who reaches the port may read and delete every queue.
	AllowUnauthenticated bool `yaml:"allow_unauthenticated"`
}

// Limits are per access key (without auth, for all clients together); 0 is no limit.
type Limits struct {
	// RequestsPerSecond is each key's sustained request rate, Burst how many requests
	// it may send at once above it (0: the rate rounded up); past them, RequestThrottled.
	RequestsPerSecond float64 `yaml:"requests_per_second"`
	Burst             int     `yaml:"burst"`
	// MaxLongPolls is how many receives of one key may wait at once; one more is OverLimit.
	MaxLongPolls int `yaml:"max_long_polls"`
	// MaxInFlight is, per queue and not per key, the most in-flight messages the queue
	// may hold, SQS's quota (0: 120000); at it receives answer as SQS's do.
	MaxInFlight int64 `yaml:"max_in_flight"`
}

// DefaultMaxLongPolls bounds one key's waiting receives unless the configuration says
// otherwise: far above what one application runs, low enough that a runaway client
// cannot hold every connection of the gateway.
const DefaultMaxLongPolls = 2000

// TLS names a PEM certificate (chain) and its private key.
type TLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Enabled reports whether the listener serves HTTPS.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Credential is one access key. The secret may come from a file (SecretAccessKeyFile,
// e.g. a mounted Secret) or the environment (SecretAccessKeyEnv names the variable)
// instead of the configuration file. AccountID is the account the key belongs to; empty:
// the gateway's account_id.
type Credential struct {
	AccessKeyID         string `yaml:"access_key_id"`
	SecretAccessKey     string `yaml:"secret_access_key"`
	SecretAccessKeyEnv  string `yaml:"secret_access_key_env"`
	SecretAccessKeyFile string `yaml:"secret_access_key_file"`
	AccountID           string `yaml:"account_id"`
}

// QueueMetrics configures the per-queue series: message counts and the oldest message's
// age, read from the backend in the background every Interval (a Go duration such as
// "15s"; "0" or "off" turns them off; empty: 15s), for at most MaxQueues queues by name
// (0: 500), the others summed under queue="(other)".
type QueueMetrics struct {
	Interval  string `yaml:"interval"`
	MaxQueues int    `yaml:"max_queues"`
}

// Every returns the collection interval: 0 for the default, negative when turned off.
func (q QueueMetrics) Every() (time.Duration, error) {
	switch q.Interval {
	case "":
		return 0, nil
	case "0", "off":
		return -1, nil
	}
	d, err := time.ParseDuration(q.Interval)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration such as 15s, or off", q.Interval)
	case d <= 0:
		return -1, nil
	case d < time.Second:
		return 0, fmt.Errorf("%q: at least 1s (each collection reads every queue's counts)", q.Interval)
	}
	return d, nil
}

// Secrets returns the credentials as access key ID → secret.
func (a Auth) Secrets() map[string]string {
	if len(a.Credentials) == 0 {
		return nil
	}
	m := make(map[string]string, len(a.Credentials))
	for _, c := range a.Credentials {
		m[c.AccessKeyID] = c.SecretAccessKey
	}
	return m
}

// Accounts returns access key ID → account ID for the keys that name an account.
func (a Auth) Accounts() map[string]string {
	m := map[string]string{}
	for _, c := range a.Credentials {
		if c.AccountID != "" {
			m[c.AccessKeyID] = c.AccountID
		}
	}
	return m
}

// Backend names a registered driver and carries its options, which the driver decodes
// (and checks for unknown keys) itself.
type Backend struct {
	Name    string         `yaml:"name"`
	Options map[string]any `yaml:"options"`
}

// Route sends the queues whose names match Queues (a glob: * ? [a-z]; "" for every
// queue) to the backend named Backend.
type Route struct {
	Queues  string `yaml:"queues"`
	Backend string `yaml:"backend"`
}

// BackendNames lists the configured backends' names in order: Backends' keys sorted,
// or the single Backend's driver name.
func (c Config) BackendNames() []string {
	if len(c.Backends) == 0 {
		return []string{c.Backend.Name}
	}
	names := make([]string, 0, len(c.Backends))
	for n := range c.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Routed reports whether the configuration has several backends and routes.
func (c Config) Routed() bool { return len(c.Backends) > 0 }

// Policy is the capability policy: Mode is "degrade" (default: degraded capabilities
// work in their documented fallback form) or "strict" (they are rejected); Overrides
// sets the mode per capability ID; Require lists capability IDs the application cannot
// do without, so start-up fails on a backend that does not deliver them.
type Policy struct {
	Mode      string            `yaml:"mode"`
	Overrides map[string]string `yaml:"overrides"`
	Require   []string          `yaml:"require"`
}

// Default returns the configuration used when no file is given: the embedded backend
// with its data under ./data.
func Default() Config {
	return Config{
		Listen:    DefaultListen,
		AccountID: "000000000000",
		Region:    "us-east-1",
		LogLevel:  "info",
		LogFormat: "text",
		Backend:   Backend{Name: "sqlite", Options: map[string]any{"data_dir": "./data"}},
		Policy:    Policy{Mode: "degrade"},
		Limits:    Limits{MaxLongPolls: DefaultMaxLongPolls},
	}
}

// Override is a value given on the command line for a key of the configuration, such as
// serve's --listen for listen. An empty Value is a flag not given.
type Override struct {
	Flag  string // as the user writes it, for errors: "--listen"
	Key   string // the key it sets: "listen"
	Value string
}

// Load reads the file at path (none if path is empty) over the defaults, then applies
// environment overrides from getenv, then the command line's overrides, then validates:
// every check holds for the values the gateway will use, wherever each came from, and
// an error about a value that did not come from the file names what set it. Relative
// paths among the backend options (keys ending in _dir, _file or _path) are resolved
// against the file's directory.
func Load(path string, getenv func(string) string, overrides ...Override) (Config, error) {
	cfg := Default()
	cfg.src = &source{lines: map[string]int{}}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, err
		}
		src, err := decode(path, data, &cfg)
		if err != nil {
			return Config{}, err
		}
		cfg.src = src
		if cfg.Backend.Options != nil {
			resolvePaths(cfg.Backend.Options, filepath.Dir(path))
		}
		for _, b := range cfg.Backends {
			if b.Options != nil {
				resolvePaths(b.Options, filepath.Dir(path))
			}
		}
		cfg.resolveFiles(filepath.Dir(path))
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return Config{}, err
	}
	for _, o := range overrides {
		if o.Value == "" {
			continue
		}
		field, ok := stringKeys[o.Key]
		if !ok {
			return Config{}, fmt.Errorf("%s: no flag sets the configuration key %s", o.Flag, o.Key)
		}
		*field(&cfg) = o.Value
		cfg.src.set(o.Key, o.Flag)
	}
	if err := cfg.readSecretFiles(); err != nil {
		return Config{}, cfg.src.wrap(err)
	}
	if err := cfg.normalizeQueues(); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, cfg.src.wrap(err)
	}
	return cfg, nil
}

// normalizeQueues drops a declared queue's account when it is the gateway's own, so that
// both spellings name one queue.
func (c *Config) normalizeQueues() error {
	for i := range c.Queues {
		if c.Queues[i].Account == c.AccountID {
			c.Queues[i].Account = ""
		}
	}
	return declare.Check(c.Queues)
}

// resolveFiles makes the file's relative secret and certificate paths relative to dir.
func (c *Config) resolveFiles(dir string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for i := range c.Auth.Credentials {
		abs(&c.Auth.Credentials[i].SecretAccessKeyFile)
	}
	abs(&c.TLS.CertFile)
	abs(&c.TLS.KeyFile)
	abs(&c.AdminTLS.CertFile)
	abs(&c.AdminTLS.KeyFile)
}

// readSecretFiles reads each secret_access_key_file; a trailing newline is not part of
// the secret.
func (c *Config) readSecretFiles() error {
	for i, cr := range c.Auth.Credentials {
		if cr.SecretAccessKeyFile == "" || cr.SecretAccessKey != "" {
			continue
		}
		b, err := os.ReadFile(cr.SecretAccessKeyFile)
		if err != nil {
			return fmt.Errorf("auth.credentials[%d]: secret_access_key_file: %w", i, err)
		}
		c.Auth.Credentials[i].SecretAccessKey = strings.TrimRight(string(b), "\r\n")
	}
	return nil
}

func decode(path string, data []byte, cfg *Config) (*source, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(path, err)
	}
	src := &source{path: path, lines: map[string]int{}}
	if len(doc.Content) == 0 { // an empty file: the defaults
		return src, nil
	}
	// The queues: list is read by package declare, which locates its own errors.
	queues := takeKey(doc.Content[0], "queues")
	// Checked against the YAML tree first, so that a mistake is told in the file's terms
	// (key, line, list, mapping) rather than in those of the Go types it decodes into.
	if err := src.check(doc.Content[0], reflect.TypeFor[Config](), ""); err != nil {
		return nil, err
	}
	var fromFile Config
	if err := doc.Content[0].Decode(&fromFile); err != nil {
		return nil, syntaxError(path, err)
	}
	merge(cfg, fromFile)
	if queues != nil {
		qs, err := declare.Parse(path, queues)
		if err != nil {
			return nil, err
		}
		cfg.Queues = append(cfg.Queues, qs...)
	}
	if fromFile.QueuesFile != "" {
		cfg.QueuesFile = declare.Resolve(path, fromFile.QueuesFile)
		qs, err := declare.ParseFile(cfg.QueuesFile)
		if err != nil {
			return nil, err
		}
		cfg.Queues = append(cfg.Queues, qs...)
	}
	return src, nil // Load checks the declarations together (normalizeQueues)
}

// takeKey removes key from the mapping n and returns its value (nil if n has none).
func takeKey(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := n.Content[i+1]
			n.Content = append(n.Content[:i:i], n.Content[i+2:]...)
			return v
		}
	}
	return nil
}

// syntaxError turns yaml's "yaml: line 3: ..." into "FILE:3: ...".
func syntaxError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
		_, rest, _ := strings.Cut(msg, ": ")
		return fmt.Errorf("%s:%d: %s", path, line, rest)
	}
	return fmt.Errorf("%s: %s", path, msg)
}

// merge copies the keys the file set over the defaults. A backend section replaces the
// default backend whole: options of one driver mean nothing to another.
func merge(dst *Config, src Config) {
	set := func(d *string, s string) {
		if s != "" {
			*d = s
		}
	}
	set(&dst.Listen, src.Listen)
	set(&dst.AdminListen, src.AdminListen)
	set(&dst.TLS.CertFile, src.TLS.CertFile)
	set(&dst.TLS.KeyFile, src.TLS.KeyFile)
	set(&dst.AdminTLS.CertFile, src.AdminTLS.CertFile)
	set(&dst.AdminTLS.KeyFile, src.AdminTLS.KeyFile)
	dst.Console = dst.Console || src.Console
	set(&dst.PublicURL, src.PublicURL)
	set(&dst.AccountID, src.AccountID)
	set(&dst.Region, src.Region)
	set(&dst.LogLevel, src.LogLevel)
	set(&dst.LogFormat, src.LogFormat)
	if src.Backend.Name != "" {
		dst.Backend = src.Backend
	}
	if src.Backends != nil {
		if src.Backend.Name == "" {
			dst.Backend = Backend{} // the default backend gives way to the file's
		}
		dst.Backends = src.Backends
	}
	if src.Routes != nil {
		dst.Routes = src.Routes
	}
	set(&dst.Policy.Mode, src.Policy.Mode)
	if src.Policy.Overrides != nil {
		dst.Policy.Overrides = src.Policy.Overrides
	}
	if src.Policy.Require != nil {
		dst.Policy.Require = src.Policy.Require
	}
	if src.Auth.Credentials != nil {
		dst.Auth.Credentials = src.Auth.Credentials
	}
	dst.Auth.AllowUnauthenticated = dst.Auth.AllowUnauthenticated || src.Auth.AllowUnauthenticated
	if src.Limits.RequestsPerSecond != 0 {
		dst.Limits.RequestsPerSecond = src.Limits.RequestsPerSecond
	}
	if src.Limits.Burst != 0 {
		dst.Limits.Burst = src.Limits.Burst
	}
	if src.Limits.MaxLongPolls != 0 {
		dst.Limits.MaxLongPolls = src.Limits.MaxLongPolls
	}
	if src.Limits.MaxInFlight != 0 {
		dst.Limits.MaxInFlight = src.Limits.MaxInFlight
	}
	set(&dst.QueueMetrics.Interval, src.QueueMetrics.Interval)
	if src.QueueMetrics.MaxQueues != 0 {
		dst.QueueMetrics.MaxQueues = src.QueueMetrics.MaxQueues
	}
}

// envVar is one environment override: the variable, the key it sets (for errors about
// its value; "" when set records the keys itself) and how it changes the configuration.
type envVar struct {
	Name string
	Key  string
	set  func(cfg *Config, v string) error
}

// stringKeys are the keys an environment variable or a flag sets as they are given.
var stringKeys = map[string]func(*Config) *string{
	"listen":       func(c *Config) *string { return &c.Listen },
	"admin_listen": func(c *Config) *string { return &c.AdminListen },
	"public_url":   func(c *Config) *string { return &c.PublicURL },
	"account_id":   func(c *Config) *string { return &c.AccountID },
	"region":       func(c *Config) *string { return &c.Region },
	"log_level":    func(c *Config) *string { return &c.LogLevel },
	"log_format":   func(c *Config) *string { return &c.LogFormat },
	"policy.mode":  func(c *Config) *string { return &c.Policy.Mode },
}

func setString(key string) func(*Config, string) error {
	return func(cfg *Config, v string) error { *stringKeys[key](cfg) = v; return nil }
}

// envVars are the environment variables Load honours, in the order they apply.
var envVars = []envVar{
	{"ANYSQS_LISTEN", "listen", setString("listen")},
	{"ANYSQS_ADMIN_LISTEN", "admin_listen", setString("admin_listen")},
	{"ANYSQS_CONSOLE", "console", func(cfg *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("ANYSQS_CONSOLE: %q is not true or false", v)
		}
		cfg.Console = b
		return nil
	}},
	{"ANYSQS_PUBLIC_URL", "public_url", setString("public_url")},
	{"ANYSQS_ACCOUNT_ID", "account_id", setString("account_id")},
	{"ANYSQS_REGION", "region", setString("region")},
	{"ANYSQS_LOG_LEVEL", "log_level", setString("log_level")},
	{"ANYSQS_LOG_FORMAT", "log_format", setString("log_format")},
	{"ANYSQS_POLICY_MODE", "policy.mode", setString("policy.mode")},
	{"ANYSQS_LIMITS_MAX_IN_FLIGHT", "limits.max_in_flight", func(cfg *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("ANYSQS_LIMITS_MAX_IN_FLIGHT: %q is not a whole number", v)
		}
		cfg.Limits.MaxInFlight = n
		return nil
	}},
	// KEY_ID:SECRET[:ACCOUNT_ID] separated by commas; they replace the file's list.
	{"ANYSQS_AUTH_CREDENTIALS", "auth.credentials", func(cfg *Config, v string) error {
		cfg.Auth.Credentials = nil
		for _, pair := range strings.Split(v, ",") {
			id, secret, ok := strings.Cut(strings.TrimSpace(pair), ":")
			if !ok {
				return errors.New("ANYSQS_AUTH_CREDENTIALS: want KEY_ID:SECRET[:ACCOUNT_ID] separated by commas")
			}
			var account string
			if i := strings.LastIndexByte(secret, ':'); i >= 0 && isAccountID(secret[i+1:]) {
				secret, account = secret[:i], secret[i+1:]
			}
			cfg.Auth.Credentials = append(cfg.Auth.Credentials, Credential{AccessKeyID: id, SecretAccessKey: secret, AccountID: account})
		}
		return nil
	}},
	{"ANYSQS_BACKEND", "", func(cfg *Config, v string) error {
		if cfg.Routed() {
			return errors.New("ANYSQS_BACKEND: the configuration routes queues to several backends (backends:); set ANYSQS_BACKENDS_OPTIONS to change their options")
		}
		if v != cfg.Backend.Name {
			// Switching backend by environment drops the file's options for the other backend.
			cfg.Backend = Backend{Name: v}
			cfg.src.set("backend", "ANYSQS_BACKEND")
		}
		return nil
	}},
	// A YAML (or JSON) mapping merged over backend.options, key by key: a key replaces
	// the file's, null removes it. After ANYSQS_BACKEND, so both may be set together.
	// A mapping of backend name to options, each merged over that backend's options as
	// ANYSQS_BACKEND_OPTIONS merges over backend.options.
	{"ANYSQS_BACKENDS_OPTIONS", "", func(cfg *Config, v string) error {
		var all map[string]map[string]any
		if err := yaml.Unmarshal([]byte(v), &all); err != nil || all == nil {
			return fmt.Errorf("ANYSQS_BACKENDS_OPTIONS: want a mapping of backend name to options, such as {main: {dsn: postgres://...}}: %v", err)
		}
		for name, opts := range all {
			b, ok := cfg.Backends[name]
			if !ok {
				return fmt.Errorf("ANYSQS_BACKENDS_OPTIONS: the configuration has no backend %q under backends", name)
			}
			if b.Options == nil {
				b.Options = map[string]any{}
			}
			for k, o := range opts {
				if o == nil {
					delete(b.Options, k)
				} else {
					b.Options[k] = o
				}
				cfg.src.set("backends."+name+".options."+k, "ANYSQS_BACKENDS_OPTIONS")
			}
			cfg.Backends[name] = b
		}
		return nil
	}},
	{"ANYSQS_BACKEND_OPTIONS", "", func(cfg *Config, v string) error {
		if cfg.Routed() {
			return errors.New("ANYSQS_BACKEND_OPTIONS: the configuration routes queues to several backends (backends:); set ANYSQS_BACKENDS_OPTIONS")
		}
		var opts map[string]any
		if err := yaml.Unmarshal([]byte(v), &opts); err != nil || opts == nil {
			return fmt.Errorf("ANYSQS_BACKEND_OPTIONS: want a mapping such as {dsn: postgres://..., schema: q}: %v", err)
		}
		if cfg.Backend.Options == nil {
			cfg.Backend.Options = map[string]any{}
		}
		for k, o := range opts {
			if o == nil {
				delete(cfg.Backend.Options, k)
			} else {
				cfg.Backend.Options[k] = o
			}
			cfg.src.set("backend.options."+k, "ANYSQS_BACKEND_OPTIONS")
		}
		return nil
	}},
}

// EnvNames lists the environment variables Load honours.
func EnvNames() []string {
	names := make([]string, len(envVars))
	for i, e := range envVars {
		names[i] = e.Name
	}
	return names
}

func applyEnv(cfg *Config, getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	for _, e := range envVars {
		if v := getenv(e.Name); v != "" {
			if err := e.set(cfg, v); err != nil {
				return err
			}
			if e.Key != "" {
				cfg.src.set(e.Key, e.Name)
			}
		}
	}
	for i, c := range cfg.Auth.Credentials {
		if c.SecretAccessKeyEnv != "" && c.SecretAccessKey == "" {
			cfg.Auth.Credentials[i].SecretAccessKey = getenv(c.SecretAccessKeyEnv)
		}
	}
	return nil
}

// checkRoutes checks backend, or backends and routes.
func (c Config) checkRoutes() error {
	if !c.Routed() {
		if len(c.Routes) > 0 {
			return errors.New("routes: need backends: (a single backend: serves every queue)")
		}
		if c.Backend.Name == "" {
			return errors.New("backend.name: must name a driver")
		}
		return nil
	}
	if c.Backend.Name != "" {
		return errors.New("backend: set backend or backends, not both")
	}
	for _, name := range c.BackendNames() {
		if c.Backends[name].Name == "" {
			return fmt.Errorf("backends.%s.name: must name a driver", name)
		}
	}
	defaults := 0
	for i, r := range c.Routes {
		if _, ok := c.Backends[r.Backend]; !ok {
			return fmt.Errorf("routes[%d].backend: %q is not one of backends: %s", i, r.Backend, strings.Join(c.BackendNames(), ", "))
		}
		if r.Queues == "" {
			defaults++
			continue
		}
		if _, err := path.Match(r.Queues, ""); err != nil {
			return fmt.Errorf("routes[%d].queues: %q is not a glob: %v", i, r.Queues, err)
		}
	}
	if defaults != 1 {
		return fmt.Errorf("routes: exactly one route must have no queues: (the default, for every queue no other route takes); %d have none", defaults)
	}
	return nil
}

// Validate checks the values that do not depend on the driver.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not HOST:PORT: %w", c.Listen, err)
	}
	if c.AdminListen != "" {
		if _, _, err := net.SplitHostPort(c.AdminListen); err != nil {
			return fmt.Errorf("admin_listen: %q is not HOST:PORT: %w", c.AdminListen, err)
		}
	}
	if c.Console && c.AdminListen == "" {
		return errors.New("console: needs admin_listen (the console is served there)")
	}
	for _, key := range []string{"listen", "admin_listen"} {
		if addr := c.listenAddr(key); c.loopbackOnly(key) && !loopback(addr) {
			return c.exposed(key, addr)
		}
	}
	if !isAccountID(c.AccountID) {
		return fmt.Errorf("account_id: %q must be 12 digits", c.AccountID)
	}
	if c.Region == "" {
		return errors.New("region: must not be empty")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log_level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("log_format: %q is not text or json", c.LogFormat)
	}
	if err := c.checkRoutes(); err != nil {
		return err
	}
	switch c.Policy.Mode {
	case "strict", "degrade":
	default:
		return fmt.Errorf("policy.mode: %q is not strict or degrade", c.Policy.Mode)
	}
	switch {
	case c.Limits.RequestsPerSecond < 0:
		return fmt.Errorf("limits.requests_per_second: %g must not be negative", c.Limits.RequestsPerSecond)
	case c.Limits.Burst < 0:
		return fmt.Errorf("limits.burst: %d must not be negative", c.Limits.Burst)
	case c.Limits.MaxLongPolls < 0:
		return fmt.Errorf("limits.max_long_polls: %d must not be negative", c.Limits.MaxLongPolls)
	case c.Limits.MaxInFlight < 0:
		return fmt.Errorf("limits.max_in_flight: %d must not be negative", c.Limits.MaxInFlight)
	}
	seen := map[string]bool{}
	for i, cr := range c.Auth.Credentials {
		switch {
		case cr.AccessKeyID == "":
			return fmt.Errorf("auth.credentials[%d]: access_key_id must not be empty", i)
		case cr.SecretAccessKey == "" && cr.SecretAccessKeyEnv != "":
			return fmt.Errorf("auth.credentials[%d]: secret_access_key_env %s is empty or unset", i, cr.SecretAccessKeyEnv)
		case cr.SecretAccessKey == "":
			return fmt.Errorf("auth.credentials[%d]: secret_access_key (or secret_access_key_env, secret_access_key_file) must be set", i)
		case cr.AccountID != "" && !isAccountID(cr.AccountID):
			return fmt.Errorf("auth.credentials[%d]: account_id %q must be 12 digits", i, cr.AccountID)
		case seen[cr.AccessKeyID]:
			return fmt.Errorf("auth.credentials: access key %s is listed twice", cr.AccessKeyID)
		}
		seen[cr.AccessKeyID] = true
	}
	for name, t := range map[string]TLS{"tls": c.TLS, "admin_tls": c.AdminTLS} {
		if t.Enabled() && (t.CertFile == "" || t.KeyFile == "") {
			return fmt.Errorf("%s: cert_file and key_file must both be set", name)
		}
	}
	if c.AdminTLS.Enabled() && c.AdminListen == "" {
		return errors.New("admin_tls: needs admin_listen")
	}
	for id, mode := range c.Policy.Overrides {
		if mode != "strict" && mode != "degrade" {
			return fmt.Errorf("policy.overrides.%s: %q is not strict or degrade", id, mode)
		}
	}
	if _, err := c.QueueMetrics.Every(); err != nil {
		return fmt.Errorf("queue_metrics.interval: %w", err)
	}
	if c.QueueMetrics.MaxQueues < 0 {
		return fmt.Errorf("queue_metrics.max_queues: %d is negative", c.QueueMetrics.MaxQueues)
	}
	return c.checkQueueAccounts()
}

// checkQueueAccounts checks that the gateway can act in each declared queue's account:
// its own, or one an access key belongs to.
func (c Config) checkQueueAccounts() error {
	keyed := map[string]bool{}
	for _, cr := range c.Auth.Credentials {
		keyed[cr.AccountID] = true
	}
	for _, q := range c.Queues {
		if q.Account == "" || q.Account == c.AccountID || keyed[q.Account] {
			continue
		}
		msg := fmt.Sprintf("account %s is neither account_id nor the account of a key in auth.credentials, so the gateway cannot act in it", q.Account)
		return &declare.Error{Pos: q.At, Queue: q.Name, Msg: msg}
	}
	return nil
}

// loopbackOnly says whether the listener of key (listen or admin_listen) must bind
// loopback only: without credentials, unless auth.allow_unauthenticated says otherwise,
// the SQS listener, and the admin listener when it serves the console, which is open to
// whoever reaches it then.
func (c Config) loopbackOnly(key string) bool {
	if len(c.Auth.Credentials) > 0 || c.Auth.AllowUnauthenticated {
		return false
	}
	return key == "listen" || key == "admin_listen" && c.Console
}

func (c Config) listenAddr(key string) string {
	if key == "admin_listen" {
		return c.AdminListen
	}
	return c.Listen
}

// exposed is the error for a listener of key that anyone on the network could use
// without a key: what it would give away, and the ways out.
func (c Config) exposed(key, addr string) error {
	what, off := "read and delete every queue", ""
	if key == "admin_listen" {
		what, off = "read every queue's messages in the console and redrive them", "turn the console off, "
	}
	return fmt.Errorf("%s: %s is reachable from other hosts and auth lists no credentials, so anyone who "+
		"reaches it could %s; list access keys under auth.credentials (or ANYSQS_AUTH_CREDENTIALS), "+
		"bind 127.0.0.1 instead, %sor set auth.allow_unauthenticated: true", key, addr, what, off)
}

// CheckBound applies Validate's rule for a gateway without credentials to the address
// a listener actually bound (key: listen or admin_listen), right before it serves.
// Validate judges the address as written; a host name such as localhost is resolved
// only when bound, so what it resolved to is checked too.
func (c Config) CheckBound(key string, addr net.Addr) error {
	if !c.loopbackOnly(key) {
		return nil
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return nil
	}
	return c.src.wrap(c.exposed(key, addr.String()+" (bound for "+c.listenAddr(key)+")"))
}

// loopback says whether HOST:PORT binds loopback only: localhost or a loopback IP. An
// empty host binds every interface.
func loopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isAccountID(s string) bool { return len(s) == 12 && strings.Trim(s, "0123456789") == "" }
