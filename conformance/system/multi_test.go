package system_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5"
)

// hangGuard bounds a test that would otherwise wait forever on a lost message. It is
// not a performance bound: a healthy run finishes far sooner. It grows with the soak
// factor, so that a soak run tells a slow backend from a lossy one.
var hangGuard = time.Duration(scale(1)) * 120 * time.Second

const consumerVT = 60 // seconds; far longer than a run, so any redelivery is a fault

// queueOn creates name through clients[0] and returns its URL as each client sees it.
func queueOn(t *testing.T, name string, attrs map[string]string, clients ...*sqs.Client) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := clients[0].CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs}); err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	urls := make([]string, len(clients))
	for i, c := range clients {
		out, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatalf("GetQueueUrl %s on gateway %d: %v", name, i, err)
		}
		urls[i] = aws.ToString(out.QueueUrl)
	}
	return urls
}

// TestTwoGatewaysOneDatabase runs producers and 32 consumers spread over two gateway
// processes sharing one database, and checks that no acknowledged message is lost, no
// message is held by two consumers at once (nor delivered twice at all: the visibility
// timeout outlasts the run and every deletion succeeds), and FIFO order holds per group.
func TestTwoGatewaysOneDatabase(t *testing.T) {
	db := newDatabase(t, serverDSN(t))
	a, b := startGateway(t, db), startGateway(t, db)
	clients := []*sqs.Client{newClient(a, 0), newClient(b, 0)}

	t.Run("standard", func(t *testing.T) {
		urls := queueOn(t, "sys-standard", nil, clients...)
		l := newLedger()
		const producers = 8
		perProducer := scale(400)
		runLoad(t, l, 32, clients, urls, func(ctx context.Context, p int) {
			if p < producers {
				l.sendStandard(ctx, fixed(clients[p%2], urls[p%2]), fmt.Sprintf("p%d", p), perProducer, true)
			}
		}, producers)
		if got, want := int(l.ackedN.Load()), producers*perProducer; got != want {
			t.Errorf("acknowledged %d sends, want %d", got, want)
		}
	})

	t.Run("fifo", func(t *testing.T) {
		urls := queueOn(t, "sys-order.fifo", map[string]string{"FifoQueue": "true"}, clients...)
		l := newLedger()
		const groups = 64
		perGroup := scale(40)
		runLoad(t, l, 32, clients, urls, func(ctx context.Context, p int) {
			l.sendFIFO(ctx, fixed(clients[p%2], urls[p%2]), fmt.Sprintf("g%02d", p), perGroup, true)
		}, groups)
		if got, want := int(l.ackedN.Load()), groups*perGroup; got != want {
			t.Errorf("acknowledged %d sends, want %d", got, want)
		}
		if v := l.fifoViolations(); len(v) > 0 {
			t.Errorf("%d FIFO order violations, first: %s", len(v), strings.Join(v[:min(len(v), 10)], "; "))
		}
	})
}

// runLoad starts `producers` producer goroutines and `consumers` consumers alternating
// between the gateways, waits until the producers are done and every acknowledged
// message was delivered, then checks the ledger for losses and double deliveries.
func runLoad(t *testing.T, l *ledger, consumers int, clients []*sqs.Client, urls []string,
	produce func(ctx context.Context, p int), producers int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cctx, stopConsumers := context.WithCancel(ctx)
	var cwg, pwg sync.WaitGroup
	for i := 0; i < consumers; i++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			l.consume(cctx, i, clients[i%2], urls[i%2], consumerVT, true)
		}()
	}
	for p := 0; p < producers; p++ {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			produce(ctx, p)
		}()
	}
	produced := make(chan struct{})
	go func() { pwg.Wait(); close(produced) }()
	missing := l.waitAllDelivered(ctx, produced)
	stopConsumers()
	cwg.Wait()
	<-produced

	for _, e := range l.errs {
		t.Errorf("call failed: %s", e)
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d acknowledged messages never delivered, e.g. %v", len(missing), l.ackedN.Load(), missing[:min(len(missing), 5)])
	}
	if d := l.doubleDeliveries(consumerVT * time.Second); len(d) > 0 {
		t.Errorf("%d simultaneous double deliveries, first: %s", len(d), strings.Join(d[:min(len(d), 10)], "; "))
	}
	if r := l.redelivered(); len(r) > 0 {
		t.Errorf("%d messages delivered more than once within their visibility timeout, first: %v", len(r), r[:min(len(r), 10)])
	}
	l.mu.Lock()
	for id := range l.deliveries {
		if _, ok := l.acked[id]; !ok {
			t.Errorf("message %s delivered but its send was never acknowledged", id)
			break
		}
	}
	t.Logf("%d messages acknowledged, %d delivered, through %d receive calls", len(l.acked), len(l.deliveries), l.calls.Load())
	l.mu.Unlock()
}

// TestLongPollAcrossGateways checks that a receive waiting on gateway A is answered by a
// send on gateway B. Each round sends only once gateway A has run its (empty) claim for
// the receive, as seen in pg_stat_activity, so the receive is waiting and only a
// cross-instance wake-up can answer it before its 20 s wait ends empty, which fails.
func TestLongPollAcrossGateways(t *testing.T) {
	db := newDatabase(t, serverDSN(t))
	a, b := startGateway(t, db), startGateway(t, db)
	ca, cb := newClient(a, 0), newClient(b, 0)
	urls := queueOn(t, "sys-longpoll", nil, ca, cb)
	longPollRounds(t, db, ca, cb, urls[0], urls[1], 5)
}

// longPollRounds runs rounds of "receive on a (20 s wait), send on b once a has claimed
// nothing" and fails unless each receive returns the message sent and b's send was
// announced to the other gateways (a receive that found the message only at its
// deadline would pass the first check alone). db is the gateways' database, watched to
// see a's claim happen and to hear the announcements.
func longPollRounds(t *testing.T, db string, ca, cb *sqs.Client, urlA, urlB string, rounds int) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	lis, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close(context.Background())
	if _, err := lis.Exec(context.Background(), `LISTEN "anysqs:anysqs"`); err != nil {
		t.Fatal(err)
	}
	queue := urlA[strings.LastIndex(urlA, "/")+1:]
	confirmed := 0
	for r := 0; r < rounds; r++ {
		var since time.Time
		if err := conn.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&since); err != nil {
			t.Fatal(err)
		}
		got := longPoll(ca, urlA)
		start := time.Now()
		if claimed(t, conn, since) {
			confirmed++
		}
		// A send that commits before the waiting gateway's watch is found by the receive
		// that follows the watch, unannounced; send after the watch so it must be announced.
		watched(t, conn, queue)
		seen := time.Since(start)
		body := fmt.Sprintf("wake-%d", r)
		if _, err := cb.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(urlB), MessageBody: aws.String(body)}); err != nil {
			t.Fatalf("round %d: send on gateway B: %v", r, err)
		}
		announced(t, lis, queue)
		res := <-got
		if res.err != nil {
			t.Fatalf("round %d: receive on gateway A: %v", r, res.err)
		}
		if len(res.out.Messages) != 1 || aws.ToString(res.out.Messages[0].Body) != body {
			t.Fatalf("round %d: long poll on gateway A returned %d messages, want %q sent on gateway B (no cross-instance wake-up?)",
				r, len(res.out.Messages), body)
		}
		if _, err := ca.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(urlA),
			ReceiptHandle: res.out.Messages[0].ReceiptHandle}); err != nil {
			t.Fatalf("round %d: delete: %v", r, err)
		}
		t.Logf("round %d: claim seen after %v, message delivered %v after that", r, seen.Round(time.Millisecond),
			(time.Since(start) - seen).Round(time.Millisecond))
	}
	if confirmed == 0 {
		t.Errorf("in no round was the receive seen claiming before the send: the test proved nothing")
	}
}

// claimed waits until a gateway connection has finished a statement on the messages
// table that started after since: the receive's claim. It gives up after a while (the
// round then proves less, and says so) rather than failing.
func claimed(t *testing.T, conn *pgx.Conn, since time.Time) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND pid <> pg_backend_pid() AND state = 'idle' AND query_start >= $1 AND query ILIKE '%messages%'`, since).Scan(&n)
		if err == nil && n > 0 {
			return true
		}
		if ctx.Err() != nil {
			t.Logf("receive's claim not seen in pg_stat_activity; sending anyway")
			return false
		}
	}
}

// watched waits until a gateway watches queue for long polls (see drivers.ActivityWatcher).
func watched(t *testing.T, conn *pgx.Conn, queue string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM anysqs.watches WHERE queue = $1 AND until > now())`, queue).Scan(&ok)
		if err == nil && ok {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no gateway watches %s for its long poll: %v", queue, err)
		}
	}
}

// announced waits for a NOTIFY naming queue; the bound only keeps a broken gateway from
// hanging the test.
func announced(t *testing.T, lis *pgx.Conn, queue string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		n, err := lis.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("no notification for %s: %v (the send did not announce itself to the waiting gateway)", queue, err)
		}
		if n.Payload == queue {
			return
		}
	}
}
