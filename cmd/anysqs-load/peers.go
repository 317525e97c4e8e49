package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The peers mode runs the same phases against several SQS servers that are already
// running (anysqs on each backend, and the emulators people use in its place), taking
// turns within each round so that drift in the machine's load hits them alike, and
// reports medians over the rounds (make bench-peers).

// target is one server under test: a name, its endpoint and its process id (for its CPU).
type target struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// driver marks the in-process PostgreSQL driver path (--dsn), the latency baseline
	// of the open loop; it has no endpoint and no process of its own.
	driver bool
}

// targetList is the --target flag: NAME=URL[@PID], repeated.
type targetList []target

func (l *targetList) String() string { return fmt.Sprint(*l) }

func (l *targetList) Set(v string) error {
	name, rest, ok := strings.Cut(v, "=")
	if !ok || name == "" || rest == "" {
		return fmt.Errorf("want NAME=URL[@PID], got %q", v)
	}
	t := target{Name: name, Endpoint: rest}
	if u, pid, ok := strings.Cut(rest, "@"); ok {
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 {
			return fmt.Errorf("bad pid in %q", v)
		}
		t.Endpoint, t.PID = u, n
	}
	*l = append(*l, t)
	return nil
}

// callStats are one call type's latencies over a phase, in milliseconds.
type callStats struct {
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
}

// cpuPerMessage is a phase's CPU time per message by process, in microseconds.
type cpuPerMessage struct {
	Server   float64 `json:"server_us"`   // the target's process and its children
	Client   float64 `json:"client_us"`   // this load generator: the SDK
	Postgres float64 `json:"postgres_us"` // the PostgreSQL server's processes
	Other    float64 `json:"other_us"`    // the rest of the machine
	Total    float64 `json:"total_us"`
	Idle     float64 `json:"idle_share"` // the cores' idle share over the window
}

// closedPoint is one target's closed-loop phase.
type closedPoint struct {
	Target   string               `json:"target"`
	Batch    int                  `json:"batch"`
	Round    int                  `json:"round"`
	Rate     float64              `json:"messages_per_s"`
	Calls    map[string]callStats `json:"calls"`
	CPU      *cpuPerMessage       `json:"cpu_per_message,omitempty"`
	Errors   int                  `json:"errors"`
	FirstErr string               `json:"first_error,omitempty"`
}

// openPoint is one target's open-loop phase: latency at a fixed offered rate.
type openPoint struct {
	Target   string  `json:"target"`
	Rate     int     `json:"offered_calls_per_s"`
	Round    int     `json:"round"`
	Achieved float64 `json:"achieved_calls_per_s"`
	// Exchange is every call's HTTP exchange as the SDK's transport times it (for the
	// in-process driver, the driver call): p50 and p99 over send, receive and delete.
	Exchange callStats `json:"exchange"`
	Errors   int       `json:"errors"`
	Skipped  int       `json:"skipped"`
}

// peersReport is the JSON output: every phase of every round, and the machine.
type peersReport struct {
	Started  time.Time     `json:"started"`
	Machine  string        `json:"machine"`
	LoadAvg  []string      `json:"load_average"` // at the start and the end
	Workers  int           `json:"workers"`
	Duration string        `json:"duration_per_phase"`
	Rounds   int           `json:"rounds"`
	BodySize int           `json:"body_bytes"`
	Targets  []target      `json:"targets"`
	Closed   []closedPoint `json:"closed"`
	Open     []openPoint   `json:"open"`
}

// peersOptions are the peers mode's own flags.
type peersOptions struct {
	targets   targetList
	batches   string // comma-separated
	openRates string // comma-separated; "" for none
	jsonOut   string
	svgOut    string
}

func runPeers(ctx context.Context, w, logw io.Writer, o options, po peersOptions) error {
	if len(po.targets) == 0 {
		return errors.New("--mode peers needs at least one --target NAME=URL[@PID]")
	}
	batches, err := intList(po.batches)
	if err != nil {
		return fmt.Errorf("--batches: %w", err)
	}
	rates, err := intList(po.openRates)
	if err != nil {
		return fmt.Errorf("--open-rates: %w", err)
	}
	rep := peersReport{Started: time.Now().UTC(), Machine: machine(), LoadAvg: []string{loadavg()}, Workers: o.workers,
		Duration: o.duration.String(), Rounds: o.rounds, BodySize: o.bodySize, Targets: po.targets}
	for _, b := range batches {
		for round := 1; round <= o.rounds; round++ {
			for i := range po.targets {
				// Each round starts one target later, so no target is always first
				// after another's phase.
				t := po.targets[(i+round-1)%len(po.targets)]
				fmt.Fprintf(logw, "closed: batch %d, round %d, on %s...\n", b, round, t.Name)
				p := newGatewayPath(t.Endpoint, o.workers)
				cfg := o.closedConfig(false, b)
				cfg.meter.gatewayPID = t.PID
				r, err := runClosed(ctx, p, cfg, "peers-"+uuid.NewString()[:8])
				if err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				rep.Closed = append(rep.Closed, closedPoint{Target: t.Name, Batch: b, Round: round, Rate: r.rate(),
					Calls: callsOf(r.rec), CPU: perMessage(r.cpu, r.msgs), Errors: errCount(r.rec), FirstErr: firstErr(r.rec)})
			}
		}
	}
	open := slices.Clone(po.targets)
	if o.dsn != "" {
		open = append(open, target{Name: "postgres driver (in process)", driver: true})
	}
	for _, rate := range rates {
		for round := 1; round <= o.rounds; round++ {
			for i := range open {
				t := open[(i+round-1)%len(open)]
				fmt.Fprintf(logw, "open: %d calls/s, round %d, on %s...\n", rate, round, t.Name)
				var p path
				if t.driver {
					dp, err := newDriverPath(ctx, o.dsn, o.schema, int32(o.workers))
					if err != nil {
						return err
					}
					p = dp
				} else {
					p = newGatewayPath(t.Endpoint, o.workers)
				}
				cfg := openConfig{rate: rate, warmup: o.warmup, duration: o.duration, bodySize: o.bodySize, inFlight: 512}
				r, err := runOpen(ctx, p, cfg, "peers-open-"+uuid.NewString()[:8])
				p.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				calls := httpCalls
				if t.driver {
					calls = []string{"send", "receive", "delete"}
				}
				rep.Open = append(rep.Open, openPoint{Target: t.Name, Rate: rate, Round: round,
					Achieved: float64(r.issued) / r.elapsed.Seconds(), Exchange: r.rec.combined(calls...),
					Errors: errCount(r.rec), Skipped: r.skipped})
			}
		}
	}
	rep.LoadAvg = append(rep.LoadAvg, loadavg())
	peersTables(w, rep, batches, rates, open)
	if po.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(po.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if po.svgOut != "" && len(rates) > 0 {
		if err := os.WriteFile(po.svgOut, []byte(latencySVG(rep, rates, open)), 0o644); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func callsOf(r *recorder) map[string]callStats {
	out := map[string]callStats{}
	for _, c := range []string{"send", "receive", "delete"} {
		if d := r.dist(c); d.n > 0 {
			out[c] = callStats{P50: msf(d.p50), P99: msf(d.p99)}
		}
	}
	return out
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// combined is the distribution of the named calls together.
func (r *recorder) combined(calls ...string) callStats {
	r.mu.Lock()
	var l []time.Duration
	for _, c := range calls {
		l = append(l, r.lat[c]...)
	}
	r.mu.Unlock()
	if len(l) == 0 {
		return callStats{}
	}
	slices.Sort(l)
	at := func(q float64) time.Duration { return l[min(len(l)-1, int(q*float64(len(l))))] }
	return callStats{P50: msf(at(0.5)), P99: msf(at(0.99))}
}

func perMessage(s *cpuShare, msgs int64) *cpuPerMessage {
	if s == nil || msgs <= 0 {
		return nil
	}
	us := func(sec float64) float64 { return sec * 1e6 / float64(msgs) }
	return &cpuPerMessage{Server: us(s.gateway), Client: us(s.client), Postgres: us(s.postgres), Other: us(s.other),
		Total: us(s.busy()), Idle: s.idle / (s.busy() + s.idle)}
}

func errCount(r *recorder) int    { n, _ := r.errors(); return n }
func firstErr(r *recorder) string { _, f := r.errors(); return f }

// machine describes the CPU and the core count, from /proc/cpuinfo.
func machine() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	model, cores := "", 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "processor":
			cores++
		}
	}
	return fmt.Sprintf("%d × %s", cores, model)
}

// medianOf is the median of f over the points of one target (and batch or rate).
func medianOf[P any](ps []P, keep func(P) bool, f func(P) float64) float64 {
	var v []float64
	for _, p := range ps {
		if keep(p) {
			v = append(v, f(p))
		}
	}
	if len(v) == 0 {
		return 0
	}
	return median(v)
}

func peersTables(w io.Writer, rep peersReport, batches, rates []int, open []target) {
	fmt.Fprintf(w, "### Closed loop: %d workers, send → receive → delete, Standard queue, %d-byte bodies; medians of %d rounds\n\n",
		rep.Workers, rep.BodySize, rep.Rounds)
	fmt.Fprintln(w, "CPU per message, µs: the server process / the client (aws-sdk-go-v2) / PostgreSQL / the rest of the machine = total.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| server | batch | messages/s | send p50/p99 ms | receive p50/p99 ms | delete p50/p99 ms | CPU µs/msg | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, b := range batches {
		for _, t := range rep.Targets {
			keep := func(p closedPoint) bool { return p.Target == t.Name && p.Batch == b }
			call := func(c string) string {
				p50 := medianOf(rep.Closed, keep, func(p closedPoint) float64 { return p.Calls[c].P50 })
				p99 := medianOf(rep.Closed, keep, func(p closedPoint) float64 { return p.Calls[c].P99 })
				return fmt.Sprintf("%.2f / %.2f", p50, p99)
			}
			cpu := "–"
			if t.PID > 0 {
				m := func(f func(c *cpuPerMessage) float64) float64 {
					return medianOf(rep.Closed, func(p closedPoint) bool { return keep(p) && p.CPU != nil },
						func(p closedPoint) float64 { return f(p.CPU) })
				}
				cpu = fmt.Sprintf("%.0f / %.0f / %.0f / %.0f = %.0f", m(func(c *cpuPerMessage) float64 { return c.Server }),
					m(func(c *cpuPerMessage) float64 { return c.Client }), m(func(c *cpuPerMessage) float64 { return c.Postgres }),
					m(func(c *cpuPerMessage) float64 { return c.Other }), m(func(c *cpuPerMessage) float64 { return c.Total }))
			}
			errs := 0
			for _, p := range rep.Closed {
				if keep(p) {
					errs += p.Errors
				}
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s | %s | %d |\n", t.Name, b,
				medianOf(rep.Closed, keep, func(p closedPoint) float64 { return p.Rate }),
				call("send"), call("receive"), call("delete"), cpu, errs)
		}
	}
	fmt.Fprintln(w)
	if len(rates) == 0 {
		return
	}
	fmt.Fprintf(w, "### Open loop: one message per call, p50 / p99 of the HTTP exchange in ms; medians of %d rounds\n\n", rep.Rounds)
	head := "| server |"
	sep := "|---|"
	for _, r := range rates {
		head += fmt.Sprintf(" %d calls/s |", r)
		sep += "---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	for _, t := range open {
		row := "| " + t.Name + " |"
		for _, r := range rates {
			keep := func(p openPoint) bool { return p.Target == t.Name && p.Rate == r }
			row += fmt.Sprintf(" %.2f / %.2f |", medianOf(rep.Open, keep, func(p openPoint) float64 { return p.Exchange.P50 }),
				medianOf(rep.Open, keep, func(p openPoint) float64 { return p.Exchange.P99 }))
		}
		fmt.Fprintln(w, row)
	}
	fmt.Fprintln(w)
}

// latencySVG plots each target's median p99 against the offered rate: a line chart with
// a logarithmic latency axis, so that servers a hundred times apart share one plot.
func latencySVG(rep peersReport, rates []int, open []target) string {
	const (
		width, height          = 720, 420
		left, right, top, bott = 70, 230, 30, 50
	)
	pw, ph := float64(width-left-right), float64(height-top-bott)
	type series struct {
		name string
		p99  []float64
	}
	var all []series
	lo, hi := 1e9, 0.0
	for _, t := range open {
		s := series{name: t.Name}
		for _, r := range rates {
			v := medianOf(rep.Open, func(p openPoint) bool { return p.Target == t.Name && p.Rate == r },
				func(p openPoint) float64 { return p.Exchange.P99 })
			s.p99 = append(s.p99, v)
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		all = append(all, s)
	}
	if hi == 0 {
		lo, hi = 0.1, 1
	}
	// Decades that hold every value.
	dlo, dhi := decade(lo, false), decade(hi, true)
	y := func(v float64) float64 {
		if v <= 0 {
			v = dlo
		}
		return float64(top) + ph*(1-(math.Log10(v)-math.Log10(dlo))/(math.Log10(dhi)-math.Log10(dlo)))
	}
	x := func(i int) float64 {
		if len(rates) == 1 {
			return float64(left) + pw/2
		}
		return float64(left) + pw*float64(i)/float64(len(rates)-1)
	}
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">p99 of the HTTP exchange against offered load (open loop, one message per call)</text>`+"\n", left)
	for d := dlo; d <= dhi*1.0001; d *= 10 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, float64(left)+pw, y(d), y(d))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s ms</text>`+"\n", left-6, y(d)+4, strconv.FormatFloat(d, 'g', -1, 64))
	}
	for i, r := range rates {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(i), height-bott+18, r)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">offered calls/s</text>`+"\n", float64(left)+pw/2, height-12)
	for si, s := range all {
		c := colors[si%len(colors)]
		var pts []string
		for i, v := range s.p99 {
			if v > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], c)
		}
		ly := top + 10 + 20*si
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", width-right+15, width-right+35, ly, ly, c)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", width-right+40, ly+4, xmlEscape(s.name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func decade(v float64, up bool) float64 {
	d := 1.0
	for d > v {
		d /= 10
	}
	for d*10 <= v {
		d *= 10
	}
	if up && d < v {
		d *= 10
	}
	return d
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
