package capabilities

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Mode says what the gateway does with a capability the backend only degrades.
type Mode string

const (
	// Degrade lets the documented fallback happen, visibly (header, log, counter).
	Degrade Mode = "degrade"
	// Strict rejects requests that need a degraded capability, as if it were unsupported.
	Strict Mode = "strict"
)

// DefaultMode applies when the configuration names no mode.
const DefaultMode = Degrade

// Config is the policy part of the gateway configuration. It uses plain strings so the
// configuration loader can hand over what it read without converting.
type Config struct {
	// Mode is "strict" or "degrade"; empty means DefaultMode.
	Mode string
	// Overrides sets the mode per capability ID.
	Overrides map[string]string
	// Require lists capabilities the application cannot do without: start-up fails if the
	// backend declares one Unsupported, or Degraded while its mode is strict.
	Require []string
}

// HTTP headers of degrade and explain reporting.
const (
	// HeaderBackend names the backend that served the request (explain mode).
	HeaderBackend = "X-Anysqs-Backend"
	// HeaderDegraded lists, comma-separated, the capability IDs degraded for the request.
	HeaderDegraded = "X-Anysqs-Degraded"
	// HeaderExplain is the request header asking for an explanation ("1" or "true") and
	// the response header carrying it.
	HeaderExplain = "X-Anysqs-Explain"
)

// Decision is the policy's answer for one capability. Allow is the zero outcome: neither
// Degrade nor Reject.
type Decision struct {
	ID    ID
	Level Level
	Mode  Mode
	// Degrade: let the documented fallback happen and add Header to HeaderDegraded.
	Degrade bool
	Header  string
	// Reject: fail the request with the SQS error code named Code (e.g.
	// "UnsupportedOperation") and Message, and change nothing.
	Reject  bool
	Code    string
	Message string
}

// Allow reports whether the request may proceed with the SQS behaviour.
func (d Decision) Allow() bool { return !d.Degrade && !d.Reject }

// Policy decides, per capability, whether requests are allowed, degraded or rejected.
// It is safe for concurrent use.
type Policy struct {
	backend string
	decls   map[ID]Declaration
	modes   map[ID]Mode
	global  Mode

	mu       sync.Mutex
	degraded map[string]map[ID]int64 // queue → capability → uses
}

// CheckStartup checks the configuration against a backend's declarations, so that a
// gateway that could never serve what the configuration asks for does not start. It
// reports every problem at once.
func CheckStartup(backend string, decls []Declaration, cfg Config) error {
	var errs []error
	if err := Validate(decls); err != nil {
		errs = append(errs, fmt.Errorf("backend %s declarations: %w", backend, err))
	}
	if !validMode(cfg.Mode) {
		errs = append(errs, fmt.Errorf("policy mode %q is not strict or degrade", cfg.Mode))
	}
	for _, id := range sortedKeys(cfg.Overrides) {
		if _, ok := Lookup(ID(id)); !ok {
			errs = append(errs, fmt.Errorf("policy override names unknown capability %q", id))
		}
		if m := cfg.Overrides[id]; m == "" || !validMode(m) {
			errs = append(errs, fmt.Errorf("policy override %s: mode %q is not strict or degrade", id, m))
		}
	}
	levels := make(map[ID]Level, len(decls))
	for _, d := range decls {
		levels[d.ID] = d.Level
	}
	for _, id := range cfg.Require {
		if _, ok := Lookup(ID(id)); !ok {
			errs = append(errs, fmt.Errorf("policy requires unknown capability %q", id))
			continue
		}
		switch lvl := levels[ID(id)]; {
		case lvl == Unsupported:
			errs = append(errs, fmt.Errorf("policy requires %s but backend %s does not support it", id, backend))
		case lvl == Degraded && modeFor(cfg, ID(id)) == Strict:
			errs = append(errs, fmt.Errorf("policy requires %s in strict mode but backend %s only degrades it", id, backend))
		}
	}
	return errors.Join(errs...)
}

func validMode(m string) bool { return m == "" || Mode(m) == Strict || Mode(m) == Degrade }

func modeFor(cfg Config, id ID) Mode {
	if m, ok := cfg.Overrides[string(id)]; ok && m != "" {
		return Mode(m)
	}
	if cfg.Mode == "" {
		return DefaultMode
	}
	return Mode(cfg.Mode)
}

// NewPolicy builds the policy of a backend from its declarations and the configuration,
// after CheckStartup accepts them.
func NewPolicy(backend string, decls []Declaration, cfg Config) (*Policy, error) {
	if err := CheckStartup(backend, decls, cfg); err != nil {
		return nil, err
	}
	p := &Policy{
		backend:  backend,
		decls:    make(map[ID]Declaration, len(decls)),
		modes:    make(map[ID]Mode, len(cfg.Overrides)),
		global:   modeFor(Config{Mode: cfg.Mode}, ""),
		degraded: map[string]map[ID]int64{},
	}
	for _, d := range decls {
		p.decls[d.ID] = d
	}
	for id, m := range cfg.Overrides {
		p.modes[ID(id)] = Mode(m)
	}
	return p, nil
}

// Backend returns the backend name the policy was built for.
func (p *Policy) Backend() string { return p.backend }

// Declaration returns the backend's declaration of id.
func (p *Policy) Declaration(id ID) (Declaration, bool) {
	d, ok := p.decls[id]
	return d, ok
}

// Decide returns the decision for a request that needs capability id. It has no side
// effects; use a Trace to count degraded uses and collect explanations.
func (p *Policy) Decide(id ID) Decision {
	d, ok := p.decls[id]
	e, known := Lookup(id)
	if !ok || !known {
		// NewPolicy checked that every catalog ID is declared, so this is a gateway bug:
		// refuse rather than guess.
		return Decision{ID: id, Reject: true, Code: "InternalError",
			Message: fmt.Sprintf("capability %s is not in backend %s's declarations", id, p.backend)}
	}
	mode := p.global
	if m, ok := p.modes[id]; ok {
		mode = m
	}
	dec := Decision{ID: id, Level: d.Level, Mode: mode}
	switch {
	case d.Level == Unsupported:
		dec.Reject, dec.Code = true, e.RejectCode
		dec.Message = fmt.Sprintf("backend %s does not support %s (%s)", p.backend, id, e.Title)
	case d.Level == Degraded && mode == Strict:
		dec.Reject, dec.Code = true, e.RejectCode
		dec.Message = fmt.Sprintf("backend %s only degrades %s (%s) and the policy for it is strict", p.backend, id, e.Title)
	case d.Level == Degraded:
		dec.Degrade, dec.Header = true, string(id)
	}
	if dec.Reject && d.Note != "" {
		dec.Message += ": " + d.Note
	}
	return dec
}

// AttributeID returns the capability of a settable queue attribute, by its SQS name
// (e.g. "RedrivePolicy" → attribute.RedrivePolicy).
func AttributeID(name string) (ID, bool) {
	id := ID("attribute." + name)
	_, ok := byID[id]
	return id, ok
}

// DegradedCounts returns a snapshot of degraded uses per queue and capability.
func (p *Policy) DegradedCounts() map[string]map[ID]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]map[ID]int64, len(p.degraded))
	for q, m := range p.degraded {
		out[q] = make(map[ID]int64, len(m))
		for id, n := range m {
			out[q][id] = n
		}
	}
	return out
}

// count records one degraded use and reports whether it was the first for the queue
// and capability.
func (p *Policy) count(queue string, id ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.degraded[queue]
	if m == nil {
		m = map[ID]int64{}
		p.degraded[queue] = m
	}
	m[id]++
	return m[id] == 1
}

// Trace collects the decisions made for one request on one queue (queue may be empty
// for requests not about a queue). The gateway makes one per request and, at the end,
// renders Headers and logs FirstDegraded. Not safe for concurrent use.
type Trace struct {
	policy    *Policy
	queue     string
	decisions []Decision
	first     []ID
}

// Trace starts the decisions of one request on queue.
func (p *Policy) Trace(queue string) *Trace { return &Trace{policy: p, queue: queue} }

// Decide decides for id like Policy.Decide, counts a degraded use against the queue and
// remembers the decision for the response headers. A capability decided twice in one
// request is counted and listed once.
func (t *Trace) Decide(id ID) Decision {
	d := t.policy.Decide(id)
	for _, prev := range t.decisions {
		if prev.ID == id {
			return d
		}
	}
	t.decisions = append(t.decisions, d)
	if d.Degrade && t.policy.count(t.queue, id) {
		t.first = append(t.first, id)
	}
	return d
}

// Backend names the driver whose policy decides.
func (t *Trace) Backend() string { return t.policy.backend }

// Decisions returns the decisions made so far, in order.
func (t *Trace) Decisions() []Decision { return slices.Clone(t.decisions) }

// FirstDegraded returns the capabilities this request degraded for the first time on its
// queue since the gateway started: the ones to log.
func (t *Trace) FirstDegraded() []ID { return slices.Clone(t.first) }

// Header is one HTTP response header.
type Header struct{ Name, Value string }

// Headers returns the response headers for the request: HeaderDegraded when something
// was degraded, and with explain also HeaderBackend and HeaderExplain, whose value lists
// every decision as "id=level:outcome" separated by "; ".
func (t *Trace) Headers(explain bool) []Header {
	var hs []Header
	var degraded, parts []string
	for _, d := range t.decisions {
		if d.Degrade {
			degraded = append(degraded, d.Header)
		}
		parts = append(parts, string(d.ID)+"="+string(d.Level)+":"+d.outcome())
	}
	if explain {
		hs = append(hs, Header{HeaderBackend, t.policy.backend})
	}
	if len(degraded) > 0 {
		hs = append(hs, Header{HeaderDegraded, strings.Join(degraded, ",")})
	}
	if explain {
		v := strings.Join(parts, "; ")
		if v == "" {
			v = "no capability decisions"
		}
		hs = append(hs, Header{HeaderExplain, v})
	}
	return hs
}

func (d Decision) outcome() string {
	switch {
	case d.Reject:
		return "reject"
	case d.Degrade:
		return "degrade"
	}
	return "allow"
}

// ExplainRequested reports whether the value of the HeaderExplain request header asks
// for an explanation.
func ExplainRequested(value string) bool {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
