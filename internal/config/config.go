// Package config loads the anysqs gateway configuration: a YAML file, then environment
// overrides for the common keys. Unknown keys are errors that name the key, so a typo
// never silently falls back to a default.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
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
	// PublicURL is the base of queue URLs handed to clients, e.g. "http://queues.internal:9324".
	// Empty: derived from each request's Host header.
	PublicURL string `yaml:"public_url"`
	// AccountID appears in queue URLs and ARNs.
	AccountID string `yaml:"account_id"`
	// Region appears in ARNs.
	Region string `yaml:"region"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// Backend selects and configures the storage driver.
	Backend Backend `yaml:"backend"`
	// Policy says what to do with capabilities the backend only degrades.
	Policy Policy `yaml:"policy"`
	// Auth, when it lists credentials, makes the gateway verify every request's AWS
	// Signature Version 4 against them.
	Auth Auth `yaml:"auth"`
}

// Auth lists the access keys clients may sign with.
type Auth struct {
	Credentials []Credential `yaml:"credentials"`
}

// Credential is one access key. The secret may come from the environment instead of the
// file: SecretAccessKeyEnv names the variable.
type Credential struct {
	AccessKeyID        string `yaml:"access_key_id"`
	SecretAccessKey    string `yaml:"secret_access_key"`
	SecretAccessKeyEnv string `yaml:"secret_access_key_env"`
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

// Backend names a registered driver and carries its options, which the driver decodes
// (and checks for unknown keys) itself.
type Backend struct {
	Name    string         `yaml:"name"`
	Options map[string]any `yaml:"options"`
}

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
		Backend:   Backend{Name: "sqlite", Options: map[string]any{"data_dir": "./data"}},
		Policy:    Policy{Mode: "degrade"},
	}
}

// Load reads the file at path (none if path is empty) over the defaults, then applies
// environment overrides from getenv, then validates.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return Config{}, err
		}
		defer f.Close()
		if err := decode(f, &cfg); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return Config{}, err
	}
	return cfg, cfg.Validate()
}

func decode(r io.Reader, cfg *Config) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var fromFile Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // unknown keys fail with "field X not found in type ..."
	if err := dec.Decode(&fromFile); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	merge(cfg, fromFile)
	return nil
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
	set(&dst.PublicURL, src.PublicURL)
	set(&dst.AccountID, src.AccountID)
	set(&dst.Region, src.Region)
	set(&dst.LogLevel, src.LogLevel)
	if src.Backend.Name != "" {
		dst.Backend = src.Backend
	}
	set(&dst.Policy.Mode, src.Policy.Mode)
	if src.Policy.Overrides != nil {
		dst.Policy.Overrides = src.Policy.Overrides
	}
	if src.Policy.Require != nil {
		dst.Policy.Require = src.Policy.Require
	}
	if src.Auth.Credentials != nil {
		dst.Auth = src.Auth
	}
}

// envVar is one environment override: the variable and how it changes the configuration.
type envVar struct {
	Name string
	set  func(cfg *Config, v string) error
}

func setString(dst func(*Config) *string) func(*Config, string) error {
	return func(cfg *Config, v string) error { *dst(cfg) = v; return nil }
}

// envVars are the environment variables Load honours, in the order they apply.
var envVars = []envVar{
	{"ANYSQS_LISTEN", setString(func(c *Config) *string { return &c.Listen })},
	{"ANYSQS_ADMIN_LISTEN", setString(func(c *Config) *string { return &c.AdminListen })},
	{"ANYSQS_PUBLIC_URL", setString(func(c *Config) *string { return &c.PublicURL })},
	{"ANYSQS_ACCOUNT_ID", setString(func(c *Config) *string { return &c.AccountID })},
	{"ANYSQS_REGION", setString(func(c *Config) *string { return &c.Region })},
	{"ANYSQS_LOG_LEVEL", setString(func(c *Config) *string { return &c.LogLevel })},
	{"ANYSQS_POLICY_MODE", setString(func(c *Config) *string { return &c.Policy.Mode })},
	// KEY_ID:SECRET pairs separated by commas; they replace the file's list.
	{"ANYSQS_AUTH_CREDENTIALS", func(cfg *Config, v string) error {
		cfg.Auth.Credentials = nil
		for _, pair := range strings.Split(v, ",") {
			id, secret, ok := strings.Cut(strings.TrimSpace(pair), ":")
			if !ok {
				return errors.New("ANYSQS_AUTH_CREDENTIALS: want KEY_ID:SECRET pairs separated by commas")
			}
			cfg.Auth.Credentials = append(cfg.Auth.Credentials, Credential{AccessKeyID: id, SecretAccessKey: secret})
		}
		return nil
	}},
	{"ANYSQS_BACKEND", func(cfg *Config, v string) error {
		if v != cfg.Backend.Name {
			// Switching backend by environment drops the file's options for the other backend.
			cfg.Backend = Backend{Name: v}
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
		}
	}
	for i, c := range cfg.Auth.Credentials {
		if c.SecretAccessKeyEnv != "" && c.SecretAccessKey == "" {
			cfg.Auth.Credentials[i].SecretAccessKey = getenv(c.SecretAccessKeyEnv)
		}
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
	if len(c.AccountID) != 12 || strings.Trim(c.AccountID, "0123456789") != "" {
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
	if c.Backend.Name == "" {
		return errors.New("backend.name: must name a driver")
	}
	switch c.Policy.Mode {
	case "strict", "degrade":
	default:
		return fmt.Errorf("policy.mode: %q is not strict or degrade", c.Policy.Mode)
	}
	seen := map[string]bool{}
	for i, cr := range c.Auth.Credentials {
		switch {
		case cr.AccessKeyID == "":
			return fmt.Errorf("auth.credentials[%d]: access_key_id must not be empty", i)
		case cr.SecretAccessKey == "" && cr.SecretAccessKeyEnv != "":
			return fmt.Errorf("auth.credentials[%d]: secret_access_key_env %s is empty or unset", i, cr.SecretAccessKeyEnv)
		case cr.SecretAccessKey == "":
			return fmt.Errorf("auth.credentials[%d]: secret_access_key (or secret_access_key_env) must be set", i)
		case seen[cr.AccessKeyID]:
			return fmt.Errorf("auth.credentials: access key %s is listed twice", cr.AccessKeyID)
		}
		seen[cr.AccessKeyID] = true
	}
	for id, mode := range c.Policy.Overrides {
		if mode != "strict" && mode != "degrade" {
			return fmt.Errorf("policy.overrides.%s: %q is not strict or degrade", id, mode)
		}
	}
	return nil
}
