package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
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
// keys dst does not have with an error that names the key.
func DecodeOptions(raw map[string]any, dst any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("backend options: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("backend options: %w", err)
	}
	return nil
}
