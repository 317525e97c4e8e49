// Package drivertest is the contract suite every anysqs driver runs in process. It checks
// each method and each guarantee written in package drivers' doc comments, as the
// driver's own Describe declares them.
//
// A driver's test plugs in with a Harness:
//
//	func TestDriverContract(t *testing.T) {
//		drivertest.RunConformance(t, drivertest.Harness{
//			NewDriver: func(t *testing.T) drivers.Driver { ... },
//			Reopen:    func(t *testing.T, d drivers.Driver) drivers.Driver { ... },
//			// Optional: NewDriverOnSameStorage (a second instance beside d), Parallel.
//		})
//	}
//
// Subtests are named <capability>/<case> (cases about the driver itself are filed under
// "describe") so a report can be built from go test -json. Queue names are unique per
// run, so drivers whose storage is shared between cases (a database server) need not
// clean up between them; Sweep cases only check their own queues.
//
// # Covered
//
// Every Driver method; one result per batch entry, in order; visibility, delay,
// ChangeVisibility (extend, release, the 12-hour cap, not in flight); stale, expired and
// foreign receipt handles; FIFO group order, in-flight blocking, several messages of a
// group per receive, sequence numbers, deduplication (window, scopes, echo, within a
// batch, after delete, after queue deletion), receive attempt replay; redrive at
// maxReceiveCount with DLQ retention clocks; message moves; the 60-second purge rule;
// counts; retention and Sweep; cancelled contexts; concurrent receivers (each message
// claimed once, FIFO order kept); with Reopen, messages, in-flight handles, deduplication
// and sequence numbers across a restart; with NewDriverOnSameStorage, receipt handles and
// activity notification across two instances at once; the move task store.
//
// # How it adapts to the declarations
//
// RunConformance calls Describe once. Each case is filed under a capability and runs as
// the driver declares it, like the gateway conformance suite:
//
//   - Native, Emulated: the SQS behaviour.
//   - Degraded: the case's assertion of the documented fallback where it has one; else
//     the SQS behaviour, with a log line naming the declared fallback.
//   - Unsupported: the gateway rejects such requests before the driver is called, so the
//     case is skipped, saying so ("declared unsupported"), unless it can assert the
//     driver's own answer. Abilities (the activity methods, the move task store) are
//     checked for KindUnsupported wherever the description disclaims them.
//
// Limits shape the cases: the longest visibility timeout is visibility.max's
// max_seconds, one receive returns fifo.group-batch's max_messages of a group, the
// largest body is message.max-size's max_bytes. Moves and dead-lettering declared
// move=at-least-once are checked for exactly that promise (no message lost, every copy
// of one message with the same MessageID, none left in the source); atomic ones for
// exactly one copy. Counts are held to counts.approximate's accuracy (exact at once,
// approximate within a few seconds, unavailable not at all); retention with sweep=ttl
// lets Sweep find nothing. The plain fields decide the rest: ReceiptScope whether a
// handle works through another instance, Activity what AwaitActivity and WatchActivity
// must do, MoveTaskStore whether the store cases run.
//
// # Time
//
// With a gateway clock (drivers.ClockGateway) time moves only through the Now of each
// request: no case sleeps, and a case that needs minutes of queue time runs in
// milliseconds. With a service clock (drivers.ClockService) the suite cannot move queue
// time, so a case waits in real time until its next request is due, at most 40 seconds
// per case, and checks either side of a deadline keep two seconds away from it. A case that
// needs more queue time than that is skipped with a message starting "needs a gateway
// clock: " (report.NeedsGatewayClockPrefix), its own status in a report: neither passed nor "not
// run". Set Harness.Parallel so that the waits of all cases overlap.
package drivertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/expect"
	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Harness opens drivers for the suite.
type Harness struct {
	// NewDriver opens a driver. The harness closes it (t.Cleanup) when the case ends.
	NewDriver func(t *testing.T) drivers.Driver
	// Reopen closes d and opens a new driver on the same storage, as a gateway restart
	// would. Nil when the storage does not outlive a driver; the restart cases are then
	// reported as not run.
	Reopen func(t *testing.T, d drivers.Driver) drivers.Driver
	// NewDriverOnSameStorage opens a second driver on d's storage while d stays open, as
	// a second gateway instance would; the suite closes it when the case ends. Nil when
	// one process serves the storage; the cross-instance cases are then not run.
	NewDriverOnSameStorage func(t *testing.T, d drivers.Driver) drivers.Driver
	// Parallel runs the cases side by side, each with its own driver. A service clock
	// makes cases wait in real time; running them together overlaps the waits.
	Parallel bool
}

// testCase is one conformance case, filed under the capability it checks: the case type
// both suites share (capabilities/expect), over this suite's env. Run asserts the SQS
// behaviour (Native and Emulated declarations); Degraded, when set, the documented
// fallback of a Degraded declaration; Unsupported, when set, what the driver answers
// for an Unsupported one.
type testCase = expect.Case[*env]

// one is a case's single capability.
func one(id capabilities.ID) []capabilities.ID { return []capabilities.ID{id} }

// RunConformance runs every case of the suite against the harness's driver.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if h.NewDriver == nil {
		t.Fatal("drivertest: Harness.NewDriver is nil")
	}
	desc := describe(t, h)
	run := newRunID()
	var cases []testCase
	for _, group := range [][]testCase{describeCases, queueCases, messageCases, visibilityCases,
		receiptCases, fifoCases, redriveCases, moveTaskCases, purgeStatsSweepCases, concurrencyCases,
		restartCases, activityCases} {
		cases = append(cases, group...)
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		runOne := func() {
			t.Run(c.Path(), func(t *testing.T) { runCase(newEnv(t, h, desc, run), c) })
		}
		if !h.Parallel {
			runOne()
			continue
		}
		// t.Run from several goroutines rather than t.Parallel, which caps the cases at
		// -test.parallel (GOMAXPROCS by default): these cases mostly wait, not compute.
		wg.Add(1)
		go func() { defer wg.Done(); runOne() }()
	}
	wg.Wait()
}

// describe asks a driver once what the suite should expect; every case reads the answer.
func describe(t *testing.T, h Harness) drivers.Description {
	t.Helper()
	d := h.NewDriver(t)
	defer d.Close()
	desc, err := d.Describe(context.Background())
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	return desc.Normalized()
}

// runCase runs c as the driver's declaration of c's capability asks (see the package
// doc): the gateway rejects requests of an Unsupported capability before the driver, so
// such a case without its own assertion does not run.
func runCase(e *env, c testCase) {
	c.Dispatch(e.t, e, e.description.Declaration, func(d capabilities.Declaration) {
		e.t.Skipf("declared unsupported (%s): the gateway rejects these requests before the driver; see the conformance suite", d.Note)
	})
}

var runCounter atomic.Int64

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("dt%s%d", hex.EncodeToString(b), runCounter.Add(1))
}

// env is one case's driver, clock and queue namer.
type env struct {
	t           *testing.T
	h           Harness
	d           drivers.Driver
	description drivers.Description // Describe's answer, normalised, asked once per run
	ctx         context.Context
	base        time.Time
	prefix      string
	n           int
}

var caseCounter atomic.Int64

func newEnv(t *testing.T, h Harness, desc drivers.Description, run string) *env {
	d := h.NewDriver(t)
	e := &env{t: t, h: h, d: d, description: desc, ctx: context.Background(),
		// Millisecond precision: every backend stores at least that, and SQS timestamps
		// are in milliseconds.
		base:   time.Now().UTC().Truncate(time.Millisecond),
		prefix: fmt.Sprintf("%s-%d-", run, caseCounter.Add(1)),
	}
	t.Cleanup(func() { _ = e.d.Close() })
	return e
}

// limit returns the int limit key of the driver's declaration of id, or def when the
// declaration states none.
func (e *env) limit(id capabilities.ID, key string, def int) int {
	d, _ := e.description.Declaration(id)
	if v, err := strconv.Atoi(d.Limits[key]); err == nil {
		return v
	}
	return def
}

// limitValue returns the enum limit key of the driver's declaration of id, or def.
func (e *env) limitValue(id capabilities.ID, key, def string) string {
	d, _ := e.description.Declaration(id)
	if v, ok := d.Limits[key]; ok {
		return v
	}
	return def
}

// checkAbility fails unless err says what the description claims: KindUnsupported when
// the ability is disclaimed, no such kind when it is claimed.
func checkAbility(e *env, method string, claimed bool, err error) {
	e.t.Helper()
	unsupported := drivers.KindOf(err) == drivers.KindUnsupported
	switch {
	case claimed && unsupported:
		e.t.Fatalf("%s: %v, but the description claims the ability", method, err)
	case !claimed && !unsupported:
		e.t.Fatalf("%s: error %v, want KindUnsupported: the description disclaims the ability", method, err)
	}
}

// serviceWaitBudget is the most queue time a case may spend on a service clock, where
// the suite waits in real time: the wire suite's. A case needing more is reported as
// needing a gateway clock, never passed.
const serviceWaitBudget = expect.Budget

// serviceSlack is how late after its case time a request may reach a service clock (the
// wait overshoots, the request takes time). Checks on either side of a deadline keep
// this far from it there; on a gateway clock they are a millisecond away.
const serviceSlack = 2 * time.Second

func (e *env) serviceClock() bool { return e.description.Clock == drivers.ClockService }

// at is the Now of a request made at case time d. With a gateway clock it is base+d at
// once. With a service clock the suite cannot move queue time, so it waits in real time
// until d has passed since base (the one place the suite sleeps: no event says that a
// service's deadline passed), and skips the case if d is beyond the budget.
func (e *env) at(d time.Duration) time.Time {
	e.t.Helper()
	t := e.base.Add(d)
	if !e.serviceClock() {
		return t
	}
	e.needs(d)
	if wait := time.Until(t); wait > 0 {
		time.Sleep(wait)
	}
	return t
}

// stamp is base+d as a timestamp that is not a request's Now (a lease's end, a watch's
// Until): it never waits.
func (e *env) stamp(d time.Duration) time.Time { return e.base.Add(d) }

// after is a case time just past deadline d: d itself on a gateway clock.
func (e *env) after(d time.Duration) time.Duration {
	if e.serviceClock() {
		return d + serviceSlack
	}
	return d
}

// before is a case time just short of deadline d.
func (e *env) before(d time.Duration) time.Duration {
	if e.serviceClock() {
		return d - serviceSlack
	}
	return d - time.Millisecond
}

// sameTime says whether a time the driver stamped matches the case time want: to the
// millisecond on a gateway clock, within serviceSlack after it on a service clock.
func (e *env) sameTime(got, want time.Time) bool {
	if !e.serviceClock() {
		return sameTime(got, want)
	}
	return !got.Before(want.Add(-10*time.Millisecond)) && !got.After(want.Add(serviceSlack))
}

// needs skips the case at once, on a service clock, when it needs more queue time than
// the suite may wait for, rather than after waiting part of it.
func (e *env) needs(d time.Duration) {
	e.t.Helper()
	if e.serviceClock() && d > serviceWaitBudget {
		e.t.Skipf("%sthe case needs %v of queue time; a service clock is waited for in real time, at most %v per case",
			report.NeedsGatewayClockPrefix, d, serviceWaitBudget)
	}
}

// asNative is a degraded assertion that is the SQS one: for cases that already read the
// declaration's limits, or whose behaviour the declared fallback does not change.
func asNative(run func(e *env)) func(e *env, d capabilities.Declaration) {
	return func(e *env, _ capabilities.Declaration) { run(e) }
}

// restart reopens the driver on the same storage; the case is not run without a hook.
func (e *env) restart() {
	e.t.Helper()
	if e.h.Reopen == nil {
		e.t.Skip("not Run: the harness has no Reopen hook (storage does not outlive the driver)")
	}
	e.d = e.h.Reopen(e.t, e.d)
}

// StandardAttributes are the attributes the gateway resolves for a default standard queue.
func StandardAttributes() drivers.QueueAttributes {
	return drivers.QueueAttributes{
		MaximumMessageSize:     262144,
		MessageRetentionPeriod: sqsrule.DefaultMessageRetentionPeriod,
		VisibilityTimeout:      sqsrule.DefaultVisibilityTimeout,
		SqsManagedSseEnabled:   true,
	}
}

// FIFOAttributes are the attributes the gateway resolves for a default FIFO queue.
func FIFOAttributes() drivers.QueueAttributes {
	a := StandardAttributes()
	a.FifoQueue = true
	a.DeduplicationScope = "queue"
	a.FifoThroughputLimit = "perQueue"
	return a
}

// name returns a queue name unique to this run and case.
func (e *env) name(base string, fifo bool) string {
	e.n++
	n := fmt.Sprintf("%s%s%d", e.prefix, base, e.n)
	if fifo {
		n += ".fifo"
	}
	return n
}

// queue creates a queue with the given attributes and returns its name.
func (e *env) queue(base string, attrs drivers.QueueAttributes) string {
	e.t.Helper()
	name := e.name(base, attrs.FifoQueue)
	res, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{
		Name: name, Attributes: attrs, Tags: map[string]string{}, CreatedAt: e.base, LastModified: e.base}})
	if err != nil {
		e.t.Fatalf("CreateQueue %s: %v", name, err)
	}
	if res.Existed {
		e.t.Fatalf("CreateQueue %s: Existed on a fresh name", name)
	}
	return name
}

func (e *env) standard(base string) string { return e.queue(base, StandardAttributes()) }
func (e *env) fifo(base string) string     { return e.queue(base, FIFOAttributes()) }

var msgCounter atomic.Int64

// msg builds a send entry with a fresh message id.
func msg(body string) drivers.SendEntry {
	n := msgCounter.Add(1)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return drivers.SendEntry{EntryID: fmt.Sprintf("e%d", n), MessageID: fmt.Sprintf("%s-%d", hex.EncodeToString(b), n), Body: body}
}

// fifoMsg builds a FIFO send entry; the deduplication id defaults to the body.
func fifoMsg(group, body string) drivers.SendEntry {
	m := msg(body)
	m.MessageGroupID = group
	m.MessageDeduplicationID = body
	return m
}

// send stores entries at base+at and fails the case on any error.
func (e *env) send(q string, at time.Duration, entries ...drivers.SendEntry) []drivers.SendEntryResult {
	e.t.Helper()
	res, err := e.d.SendMessages(e.ctx, drivers.SendMessagesRequest{Name: q, Now: e.at(at), Entries: entries})
	if err != nil {
		e.t.Fatalf("SendMessages %s: %v", q, err)
	}
	if len(res.Entries) != len(entries) {
		e.t.Fatalf("SendMessages %s: %d results for %d entries", q, len(res.Entries), len(entries))
	}
	for i, r := range res.Entries {
		if r.EntryID != entries[i].EntryID {
			e.t.Fatalf("SendMessages %s: result %d has EntryID %q, want %q", q, i, r.EntryID, entries[i].EntryID)
		}
		if r.Err != nil {
			e.t.Fatalf("SendMessages %s: entry %s: %v", q, r.EntryID, r.Err)
		}
	}
	return res.Entries
}

// receive claims up to max messages at base+at with visibility vis seconds.
func (e *env) receive(q string, at time.Duration, max int, vis int32) drivers.ReceiveMessagesResult {
	e.t.Helper()
	return e.receiveAttempt(q, at, max, vis, "")
}

func (e *env) receiveAttempt(q string, at time.Duration, max int, vis int32, attempt string) drivers.ReceiveMessagesResult {
	e.t.Helper()
	res, err := e.d.ReceiveMessages(e.ctx, drivers.ReceiveMessagesRequest{Name: q, Now: e.at(at),
		MaxMessages: max, VisibilityTimeout: vis, ReceiveRequestAttemptID: attempt})
	if err != nil {
		e.t.Fatalf("ReceiveMessages %s: %v", q, err)
	}
	if len(res.Messages) > max {
		e.t.Fatalf("ReceiveMessages %s: %d messages, asked for at most %d", q, len(res.Messages), max)
	}
	return res
}

// bodies lists the bodies of msgs in order.
func bodies(msgs []drivers.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

// expectBodies fails unless the received bodies are exactly want, in order.
func (e *env) expectBodies(what string, msgs []drivers.Message, want ...string) {
	e.t.Helper()
	got := bodies(msgs)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
		e.t.Fatalf("%s: got bodies %q, want %q", what, got, want)
	}
}

// del deletes handles at base+at and returns one result per handle.
func (e *env) del(q string, at time.Duration, handles ...string) []drivers.EntryResult {
	e.t.Helper()
	entries := make([]drivers.DeleteEntry, len(handles))
	for i, h := range handles {
		entries[i] = drivers.DeleteEntry{EntryID: fmt.Sprintf("d%d", i), ReceiptHandle: h}
	}
	res, err := e.d.DeleteMessages(e.ctx, drivers.DeleteMessagesRequest{Name: q, Now: e.at(at), Entries: entries})
	if err != nil {
		e.t.Fatalf("DeleteMessages %s: %v", q, err)
	}
	e.checkBatch("DeleteMessages", res, len(entries), func(i int) string { return entries[i].EntryID })
	return res.Entries
}

// mustDelete deletes handles and fails on any entry error.
func (e *env) mustDelete(q string, at time.Duration, handles ...string) {
	e.t.Helper()
	for i, r := range e.del(q, at, handles...) {
		if r.Err != nil {
			e.t.Fatalf("DeleteMessages %s: entry %d: %v", q, i, r.Err)
		}
	}
}

// change sets one message's visibility timeout and returns the entry's error.
func (e *env) change(q string, at time.Duration, handle string, vis int32) *drivers.Error {
	e.t.Helper()
	res, err := e.d.ChangeVisibility(e.ctx, drivers.ChangeVisibilityRequest{Name: q, Now: e.at(at),
		Entries: []drivers.ChangeVisibilityEntry{{EntryID: "c", ReceiptHandle: handle, VisibilityTimeout: vis}}})
	if err != nil {
		e.t.Fatalf("ChangeVisibility %s: %v", q, err)
	}
	e.checkBatch("ChangeVisibility", res, 1, func(int) string { return "c" })
	return res.Entries[0].Err
}

func (e *env) checkBatch(op string, res drivers.BatchResult, n int, id func(int) string) {
	e.t.Helper()
	if len(res.Entries) != n {
		e.t.Fatalf("%s: %d results for %d entries", op, len(res.Entries), n)
	}
	for i, r := range res.Entries {
		if r.EntryID != id(i) {
			e.t.Fatalf("%s: result %d has EntryID %q, want %q", op, i, r.EntryID, id(i))
		}
	}
}

// stats returns the queue's counts at base+at (oldest reads the oldest message's time).
func (e *env) stats(q string, at time.Duration) drivers.QueueStats {
	e.t.Helper()
	s := e.queueStats(q, at)
	s.OldestSentAt = time.Time{}
	return s
}

func (e *env) queueStats(q string, at time.Duration) drivers.QueueStats {
	e.t.Helper()
	s, err := e.d.QueueStats(e.ctx, drivers.QueueStatsRequest{Name: q, Now: e.at(at)})
	if err != nil {
		e.t.Fatalf("QueueStats %s: %v", q, err)
	}
	return s
}

// countsSettle is how long approximate counts may take to reflect the queue's state.
const countsSettle = 5 * time.Second

// expectStats checks the queue's counts at base+at as the counts.approximate
// declaration's accuracy promises: exact counts at once, approximate ones within
// countsSettle, unavailable ones not at all (the call must still succeed).
func (e *env) expectStats(q string, at time.Duration, want drivers.QueueStats) {
	e.t.Helper()
	got := e.stats(q, at)
	switch e.limitValue(capabilities.CountsApprox, "accuracy", "exact") {
	case "unavailable":
		return
	case "approximate":
		for end := time.Now().Add(countsSettle); got != want && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond) // no event says that a backend's counts caught up
			got = e.stats(q, at)
		}
	}
	if got != want {
		e.t.Fatalf("QueueStats %s at +%v: got %+v, want %+v", q, at, got, want)
	}
}

// expectKind fails unless err is a *drivers.Error of kind k.
func expectKind(t *testing.T, what string, err error, k drivers.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want kind %v", what, k)
	}
	if got := drivers.KindOf(err); got != k {
		t.Fatalf("%s: error %v has kind %v, want %v", what, err, got, k)
	}
}

// entryErr turns a possibly nil *drivers.Error into an error without the typed-nil trap.
func entryErr(e *drivers.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
}

// drain receives every message of q at case time at, each once (a long timeout), and
// deletes none.
func (e *env) drain(q string, at time.Duration) []drivers.Message {
	e.t.Helper()
	var all []drivers.Message
	for i := 0; ; i++ {
		got := e.receive(q, at, 10, 300)
		if len(got.Messages) == 0 || i > 100 {
			return all
		}
		all = append(all, got.Messages...)
	}
}
