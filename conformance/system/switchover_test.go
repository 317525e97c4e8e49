package system_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

const (
	switchDelay = 4  // seconds: a batch sent to the old standard queue just before the switch is delayed this long
	heldVT      = 3  // seconds: a consumer of the old standard queue dies holding a batch this long
	nearlyEmpty = 50 // messages left in the old standard queue when its consumers stop
)

// TestSwitchoverUnderLoad follows docs/migration.md, "Switching a running system", from
// PostgreSQL to Spanner (emulator) and to SQLite, with gateways served from the shipped
// configurations and the anysqs binary's migrate, while producers send to a standard
// and a FIFO queue (three groups) all along:
//
//  1. migrate --queues-only, then a gateway on the new backend;
//  2. the producers move to it, with the same queue URL paths;
//  3. consumers drain the old gateway (its standard queue has a backlog: its consumers
//     start at the switch) and those of the new standard queue start;
//  4. when the old FIFO queue is empty and the standard one nearly, the old consumers
//     stop, one of them dying with a batch in flight, the old gateway stops and
//     migrate --mode move moves the rest: visible messages, the delayed batch and the
//     one in flight, once its visibility ends;
//  5. the new FIFO queue's consumers start, and every acknowledged send is received.
//
// SQLite is open in one process at a time, so for it the new gateway stops during the
// move (which can then --verify: nothing consumes there meanwhile), and producers' sends
// fail meanwhile; for Spanner no send may fail. No
// acknowledged send may be lost, no message received twice, and each FIFO group must
// keep its order across the switch. The counts are logged as a table.
func TestSwitchoverUnderLoad(t *testing.T) {
	for _, sc := range switchCases {
		t.Run("postgres-to-"+sc.to, func(t *testing.T) { switchover(t, sc) })
	}
}

// switchCase is one destination of TestSwitchoverUnderLoad: acknowledged standard sends
// before the switch, the producers' backlog, and acknowledged standard sends after the
// move. The Spanner emulator consumes slowly: a smaller backlog keeps the run short.
type switchCase struct {
	to                     string
	before, backlog, after int
}

var switchCases = []switchCase{
	{to: "spanner", before: 150, backlog: 200, after: 100},
	{to: "sqlite", before: 300, backlog: 400, after: 200},
}

// migrate runs `anysqs migrate --from from --to to args...`, each side's environment
// prefixed as migrate reads it, and returns its report and its log; it fails t if
// migrate fails.
func migrate(t *testing.T, from, to testbed.Side, args ...string) (report, log string) {
	t.Helper()
	cmd := exec.Command(servetest.Binary(t), append([]string{"migrate", "--from", from.Config, "--to", to.Config}, args...)...)
	cmd.Env = append(os.Environ(), testbed.MigrateEnv(from, to)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("anysqs migrate %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// route is where the producers send.
type route struct {
	c         *sqs.Client
	std, fifo string
}

// producers send to whichever route is current, each batch after the previous one was
// answered and while fewer than backlog messages they sent wait to be received (the
// emulators consume slowly: unchecked producers would bury them); switched counts those
// that have sent a batch on the route after old.
type producers struct {
	ctx      context.Context
	route    atomic.Pointer[route]
	old      *route
	switched atomic.Int32
	backlog  int
	wg       sync.WaitGroup
}

func (p *producers) target(l *ledger, fifo bool) target {
	var once sync.Once
	return func() (*sqs.Client, string) {
		l.waitBacklog(p.ctx, p.backlog)
		r := p.route.Load()
		if r != p.old {
			once.Do(func() { p.switched.Add(1) })
		}
		if fifo {
			return r.c, r.fifo
		}
		return r.c, r.std
	}
}

// waitLedger blocks until cond holds, looking again whenever l records an
// acknowledgement or a delivery; false if ctx ended first.
func waitLedger(ctx context.Context, l *ledger, cond func() bool) bool {
	for {
		l.mu.Lock()
		ch := l.changed
		l.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// undelivered counts the messages queueURL acknowledged that no consumer received yet.
func (l *ledger) undelivered(queueURL string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id, by := range l.ackedBy {
		if by == queueURL && len(l.deliveries[id]) == 0 {
			n++
		}
	}
	return n
}

var (
	movedLine  = regexp.MustCompile(`queue (\S+): (\d+) messages sent`)
	waitedLine = regexp.MustCompile(`waiting for delayed or in-flight messages" queue=sw-orders delayed=(\d+) in_flight=(\d+)`)
)

func switchover(t *testing.T, sc switchCase) {
	ctx := context.Background()
	to := sc.to
	from, dst := testbed.NewSide(t, "postgres"), testbed.NewSide(t, to)
	oldG := servetest.Start(t, from.Config, from.Env...)
	oc := clientFor(oldG.URL, 0)
	old := &route{c: oc, std: queueOn(t, "sw-orders", nil, oc)[0], fifo: queueOn(t, "sw-jobs.fifo", map[string]string{"FifoQueue": "true"}, oc)[0]}
	std, fifo := newLedger(), newLedger()
	strict := to != "sqlite" // the SQLite destination's gateway stops during the move

	pctx, stopProducers := context.WithCancel(ctx)
	p := &producers{ctx: pctx, old: old, backlog: scale(sc.backlog)}
	p.route.Store(old)
	const stdProducers, groups = 2, 3
	for i := range stdProducers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			std.sendStandard(pctx, p.target(std, false), fmt.Sprintf("s%d", i), 1_000_000, strict)
		}()
	}
	for g := range groups {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			fifo.sendFIFO(pctx, p.target(fifo, true), fmt.Sprintf("g%d", g), 1_000_000, strict)
		}()
	}
	var oldCons, newCons sync.WaitGroup
	consume := func(ctx context.Context, wg *sync.WaitGroup, l *ledger, id int, c *sqs.Client, url string, strict bool) {
		wg.Add(1)
		go func() { defer wg.Done(); l.consume(ctx, id, c, url, consumerVT, strict) }()
	}
	oldFIFOCtx, stopOldFIFO := context.WithCancel(ctx)
	oldStdCtx, stopOldStd := context.WithCancel(ctx)
	for i := range 2 {
		consume(oldFIFOCtx, &oldCons, fifo, 100+i, oc, old.fifo, true)
	}
	(&loadRun{l: std}).waitAcked(t, int64(scale(sc.before)))

	// 1. The queues at the destination, then its gateway.
	_, _ = migrate(t, from, dst, "--queues-only")
	newG := servetest.Start(t, dst.Config, dst.Env...)
	nc := clientFor(newG.URL, 0)
	next := &route{c: nc, std: strings.Replace(old.std, oldG.URL, newG.URL, 1), fifo: strings.Replace(old.fifo, oldG.URL, newG.URL, 1)}
	for _, u := range []string{next.std, next.fifo} {
		name := u[strings.LastIndex(u, "/")+1:]
		if got, err := nc.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)}); err != nil || aws.ToString(got.QueueUrl) != u {
			t.Fatalf("queue %s at the new gateway: URL %v (%v), want %s: only the endpoint should change", name, got, err, u)
		}
	}
	// A producer's last batch to the old standard queue is delayed: the move must wait for it.
	delayed := sendDelayed(t, std, oc, old.std)

	// 2. Producers to the new gateway.
	p.route.Store(next)
	// 3. Consumers drain the old gateway; the new standard queue's consumers start.
	newCtx, stopNew := context.WithCancel(ctx)
	for i := range 2 {
		consume(oldStdCtx, &oldCons, std, i, oc, old.std, true)
		consume(newCtx, &newCons, std, 10+i, nc, next.std, strict)
	}
	// Each old queue's consumers stop when it is empty (FIFO: see the docs) or nearly
	// (standard), once every producer has moved, so that old has all it will have.
	switched := func() bool { return p.switched.Load() == stdProducers+groups }
	wctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	stdDone := make(chan bool, 1)
	go func() {
		stdDone <- waitLedger(wctx, std, func() bool { return switched() && std.undelivered(old.std) <= nearlyEmpty+delayed })
		stopOldStd()
	}()
	if !waitLedger(wctx, fifo, func() bool { return switched() && fifo.undelivered(old.fifo) == 0 }) {
		t.Fatalf("the old FIFO queue did not drain: %d messages left", fifo.undelivered(old.fifo))
	}
	stopOldFIFO()
	if !<-stdDone {
		t.Fatalf("the old standard queue did not drain to %d: %d messages left", nearlyEmpty, std.undelivered(old.std))
	}
	oldCons.Wait()

	// 4. The old consumers have stopped; one more dies with a batch; the old gateway
	// stops; the move.
	held, err := oc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(old.std), MaxNumberOfMessages: 10, VisibilityTimeout: heldVT})
	if err != nil {
		t.Fatal(err)
	}
	left := queueState(t, oc, old.std)
	if err := oldG.Stop(); err != nil {
		t.Fatalf("old gateway: %v", err)
	}
	if to == "sqlite" {
		if err := newG.Stop(); err != nil {
			t.Fatalf("new gateway: %v", err)
		}
	}
	args := []string{"--mode", "move", "--visibility-timeout", "10s", "--state", filepath.Join(t.TempDir(), "state.json")}
	if to == "sqlite" {
		// No consumer reads the new queues while their gateway is down: what the move
		// sent is all there to verify. (Consumers there would make it report what they
		// took as missing.)
		args = append(args, "--verify")
	}
	out, log := migrate(t, from, dst, args...)
	waited := "nothing"
	if m := waitedLine.FindStringSubmatch(log); m != nil {
		waited = m[1] + " delayed and " + m[2] + " in-flight messages"
	}
	t.Logf("old standard queue at the move: %s, %d of them held by a consumer that died; the move waited for %s:\n%s",
		left, len(held.Messages), waited, out)
	if to == "sqlite" {
		newG.Relaunch()
	}
	moved := map[string]int{}
	for _, m := range movedLine.FindAllStringSubmatch(out, -1) {
		moved[m[1]], _ = strconv.Atoi(m[2])
	}

	// 5. The new FIFO queue's consumers; producers go on a while, then every
	// acknowledged send must be received.
	for i := range 2 {
		consume(newCtx, &newCons, fifo, 110+i, nc, next.fifo, strict)
	}
	(&loadRun{l: std}).waitAcked(t, int64(scale(sc.after)))
	stopProducers()
	p.wg.Wait()
	dctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	lostStd, lostFIFO := std.waitAllDelivered(dctx, nil), fifo.waitAllDelivered(dctx, nil)
	stopNew()
	newCons.Wait()

	t.Logf("switchover counts, postgres to %s:\n%s", to, strings.Join([]string{
		fmt.Sprintf("%-9s %6s %6s %6s %9s %9s %13s %8s %5s %9s", "queue", "sent", "failed", "acked", "acked old", "recv old", "recv new", "migrated", "lost", "duplicate"),
		switchRow("standard", std, old.std, moved["sw-orders"], len(lostStd)),
		switchRow("fifo", fifo, old.fifo, moved["sw-jobs.fifo"], len(lostFIFO)),
	}, "\n"))
	for _, l := range []*ledger{std, fifo} {
		for _, e := range l.errs {
			t.Errorf("call failed: %s", e)
		}
	}
	if len(lostStd)+len(lostFIFO) > 0 {
		t.Errorf("acknowledged sends never received: %d standard, %d FIFO, e.g. %v", len(lostStd), len(lostFIFO), append(lostStd, lostFIFO...)[0])
	}
	for _, l := range []*ledger{std, fifo} {
		if r := l.redelivered(); len(r) > 0 {
			t.Errorf("%d messages received twice, first: %v", len(r), r[:min(len(r), 5)])
		}
		if d := duplicateBodies(l); len(d) > 0 {
			t.Errorf("%d messages stored twice (one body, two ids), first: %v", len(d), d[:min(len(d), 5)])
		}
	}
	if v := fifo.fifoViolations(); len(v) > 0 {
		t.Errorf("%d FIFO order violations, first: %s", len(v), strings.Join(v[:min(len(v), 5)], "; "))
	}
}

// sendDelayed sends a batch of 10 delayed messages to queueURL, as a producer would, and
// returns how many were acknowledged.
func sendDelayed(t *testing.T, l *ledger, c *sqs.Client, queueURL string) int {
	t.Helper()
	var entries []types.SendMessageBatchRequestEntry
	for i := range 10 {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
			MessageBody: aws.String(fmt.Sprintf("delayed-%d", i)), DelaySeconds: switchDelay})
	}
	l.sentN.Add(int64(len(entries)))
	out, err := c.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
	if err != nil || len(out.Failed) > 0 {
		t.Fatalf("send delayed batch: %v %+v", err, out)
	}
	for _, s := range out.Successful {
		l.ack(aws.ToString(s.MessageId), "delayed-"+aws.ToString(s.Id), queueURL)
	}
	return len(out.Successful)
}

// queueState is a queue's approximate counts: visible, in flight, delayed.
func queueState(t *testing.T, c *sqs.Client, queueURL string) string {
	t.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		t.Fatal(err)
	}
	a := out.Attributes
	return fmt.Sprintf("%s visible, %s in flight, %s delayed", a["ApproximateNumberOfMessages"],
		a["ApproximateNumberOfMessagesNotVisible"], a["ApproximateNumberOfMessagesDelayed"])
}

// switchRow is one line of the counts table: messages offered, refused (each attempt)
// and acknowledged (in all and by the old gateway), received at the old and the new gateway (of them, sent to the
// old one: moved), reported moved by migrate, lost and stored twice.
func switchRow(name string, l *ledger, oldURL string, migrated, lost int) string {
	dups := len(duplicateBodies(l))
	l.mu.Lock()
	defer l.mu.Unlock()
	ackedOld, recvOld, recvNew, recvMoved := 0, 0, 0, 0
	for id := range l.acked {
		if l.ackedBy[id] == oldURL {
			ackedOld++
		}
	}
	for id, ds := range l.deliveries {
		if ds[0].queue == oldURL {
			recvOld++
			continue
		}
		recvNew++
		if l.ackedBy[id] == oldURL {
			recvMoved++
		}
	}
	return fmt.Sprintf("%-9s %6d %6d %6d %9d %9d %13s %8d %5d %9d", name, l.sentN.Load(), l.failedN.Load(), len(l.acked), ackedOld, recvOld,
		fmt.Sprintf("%d (%d moved)", recvNew, recvMoved), migrated, lost, dups)
}

// duplicateBodies lists bodies received under more than one message id: one send stored
// twice.
func duplicateBodies(l *ledger) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := map[string]int{}
	for _, ds := range l.deliveries {
		ids[ds[0].body]++
	}
	var out []string
	for body, n := range ids {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", body, n))
		}
	}
	return out
}
