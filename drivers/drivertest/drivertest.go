// Package drivertest is the contract suite every anysqs driver runs in process. It checks
// each method and each guarantee written in package drivers' doc comments, with
// explicit Now values instead of sleeps, so a case that needs minutes of queue time runs
// in milliseconds.
//
// A driver's test plugs in with a Harness:
//
//	func TestDriverContract(t *testing.T) {
//		drivertest.RunConformance(t, drivertest.Harness{
//			NewDriver: func(t *testing.T) drivers.Driver { ... },
//			Reopen:    func(t *testing.T, d drivers.Driver) drivers.Driver { ... },
//		})
//	}
//
// Subtests are named <capability>/<case> (cases about the driver itself are filed under
// "describe") so a report can be built from go test -json. Queue names are unique per
// run, so drivers whose storage is shared between cases (a database server) need not
// clean up between them; Sweep cases only check their own queues.
//
// Covered: every Driver method; one result per batch entry, in order; visibility,
// delay, ChangeVisibility (extend, release, 12-hour cap, not in flight); stale, expired
// and foreign receipt handles; FIFO group order, in-flight blocking, several messages
// of a group per receive, sequence numbers, deduplication (window, scopes, echo, within
// a batch, after delete, after queue deletion), receive attempt replay; redrive at
// maxReceiveCount with DLQ retention clocks; message moves; the 60-second purge rule;
// counts; retention and Sweep; cancelled contexts; concurrent receivers (each message
// claimed once, FIFO order kept); and, with Reopen, messages, in-flight handles,
// deduplication and sequence numbers across a restart. Time moves only through the
// Now of each request: no case sleeps or measures durations.
package drivertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// Harness opens drivers for the suite.
type Harness struct {
	// NewDriver opens a driver. The harness closes it (t.Cleanup) when the case ends.
	NewDriver func(t *testing.T) drivers.Driver
	// Reopen closes d and opens a new driver on the same storage, as a gateway restart
	// would. Nil when the storage does not outlive a driver; the restart cases are then
	// reported as not run.
	Reopen func(t *testing.T, d drivers.Driver) drivers.Driver
}

// testCase is one conformance case, filed under the capability it checks.
type testCase struct {
	capability string
	name       string
	run        func(e *env)
}

// RunConformance runs every case of the suite against the harness's driver.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if h.NewDriver == nil {
		t.Fatal("drivertest: Harness.NewDriver is nil")
	}
	run := newRunID()
	var cases []testCase
	for _, group := range [][]testCase{describeCases, queueCases, messageCases, visibilityCases,
		receiptCases, fifoCases, redriveCases, moveTaskCases, purgeStatsSweepCases, concurrencyCases, restartCases} {
		cases = append(cases, group...)
	}
	for _, c := range cases {
		t.Run(c.capability+"/"+c.name, func(t *testing.T) {
			c.run(newEnv(t, h, run))
		})
	}
}

var runCounter atomic.Int64

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("dt%s%d", hex.EncodeToString(b), runCounter.Add(1))
}

// env is one case's driver, clock and queue namer.
type env struct {
	t      *testing.T
	h      Harness
	d      drivers.Driver
	ctx    context.Context
	base   time.Time
	prefix string
	n      int
}

var caseCounter atomic.Int64

func newEnv(t *testing.T, h Harness, run string) *env {
	d := h.NewDriver(t)
	e := &env{t: t, h: h, d: d, ctx: context.Background(),
		// Millisecond precision: every backend stores at least that, and SQS timestamps
		// are in milliseconds.
		base:   time.Now().UTC().Truncate(time.Millisecond),
		prefix: fmt.Sprintf("%s-%d-", run, caseCounter.Add(1)),
	}
	t.Cleanup(func() { _ = e.d.Close() })
	return e
}

// desc returns the driver's description, normalised.
func (e *env) desc() drivers.Description {
	e.t.Helper()
	d, err := e.d.Describe(e.ctx)
	if err != nil {
		e.t.Fatalf("Describe: %v", err)
	}
	return d.Normalized()
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

// at is the case's base time plus d.
func (e *env) at(d time.Duration) time.Time { return e.base.Add(d) }

// restart reopens the driver on the same storage; the case is not run without a hook.
func (e *env) restart() {
	e.t.Helper()
	if e.h.Reopen == nil {
		e.t.Skip("not run: the harness has no Reopen hook (storage does not outlive the driver)")
	}
	e.d = e.h.Reopen(e.t, e.d)
}

// StandardAttributes are the attributes the gateway resolves for a default standard queue.
func StandardAttributes() drivers.QueueAttributes {
	return drivers.QueueAttributes{
		MaximumMessageSize:     262144,
		MessageRetentionPeriod: 345600,
		VisibilityTimeout:      30,
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

// stats returns the queue's counts at base+at.
func (e *env) stats(q string, at time.Duration) drivers.QueueStats {
	e.t.Helper()
	s, err := e.d.QueueStats(e.ctx, drivers.QueueStatsRequest{Name: q, Now: e.at(at)})
	if err != nil {
		e.t.Fatalf("QueueStats %s: %v", q, err)
	}
	return s
}

func (e *env) expectStats(q string, at time.Duration, want drivers.QueueStats) {
	e.t.Helper()
	if got := e.stats(q, at); got != want {
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
