package gateway

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Routing. A gateway serves one backend (Config.Driver) or several (Config.Backends),
// with Config.Routes saying which backend holds each queue: the first route whose glob
// matches the queue's name, in whichever account, or else the route without a glob.
// Everything about a queue happens on its backend, checked against that backend's
// declarations and limits; ListQueues merges the backends' queues, each listed only by
// the backend its name routes to. A queue stored on a backend its name no longer routes
// to is not served (New logs each one it finds).

// Backend is one backend of a routed gateway.
type Backend struct {
	// Name is the backend's key in the configuration ("main"), which routes refer to.
	Name   string
	Driver drivers.Driver
}

// Route sends the queues whose names match Queues to Backend.
type Route struct {
	// Queues is a glob (path.Match syntax) over queue names; "" matches every queue, and
	// exactly one route has it: the default.
	Queues  string
	Backend string
}

// backend is what the gateway holds for one backend: the driver and what it declared.
type backend struct {
	name     string // the configuration's key; the driver's name when unrouted
	driver   drivers.Driver
	desc     drivers.Description
	policy   *capabilities.Policy
	limits   *limits
	inflight *inFlight
	moves    *moveTasks
}

// route is a Route resolved to its backend.
type route struct {
	glob string
	b    *backend
}

// openBackends describes each configured backend and resolves the routes.
func (s *Server) openBackends(ctx context.Context, cfg Config) error {
	list := cfg.Backends
	routes := cfg.Routes
	switch {
	case cfg.Driver != nil && len(list) > 0:
		return errors.New("gateway: set Config.Driver or Config.Backends, not both")
	case cfg.Driver != nil:
		list = []Backend{{Driver: cfg.Driver}}
		routes = nil
	case len(list) == 0:
		return errors.New("gateway: Config.Driver is required")
	}
	byName := map[string]*backend{}
	for _, c := range list {
		if c.Driver == nil {
			return fmt.Errorf("gateway: backend %q has no driver", c.Name)
		}
		desc, err := c.Driver.Describe(ctx)
		if err != nil {
			return fmt.Errorf("gateway: describe driver: %w", err)
		}
		if err := desc.Check(); err != nil {
			return fmt.Errorf("gateway: %w", err)
		}
		desc = desc.Normalized()
		name := c.Name
		if name == "" {
			name = desc.Name
		}
		if byName[name] != nil {
			return fmt.Errorf("gateway: two backends are named %q", name)
		}
		for _, w := range desc.Warnings {
			if len(list) > 1 {
				s.log.Warn("backend setup", "backend", name, "driver", desc.Name, "warning", w)
			} else {
				s.log.Warn("backend setup", "backend", name, "warning", w)
			}
		}
		pol, err := capabilities.NewPolicy(desc.Name, desc.Capabilities, cfg.Policy)
		if err != nil {
			return fmt.Errorf("gateway: capability policy of backend %s: %w", name, err)
		}
		max := cfg.MaxInFlight
		if max == 0 {
			max = DefaultMaxInFlight
		}
		if d, ok := desc.Declaration(capabilities.InFlightLimit); ok && d.Level == capabilities.Unsupported {
			max = -1 // the backend cannot count in-flight messages
		}
		b := &backend{name: name, driver: c.Driver, desc: desc, policy: pol, limits: newLimits(pol), inflight: newInFlight(max)}
		byName[name] = b
		s.backends = append(s.backends, b)
	}
	if len(routes) == 0 {
		if len(s.backends) > 1 {
			return errors.New("gateway: several backends need routes")
		}
		routes = []Route{{Backend: s.backends[0].name}}
	}
	defaults := 0
	for _, r := range routes {
		b := byName[r.Backend]
		if b == nil {
			return fmt.Errorf("gateway: a route names backend %q, which is not configured", r.Backend)
		}
		if r.Queues == "" {
			defaults++
			s.fallback = b
			continue
		}
		if _, err := path.Match(r.Queues, ""); err != nil {
			return fmt.Errorf("gateway: route %q: %w", r.Queues, err)
		}
		s.routes = append(s.routes, route{glob: r.Queues, b: b})
	}
	if defaults != 1 {
		return fmt.Errorf("gateway: exactly one route must have no queues (the default); %d have none", defaults)
	}
	return nil
}

// on is the backend of the stored queue name.
func (s *Server) on(stored string) *backend {
	if len(s.routes) == 0 {
		return s.fallback
	}
	_, name := s.splitStored(stored)
	for _, r := range s.routes {
		if ok, _ := path.Match(r.glob, name); ok {
			return r.b
		}
	}
	return s.fallback
}

// routed reports whether the gateway serves more than one backend.
func (s *Server) routed() bool { return len(s.backends) > 1 }

// sameBackend refuses a pair of queues on different backends for what the backends
// would have to do together (a dead-letter queue, a move task's destination).
func (s *Server) sameBackend(what, queue, other string) error {
	a, b := s.on(queue), s.on(other)
	if a == b {
		return nil
	}
	return sqserr.New(sqserr.InvalidParameterValue, "%s %s is on backend %s, and queue %s on backend %s: this gateway does not move messages between backends; route both to one backend.",
		what, s.displayName(other), b.name, s.displayName(queue), a.name)
}

// displayName is a stored queue name as its owner knows it.
func (s *Server) displayName(stored string) string {
	_, name := s.splitStored(stored)
	return name
}

// listAll lists queues across the backends, each queue from the backend its name
// routes to, as drivers.Driver's ListQueues does for one.
func (s *Server) listAll(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	if !s.routed() {
		return s.fallback.driver.ListQueues(ctx, req)
	}
	for {
		var out drivers.ListQueuesResult
		// cutoff is the lowest last name of a backend with more beyond its page: the
		// merged page ends there, so that none of that backend's queues is skipped.
		cutoff, cut := "", false
		for _, b := range s.backends {
			res, err := b.driver.ListQueues(ctx, req)
			if err != nil {
				return drivers.ListQueuesResult{}, fmt.Errorf("backend %s: %w", b.name, err)
			}
			for _, q := range res.Queues {
				if s.on(q.Name) == b {
					out.Queues = append(out.Queues, q)
				}
			}
			if n := len(res.Queues); res.More && n > 0 && (!cut || res.Queues[n-1].Name < cutoff) {
				cutoff, cut = res.Queues[n-1].Name, true
			}
		}
		sort.Slice(out.Queues, func(i, j int) bool { return out.Queues[i].Name < out.Queues[j].Name })
		if cut {
			kept := out.Queues[:0]
			for _, q := range out.Queues {
				if q.Name <= cutoff {
					kept = append(kept, q)
				}
			}
			out.Queues, out.More = kept, true
		}
		if req.Limit > 0 && len(out.Queues) > req.Limit {
			out.Queues, out.More = out.Queues[:req.Limit], true
		}
		if len(out.Queues) > 0 || !cut {
			return out, nil
		}
		req.After = cutoff // every queue up to the cutoff routes elsewhere: read on
	}
}

// strandedQueues lists, per backend, the queues stored there whose names route to
// another backend: the gateway does not serve them.
func (s *Server) strandedQueues(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	if !s.routed() {
		return out, nil
	}
	for _, b := range s.backends {
		after := ""
		for {
			res, err := b.driver.ListQueues(ctx, drivers.ListQueuesRequest{After: after, Limit: 1000})
			if err != nil {
				return nil, fmt.Errorf("backend %s: %w", b.name, err)
			}
			for _, q := range res.Queues {
				after = q.Name
				if r := s.on(q.Name); r != b {
					out[b.name] = append(out[b.name], fmt.Sprintf("%s (routes to %s)", q.Name, r.name))
				}
			}
			if !res.More || len(res.Queues) == 0 {
				break
			}
		}
	}
	return out, nil
}

// BackendInfo describes one backend of a gateway for operators (/capabilities, the
// console).
type BackendInfo struct {
	Name        string
	Description drivers.Description
	// Queues are the globs routed to it; Default, whether it also takes every queue no
	// glob matches.
	Queues  []string
	Default bool
}

// Backends lists the gateway's backends in configuration order.
func (s *Server) Backends() []BackendInfo {
	var out []BackendInfo
	for _, b := range s.backends {
		info := BackendInfo{Name: b.name, Description: b.desc}
		for _, r := range s.routes {
			if r.b == b {
				info.Queues = append(info.Queues, r.glob)
			}
		}
		info.Default = s.fallback == b
		out = append(out, info)
	}
	return out
}

// BackendOf names the backend that holds queue (as its owner names it, in the default
// account).
func (s *Server) BackendOf(queue string) string { return s.on(queue).name }
