// Command anysqs-load is a load generator for anysqs. It drives a running gateway with
// aws-sdk-go-v2 (AWS JSON protocol) and, in the same run, does the same work without the
// gateway, so the gateway's cost is measured against a baseline on the same machine and
// database at the same time.
//
// Paths (--paths, comma-separated):
//
//	gateway  the SDK against --endpoint
//	driver   the PostgreSQL driver in process on --dsn: the very statements the gateway runs
//	driver+lookup  the same plus the GetQueue the gateway does before each send and receive
//	driver-plugin  the driver path with the driver in a plugin process (--plugin's
//	        driver serve postgres): CPU per message counts that process in the gateway column
//	sql      plain SQL on the driver's tables (pgmq-style claim); Standard queues only
//
// Modes:
//
//	closed  --workers workers each repeat send → receive → delete of --batch messages for
//	        --duration (after --warmup); reports messages/s, p50/p99 per call and CPU
//	        per message by process (from /proc: --gateway-pid, this process,
//	        PostgreSQL's, the rest of the machine)
//	open    calls at a fixed --rate (send, receive, delete in turn, one message each), for
//	        --warmup unmeasured, then for --duration or --count calls; reports p50/p99 per
//	        call from the scheduled time
//	peers   closed Standard at each of --batches, then open at each of --open-rates, on
//	        every --target NAME=URL[@PID] in turn (and on the driver path with --dsn, as
//	        the open loop's baseline); writes Markdown tables, --json and --svg (a plot of
//	        p99 against offered load). make bench-peers starts the servers.
//	depth   fills a queue to each of --depths messages and times --samples receive →
//	        delete cycles on it: does a receive cost the same in a deep queue?
//	queues  creates each of --queue-counts queues (one message each) and times
//	        --samples send → receive → delete cycles on queues picked at random
//	longpolls  holds --polls 20-second long polls on one empty queue at once and
//	        reports the gateway's resident memory (--gateway-pid) before and meanwhile
//	floor   serves, on --listen, an SQS server that stores nothing and answers with the
//	        least work net/http and JSON allow (floor.go); make bench-peers measures it
//	        as the floor under every server's CPU per call
//	churn   a PostgreSQL soak (make soak-postgres): --workers workers repeat send →
//	        receive → delete of --batch messages (default 1) on one Standard queue for
//	        --duration (default 15m); from --hold-from for --hold-for a transaction is held
//	        open on another connection to --dsn. Every --interval a row: messages/s,
//	        receive p50/p99, errors, and the messages table's and indexes' sizes and live
//	        and dead tuples; Markdown tables at the end, rows in --json (churn.go)
//	suite   closed Standard and FIFO, batch 1 and 10, then open at 300 and 1000 calls/s,
//	        every path; prints Markdown tables with the ratios and the gateway path's CPU
//	        budget against plain SQL (make bench-postgres)
//
// Example:
//
//	anysqs-load --mode suite --endpoint http://127.0.0.1:9324 --dsn postgres://postgres@127.0.0.1/anysqs_bench
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/internal/gctune"
)

func main() {
	// The load generator is the measuring instrument: it collects garbage as the gateway
	// does, and every path in this process alike (docs/performance.md).
	gctune.Apply(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "anysqs-load:", err)
		os.Exit(1)
	}
}

type options struct {
	mode, endpoint, dsn, schema, paths, queue string
	batch, workers, groups, rate, count       int
	rounds                                    int
	duration, warmup                          time.Duration
	bodySize                                  int
	gatewayPID, postgresPID                   int
	plugin                                    string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("anysqs-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.mode, "mode", "suite", "closed, open, suite, peers, churn, depth, queues, longpolls, or floor (serve the floor server on --listen)")
	listen := fs.String("listen", "127.0.0.1:9399", "floor mode: the address to serve on")
	fs.StringVar(&o.endpoint, "endpoint", "http://127.0.0.1:9324", "gateway URL (gateway path)")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("ANYSQS_POSTGRES_DSN"), "the gateway's PostgreSQL database (driver and sql paths)")
	fs.StringVar(&o.schema, "schema", "anysqs", "the driver's schema")
	fs.StringVar(&o.paths, "paths", "sql,driver,driver+lookup,gateway", "paths to measure, comma-separated")
	fs.StringVar(&o.queue, "queue", "standard", "standard or fifo (closed mode)")
	fs.IntVar(&o.batch, "batch", 10, "messages per send, receive and delete (closed mode), 1..10")
	fs.IntVar(&o.workers, "workers", 16, "concurrent workers (closed mode)")
	fs.IntVar(&o.groups, "groups", 1000, "FIFO message groups")
	fs.IntVar(&o.rate, "rate", 300, "API calls per second (open mode)")
	fs.IntVar(&o.count, "count", 0, "stop after this many calls (open mode; 0: --duration only)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per phase")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured time before each phase (closed and open)")
	fs.IntVar(&o.bodySize, "body-size", 100, "message body bytes")
	fs.IntVar(&o.rounds, "rounds", 1, "repeat each configuration, paths taking turns; medians reported")
	fs.StringVar(&o.plugin, "plugin", "bin/anysqs", "the anysqs binary whose `driver serve postgres` the driver-plugin path runs")
	fs.IntVar(&o.gatewayPID, "gateway-pid", 0, "the gateway's process id on this machine, to report its CPU time per message (closed mode)")
	var po peersOptions
	fs.Var(&po.targets, "target", "peers mode: a server to measure, `NAME=URL[@PID]` (repeat the flag)")
	fs.StringVar(&po.batches, "batches", "1,10", "peers mode: closed-loop batch sizes")
	fs.StringVar(&po.openRates, "open-rates", "100,300,1000,2000", "peers mode: open-loop rates, calls/s")
	fs.StringVar(&po.jsonOut, "json", "", "peers and churn modes: write every phase's (churn: row's) results to this JSON file")
	fs.StringVar(&po.svgOut, "svg", "", "peers mode: write the latency against offered load plot to this SVG file")
	var so scaleOptions
	fs.StringVar(&so.depths, "depths", "1000,100000", "depth mode: queue depths, messages")
	fs.StringVar(&so.queueCounts, "queue-counts", "10,1000,10000", "queues mode: numbers of queues")
	fs.IntVar(&so.polls, "polls", 1000, "longpolls mode: concurrent long polls")
	fs.IntVar(&so.samples, "samples", 1000, "depth and queues modes: measured cycles per size")
	var co churnOptions
	fs.DurationVar(&co.holdFrom, "hold-from", 5*time.Minute, "churn mode: when to open the long transaction, since the start")
	fs.DurationVar(&co.holdFor, "hold-for", 5*time.Minute, "churn mode: how long to hold it open (0: never)")
	fs.DurationVar(&co.interval, "interval", time.Minute, "churn mode: one row per interval")
	fs.IntVar(&o.postgresPID, "postgres-pid", 0, "count only this PostgreSQL postmaster and its children as PostgreSQL's CPU (0: every process named postgres)")
	cpuProfile := fs.String("cpuprofile", "", "write the load generator's own CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.mode == "floor" {
		return runFloor(ctx, *listen, stdout)
	}
	if o.mode == "churn" {
		// The soak's own defaults, where the flag was not given: one message per call, 15 minutes.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["batch"] {
			o.batch = 1
		}
		if !set["duration"] {
			o.duration = 15 * time.Minute
		}
		co.jsonOut = po.jsonOut
	}
	if o.batch < 1 || o.batch > 10 {
		return errors.New("--batch must be 1..10")
	}
	if o.rate < 1 || o.workers < 1 || o.groups < 1 || o.rounds < 1 {
		return errors.New("--rate, --workers, --groups and --rounds must be positive")
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	paths, err := openPaths(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range paths {
			p.Close()
		}
	}()
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	fmt.Fprintf(stdout, "anysqs-load: %s, GOMAXPROCS %d, GOGC %d, %d workers, %s per phase, %s, load average %s\n\n",
		o.mode, runtime.GOMAXPROCS(0), gc, o.workers, o.duration, time.Now().UTC().Format(time.RFC3339), loadavg())
	defer func() { fmt.Fprintf(stdout, "load average at the end: %s\n", loadavg()) }()
	switch o.mode {
	case "closed":
		cfg := o.closedConfig(o.queue == "fifo", o.batch)
		return closedTable(ctx, stdout, stderr, o, paths, []closedConfig{cfg})
	case "open":
		return openTable(ctx, stdout, stderr, o, paths, []int{o.rate})
	case "depth":
		return runDepth(ctx, stdout, stderr, o, so)
	case "queues":
		return runQueues(ctx, stdout, stderr, o, so)
	case "longpolls":
		return runLongPolls(ctx, stdout, stderr, o, so)
	case "peers":
		return runPeers(ctx, stdout, stderr, o, po)
	case "churn":
		return runChurn(ctx, stdout, stderr, o, co)
	case "suite":
		if err := ballast(ctx, o); err != nil {
			return err
		}
		var cfgs []closedConfig
		for _, fifo := range []bool{false, true} {
			for _, b := range []int{10, 1} {
				cfgs = append(cfgs, o.closedConfig(fifo, b))
			}
		}
		if err := closedTable(ctx, stdout, stderr, o, paths, cfgs); err != nil {
			return err
		}
		return openTable(ctx, stdout, stderr, o, paths, []int{300, 1000})
	}
	return fmt.Errorf("unknown --mode %q", o.mode)
}

func (o options) closedConfig(fifo bool, batch int) closedConfig {
	return closedConfig{fifo: fifo, batch: batch, workers: o.workers, groups: o.groups, duration: o.duration,
		warmup: o.warmup, bodySize: o.bodySize, meter: &cpuMeter{proc: "/proc", gatewayPID: o.gatewayPID, postgresPID: o.postgresPID}}
}

func openPaths(_ context.Context, o options) ([]path, error) {
	var out []path
	for _, name := range strings.Split(o.paths, ",") {
		name = strings.TrimSpace(name)
		var open func(ctx context.Context) (path, error)
		switch name {
		case "gateway":
			open = func(context.Context) (path, error) { return newGatewayPath(o.endpoint, o.workers), nil }
		case "driver", "driver+lookup":
			open = func(ctx context.Context) (path, error) {
				dp, err := newDriverPath(ctx, o.dsn, o.schema, int32(o.workers))
				if err != nil {
					return nil, err
				}
				dp.lookup = name == "driver+lookup"
				return dp, nil
			}
		case "driver-plugin":
			open = func(ctx context.Context) (path, error) {
				return newPluginDriverPath(ctx, o.plugin, o.dsn, o.schema, int32(o.workers))
			}
		case "sql":
			open = func(ctx context.Context) (path, error) { return newSQLPath(ctx, o.dsn, o.schema, int32(o.workers)) }
		default:
			return nil, fmt.Errorf("unknown path %q (want gateway, driver, driver+lookup, driver-plugin or sql)", name)
		}
		out = append(out, &lazyPath{name: name, open: open})
	}
	return out, nil
}

// lazyPath opens its path when a phase creates its queue and closes it when the phase
// ends, so the idle pools of the other paths hold no connections: the server's
// max_connections is shared with everything else on it.
type lazyPath struct {
	name string
	open func(ctx context.Context) (path, error)
	p    path
}

func (l *lazyPath) Name() string { return l.name }

func (l *lazyPath) Queue(ctx context.Context, name string, fifo bool) (string, error) {
	if l.p == nil {
		p, err := l.open(ctx)
		if err != nil {
			return "", err
		}
		l.p = p
	}
	return l.p.Queue(ctx, name, fifo)
}

func (l *lazyPath) Send(ctx context.Context, q string, bodies, groups []string) error {
	return l.p.Send(ctx, q, bodies, groups)
}

func (l *lazyPath) Receive(ctx context.Context, q string, max int) ([]string, error) {
	return l.p.Receive(ctx, q, max)
}

func (l *lazyPath) Delete(ctx context.Context, q string, handles []string) error {
	return l.p.Delete(ctx, q, handles)
}

// PID is the open path's own process (a plugin's), 0 if it has none.
func (l *lazyPath) PID() int {
	if p, ok := l.p.(interface{ PID() int }); ok {
		return p.PID()
	}
	return 0
}

func (l *lazyPath) Close() {
	if l.p != nil {
		l.p.Close()
		l.p = nil
	}
}

// vacuum cleans the driver's tables between phases so that one phase's dead rows do not
// slow the next one down, and analyzes them: on a never-analyzed table PostgreSQL plans
// the driver's claim and delete as sequential scans, which is not the steady state
// autovacuum's ANALYZE leads to. A CHECKPOINT then writes the dirty pages out, so that
// no phase pays for a checkpoint that earlier phases made due (it needs superuser or
// pg_checkpoint; without, it is skipped).
func vacuum(ctx context.Context, o options) {
	if o.dsn == "" {
		return
	}
	conn, err := pgx.Connect(ctx, o.dsn)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	s := pgx.Identifier{o.schema}.Sanitize()
	_, _ = conn.Exec(ctx, "VACUUM (ANALYZE) "+s+".messages, "+s+".dedup")
	_, _ = conn.Exec(ctx, "CHECKPOINT")
}

// ballastMessages stay queued for a whole suite run, in ballastQueues queues no phase
// uses, so the messages table is never empty when analyzed: on a table analyzed while
// empty PostgreSQL plans the first phase's statements as sequential scans, which made the
// first phase of a run on a new database up to three times slower than later ones. Several
// queues, because connections that plan a statement once (the sql path's, the driver's)
// plan it for a queue of the table's average size: with one ballast queue that was all of
// it, and the sql path's first phase ran at 40% of its later rate.
const (
	ballastMessages = 2000
	ballastQueues   = 50
)

func ballast(ctx context.Context, o options) error {
	if o.dsn == "" {
		return nil
	}
	d, err := postgres.Open(ctx, postgres.Options{DSN: o.dsn, Schema: o.schema, MaxConns: 2})
	if err != nil {
		return fmt.Errorf("ballast: %w", err)
	}
	defer d.Close()
	prefix := "anysqs-load-ballast-" + uuid.NewString()[:8] + "-"
	for n := 0; n < ballastQueues; n++ {
		q := prefix + strconv.Itoa(n)
		now := time.Now()
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q,
			Attributes: queueattr.Defaults(false), CreatedAt: now, LastModified: now}}); err != nil {
			return fmt.Errorf("ballast: %w", err)
		}
		for i := 0; i < ballastMessages/ballastQueues; i += 10 {
			entries := make([]drivers.SendEntry, 10)
			for j := range entries {
				entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: uuid.NewString(), Body: "ballast"}
			}
			if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: q, Now: time.Now(), Entries: entries}); err != nil {
				return fmt.Errorf("ballast: %w", err)
			}
		}
	}
	return nil
}

func closedTable(ctx context.Context, w, logw io.Writer, o options, paths []path, cfgs []closedConfig) error {
	fmt.Fprintln(w, "### Closed loop: send → receive → delete cycles")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CPU per message on this machine, µs: the gateway process and its children, a driver plugin's (0 without --gateway-pid; the plugin process on the driver-plugin path) / this load generator (the SDK or the SQL client) / PostgreSQL / the rest of the machine (kernel work, mostly) = total, over the measured window.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| queue, batch | round | path | messages/s | vs sql | vs driver | send p50/p99 ms | receive p50/p99 ms | delete p50/p99 ms | errors | CPU µs/msg |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	var budgets []budgetRound
	for _, cfg := range cfgs {
		all := map[string][]float64{}
		for round := 1; round <= o.rounds; round++ {
			// Paths take turns within a round, so drift in the machine's load hits them alike.
			rates := map[string]float64{}
			results := map[string]closedResult{}
			for _, p := range paths {
				if cfg.fifo && p.Name() == "sql" {
					continue
				}
				vacuum(ctx, o)
				fmt.Fprintf(logw, "closed: %s, round %d, on %s...\n", cfg, round, p.Name())
				r, err := runClosed(ctx, p, cfg, "bench-"+p.Name()+"-"+uuid.NewString()[:8])
				p.Close()
				if err != nil {
					return err
				}
				rates[p.Name()] = r.rate()
				results[p.Name()] = r
				all[p.Name()] = append(all[p.Name()], r.rate())
				n, first := r.rec.errors()
				cpu := "–"
				if r.cpu != nil {
					cpu = r.cpu.perMessage(r.msgs)
				}
				fmt.Fprintf(w, "| %s | %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |\n", cfg, round, r.path, r.rate(),
					ratio(r.rate(), rates["sql"]), ratio(r.rate(), rates["driver"]),
					pair(r.rec.dist("send")), pair(r.rec.dist("receive")), pair(r.rec.dist("delete")), errText(n, first), cpu)
			}
			if b, ok := newBudgetRound(cfg, round, results["sql"], results["gateway"], o.gatewayPID > 0); ok {
				budgets = append(budgets, b)
			}
		}
		if o.rounds > 1 {
			med := map[string]float64{}
			for _, p := range paths {
				if v := all[p.Name()]; len(v) > 0 {
					med[p.Name()] = median(v)
					fmt.Fprintf(w, "| %s | median | %s | %.0f | %s | %s | | | | | |\n", cfg, p.Name(), med[p.Name()],
						ratio(med[p.Name()], med["sql"]), ratio(med[p.Name()], med["driver"]))
				}
			}
		}
	}
	fmt.Fprintln(w)
	budgetTable(w, budgets)
	return ctx.Err()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadavg is the machine's 1-minute load average, to show how busy the shared cores were.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}

func openTable(ctx context.Context, w, logw io.Writer, o options, paths []path, rates []int) error {
	fmt.Fprintln(w, "### Open loop: fixed rate, Standard queue, one message per call")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| calls/s | round | path | achieved calls/s | send p50/p99 ms | receive p50/p99 ms | delete p50/p99 ms | p99 added vs sql (s/r/d) ms | p99 added vs driver (s/r/d) ms | HTTP exchange p99 (s/r/d) ms | errors, skipped |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	calls := []string{"send", "receive", "delete"}
	for _, rate := range rates {
		// p99s[path][call] collects each round's p99 in milliseconds, for the medians.
		p99s := map[string]map[string][]float64{}
		for round := 1; round <= o.rounds; round++ {
			base := map[string]*recorder{}
			for _, p := range paths {
				vacuum(ctx, o)
				fmt.Fprintf(logw, "open: %d calls/s, round %d, on %s...\n", rate, round, p.Name())
				cfg := openConfig{rate: rate, warmup: o.warmup, duration: o.duration, count: o.count, bodySize: o.bodySize, inFlight: 512}
				r, err := runOpen(ctx, p, cfg, "bench-open-"+p.Name()+"-"+uuid.NewString()[:8])
				p.Close()
				if err != nil {
					return err
				}
				base[p.Name()] = r.rec
				if p99s[p.Name()] == nil {
					p99s[p.Name()] = map[string][]float64{}
				}
				for _, c := range calls {
					p99s[p.Name()][c] = append(p99s[p.Name()][c], float64(r.rec.dist(c).p99)/float64(time.Millisecond))
				}
				for _, c := range httpCalls { // the gateway path only
					if d := r.rec.dist(c); d.n > 0 {
						p99s[p.Name()][c] = append(p99s[p.Name()][c], float64(d.p99)/float64(time.Millisecond))
					}
				}
				n, first := r.rec.errors()
				fmt.Fprintf(w, "| %d | %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s, %d |\n", rate, round, r.path,
					float64(r.issued)/r.elapsed.Seconds(),
					pair(r.rec.dist("send")), pair(r.rec.dist("receive")), pair(r.rec.dist("delete")),
					added(r.rec, base["sql"]), added(r.rec, base["driver"]), httpP99s(r.rec), errText(n, first), r.skipped)
			}
		}
		if o.rounds > 1 {
			med := func(path, call string) float64 { return median(p99s[path][call]) }
			for _, p := range paths {
				var own, vsSQL, vsDriver []string
				for _, c := range calls {
					own = append(own, fmt.Sprintf("p99 %.2f", med(p.Name(), c)))
					if p99s["sql"] != nil && p.Name() != "sql" {
						vsSQL = append(vsSQL, fmt.Sprintf("%+.2f", med(p.Name(), c)-med("sql", c)))
					}
					if p99s["driver"] != nil && p.Name() != "driver" {
						vsDriver = append(vsDriver, fmt.Sprintf("%+.2f", med(p.Name(), c)-med("driver", c)))
					}
				}
				var http []string
				for _, c := range httpCalls {
					if v := p99s[p.Name()][c]; len(v) > 0 {
						http = append(http, fmt.Sprintf("%.2f", median(v)))
					}
				}
				fmt.Fprintf(w, "| %d | median | %s | | %s | %s | %s | %s | |\n", rate, p.Name(),
					strings.Join(own, " | "), orDash(strings.Join(vsSQL, " / ")), orDash(strings.Join(vsDriver, " / ")),
					orDash(strings.Join(http, " / ")))
			}
		}
	}
	fmt.Fprintln(w)
	return ctx.Err()
}

// httpCalls are the gateway path's HTTP exchanges (timeHTTP), recorded beside its calls.
var httpCalls = []string{"send http", "receive http", "delete http"}

// httpP99s is the p99 of each HTTP exchange of the gateway path, "–" for other paths.
func httpP99s(r *recorder) string {
	var out []string
	for _, c := range httpCalls {
		if d := r.dist(c); d.n > 0 {
			out = append(out, ms(d.p99))
		}
	}
	return orDash(strings.Join(out, " / "))
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func pair(d dist) string {
	if d.n == 0 {
		return "–"
	}
	return ms(d.p50) + " / " + ms(d.p99)
}

func ratio(v, base float64) string {
	if base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*v/base)
}

// added is the p99 difference per call type between r and base.
func added(r, base *recorder) string {
	if base == nil || base == r {
		return "–"
	}
	var parts []string
	for _, c := range []string{"send", "receive", "delete"} {
		parts = append(parts, fmt.Sprintf("%+.2f", float64(r.dist(c).p99-base.dist(c).p99)/float64(time.Millisecond)))
	}
	return strings.Join(parts, " / ")
}

func errText(n int, first string) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", n, strings.ReplaceAll(first, "|", "/"))
}
