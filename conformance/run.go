package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// Target is what a run outside go test judges (anysqs verify).
type Target struct {
	// Backend names the run in its report: TestConformance/<Backend>/<case>.
	Backend string
	// Open opens the configured backend's driver in this process. The run serves it on
	// loopback through one gateway on the real clock, which every case shares; cases
	// that restart the gateway or set its limits run afterwards, one at a time, each
	// with a gateway of its own. Policy is that gateway's capability policy.
	Open   func(ctx context.Context) (drivers.Driver, error)
	Policy capabilities.Config
	// Fresh, instead of Open, gives each case storage of its own, on the gateway clock
	// the driver declares, as the project's CI does: open, and a cleanup to call after.
	Fresh func() (open func(ctx context.Context) (drivers.Driver, error), cleanup func(), err error)
	// Endpoint, instead of Open, is an SQS endpoint judged black box against SQS's
	// documented behaviour; Account is the account in its queue URLs, and Client sets
	// its clients' region and credentials.
	Endpoint string
	Client   func(*sqs.Options)
	// Account and Region are the gateway's (Open) or the endpoint's, in queue URLs and
	// ARNs; empty: 123456789012 and us-east-1.
	Account, Region string
}

// RunOptions configure Run.
type RunOptions struct {
	Target Target
	// Prefix starts the name of every queue the run creates (required outside go
	// test): cases delete their queues when they end, and Run deletes anything left
	// under it before returning.
	Prefix string
	// Match selects cases by their path, <capabilityIDs>/<case>; nil: every case.
	Match *regexp.Regexp
	// Budget is the real time one case may wait for queue time to pass (zero: 45 s);
	// cases needing more report needs-gateway-clock.
	Budget time.Duration
	// Parallel is how many cases run at once (zero: 32).
	Parallel int
	// Events, if set, receives the run as go test -json events (cmd/test2json), which
	// capabilities/report reads.
	Events io.Writer
	// Progress, if set, is called as each case ends.
	Progress func(Outcome)
	// Count makes each outcome carry the requests its case made.
	Count bool
	// Logger receives the gateway's own log (nil: discarded).
	Logger *slog.Logger
}

// Outcome is how one case ended.
type Outcome struct {
	Path   string // <capabilityIDs>/<case>
	Status report.Status
	Output []string
	// Requests and Queues count the case's SQS requests and created queues (Count).
	Requests, Queues int
	Elapsed          time.Duration
}

// Result is a whole run.
type Result struct {
	Backend  string
	Desc     drivers.Description
	Started  time.Time
	Outcomes []Outcome
	// Left lists queues under the prefix that the run could not delete.
	Left []string
}

// CasePaths lists every case's path, <capabilityIDs>/<case>.
func CasePaths() []string {
	var out []string
	for _, c := range allCases() {
		out = append(out, c.Path())
	}
	return out
}

// Run runs the selected cases against o.Target. Cancelling ctx stops it: cases still
// running fail, and every queue under the prefix is deleted before Run returns.
func Run(ctx context.Context, o RunOptions) (*Result, error) {
	if o.Prefix == "" {
		return nil, errors.New("conformance: a run needs a queue name prefix")
	}
	if o.Parallel <= 0 {
		o.Parallel = 32
	}
	if o.Budget <= 0 {
		o.Budget = realClockBudget
	}
	var cases []tc
	for _, c := range allCases() {
		if o.Match == nil || o.Match.MatchString(c.Path()) {
			cases = append(cases, c)
		}
	}
	res := &Result{Backend: o.Target.Backend, Started: time.Now().UTC()}
	ev := &eventWriter{w: o.Events, backend: o.Target.Backend}
	ev.emit("run", "", "")

	st := storage{endpoint: o.Target.Endpoint, account: o.Target.Account, region: o.Target.Region, client: o.Target.Client, budget: o.Budget}
	var shared *sharedGateway
	switch {
	case o.Target.Endpoint != "":
		res.Desc = endpointDescription()
	case o.Target.Fresh != nil:
	case o.Target.Open != nil:
		var err error
		if shared, err = startShared(ctx, o); err != nil {
			return nil, err
		}
		res.Desc, st.shared = shared.desc, shared
	default:
		return nil, errors.New("conformance: the target needs Open, Fresh or Endpoint")
	}

	var mu sync.Mutex
	record := func(out Outcome) {
		mu.Lock()
		defer mu.Unlock()
		res.Outcomes = append(res.Outcomes, out)
		ev.finish(out)
		if o.Progress != nil {
			o.Progress(out)
		}
	}
	one := func(c tc, st storage) {
		if ctx.Err() != nil {
			record(Outcome{Path: c.Path(), Status: report.Fail, Output: []string{"not started: the run was interrupted"}})
			return
		}
		ev.emit("run", c.Path(), "")
		out := runOne(ctx, o, c, st, res)
		record(out)
	}

	// Cases that share the gateway run together; the others (restarts, own limits),
	// each on a gateway of its own over the same storage, after it has closed.
	var together, alone []tc
	for _, c := range cases {
		if shared != nil && (c.Restarts || c.MaxInFlight != 0) {
			alone = append(alone, c)
		} else {
			together = append(together, c)
		}
	}
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for _, c := range together {
		caseStorage := st
		if o.Target.Fresh != nil {
			open, cleanup, err := o.Target.Fresh()
			if err != nil {
				record(Outcome{Path: c.Path(), Status: report.Fail, Output: []string{"fresh storage: " + err.Error()}})
				continue
			}
			caseStorage.open = open
			defer cleanup()
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			one(c, caseStorage)
		}()
	}
	wg.Wait()
	if shared != nil {
		shared.close()
		// Storage that several gateways may share takes these cases together; other
		// storage (one process per data directory) one at a time.
		n := 1
		if shared.desc.SharedStorage {
			n = o.Parallel
		}
		sem := make(chan struct{}, n)
		for _, c := range alone {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				one(c, storage{open: o.Target.Open, realClock: true, budget: o.Budget, account: o.Target.Account, region: o.Target.Region})
			}()
		}
		wg.Wait()
	}
	sort.Slice(res.Outcomes, func(i, j int) bool { return res.Outcomes[i].Path < res.Outcomes[j].Path })
	res.Left = sweepPrefix(o, res.Desc)
	status := report.Pass
	for _, out := range res.Outcomes {
		if out.Status == report.Fail {
			status = report.Fail
		}
	}
	ev.emitFinal("", status)
	return res, ctx.Err()
}

// runOne runs case c to its end, then its cleanups, which delete the queues it made.
func runOne(ctx context.Context, o RunOptions, c tc, st storage, res *Result) Outcome {
	t := &caseT{name: c.Path()}
	start := time.Now()
	var h *H
	t.do(func() {
		h = startHarness(t, o.Target.Backend, st, 10*time.Minute,
			harnessOptions{prefix: o.Prefix, maxInFlight: c.MaxInFlight, parent: ctx, policy: o.Target.Policy})
		if st.open != nil && h.Desc.Capabilities == nil {
			t.Fatalf("the driver declares no capabilities")
		}
		t.Cleanup(h.deleteOwnQueues)
		dispatch(h, c)
	})
	t.runCleanups()
	out := Outcome{Path: c.Path(), Status: t.status(), Output: t.output(), Elapsed: time.Since(start)}
	if h != nil {
		out.Requests, out.Queues = h.headers.counts()
		if st.open != nil && res.Desc.Name == "" {
			res.Desc = h.Desc
		}
	}
	return out
}

// deleteOwnQueues deletes the queues the case created, and any other whose name starts
// with the case's prefix: ListQueues may not list a new queue yet (on AWS SQS it lags).
func (h *H) deleteOwnQueues() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, u := range h.headers.createdQueues() {
		_, _ = h.SQS.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
	}
	deletePrefixed(ctx, h.SQS, h.prefix)
}

// deletePrefixed deletes the queues listed under prefix and returns those it could not.
func deletePrefixed(ctx context.Context, client *sqs.Client, prefix string) (left []string) {
	p := sqs.NewListQueuesPaginator(client, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix), MaxResults: aws.Int32(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return append(left, fmt.Sprintf("%s* (ListQueues: %v)", prefix, err))
		}
		for _, u := range page.QueueUrls {
			if _, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil && codeOf(err) != "QueueDoesNotExist" {
				left = append(left, fmt.Sprintf("%s (DeleteQueue: %v)", u, err))
			}
		}
	}
	return left
}

// sweepPrefix deletes whatever the run left under its prefix, through a gateway of
// its own over the target (or the endpoint).
func sweepPrefix(o RunOptions, desc drivers.Description) []string {
	if o.Target.Fresh != nil {
		return nil // each case's storage is gone with it
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	left, err := Cleanup(ctx, o.Target, o.Prefix)
	if err != nil {
		return append(left, err.Error())
	}
	return left
}

// Cleanup deletes every queue whose name starts with prefix on the target (a killed
// run's, for anysqs verify --cleanup) and returns those it could not delete.
func Cleanup(ctx context.Context, target Target, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, errors.New("conformance: cleanup needs a prefix")
	}
	t := &caseT{name: "cleanup"}
	var left []string
	t.do(func() {
		st := storage{endpoint: target.Endpoint, account: target.Account, region: target.Region, client: target.Client}
		if target.Endpoint == "" {
			st.open, st.realClock = target.Open, true
		}
		h := startHarness(t, target.Backend, st, 0, harnessOptions{parent: ctx, policy: target.Policy})
		left = deletePrefixed(ctx, h.SQS, prefix)
	})
	t.runCleanups()
	if t.status() != report.Pass {
		return left, fmt.Errorf("cleanup: %s", strings.Join(t.output(), "; "))
	}
	return left, nil
}

// sharedGateway is one gateway over the target's driver, on the real clock, which the
// cases of a run share.
type sharedGateway struct {
	url  string
	desc drivers.Description
	drv  *observedDriver
	gw   *gateway.Server
	srv  *http.Server
}

func startShared(ctx context.Context, o RunOptions) (*sharedGateway, error) {
	d, err := o.Target.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", o.Target.Backend, err)
	}
	s := &sharedGateway{drv: &observedDriver{Driver: d}}
	account, region := cmp.Or(o.Target.Account, testAccount), cmp.Or(o.Target.Region, testRegion)
	if s.desc, err = d.Describe(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("describe %s: %w", o.Target.Backend, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.Close()
		return nil, err
	}
	s.url = "http://" + ln.Addr().String()
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.gw, err = gateway.New(context.WithoutCancel(ctx), gateway.Config{
		Driver: s.drv, Clock: clock.Real{}, AccountID: account, Region: region, PublicURL: s.url,
		Logger: logger, Policy: o.Target.Policy,
		Credentials: map[string]string{testAccessKey: testSecretKey},
	})
	if err != nil {
		ln.Close()
		d.Close()
		return nil, err
	}
	s.srv = &http.Server{Handler: s.gw}
	go s.srv.Serve(ln) //nolint:errcheck // ends with close
	return s, nil
}

func (s *sharedGateway) close() {
	s.srv.Close()
	s.gw.Close()
	s.drv.Close()
}

// caseT is a case's T outside go test. Like testing.T, FailNow and SkipNow end the
// case's goroutine (runtime.Goexit), so the case must run in do.
type caseT struct {
	name     string
	mu       sync.Mutex
	lines    []string
	failed   bool
	skipped  bool
	cleanups []func()
}

func (t *caseT) Helper()      {}
func (t *caseT) Name() string { return t.name }
func (t *caseT) Log(args ...any) {
	t.log(fmt.Sprintln(args...))
}
func (t *caseT) Logf(format string, args ...any) { t.log(fmt.Sprintf(format, args...)) }
func (t *caseT) Error(args ...any)               { t.log(fmt.Sprintln(args...)); t.fail() }
func (t *caseT) Errorf(format string, args ...any) {
	t.log(fmt.Sprintf(format, args...))
	t.fail()
}
func (t *caseT) Fatal(args ...any)                 { t.Error(args...); t.FailNow() }
func (t *caseT) Fatalf(format string, args ...any) { t.Errorf(format, args...); t.FailNow() }
func (t *caseT) FailNow()                          { t.fail(); runtime.Goexit() }
func (t *caseT) Skip(args ...any)                  { t.log(fmt.Sprintln(args...)); t.skipNow() }
func (t *caseT) Skipf(format string, args ...any)  { t.log(fmt.Sprintf(format, args...)); t.skipNow() }
func (t *caseT) Cleanup(f func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}

func (t *caseT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *caseT) log(s string) {
	t.mu.Lock()
	t.lines = append(t.lines, strings.Split(strings.TrimRight(s, "\n"), "\n")...)
	t.mu.Unlock()
}

func (t *caseT) fail() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *caseT) skipNow() {
	t.mu.Lock()
	t.skipped = true
	t.mu.Unlock()
	runtime.Goexit()
}

// do runs f on a goroutine of its own, as go test runs a test, and waits for it to end
// by returning, by FailNow or SkipNow, or by a panic, which fails the case.
func (t *caseT) do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		f()
	}()
	<-done
}

// runCleanups calls the cleanups, last registered first, each as do does.
func (t *caseT) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		t.do(f)
	}
}

func (t *caseT) status() report.Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.failed:
		return report.Fail
	case t.skipped:
		for _, l := range t.lines {
			if strings.HasPrefix(l, report.NeedsGatewayClockPrefix) {
				return report.NeedsGatewayClock
			}
		}
		return report.NotRun
	}
	return report.Pass
}

func (t *caseT) output() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// eventWriter writes a run as go test -json events under TestConformance/<backend>.
type eventWriter struct {
	mu      sync.Mutex
	w       io.Writer
	backend string
}

type testEvent struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Output  string `json:",omitempty"`
}

func (e *eventWriter) test(path string) string {
	if path == "" {
		return "TestConformance/" + e.backend
	}
	return "TestConformance/" + e.backend + "/" + path
}

func (e *eventWriter) emit(action, path, output string) {
	if e.w == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b, _ := json.Marshal(testEvent{Time: time.Now(), Action: action, Package: "anysqs verify", Test: e.test(path), Output: output})
	e.w.Write(append(b, '\n')) //nolint:errcheck // the report reads what arrived
}

func (e *eventWriter) finish(o Outcome) {
	for _, l := range o.Output {
		e.emit("output", o.Path, "    "+l+"\n")
	}
	e.emitFinal(o.Path, o.Status)
}

func (e *eventWriter) emitFinal(path string, s report.Status) {
	action := "pass"
	switch s {
	case report.Fail:
		action = "fail"
	case report.NotRun, report.NeedsGatewayClock:
		action = "skip"
	}
	e.emit(action, path, "")
}

// Declarations is what the run's report states the target declared: each capability's
// level, the driver's and its service's versions, the clock and the receipt scope.
// target says what was run against; commit is the anysqs build's.
func (r *Result) Declarations(target, commit string, budget time.Duration) report.Declarations {
	if budget <= 0 {
		budget = realClockBudget
	}
	d := declarationsOf(r.Backend, r.Desc, r.Started, commit, true, budget)
	d.Target = target
	return d
}

// declarationsOf builds a row's declarations record; served rows and anysqs verify's
// shared gateway keep queue time by the real clock whatever the driver declares.
func declarationsOf(backend string, desc drivers.Description, started time.Time, commit string, realTime bool, budget time.Duration) report.Declarations {
	d := report.NewDeclarations(backend, desc.Version, desc.ServiceVersion, desc.Capabilities, started, commit)
	n := desc.Normalized()
	d.Clock, d.ReceiptScope = string(n.Clock), string(n.ReceiptScope)
	if ops := desc.Operations; ops != (capabilities.Operations{}) {
		d.Operations = &ops
	}
	if n.Clock == drivers.ClockService {
		d.RealClockBudget = budget.String()
	}
	if realTime {
		d.Clock, d.RealClockBudget = report.ServedClock, budget.String()
	}
	return d
}
