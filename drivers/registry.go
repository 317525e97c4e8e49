package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Opener opens a driver from the backend section of the gateway's configuration. Raw
// holds that section's options as decoded from YAML; openers decode it with DecodeOptions
// so that unknown keys are rejected by name.
type Opener func(ctx context.Context, raw map[string]any) (Driver, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a driver available under name. Driver packages call it from init; the
// binary selects one by the config's backend name.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("drivers: Register called twice for " + name)
	}
	registry[name] = open
}

// Open opens the driver registered under name.
func Open(ctx context.Context, name string, raw map[string]any) (Driver, error) {
	registryMu.RLock()
	open, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (available: %s)", name, strings.Join(Names(), ", "))
	}
	return open(ctx, raw)
}

// Names lists the registered drivers in order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DecodeOptions decodes raw into dst (a pointer to a struct with json tags), rejecting
// keys dst does not have. Its errors are *OptionError, naming the option in the YAML
// file's terms, so that the binary can point at the option's line.
func DecodeOptions(raw map[string]any, dst any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("backend options: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err = dec.Decode(dst)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return &OptionError{Key: typeErr.Field, Msg: fmt.Sprintf("want %s, got %s", yamlKind(typeErr.Type), jsonValueKind(typeErr.Value))}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return &OptionError{Key: key, Msg: "unknown key"}
	}
	return fmt.Errorf("backend options: %w", err)
}

// OptionError is a backend option that does not fit the driver's options.
type OptionError struct {
	Key string // the option's dotted path under backend.options, e.g. "tls.mode"
	Msg string // in YAML's terms: "unknown key", "want a whole number, got text"
}

func (e *OptionError) Error() string { return "backend.options." + e.Key + ": " + e.Msg }

// yamlKind names what a Go type decodes from, as a YAML file's author sees it.
func yamlKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	}
	return t.String()
}

func jsonValueKind(v string) string {
	switch {
	case v == "string":
		return "text"
	case v == "bool":
		return "true or false"
	case v == "array":
		return "a list"
	case v == "object":
		return "a mapping"
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	}
	return v
}
