package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/expect"
	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

const (
	testAccount = "123456789012"
	testRegion  = "us-east-1"
	// testAccessKey and testSecretKey are the credentials of every client of the suite.
	testAccessKey = "AKIDCONFORMANCE"
	testSecretKey = "conformance-secret"
)

// realClockBudget bounds the real time one case may wait on a service-clock backend.
// Cases run in parallel, so their waits overlap; a case needing more queue time than
// this skips as "needs a gateway clock" instead of holding the run for minutes or days.
const realClockBudget = expect.Budget

// needsGatewayClock starts the skip message of a case that a real clock cannot judge
// within realClockBudget; the compatibility report gives such cases their own status.
const needsGatewayClock = report.NeedsGatewayClockPrefix

// storage is one case's private backend storage. open (re)opens a driver on it; calling
// open again after closing the previous driver is how a restart is simulated.
type storage struct {
	open func(ctx context.Context) (drivers.Driver, error)
	// endpoint, instead of open, names a running SQS endpoint to judge black box;
	// client, if set, gives the endpoint's clients their region and credentials.
	endpoint string
	client   func(*sqs.Options)
	// account and region, when set, replace the suite's (123456789012, us-east-1): an
	// endpoint's, or those the configuration being verified gives its gateway.
	account, region string
	// serve, instead of open, starts a gateway process for the case (the anysqs binary
	// from a shipped configuration): it sets h.URL and h.Desc and returns the process.
	serve func(h *H, maxInFlight int64) servedProcess
	// unavailable ends the case when what it needs is not here (a restart of an
	// endpoint's service): a skip, or under CI a failure. Nil: a skip.
	unavailable func(t T, format string, args ...any)
	// shared, instead of open, is one gateway every case of a run shares (anysqs
	// verify's storage is the user's, which cases cannot each have a copy of).
	shared *sharedGateway
	// realClock runs an opened driver's gateway on the real clock whatever the driver
	// declares: a fake clock's sweeps would expire messages of every queue in storage
	// that is not the case's own.
	realClock bool
	// budget replaces realClockBudget (anysqs verify --long).
	budget time.Duration
}

// servedProcess is a case's gateway running as a process of its own.
type servedProcess interface {
	// Restart stops the process and starts it again on the same storage and port.
	Restart()
	// AdminURL is its admin listener (/capabilities, /metrics).
	AdminURL() string
}

// H is the harness of one case: a gateway over one backend, and an aws-sdk-go-v2 SQS
// client pointed at it. The gateway runs on a fake clock when the driver keeps queue time
// by the gateway's clock, and on the real clock when its service keeps queue time; cases
// move time with Advance, which works on both.
type H struct {
	T   T
	Ctx context.Context
	// Account and Region are the gateway's, in queue URLs and ARNs.
	Account string
	Region  string
	// Clock is the fake clock of gateway-clock backends; use Now and Advance instead.
	Clock *clock.Fake
	SQS   *sqs.Client
	URL   string // the gateway's base URL
	Desc  drivers.Description

	backend string
	st      storage
	srv     *http.Server
	served  servedProcess // the served binary, for served rows
	handler atomic.Pointer[http.Handler]
	gw      *gateway.Server
	drv     *observedDriver
	prefix  string
	// protocol is the wire protocol of the case's client (and of its raw calls).
	protocol wireProtocol
	seq      atomic.Int64
	headers  headerRecorder
	policy   capabilities.Config
	// maxInFlight is the gateway's in-flight limit per queue; 0: its default.
	maxInFlight int64
	// wrap, when set, wraps each driver the harness opens, for fault injection.
	wrap func(drivers.Driver) drivers.Driver
	// realClock: the driver declares ClockService, so the gateway runs on clock.Real and
	// Advance sleeps; waited is the real time slept so far, against realClockBudget.
	realClock bool
	waited    time.Duration
	budget    time.Duration // realClockBudget unless the run sets another
	// restarts: the case running here may call Restart; nil when not run as a case.
	restarts *bool
}

// wireProtocol selects how the case's aws-sdk-go-v2 client talks to the gateway.
type wireProtocol int

const (
	protocolJSON  wireProtocol = iota // AWS JSON 1.0, the SDK's default for SQS
	protocolQuery                     // the Query protocol (form-encoded requests, XML responses)
)

// harnessOptions vary the gateway and client of a harness; the zero value is the suite's
// default: JSON protocol, default capability policy.
type harnessOptions struct {
	prefix string // starts every queue name of the case
	// parent, if set, is the context the case's own derives from (a run's).
	parent      context.Context
	protocol    wireProtocol
	policy      capabilities.Config
	maxInFlight int64 // the gateway's in-flight limit per queue; 0: its default
	// wrap, when set, wraps each driver the harness opens (at start and every restart).
	wrap func(drivers.Driver) drivers.Driver
}

// startHarness starts a gateway named backend over st for t, as o says; timeout, if
// set, bounds the case from now on.
func startHarness(t T, backend string, st storage, timeout time.Duration, o harnessOptions) *H {
	t.Helper()
	parent := o.parent
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(parent, timeout)
	}
	t.Cleanup(cancel)
	h := &H{T: t, Ctx: ctx, backend: backend, st: st, policy: o.policy, protocol: o.protocol, maxInFlight: o.maxInFlight, wrap: o.wrap,
		Clock:   clock.NewFake(time.Now()),
		Account: testAccount,
		Region:  testRegion,
		prefix:  o.prefix + "c" + randomHex(4) + "-",
		budget:  realClockBudget,
	}
	if st.account != "" {
		h.Account = st.account
	}
	if st.region != "" {
		h.Region = st.region
	}
	h.headers.transport = http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(h.headers.transport.CloseIdleConnections)
	if st.endpoint != "" {
		if o.maxInFlight != 0 {
			t.Skip("the case sets the gateway's in-flight limit, and an endpoint's is its own")
		}
		h.URL, h.Desc, h.realClock = st.endpoint, endpointDescription(), true
		h.SQS = h.newClient(o.protocol)
		return h
	}
	if st.budget > 0 {
		h.budget = st.budget
	}
	if st.shared != nil {
		h.URL, h.Desc, h.realClock = st.shared.url, st.shared.desc, true
		h.SQS = h.newClient(o.protocol)
		return h
	}
	if st.serve != nil {
		if p := o.policy; p.Mode != "" || len(p.Overrides) > 0 || len(p.Require) > 0 {
			t.Fatalf("a served row runs the shipped configuration's policy, not %+v", p)
		}
		h.served = st.serve(h, o.maxInFlight)
		// The process runs on its own clock, which the case cannot move.
		h.realClock = true
		h.SQS = h.newClient(o.protocol)
		return h
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := h.handler.Load(); p != nil {
			(*p).ServeHTTP(w, r)
			return
		}
		http.Error(w, "gateway stopped", http.StatusServiceUnavailable)
	})}
	go h.srv.Serve(ln) //nolint:errcheck // ends with Close
	h.URL = "http://" + ln.Addr().String()
	t.Cleanup(func() {
		h.stop()
		h.srv.Close()
	})
	h.start()
	h.SQS = h.newClient(o.protocol)
	return h
}

// start opens the driver on the case's storage and starts a gateway over it.
func (h *H) start() {
	h.T.Helper()
	d, err := h.st.open(h.Ctx)
	if err != nil {
		h.T.Fatalf("open %s driver: %v", h.backend, err)
	}
	if h.wrap != nil {
		d = h.wrap(d)
	}
	h.drv = &observedDriver{Driver: d}
	h.Desc, err = d.Describe(h.Ctx)
	if err != nil {
		d.Close()
		h.T.Fatalf("describe %s driver: %v", h.backend, err)
	}
	h.realClock = h.st.realClock || h.Desc.Normalized().Clock == drivers.ClockService
	gw, err := gateway.New(h.Ctx, gateway.Config{
		Driver:        h.drv,
		Clock:         h.gatewayClock(),
		AccountID:     h.Account,
		Region:        h.Region,
		PublicURL:     h.URL,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		SweepInterval: time.Minute,
		Policy:        h.policy,
		MaxInFlight:   h.maxInFlight,
		// Every case runs authenticated: each SDK's requests pass SigV4 verification.
		Credentials: map[string]string{testAccessKey: testSecretKey},
	})
	if err != nil {
		d.Close()
		h.T.Fatalf("start gateway over %s: %v", h.backend, err)
	}
	h.gw = gw
	var hd http.Handler = gw
	h.handler.Store(&hd)
}

// stop closes the gateway and its driver; the listener stays, answering 503 meanwhile.
func (h *H) stop() {
	h.handler.Store(nil)
	if h.gw != nil {
		h.gw.Close()
		h.gw = nil
	}
	if h.drv != nil {
		h.drv.Close()
		h.drv = nil
	}
}

// Restart stops the gateway and the driver and starts both again on the same storage,
// keeping the listener so that queue URLs stay valid.
func (h *H) Restart() {
	h.T.Helper()
	if h.restarts != nil && !*h.restarts {
		h.T.Fatalf("the case restarts the gateway without saying so (tc.Restarts): anysqs verify would run it beside others")
	}
	if h.st.shared != nil {
		h.T.Fatalf("a restart of the gateway every case shares")
	}
	if h.st.endpoint != "" {
		h.unavailable("a restart of the service behind %s, which the suite does not run", h.URL)
	}
	if h.served != nil {
		h.served.Restart()
		return
	}
	h.stop()
	h.start()
}

// newClient returns an aws-sdk-go-v2 client for the gateway: static credentials, region
// us-east-1, message checksum validation left on, and no retries so that every error
// the gateway returns reaches the test.
func (h *H) newClient(p wireProtocol) *sqs.Client {
	region, creds := h.Region, credentials.NewStaticCredentialsProvider(testAccessKey, testSecretKey, "")
	return sqs.New(sqs.Options{
		Region:       region,
		Credentials:  creds,
		BaseEndpoint: aws.String(h.URL),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   &http.Client{Transport: &h.headers},
	}, func(o *sqs.Options) {
		if h.st.client != nil {
			h.st.client(o)
		}
		if p == protocolQuery {
			o.Protocol = awsquery.New(schemas.AmazonSQS)
		}
	})
}

// headerRecorder is the client's transport; it keeps the last response's headers so
// that cases can check the gateway's X-Anysqs-* headers. Each case has its own pool of
// connections (a clone of http.DefaultTransport): with one pool shared by hundreds of
// parallel cases, a connection of one case could be closed by what another case does to
// the pool (its idle limit evicting, CloseIdleConnections), mid-response.
type headerRecorder struct {
	mu        sync.Mutex
	last      http.Header
	transport *http.Transport
	// requests and creates count the client's requests and CreateQueue calls; created
	// are the URLs CreateQueue returned.
	requests, creates int
	created           []string
}

// counts returns the requests the case's clients made and the queues they asked to create.
func (r *headerRecorder) counts() (requests, creates int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.creates
}

func (r *headerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var rt http.RoundTripper = http.DefaultTransport
	if r.transport != nil {
		rt = r.transport
	}
	create := strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".CreateQueue") // JSON protocol
	r.mu.Lock()
	r.requests++
	if create {
		r.creates++
	}
	r.mu.Unlock()
	resp, err := rt.RoundTrip(req)
	if err == nil {
		var created string
		if create && resp.StatusCode == http.StatusOK {
			created, resp.Body = createdURL(resp.Body)
		}
		r.mu.Lock()
		r.last = resp.Header.Clone()
		if created != "" {
			r.created = append(r.created, created)
		}
		r.mu.Unlock()
	}
	return resp, err
}

// createdURL reads the QueueUrl of a CreateQueue response (JSON protocol) and returns
// the body to read again.
func createdURL(body io.ReadCloser) (string, io.ReadCloser) {
	raw, err := io.ReadAll(io.LimitReader(body, 1<<20))
	body.Close()
	var out struct{ QueueUrl string }
	if err == nil {
		_ = json.Unmarshal(raw, &out)
	}
	return out.QueueUrl, io.NopCloser(bytes.NewReader(raw))
}

// createdQueues are the URLs of the queues the case's clients created.
func (r *headerRecorder) createdQueues() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.created...)
}

// LastHeader returns header k of the last response the case's client received.
func (h *H) LastHeader(k string) string {
	h.headers.mu.Lock()
	defer h.headers.mu.Unlock()
	return h.headers.last.Get(k)
}

// Name returns a queue name unique to this case (backends may share a namespace).
func (h *H) Name(base string) string {
	n := fmt.Sprintf("%s%s%d", h.prefix, base, h.seq.Add(1))
	return n
}

// FifoName returns a unique FIFO queue name.
func (h *H) FifoName(base string) string { return h.Name(base) + ".fifo" }

// Level returns the backend's declared level for id; a missing declaration fails the case,
// because every driver declares every catalog ID.
func (h *H) Level(id capabilities.ID) capabilities.Level {
	h.T.Helper()
	d, ok := h.declaration(id)
	if !ok {
		h.T.Fatalf("backend %s declares no level for capability %s", h.backend, id)
	}
	return d.Level
}

func (h *H) declaration(id capabilities.ID) (capabilities.Declaration, bool) {
	for _, d := range h.Desc.Capabilities {
		if d.ID == id {
			return d, true
		}
	}
	return capabilities.Declaration{}, false
}

// maxMessageBytes is the largest message the backend declares it stores (SQS: 1 MiB).
func (h *H) maxMessageBytes() int {
	if d, ok := h.declaration(capabilities.MessageMaxSize); ok {
		if n, err := strconv.Atoi(d.Limits["max_bytes"]); err == nil && n < 1048576 {
			return n
		}
	}
	return 1048576
}

// unavailable ends the case because what it needs is not here.
func (h *H) unavailable(format string, args ...any) {
	h.T.Helper()
	if h.st.unavailable != nil {
		h.st.unavailable(h.T, format, args...)
	}
	h.T.Skipf(serviceNotAvailable+format, args...)
}

// serviceNotAvailable starts the skip message of a case whose service is not here.
const serviceNotAvailable = "service not available here: "

// endpointDescription is what the suite expects of an endpoint it knows nothing about:
// the catalog's native behaviour, on the service's clock, with receipts valid anywhere.
func endpointDescription() drivers.Description {
	d := drivers.Description{Name: "endpoint", Clock: drivers.ClockService,
		ReceiptScope: drivers.ReceiptStorage, SharedStorage: true, Activity: drivers.ActivityPoll}
	for _, e := range capabilities.All() {
		d.Capabilities = append(d.Capabilities, capabilities.Declaration{ID: e.ID, Level: capabilities.Native})
	}
	return d
}

// NextEmptyReceive returns a channel closed after the driver next answers a receive with
// no message, or starts a receive that waits in the driver (BlockingReceive). A long poll
// calls the driver, finds nothing, then waits: once this fires the gateway or the driver
// has started waiting (or is about to), so a later send must wake it.
//
// An endpoint cannot be observed: there it fires after a second, by when a long poll
// sent just before has reached the server.
func (h *H) NextEmptyReceive() <-chan struct{} {
	if h.st.endpoint != "" {
		c := make(chan struct{})
		time.AfterFunc(time.Second, func() { close(c) })
		return c
	}
	if h.served != nil {
		return h.nextServedWait()
	}
	if h.st.shared != nil {
		return h.guardWait(h.st.shared.drv.nextEmptyReceive(h.prefix))
	}
	return h.guardWait(h.drv.nextEmptyReceive(""))
}

// guardWait closes its channel when c is, or after two minutes at most: a hang guard,
// not a bound on the gateway. On a real clock a receive meant to find the queue empty
// can find a message whose visibility ended while a slow backend ran the case's setup,
// and then no empty receive ever comes; the case goes on and judges what the poll
// returned, instead of hanging the run.
func (h *H) guardWait(c <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		select {
		case <-c:
		case <-time.After(2 * time.Minute):
		case <-h.Ctx.Done():
		}
	}()
	return out
}

// gatewayClock is the clock the case's gateways run on.
func (h *H) gatewayClock() clock.Clock {
	if h.realClock {
		return clock.Real{}
	}
	return h.Clock
}

// Now returns the gateway's current time.
func (h *H) Now() time.Time { return h.gatewayClock().Now() }

// Advance lets d of queue time pass: it moves the fake clock of a gateway-clock backend,
// and sleeps on a service-clock one. A wait that would take the case's real waiting past
// realClockBudget skips the case as needing a gateway clock.
func (h *H) Advance(d time.Duration) {
	h.T.Helper()
	if !h.realClock {
		h.Clock.Advance(d)
		return
	}
	if h.waited+d > h.budget {
		expect.NeedsGatewayClock(h.T, d, h.waited, h.budget)
	}
	h.waited += d
	select {
	case <-time.After(d):
	case <-h.Ctx.Done():
		h.T.Fatalf("waiting %v of real time: %v", d, h.Ctx.Err())
	}
}

// AdvanceTo lets queue time pass until t, if it is still ahead.
func (h *H) AdvanceTo(t time.Time) {
	h.T.Helper()
	if d := t.Sub(h.Now()); d > 0 {
		h.Advance(d)
	}
}

// NeedGatewayClock skips the case, on a service-clock backend only, because it needs
// what (say, "12 h of visibility") of queue time that no real-clock run can wait for.
func (h *H) NeedGatewayClock(what string) {
	h.T.Helper()
	if h.realClock {
		h.T.Skip(needsGatewayClock + what)
	}
}

// AnysqsChoice skips the case on an endpoint: it checks anysqs's documented choice where
// SQS documents no behaviour (what), so an endpoint differing from it is no difference
// from SQS.
func (h *H) AnysqsChoice(what string) {
	h.T.Helper()
	if h.st.endpoint != "" {
		h.T.Skipf("not judged on an endpoint: SQS does not document %s, and this case checks anysqs's choice", what)
	}
}

// Before reports whether the gateway's clock still reads before deadline. A negative
// timing check ("not visible before the timeout") proves something only while it holds:
// on a real clock a slow request may return after the deadline, and then a message seen
// is not a failure. Take the time before the request that starts the timer.
func (h *H) Before(deadline time.Time) bool {
	if h.Now().Before(deadline) {
		return true
	}
	h.T.Logf("the check finished %v after its deadline; its negative result proves nothing", h.Now().Sub(deadline))
	return false
}

// Eventually calls cond until it is true, advancing the fake clock by step between calls
// (step 0: no advance; a real clock ignores step). It is for work the gateway does in the background (message move
// tasks, sweeps), which a black-box client cannot wait on; it asserts no timing, only
// that the condition becomes true before a generous hang guard.
func (h *H) Eventually(what string, step time.Duration, cond func() bool) {
	h.T.Helper()
	guard := time.Now().Add(2 * time.Minute) // hang guard for a loaded machine
	for time.Now().Before(guard) {
		if cond() {
			return
		}
		if step > 0 && !h.realClock {
			h.Clock.Advance(step)
		}
		time.Sleep(5 * time.Millisecond) // give the gateway's goroutines a turn
	}
	h.T.Fatalf("%s: never happened", what)
}

// observedDriver passes everything to the backend's driver and lets the harness see when a
// receive came back empty. It changes no behaviour.
type observedDriver struct {
	drivers.Driver
	mu      sync.Mutex
	waiters []emptyWaiter
}

// emptyWaiter waits for an empty receive from a queue whose name starts with prefix:
// a case's own, when cases share the driver.
type emptyWaiter struct {
	prefix string
	c      chan struct{}
}

func (d *observedDriver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	if req.WaitTime > 0 {
		// A BlockingReceive driver does the waiting itself: it answers empty only at the
		// deadline, so the wait starts here. A message sent from now on is in the queue
		// when the driver looks, or wakes it.
		d.emptyReceive(req.Name)
	}
	res, err := d.Driver.ReceiveMessages(ctx, req)
	if err == nil && len(res.Messages) == 0 {
		d.emptyReceive(req.Name)
	}
	return res, err
}

func (d *observedDriver) emptyReceive(queue string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.waiters[:0]
	for _, w := range d.waiters {
		if strings.HasPrefix(queue, w.prefix) {
			close(w.c)
		} else {
			kept = append(kept, w)
		}
	}
	d.waiters = kept
}

func (d *observedDriver) nextEmptyReceive(prefix string) <-chan struct{} {
	c := make(chan struct{})
	d.mu.Lock()
	d.waiters = append(d.waiters, emptyWaiter{prefix: prefix, c: c})
	d.mu.Unlock()
	return c
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
