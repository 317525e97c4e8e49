package system_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// delivery is one receipt of a message by one consumer. Times are monotonic readings
// taken around the calls: the claim happened within [recvStart, recvEnd] and the
// deletion within [delStart, delEnd].
type delivery struct {
	consumer           int
	recvStart, recvEnd time.Time
	delStart, delEnd   time.Time
	deleted            bool
	call               int64 // receive call number, shared by a batch
	index              int   // position within that receive's batch
	body               string
	queue              string // the queue URL it was received from
}

// ledger records what senders were told was stored and what consumers received.
type ledger struct {
	mu         sync.Mutex
	acked      map[string]string // MessageId -> body, for every send that returned success
	ackedBy    map[string]string // MessageId -> the queue URL that acknowledged it
	deliveries map[string][]*delivery
	errs       []string
	calls      atomic.Int64
	sentN      atomic.Int64 // distinct messages offered in send calls, acknowledged or not
	ackedN     atomic.Int64
	failedN    atomic.Int64  // messages of send calls that failed, each attempt counted
	received   int           // acknowledged messages delivered at least once
	changed    chan struct{} // closed and replaced whenever a delivery or ack is recorded
}

func newLedger() *ledger {
	return &ledger{acked: map[string]string{}, ackedBy: map[string]string{}, deliveries: map[string][]*delivery{}, changed: make(chan struct{})}
}

func (l *ledger) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *ledger) ack(id, body, queueURL string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.acked[id]; !ok && len(l.deliveries[id]) > 0 {
		l.received++
	}
	l.acked[id] = body
	l.ackedBy[id] = queueURL
	l.ackedN.Add(1)
	l.signal()
}

func (l *ledger) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

func (l *ledger) record(id string, d *delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.acked[id]; ok && len(l.deliveries[id]) == 0 {
		l.received++
	}
	l.deliveries[id] = append(l.deliveries[id], d)
	l.signal()
}

// waitBacklog blocks while max or more acknowledged messages wait to be delivered, or
// until ctx ends.
func (l *ledger) waitBacklog(ctx context.Context, max int) {
	for {
		l.mu.Lock()
		backlog, ch := len(l.acked)-l.received, l.changed
		l.mu.Unlock()
		if backlog < max {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// missing returns acknowledged messages never delivered, sorted.
func (l *ledger) missing() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id := range l.acked {
		if len(l.deliveries[id]) == 0 {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// waitAllDelivered blocks until every acknowledged message was delivered at least once
// (and done, when not nil, is closed), or ctx ends; it returns what is still missing.
func (l *ledger) waitAllDelivered(ctx context.Context, done <-chan struct{}) []string {
	for {
		l.mu.Lock()
		ch := l.changed
		l.mu.Unlock()
		finished := done == nil
		if !finished {
			select {
			case <-done:
				finished = true
			default:
			}
		}
		if finished {
			if m := l.missing(); len(m) == 0 {
				return nil
			}
		}
		select {
		case <-ch:
		case <-done:
			done = nil
		case <-ctx.Done():
			return l.missing()
		}
	}
}

// doubleDeliveries lists messages held by two consumers at once: a second claim before
// the first holder's deletion finished (or its visibility timeout expired, vt).
func (l *ledger) doubleDeliveries(vt time.Duration) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id, ds := range l.deliveries {
		for i := range ds {
			for j := range ds {
				a, b := ds[i], ds[j]
				if i == j || b.recvEnd.Before(a.recvStart) {
					continue
				}
				// a held the message from its claim (at the latest a.recvEnd) until its
				// deletion (at the earliest a.delStart) or its timeout. b certainly claimed it
				// inside that span if b's receive started after a's ended and ended before a
				// could have released it. Ambiguous overlaps show up as redeliveries.
				release := a.recvStart.Add(vt)
				if a.deleted {
					release = a.delStart
				}
				if b.recvStart.After(a.recvEnd) && b.recvEnd.Before(release) {
					out = append(out, fmt.Sprintf("%s: consumers %d and %d (calls %d, %d)", id, a.consumer, b.consumer, a.call, b.call))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// redelivered lists messages delivered more than once.
func (l *ledger) redelivered() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id, ds := range l.deliveries {
		if len(ds) > 1 {
			out = append(out, fmt.Sprintf("%s x%d", id, len(ds)))
		}
	}
	sort.Strings(out)
	return out
}

// fifoViolations checks order per group. Bodies are "<group>/<seq>", seq counting from
// 0 in send order. Message k+1 of a group must not be claimed before message k was
// deleted: in the same batch as a delivery of k it must come later, otherwise its first
// receive must have ended after the deletion of k's last delivery started (a message
// held by a consumer whose gateway died comes back, and k+1 must wait for it again).
func (l *ledger) fifoViolations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	type entry struct {
		seq int
		ds  []*delivery
	}
	groups := map[string][]entry{}
	for _, ds := range l.deliveries {
		g, s, ok := strings.Cut(ds[0].body, "/")
		n, err := strconv.Atoi(s)
		if !ok || err != nil {
			continue
		}
		groups[g] = append(groups[g], entry{n, ds})
	}
	var out []string
	for g, es := range groups {
		sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
		for i := 1; i < len(es); i++ {
			prev, cur := es[i-1], es[i]
			if cur.seq != prev.seq+1 {
				out = append(out, fmt.Sprintf("group %s: gap between %d and %d", g, prev.seq, cur.seq))
				continue
			}
			first := cur.ds[0]
			for _, d := range cur.ds[1:] {
				if d.recvStart.Before(first.recvStart) {
					first = d
				}
			}
			var last, sameCall *delivery
			for _, d := range prev.ds {
				if last == nil || d.recvStart.After(last.recvStart) {
					last = d
				}
				if d.call == first.call {
					sameCall = d
				}
			}
			if sameCall != nil {
				if first.index < sameCall.index {
					out = append(out, fmt.Sprintf("group %s: %d before %d in one batch", g, cur.seq, prev.seq))
				}
				continue
			}
			if !first.recvEnd.After(last.delStart) {
				out = append(out, fmt.Sprintf("group %s: %d received (call %d) before %d was deleted (call %d)",
					g, cur.seq, first.call, prev.seq, last.call))
			}
		}
	}
	sort.Strings(out)
	return out
}

// counts sums up a run: what was sent, acknowledged and received, and the faults found
// (vt is the consumers' visibility timeout, for doubleDeliveries).
func (l *ledger) counts(vt time.Duration) ledgerCounts {
	c := ledgerCounts{sent: l.sentN.Load(), lost: len(l.missing()), double: len(l.doubleDeliveries(vt)),
		order: len(l.fifoViolations()), redelivered: len(l.redelivered())}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.acked = int64(len(l.acked))
	c.received = len(l.deliveries)
	for _, ds := range l.deliveries {
		c.deliveries += len(ds)
	}
	return c
}

// ledgerCounts is the summary counts returns.
type ledgerCounts struct {
	sent, acked                      int64
	received, deliveries             int // distinct messages received; receipts in all
	redelivered, lost, double, order int
}

func (c ledgerCounts) String() string {
	return fmt.Sprintf("sent %d, acked %d, received %d (%d receipts, %d redelivered), lost %d, double %d, order %d",
		c.sent, c.acked, c.received, c.deliveries, c.redelivered, c.lost, c.double, c.order)
}

// consume receives batches of up to 10 from queueURL and deletes them until ctx ends.
// Failed calls are recorded as errors when strict, and otherwise retried.
func (l *ledger) consume(ctx context.Context, id int, c *sqs.Client, queueURL string, vt int32, strict bool) {
	for ctx.Err() == nil {
		call := l.calls.Add(1)
		start := time.Now()
		// Not ctx either: a receive cancelled after the gateway claimed its messages would
		// leave them in flight for vt, as a consumer that crashed.
		out, err := c.ReceiveMessage(context.WithoutCancel(ctx), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: vt,
		})
		end := time.Now()
		if err != nil {
			if ctx.Err() == nil && strict {
				l.fail("consumer %d: receive: %v", id, err)
			}
			pause(ctx)
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ds := make([]*delivery, len(out.Messages))
		entries := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
		for i, m := range out.Messages {
			ds[i] = &delivery{consumer: id, recvStart: start, recvEnd: end, call: call, index: i, body: aws.ToString(m.Body), queue: queueURL}
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
		}
		delStart := time.Now()
		for i, m := range out.Messages {
			ds[i].delStart = delStart
			l.record(aws.ToString(m.MessageId), ds[i])
		}
		// Not ctx: a deletion started must finish, or a consumer stopping at the end of
		// the test would leave messages it received in flight.
		dout, err := c.DeleteMessageBatch(context.Background(), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
		delEnd := time.Now()
		if err != nil {
			if strict {
				l.fail("consumer %d: delete: %v", id, err)
			}
			continue
		}
		for _, f := range dout.Failed {
			if strict {
				l.fail("consumer %d: delete entry %s: %s %s", id, aws.ToString(f.Id), aws.ToString(f.Code), aws.ToString(f.Message))
			}
		}
		l.mu.Lock()
		for _, s := range dout.Successful {
			i, _ := strconv.Atoi(aws.ToString(s.Id))
			ds[i].deleted, ds[i].delEnd = true, delEnd
		}
		l.mu.Unlock()
	}
}

// target gives a sender the client and queue URL of its next batch.
type target func() (*sqs.Client, string)

// fixed is the target of a sender that always sends through c to queueURL.
func fixed(c *sqs.Client, queueURL string) target {
	return func() (*sqs.Client, string) { return c, queueURL }
}

// sendStandard sends batches of 10 numbered messages to a standard queue until n were
// acknowledged or ctx ends; failed sends are recorded when strict, else ignored.
func (l *ledger) sendStandard(ctx context.Context, to target, prefix string, n int, strict bool) {
	for k := 0; k < n && ctx.Err() == nil; k += 10 {
		c, queueURL := to()
		entries := make([]types.SendMessageBatchRequestEntry, 0, 10)
		bodies := map[string]string{}
		for i := k; i < k+10 && i < n; i++ {
			body := fmt.Sprintf("%s-%d", prefix, i)
			id := strconv.Itoa(i - k)
			bodies[id] = body
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(body)})
		}
		l.sentN.Add(int64(len(entries)))
		out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
		if err != nil {
			if ctx.Err() == nil {
				l.failedN.Add(int64(len(entries)))
			}
			if strict && ctx.Err() == nil {
				l.fail("send %s: %v", prefix, err)
			}
			pause(ctx)
			continue
		}
		for _, s := range out.Successful {
			l.ack(aws.ToString(s.MessageId), bodies[aws.ToString(s.Id)], queueURL)
		}
		if strict && len(out.Failed) > 0 {
			l.fail("send %s: %d entries failed: %s", prefix, len(out.Failed), aws.ToString(out.Failed[0].Message))
		}
	}
}

// sendFIFO sends n messages of one group, "<group>/<seq>", in batches of 10, each batch
// after the previous one was acknowledged. A failed batch is retried with the same
// deduplication ids until it succeeds (strict fails instead) or ctx ends, so the
// group's sequence has no holes.
func (l *ledger) sendFIFO(ctx context.Context, to target, group string, n int, strict bool) {
	offered := 0 // messages of the group counted in sentN: a retried batch counts once
	for k := 0; k < n && ctx.Err() == nil; {
		c, queueURL := to()
		var entries []types.SendMessageBatchRequestEntry
		bodies := map[string]string{}
		for i := k; i < k+10 && i < n; i++ {
			body := fmt.Sprintf("%s/%d", group, i)
			id := strconv.Itoa(i - k)
			bodies[id] = body
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(body),
				MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(body)})
		}
		if k+len(entries) > offered {
			l.sentN.Add(int64(k + len(entries) - offered))
			offered = k + len(entries)
		}
		out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
		if err == nil && len(out.Failed) > 0 {
			err = errors.New(aws.ToString(out.Failed[0].Code) + ": " + aws.ToString(out.Failed[0].Message))
		}
		if err != nil {
			if ctx.Err() == nil {
				l.failedN.Add(int64(len(entries)))
			}
			if strict && ctx.Err() == nil {
				l.fail("send group %s: %v", group, err)
				return
			}
			pause(ctx)
			continue
		}
		for _, s := range out.Successful {
			l.ack(aws.ToString(s.MessageId), bodies[aws.ToString(s.Id)], queueURL)
		}
		k += len(entries)
	}
}

// pause backs off briefly before retrying a call that failed because the gateway or the
// database is down.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(50 * time.Millisecond):
	}
}
