package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/config"
)

// openedBackends are the drivers a configuration names, opened: one (driver) or, for a
// routed configuration, several with their routes.
type openedBackends struct {
	driver   drivers.Driver
	backends []gateway.Backend
	routes   []gateway.Route
}

// openBackends opens the driver of backend, or of each of backends with the routes. A
// failure closes what it opened and names the backend's key in the file.
func openBackends(ctx context.Context, cfg config.Config) (*openedBackends, error) {
	if !cfg.Routed() {
		drv, err := openDriver(ctx, cfg, "backend", cfg.Backend)
		if err != nil {
			return nil, err
		}
		return &openedBackends{driver: drv}, nil
	}
	o := &openedBackends{}
	for _, name := range cfg.BackendNames() {
		drv, err := openDriver(ctx, cfg, "backends."+name, cfg.Backends[name])
		if err != nil {
			o.close()
			return nil, err
		}
		o.backends = append(o.backends, gateway.Backend{Name: name, Driver: drv})
	}
	for _, r := range cfg.Routes {
		o.routes = append(o.routes, gateway.Route{Queues: r.Queues, Backend: r.Backend})
	}
	return o, nil
}

// openDriver opens one backend; key is where it is in the configuration ("backend").
func openDriver(ctx context.Context, cfg config.Config, key string, b config.Backend) (drivers.Driver, error) {
	drv, err := drivers.Open(ctx, b.Name, b.Options)
	if err != nil {
		var oe *drivers.OptionError
		if errors.As(err, &oe) {
			return nil, fmt.Errorf("%w (backend %s)", cfg.Locate(key+".options."+oe.Key, oe.Msg), b.Name)
		}
		return nil, fmt.Errorf("%s %s: %w", key, b.Name, err)
	}
	return drv, nil
}

func (o *openedBackends) close() {
	if o.driver != nil {
		o.driver.Close()
	}
	for _, b := range slices.Backward(o.backends) {
		b.Driver.Close()
	}
}
