package migrate_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/migrate"
	"github.com/anysqs/anysqs/internal/testbed"
)

// openBackend opens backend's shipped configuration on fresh test storage, through
// internal/config with servetest's environment, as `anysqs migrate` would.
func openBackend(t *testing.T, backend string) migrate.Endpoint {
	t.Helper()
	return openWithEnv(t, backend, testbed.Env(t, backend))
}

// openWithEnv opens backend's shipped configuration with the environment servetest
// gave for it.
func openWithEnv(t *testing.T, backend string, kvs []string) migrate.Endpoint {
	t.Helper()
	env := map[string]string{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.Load(testbed.ConfigOf(backend), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// The binary's driver reads its secret from the process environment; this one is a map.
	if b, ok := testbed.Named(backend); ok && b.SecretEnv != "" && env[b.SecretEnv] != "" {
		cfg.Backend.Options[b.SecretOption] = env[b.SecretEnv]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := drivers.Open(ctx, cfg.Backend.Name, cfg.Backend.Options)
	if err != nil {
		t.Fatalf("open %s: %v", backend, err)
	}
	t.Cleanup(func() { d.Close() })
	return migrate.Endpoint{Driver: d, AccountID: cfg.AccountID, Region: cfg.Region}
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// scenario is what seed put in the source.
type scenario struct {
	queues   map[string]drivers.Queue
	fifo     map[string][]string // group → bodies in send order
	delayed  int
	inFlight []drivers.Message // received from orders by seed
	sent     map[string]sentMessage
}

// sentMessage is one message seed sent, and where.
type sentMessage struct {
	queue string
	drivers.SendEntry
}

const (
	dlq      = "orders-dlq"
	orders   = "orders"
	jobsDLQ  = "jobs-dlq.fifo"
	jobs     = "jobs.fifo"
	perGroup = 12
)

func standardAttrs() drivers.QueueAttributes {
	return drivers.QueueAttributes{MaximumMessageSize: 262144, MessageRetentionPeriod: 345600, VisibilityTimeout: 30}
}

func fifoAttrs() drivers.QueueAttributes {
	a := standardAttrs()
	a.FifoQueue, a.DeduplicationScope, a.FifoThroughputLimit = true, "queue", "perQueue"
	return a
}

// seed creates a standard queue with a dead-letter queue (redrive allow policy naming
// the source by ARN), tags and a policy, and a FIFO queue with a FIFO DLQ; then sends
// messages with attributes, delayed ones (for delay), and receives some so they are in
// flight (for inFlight).
//
// With poison, a first message of orders is received (and released) as many times as
// its redrive policy allows, so the next receive at the source, a move's, sends it to
// the dead-letter queue.
func seed(t *testing.T, src migrate.Endpoint, delay, inFlight int32, poison bool) scenario {
	t.Helper()
	ctx := context.Background()
	d := src.Driver
	arn := func(q string) string { return "arn:aws:sqs:" + src.Region + ":" + src.AccountID + ":" + q }
	sc := scenario{queues: map[string]drivers.Queue{}, fifo: map[string][]string{}, sent: map[string]sentMessage{}}
	dlqAttrs := standardAttrs()
	dlqAttrs.MessageRetentionPeriod = 1209600
	dlqAttrs.RedriveAllowPolicy = `{"redrivePermission":"byQueue","sourceQueueArns":["` + arn(orders) + `"]}`
	ordersAttrs := standardAttrs()
	ordersAttrs.VisibilityTimeout = 45
	ordersAttrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 5}
	ordersAttrs.Policy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sqs:SendMessage","Resource":"` + arn(orders) + `"}]}`
	jobsDLQAttrs := fifoAttrs()
	jobsAttrs := fifoAttrs()
	jobsAttrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: jobsDLQ, MaxReceiveCount: 3}
	now := time.Now()
	for _, q := range []drivers.Queue{
		{Name: dlq, Attributes: dlqAttrs},
		{Name: orders, Attributes: ordersAttrs, Tags: map[string]string{"team": "payments", "env": "test"}},
		{Name: jobsDLQ, Attributes: jobsDLQAttrs},
		{Name: jobs, Attributes: jobsAttrs, Tags: map[string]string{"team": "batch"}},
	} {
		q.CreatedAt, q.LastModified = now, now
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: q}); err != nil {
			t.Fatalf("seed: create %s: %v", q.Name, err)
		}
		sc.queues[q.Name] = q
	}
	send := func(queue string, entries []drivers.SendEntry) {
		t.Helper()
		for i := 0; i < len(entries); i += 10 {
			res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: queue, Now: time.Now(), Entries: entries[i:min(i+10, len(entries))]})
			if err != nil {
				t.Fatalf("seed: send to %s: %v", queue, err)
			}
			for _, e := range res.Entries {
				if e.Err != nil {
					t.Fatalf("seed: send to %s: %v", queue, e.Err)
				}
			}
		}
		for _, e := range entries {
			sc.sent[e.MessageID] = sentMessage{queue, e}
		}
	}
	if poison {
		p := drivers.SendEntry{EntryID: "0", MessageID: newID(), Body: "poison"}
		send(orders, []drivers.SendEntry{p})
		sc.sent[p.MessageID] = sentMessage{dlq, p} // where it ends
		// Received alone, before the other messages: a standard queue's receive may take
		// any visible message, so a later receive might not count for it.
		for range ordersAttrs.RedrivePolicy.MaxReceiveCount {
			res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: orders, Now: time.Now(), MaxMessages: 1, VisibilityTimeout: 0})
			if err != nil || len(res.Messages) != 1 || res.Messages[0].Body != "poison" {
				t.Fatalf("seed: receive poison: %v, %v", res.Messages, err)
			}
		}
	}
	var std []drivers.SendEntry
	for i := range 20 {
		e := drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: newID(), Body: fmt.Sprintf(`{"order":%d}`, i),
			Attributes: map[string]drivers.MessageAttribute{
				"kind":  {DataType: "String", StringValue: "order"},
				"n":     {DataType: "Number", StringValue: fmt.Sprint(i)},
				"bytes": {DataType: "Binary", BinaryValue: []byte{0, 1, byte(i)}},
			},
			SystemAttributes: map[string]drivers.MessageAttribute{"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793"}},
			SenderID:         "AIDAEXAMPLE"}
		if i < 3 {
			e.DelaySeconds = delay
			sc.delayed++
		}
		std = append(std, e)
	}
	send(orders, std)
	send(dlq, []drivers.SendEntry{{EntryID: "0", MessageID: newID(), Body: "dead 1"}, {EntryID: "1", MessageID: newID(), Body: "dead 2"}})
	res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: orders, Now: time.Now(), MaxMessages: 2, VisibilityTimeout: inFlight})
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("seed: receive to put 2 in flight: %d messages, %v", len(res.Messages), err)
	}
	sc.inFlight = res.Messages
	// Groups interleaved, as producers send them.
	var fifo []drivers.SendEntry
	for i := range perGroup {
		for _, g := range []string{"g1", "g2", "g3"} {
			body := fmt.Sprintf("%s-%02d", g, i)
			fifo = append(fifo, drivers.SendEntry{EntryID: fmt.Sprint(len(fifo) % 10), MessageID: newID(), Body: body,
				MessageGroupID: g, MessageDeduplicationID: "d-" + body,
				Attributes: map[string]drivers.MessageAttribute{"step": {DataType: "Number", StringValue: fmt.Sprint(i)}}})
			sc.fifo[g] = append(sc.fifo[g], body)
		}
	}
	for i := 0; i < len(fifo); i += 10 {
		batch := fifo[i:min(i+10, len(fifo))]
		for j := range batch {
			batch[j].EntryID = fmt.Sprint(j)
		}
		send(jobs, batch)
	}
	send(jobsDLQ, []drivers.SendEntry{{EntryID: "0", MessageID: newID(), Body: "dead job", MessageGroupID: "g9", MessageDeduplicationID: "dead-job"}})
	return sc
}

// supports reports whether d declares id native or emulated.
func supports(t *testing.T, d drivers.Driver, id capabilities.ID) bool {
	t.Helper()
	desc, err := d.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := desc.Declaration(id)
	return dec.Level == capabilities.Native || dec.Level == capabilities.Emulated
}

// checkQueues checks the destination's queues: attributes as at the source (ARNs pointing
// at the destination's account), tags where the destination keeps them.
func checkQueues(t *testing.T, sc scenario, src, dst migrate.Endpoint) {
	t.Helper()
	for name, want := range sc.queues {
		got, err := dst.Driver.GetQueue(context.Background(), drivers.GetQueueRequest{Name: name})
		if err != nil {
			t.Errorf("destination queue %s: %v", name, err)
			continue
		}
		wa := want.Attributes
		from := "arn:aws:sqs:" + src.Region + ":" + src.AccountID + ":"
		to := "arn:aws:sqs:" + dst.Region + ":" + dst.AccountID + ":"
		wa.RedriveAllowPolicy = strings.ReplaceAll(wa.RedriveAllowPolicy, from, to)
		wa.Policy = strings.ReplaceAll(wa.Policy, from, to)
		if !reflect.DeepEqual(got.Attributes, wa) {
			t.Errorf("destination queue %s attributes:\n got %+v\nwant %+v", name, got.Attributes, wa)
		}
		if supports(t, dst.Driver, capabilities.QueueTags) && len(want.Tags) > 0 && !reflect.DeepEqual(got.Tags, want.Tags) {
			t.Errorf("destination queue %s tags = %v, want %v", name, got.Tags, want.Tags)
		}
	}
}

// receiveFIFO receives and deletes every message of a FIFO queue and returns the
// bodies per group in the order they came.
func receiveFIFO(t *testing.T, d drivers.Driver, queue string, want int) map[string][]string {
	t.Helper()
	ctx := context.Background()
	got := map[string][]string{}
	n := 0
	for empty := 0; n < want && empty < 50; {
		res, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: queue, Now: time.Now(), MaxMessages: 10, VisibilityTimeout: 60, WaitTime: time.Second})
		if err != nil {
			t.Fatalf("receive %s: %v", queue, err)
		}
		if len(res.Messages) == 0 {
			empty++
			continue
		}
		var del []drivers.DeleteEntry
		for i, m := range res.Messages {
			got[m.MessageGroupID] = append(got[m.MessageGroupID], m.Body)
			del = append(del, drivers.DeleteEntry{EntryID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
			n++
		}
		if _, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: queue, Now: time.Now(), Entries: del}); err != nil {
			t.Fatalf("delete %s: %v", queue, err)
		}
	}
	return got
}

// checkMessages checks that the destination holds every message seed sent, once, in
// its queue, with what a migration carries: the checksums of --verify compare what the
// run read with what it wrote, this compares with what the producer sent.
func checkMessages(t *testing.T, sc scenario, dst drivers.Driver) {
	t.Helper()
	seen := map[string]int{}
	for name := range sc.queues {
		err := migrate.BrowseAll(context.Background(), dst, name, func(b drivers.BrowsedMessage) {
			seen[b.MessageID]++
			want, ok := sc.sent[b.MessageID]
			switch {
			case !ok || want.queue != name:
				t.Errorf("destination %s: message %s (%q) was not sent there", name, b.MessageID, b.Body)
			case b.Body != want.Body || b.MessageGroupID != want.MessageGroupID ||
				b.MessageDeduplicationID != want.MessageDeduplicationID || b.SenderID != want.SenderID && want.SenderID != "":
				t.Errorf("destination %s: message %s is %q (group %q, dedup %q, sender %q), want %q (%q, %q, %q)", name, b.MessageID,
					b.Body, b.MessageGroupID, b.MessageDeduplicationID, b.SenderID, want.Body, want.MessageGroupID, want.MessageDeduplicationID, want.SenderID)
			case !sameAttrs(b.Attributes, want.Attributes):
				t.Errorf("destination %s: message %s attributes %v, want %v", name, b.MessageID, b.Attributes, want.Attributes)
			case b.SystemAttributes["AWSTraceHeader"].StringValue != want.SystemAttributes["AWSTraceHeader"].StringValue:
				t.Errorf("destination %s: message %s AWSTraceHeader %+v, want %+v", name, b.MessageID,
					b.SystemAttributes["AWSTraceHeader"], want.SystemAttributes["AWSTraceHeader"])
			}
		})
		if err != nil {
			t.Fatalf("browse destination %s: %v", name, err)
		}
	}
	for id, m := range sc.sent {
		if seen[id] != 1 {
			t.Errorf("message %s (%q) is %d times at the destination, want once", id, m.Body, seen[id])
		}
	}
}

func sameAttrs(a, b map[string]drivers.MessageAttribute) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.DataType != w.DataType || v.StringValue != w.StringValue || !bytes.Equal(v.BinaryValue, w.BinaryValue) {
			return false
		}
	}
	return true
}

func countStates(t *testing.T, d drivers.Driver, queue string) map[drivers.MessageState]int {
	t.Helper()
	out := map[drivers.MessageState]int{}
	if err := migrate.BrowseAll(context.Background(), d, queue, func(m drivers.BrowsedMessage) { out[m.State]++ }); err != nil {
		t.Fatalf("browse %s: %v", queue, err)
	}
	return out
}

// pairBackends are the backends TestMigrate migrates between (internal/testbed's, whose
// import registers their drivers): every ordered pair of distinct ones.
var pairBackends = testbed.Names()

// TestMigrate migrates the scenario between every ordered pair of backends, in both
// modes, and checks the destination: queues, verification, delayed messages, FIFO order
// per group. A copy leaves its source as it was, so each source is seeded once and
// copied to every destination; a move empties its source, so each pair seeds its own.
func TestMigrate(t *testing.T) {
	t.Parallel()
	t.Run("copy", func(t *testing.T) {
		for _, from := range pairBackends {
			t.Run(from, func(t *testing.T) {
				t.Parallel()
				src := openBackend(t, from)
				// Copy leaves delayed messages delayed and copies in-flight ones now.
				sc := seed(t, src, 600, 600, false)
				for _, to := range pairBackends {
					if to == from {
						continue
					}
					t.Run("to-"+to, func(t *testing.T) {
						t.Parallel()
						migratePair(t, migrate.Copy, sc, src, openBackend(t, to))
					})
				}
			})
		}
	})
	t.Run("move", func(t *testing.T) {
		for _, from := range pairBackends {
			t.Run(from, func(t *testing.T) {
				for _, to := range pairBackends {
					if to == from {
						continue
					}
					t.Run("to-"+to, func(t *testing.T) {
						t.Parallel()
						src, dst := openBackend(t, from), openBackend(t, to)
						// Move waits for delayed and in-flight messages: keep both short.
						sc := seed(t, src, 1, 1, true)
						migratePair(t, migrate.Move, sc, src, dst)
					})
				}
			})
		}
	})
}

// migratePair runs one migration of the scenario sc from src to a fresh dst and checks
// the destination (and, moving, the source).
func migratePair(t *testing.T, mode migrate.Mode, sc scenario, src, dst migrate.Endpoint) {
	t.Helper()
	dst.AccountID = "111111111111" // another account: ARNs are rewritten
	o := migrate.Options{From: src, To: dst, Mode: mode, Verify: true,
		StatePath: filepath.Join(t.TempDir(), "state.json"), PollInterval: 100 * time.Millisecond}
	if mode == migrate.Copy {
		o.InFlight = migrate.InFlightCopy
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := migrate.Run(ctx, o)
	for _, g := range rep.Gaps {
		t.Logf("gap: %s", g)
	}
	for _, v := range rep.Verify {
		t.Logf("verify %s", v)
	}
	if err != nil {
		t.Fatalf("Run: %v (queues %+v)", err, rep.Queues)
	}
	if len(rep.Verify) != len(sc.queues) {
		t.Errorf("verified %d queues, want %d", len(rep.Verify), len(sc.queues))
	}
	if rep.MayDuplicate != 0 {
		t.Errorf("MayDuplicate = %d, want 0", rep.MayDuplicate)
	}
	checkQueues(t, sc, src, dst)
	if mode == migrate.Copy {
		if got := countStates(t, dst.Driver, orders)[drivers.StateDelayed]; got != sc.delayed {
			t.Errorf("delayed messages at the destination = %d, want %d", got, sc.delayed)
		}
	} else {
		for name := range sc.queues {
			if left := countStates(t, src.Driver, name); len(left) > 0 {
				t.Errorf("source queue %s still has %v after a move", name, left)
			}
		}
		// The poison message went to the DLQ at the source when the move received it,
		// after the DLQ had been moved, and a second pass took it (on Service Bus, which
		// dead-letters when the last lock ends, during the seeding).
		if n := countStates(t, dst.Driver, dlq)[drivers.StateVisible]; n != 3 {
			t.Errorf("destination %s has %d visible messages, want 3 (2 and the poison message)", dlq, n)
		}
	}
	checkMessages(t, sc, dst.Driver)
	total := 0
	for _, b := range sc.fifo {
		total += len(b)
	}
	if got := receiveFIFO(t, dst.Driver, jobs, total); !reflect.DeepEqual(got, sc.fifo) {
		t.Errorf("FIFO order at the destination:\n got %v\nwant %v", got, sc.fifo)
	}
}

// declaring wraps a driver, overriding some of its declarations.
type declaring struct {
	drivers.Driver
	levels map[capabilities.ID]capabilities.Level
}

func (d declaring) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.Capabilities = slices.Clone(desc.Capabilities)
	for i, c := range desc.Capabilities {
		if l, ok := d.levels[c.ID]; ok {
			desc.Capabilities[i].Level = l
		}
	}
	return desc, err
}

func TestStrictRefusesBeforeWriting(t *testing.T) {
	src, dst := openBackend(t, "sqlite"), openBackend(t, "sqlite")
	seed(t, src, 0, 1, false)
	dst.Driver = declaring{dst.Driver, map[capabilities.ID]capabilities.Level{
		capabilities.QueueTags: capabilities.Unsupported, capabilities.DelayMessage: capabilities.Degraded}}
	rep, err := migrate.Run(context.Background(), migrate.Options{From: src, To: dst, Mode: migrate.Copy, Strict: true,
		StatePath: filepath.Join(t.TempDir(), "state.json")})
	if err == nil {
		t.Fatal("Run with --strict and gaps: no error")
	}
	var ids []string
	for _, g := range rep.Gaps {
		ids = append(ids, g.Queue+" "+string(g.Capability))
	}
	slices.Sort(ids)
	want := []string{"jobs.fifo queue.tags", "orders delay.message", "orders queue.tags", "orders-dlq delay.message"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("gaps = %q, want %q", ids, want)
	}
	res, err := dst.Driver.ListQueues(context.Background(), drivers.ListQueuesRequest{})
	if err != nil || len(res.Queues) != 0 {
		t.Errorf("destination after a refused start: %d queues (%v), want none", len(res.Queues), err)
	}
}

func TestExistingQueueWithOtherAttributesIsRefused(t *testing.T) {
	src, dst := openBackend(t, "sqlite"), openBackend(t, "sqlite")
	seed(t, src, 0, 1, false)
	a := standardAttrs()
	a.VisibilityTimeout = 99
	now := time.Now()
	if _, err := dst.Driver.CreateQueue(context.Background(), drivers.CreateQueueRequest{Queue: drivers.Queue{Name: dlq, Attributes: a, CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	rep, err := migrate.Run(context.Background(), migrate.Options{From: src, To: dst, Mode: migrate.Copy, InFlight: migrate.InFlightCopy,
		StatePath: filepath.Join(t.TempDir(), "state.json")})
	if err == nil {
		t.Fatal("Run: no error with a conflicting destination queue")
	}
	refused := map[string]string{}
	for _, q := range rep.Queues {
		refused[q.Name] = q.Refused
	}
	if !strings.Contains(refused[dlq], "VisibilityTimeout 99 there, 30 here") {
		t.Errorf("%s refused for %q, want the differing attribute named", dlq, refused[dlq])
	}
	if !strings.Contains(refused[orders], "dead-letter queue "+dlq) {
		t.Errorf("%s refused for %q, want its dead-letter queue named", orders, refused[orders])
	}
	if refused[jobs] != "" || refused[jobsDLQ] != "" {
		t.Errorf("FIFO queues refused: %q, %q", refused[jobs], refused[jobsDLQ])
	}
}

// errCrash stands for the process dying at a hook point.
type errCrash struct{}

// TestResumeAfterAckBeforeJournal stops a copy between the destination's acknowledgement
// and the journal's record of it, then resumes: with a destination that can be browsed
// the interrupted sends are found there; without, they are sent again and counted.
func TestResumeAfterAckBeforeJournal(t *testing.T) {
	for _, browse := range []bool{true, false} {
		t.Run(fmt.Sprintf("browse=%v", browse), func(t *testing.T) {
			src, dst := openBackend(t, "sqlite"), openBackend(t, "sqlite")
			seed(t, src, 0, 1, false)
			state := filepath.Join(t.TempDir(), "state.json")
			o := migrate.Options{From: src, To: dst, Mode: migrate.Copy, InFlight: migrate.InFlightCopy, StatePath: state, Queues: "orders*",
				Hook: func(p string) {
					if p == "sent" {
						panic(errCrash{})
					}
				}}
			func() {
				defer func() {
					if r := recover(); r != (errCrash{}) {
						t.Fatalf("first run did not stop at the hook: %v", r)
					}
				}()
				_, _ = migrate.Run(context.Background(), o)
			}()
			o.Hook = nil
			o.Verify = browse
			if !browse {
				o.To.Driver = declaring{dst.Driver, map[capabilities.ID]capabilities.Level{capabilities.QueueBrowse: capabilities.Unsupported}}
			}
			rep, err := migrate.Run(context.Background(), o)
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			total, resolved := 0, 0
			for _, q := range rep.Queues {
				resolved += q.Resolved
				for _, n := range countStates(t, dst.Driver, q.Name) {
					total += n
				}
			}
			const want = 22 // 20 in orders, 2 in its DLQ
			if browse {
				if rep.MayDuplicate != 0 || resolved == 0 || total != want {
					t.Errorf("MayDuplicate %d, resolved %d, destination has %d; want 0, >0, %d", rep.MayDuplicate, resolved, total, want)
				}
			} else if rep.MayDuplicate == 0 || total != want+rep.MayDuplicate {
				t.Errorf("MayDuplicate %d, destination has %d; want >0 and %d + MayDuplicate", rep.MayDuplicate, total, want)
			}
		})
	}
}

func TestQueuesOnly(t *testing.T) {
	src, dst := openBackend(t, "sqlite"), openBackend(t, "sqlite")
	sc := seed(t, src, 0, 1, false)
	state := filepath.Join(t.TempDir(), "state.json")
	if _, err := migrate.Run(context.Background(), migrate.Options{From: src, To: dst, Mode: migrate.Move, QueuesOnly: true, StatePath: state}); err != nil {
		t.Fatal(err)
	}
	checkQueues(t, sc, src, dst)
	for name := range sc.queues {
		if n := countStates(t, dst.Driver, name); len(n) > 0 {
			t.Errorf("destination %s has messages %v after --queues-only", name, n)
		}
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--queues-only wrote a journal: %v", err)
	}
}

// onLog calls fn once, for the first record whose message is msg.
type onLog struct {
	msg  string
	fn   func()
	done *bool
}

func (h onLog) Enabled(context.Context, slog.Level) bool { return true }
func (h onLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h onLog) WithGroup(string) slog.Handler            { return h }
func (h onLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg && !*h.done {
		*h.done = true
		h.fn()
	}
	return nil
}

// TestCopyWaitsForInFlight copies with --in-flight wait: of two messages in flight at
// the source, the one its consumer deletes during the wait is not copied, the other is
// once its visibility ends; verification is clean.
func TestCopyWaitsForInFlight(t *testing.T) {
	t.Parallel()
	src, dst := openBackend(t, "sqlite"), openBackend(t, "sqlite")
	// In flight for 3 s: long enough that they still are when the copy looks.
	sc := seed(t, src, 0, 3, false)
	deleted := sc.inFlight[0]
	done := false
	log := slog.New(onLog{msg: "waiting for in-flight messages", done: &done, fn: func() {
		res, err := src.Driver.DeleteMessages(context.Background(), drivers.DeleteMessagesRequest{Name: orders, Now: time.Now(),
			Entries: []drivers.DeleteEntry{{EntryID: "0", ReceiptHandle: deleted.ReceiptHandle}}})
		if err != nil || res.Entries[0].Err != nil {
			t.Errorf("consumer's delete: %v %v", err, res.Entries)
		}
	}})
	rep, err := migrate.Run(context.Background(), migrate.Options{From: src, To: dst, Mode: migrate.Copy, Verify: true,
		StatePath: filepath.Join(t.TempDir(), "state.json"), PollInterval: 50 * time.Millisecond, Log: log})
	if err != nil {
		t.Fatalf("Run: %v %v", err, rep.Verify)
	}
	if !done {
		t.Fatal("the copy did not wait for in-flight messages")
	}
	ids := map[string]bool{}
	if err := migrate.BrowseAll(context.Background(), dst.Driver, orders, func(b drivers.BrowsedMessage) { ids[b.MessageID] = true }); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 19 || ids[deleted.MessageID] || !ids[sc.inFlight[1].MessageID] {
		t.Errorf("destination has %d messages, the deleted one: %v, the other in-flight one: %v; want 19, false, true",
			len(ids), ids[deleted.MessageID], ids[sc.inFlight[1].MessageID])
	}
}

// TestVerifyReportsDifference skips in-flight messages, which verification then reports
// missing, failing the run.
func TestVerifyReportsDifference(t *testing.T) {
	src, dst := openBackend(t, "sqlite"), openBackend(t, "sqlite")
	sc := seed(t, src, 0, 600, false)
	rep, err := migrate.Run(context.Background(), migrate.Options{From: src, To: dst, Mode: migrate.Copy, InFlight: migrate.InFlightSkip,
		Verify: true, StatePath: filepath.Join(t.TempDir(), "state.json")})
	if !errors.Is(err, migrate.ErrDifferences) {
		t.Fatalf("Run: %v, want ErrDifferences", err)
	}
	for _, v := range rep.Verify {
		want := []string(nil)
		if v.Queue == orders {
			want = []string{sc.inFlight[0].MessageID, sc.inFlight[1].MessageID}
			slices.Sort(want)
		}
		if !slices.Equal(v.Missing, want) || len(v.Changed)+len(v.Extra) > 0 || v.Equal() != (want == nil) {
			t.Errorf("verify %s: %s; want missing %v", v.Queue, v, want)
		}
	}
}
