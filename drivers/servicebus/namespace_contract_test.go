package servicebus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// TestNamespaceContract holds a Namespace to the Service Bus behaviour the driver relies
// on. It always runs against the in-memory model, and against a real namespace when
// AZURE_SERVICEBUS_CONNECTION_STRING names one (Manage rights; the cases create and
// delete their own queues, named anysqs-nc-*):
//
//	AZURE_SERVICEBUS_CONNECTION_STRING='Endpoint=sb://...' go test -count=1 -run TestNamespaceContract/azure -v ./drivers/servicebus/
//
// That run is what tells whether the model, and so every verdict obtained through it,
// matches the service. The cases run on the namespace's real clock, side by side.
func TestNamespaceContract(t *testing.T) {
	t.Run("model", func(t *testing.T) {
		m := NewModel()
		runNamespaceContract(t, func(t *testing.T) Namespace {
			c := m.Connect()
			t.Cleanup(func() { _ = c.Close(context.Background()) })
			return c
		})
	})
	t.Run("azure", func(t *testing.T) {
		cs := os.Getenv(ConnectionStringEnv)
		if cs == "" {
			// A real namespace is opt-in, under CI too: none is provisioned for it.
			t.Skipf("service not available here: set %s to run the namespace contract against a real namespace", ConnectionStringEnv)
		}
		runNamespaceContract(t, func(t *testing.T) Namespace {
			n, err := connectAzure(cs, "", nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = n.Close(context.Background()) })
			return n
		})
	})
}

// nsEnv is one case: a connection and the queues it made.
type nsEnv struct {
	t   *testing.T
	ctx context.Context
	ns  Namespace
}

func runNamespaceContract(t *testing.T, connect func(t *testing.T) Namespace) {
	for _, c := range namespaceCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c.run(&nsEnv{t: t, ctx: ctx, ns: connect(t)})
		})
	}
}

// caseLock is the lock duration of the cases' queues: Service Bus's shortest.
const caseLock = MinLockDuration

func (e *nsEnv) queue(p QueueProperties) string {
	e.t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "anysqs-nc-" + hex.EncodeToString(b)
	if p.LockDuration == 0 {
		p.LockDuration = caseLock
	}
	if p.DefaultMessageTimeToLive == 0 {
		p.DefaultMessageTimeToLive = time.Hour
	}
	if p.MaxDeliveryCount == 0 {
		p.MaxDeliveryCount = 10
	}
	if p.RequiresDuplicateDetection && p.DuplicateDetectionWindow == 0 {
		p.DuplicateDetectionWindow = MinDedupWindow
	}
	if err := e.ns.CreateQueue(e.ctx, name, p); err != nil {
		e.t.Fatalf("CreateQueue %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = e.ns.DeleteQueue(context.Background(), name) })
	return name
}

func (e *nsEnv) send(q string, msgs ...OutMessage) {
	e.t.Helper()
	for _, m := range msgs {
		if err := e.ns.Send(e.ctx, q, m); err != nil {
			e.t.Fatalf("Send %s to %s: %v", m.MessageID, q, err)
		}
	}
}

func out(id string) OutMessage {
	return OutMessage{MessageID: id, Body: []byte("body " + id), Properties: map[string]any{"p": id}}
}

// receiveN receives until n messages arrived or wait passed: a real namespace may hand
// out fewer than asked per call.
func receiveN(e *nsEnv, r Receiver, n int, wait time.Duration) []*ReceivedMessage {
	e.t.Helper()
	var got []*ReceivedMessage
	end := time.Now().Add(wait)
	for len(got) < n {
		left := time.Until(end)
		if left <= 0 {
			break
		}
		ms, err := r.Receive(e.ctx, n-len(got), left)
		if err != nil {
			e.t.Fatalf("Receive: %v", err)
		}
		got = append(got, ms...)
	}
	return got
}

func ids(ms []*ReceivedMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.MessageID
	}
	return out
}

func (e *nsEnv) receiver(q string) Receiver {
	e.t.Helper()
	r, err := e.ns.NewReceiver(e.ctx, q)
	if err != nil {
		e.t.Fatalf("NewReceiver %s: %v", q, err)
	}
	e.t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

func (e *nsEnv) accept(q string, wait time.Duration) (SessionReceiver, error) {
	ctx, cancel := context.WithTimeout(e.ctx, wait)
	defer cancel()
	s, err := e.ns.AcceptNextSession(ctx, q)
	if err == nil {
		e.t.Cleanup(func() { _ = s.Close(context.Background()) })
	}
	return s, err
}

// until polls f for up to wait: for what only the clock makes happen (counts catching up).
func until(wait time.Duration, f func() bool) bool {
	for end := time.Now().Add(wait); ; {
		if f() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var namespaceCases = []struct {
	name string
	run  func(e *nsEnv)
}{
	{"admin-create-get-update-list-delete", func(e *nsEnv) {
		p := QueueProperties{LockDuration: 30 * time.Second, RequiresSession: true, RequiresDuplicateDetection: true,
			DuplicateDetectionWindow: 5 * time.Minute, DefaultMessageTimeToLive: 4 * 24 * time.Hour, MaxDeliveryCount: 7,
			UserMetadata: `{"anysqs":1,"n":"x"}`}
		q := e.queue(p)
		got, err := e.ns.GetQueue(e.ctx, q)
		if err != nil {
			e.t.Fatalf("GetQueue: %v", err)
		}
		if got.Name != q || got.LockDuration != p.LockDuration || !got.RequiresSession || !got.RequiresDuplicateDetection ||
			got.DuplicateDetectionWindow != p.DuplicateDetectionWindow || got.DefaultMessageTimeToLive != p.DefaultMessageTimeToLive ||
			got.MaxDeliveryCount != 7 || got.UserMetadata != p.UserMetadata || got.ForwardDeadLetteredMessagesTo != "" {
			e.t.Fatalf("GetQueue: %+v, want %+v", got, p)
		}
		if err := e.ns.CreateQueue(e.ctx, q, p); !errors.Is(err, ErrExists) {
			e.t.Fatalf("CreateQueue again: %v, want ErrExists", err)
		}
		dlq := e.queue(QueueProperties{})
		got.DefaultMessageTimeToLive, got.UserMetadata, got.MaxDeliveryCount, got.ForwardDeadLetteredMessagesTo = time.Hour, "changed", 3, dlq
		if err := e.ns.UpdateQueue(e.ctx, q, got); err != nil {
			e.t.Fatalf("UpdateQueue: %v", err)
		}
		again, err := e.ns.GetQueue(e.ctx, q)
		if err != nil || again.DefaultMessageTimeToLive != time.Hour || again.UserMetadata != "changed" || again.MaxDeliveryCount != 3 ||
			again.ForwardDeadLetteredMessagesTo != dlq {
			e.t.Fatalf("after UpdateQueue: %+v, %v", again, err)
		}
		all, err := e.ns.ListQueues(e.ctx)
		if err != nil || !slices.ContainsFunc(all, func(p QueueProperties) bool { return p.Name == q && p.UserMetadata == "changed" }) {
			e.t.Fatalf("ListQueues: %v; want %s with its metadata among %d", err, q, len(all))
		}
		if err := e.ns.DeleteQueue(e.ctx, q); err != nil {
			e.t.Fatalf("DeleteQueue: %v", err)
		}
		if _, err := e.ns.GetQueue(e.ctx, q); !errors.Is(err, ErrNotFound) {
			e.t.Fatalf("GetQueue after delete: %v, want ErrNotFound", err)
		}
		if err := e.ns.DeleteQueue(e.ctx, q); !errors.Is(err, ErrNotFound) {
			e.t.Fatalf("DeleteQueue again: %v, want ErrNotFound", err)
		}
		if err := e.ns.Send(e.ctx, q, out("m")); !errors.Is(err, ErrNotFound) {
			e.t.Fatalf("Send to a deleted queue: %v, want ErrNotFound", err)
		}
	}},
	{"send-receive-complete", func(e *nsEnv) {
		q := e.queue(QueueProperties{})
		e.send(q, out("a"), out("b"), out("c"))
		r := e.receiver(q)
		got := receiveN(e, r, 3, 20*time.Second)
		if !slices.Equal(ids(got), []string{"a", "b", "c"}) {
			e.t.Fatalf("received %v, want a b c in order", ids(got))
		}
		for _, m := range got {
			if m.DeliveryCount != 1 || string(m.Body) != "body "+m.MessageID || m.Properties["p"] != m.MessageID ||
				m.SequenceNumber == 0 || m.LockedUntil.IsZero() {
				e.t.Fatalf("received %+v", m)
			}
			if err := r.Complete(e.ctx, m); err != nil {
				e.t.Fatalf("Complete: %v", err)
			}
		}
		if ms, err := r.Receive(e.ctx, 10, 2*time.Second); err != nil || len(ms) != 0 {
			e.t.Fatalf("after completing all: %v, %v", ids(ms), err)
		}
	}},
	{"abandon-redelivers-with-properties", func(e *nsEnv) {
		q := e.queue(QueueProperties{})
		e.send(q, out("a"))
		r := e.receiver(q)
		first := receiveN(e, r, 1, 20*time.Second)
		if err := r.Abandon(e.ctx, first[0], map[string]any{"kept": int64(42)}); err != nil {
			e.t.Fatalf("Abandon: %v", err)
		}
		again := receiveN(e, r, 1, 20*time.Second)
		if len(again) != 1 || again[0].DeliveryCount != 2 || again[0].Properties["kept"] != int64(42) {
			e.t.Fatalf("after abandon: %+v; want delivery count 2 and the property", again)
		}
		if err := r.Complete(e.ctx, first[0]); !errors.Is(err, ErrLockLost) {
			e.t.Fatalf("Complete with the first lock: %v, want ErrLockLost", err)
		}
		if err := r.Complete(e.ctx, again[0]); err != nil {
			e.t.Fatalf("Complete: %v", err)
		}
	}},
	{"lock-expires-on-the-service-clock", func(e *nsEnv) {
		q := e.queue(QueueProperties{})
		e.send(q, out("a"))
		r := e.receiver(q)
		first := receiveN(e, r, 1, 20*time.Second)[0]
		// Nothing else makes the lock end: wait for the namespace's clock.
		again := receiveN(e, r, 1, caseLock+20*time.Second)
		if len(again) != 1 || again[0].DeliveryCount != 2 || time.Now().Before(first.LockedUntil.Add(-time.Second)) {
			e.t.Fatalf("after the lock ran out: %+v", again)
		}
		if err := r.Complete(e.ctx, first); !errors.Is(err, ErrLockLost) {
			e.t.Fatalf("Complete with the lost lock: %v, want ErrLockLost", err)
		}
		if err := r.RenewLock(e.ctx, first); !errors.Is(err, ErrLockLost) {
			e.t.Fatalf("RenewLock of the lost lock: %v, want ErrLockLost", err)
		}
	}},
	{"renew-extends-the-lock", func(e *nsEnv) {
		q := e.queue(QueueProperties{})
		e.send(q, out("a"))
		r := e.receiver(q)
		m := receiveN(e, r, 1, 20*time.Second)[0]
		was := m.LockedUntil
		time.Sleep(caseLock / 2) // renewing at once would not show the lock moving
		if err := r.RenewLock(e.ctx, m); err != nil {
			e.t.Fatalf("RenewLock: %v", err)
		}
		if !m.LockedUntil.After(was) {
			e.t.Fatalf("LockedUntil %v after renewal, was %v", m.LockedUntil, was)
		}
		time.Sleep(time.Until(was.Add(time.Second)))
		if err := r.Complete(e.ctx, m); err != nil {
			e.t.Fatalf("Complete after the original lock's end: %v (the renewal should hold it)", err)
		}
	}},
	{"dead-letter-forward-at-max-delivery-count", func(e *nsEnv) {
		dlq := e.queue(QueueProperties{})
		src := e.queue(QueueProperties{MaxDeliveryCount: 2, ForwardDeadLetteredMessagesTo: dlq})
		e.send(src, out("poison"))
		r := e.receiver(src)
		for i := range 2 {
			m := receiveN(e, r, 1, 20*time.Second)
			if len(m) != 1 || m[0].DeliveryCount != uint32(i+1) {
				e.t.Fatalf("delivery %d: %+v", i+1, m)
			}
			if err := r.Abandon(e.ctx, m[0], map[string]any{"n": int64(i)}); err != nil {
				e.t.Fatalf("Abandon: %v", err)
			}
		}
		if ms, err := r.Receive(e.ctx, 1, 2*time.Second); err != nil || len(ms) != 0 {
			e.t.Fatalf("source after MaxDeliveryCount: %v, %v", ids(ms), err)
		}
		got := receiveN(e, e.receiver(dlq), 1, 30*time.Second)
		if len(got) != 1 || got[0].MessageID != "poison" || got[0].DeadLetterSource != src || got[0].Properties["n"] != int64(1) {
			e.t.Fatalf("dead-letter queue: %+v; want poison from %s with its properties", got, src)
		}
		dl := e.queue(QueueProperties{})
		e.send(dl, out("x"))
		rd := e.receiver(dl)
		m := receiveN(e, rd, 1, 20*time.Second)[0]
		if err := rd.DeadLetter(e.ctx, m, "test"); err != nil {
			e.t.Fatalf("DeadLetter: %v", err)
		}
		if !until(30*time.Second, func() bool {
			rp, err := e.ns.QueueRuntime(e.ctx, dl)
			return err == nil && rp.DeadLetter == 1 && rp.Active == 0
		}) {
			e.t.Fatalf("runtime counts never showed the dead-lettered message")
		}
	}},
	{"duplicate-detection-window", func(e *nsEnv) {
		q := e.queue(QueueProperties{RequiresDuplicateDetection: true})
		e.send(q, out("d"), out("d"), out("other"))
		r := e.receiver(q)
		got := receiveN(e, r, 2, 20*time.Second)
		if !slices.Equal(ids(got), []string{"d", "other"}) {
			e.t.Fatalf("received %v, want d and other", ids(got))
		}
		for _, m := range got {
			if err := r.Complete(e.ctx, m); err != nil {
				e.t.Fatalf("Complete: %v", err)
			}
		}
		if ms, _ := r.Receive(e.ctx, 1, 2*time.Second); len(ms) != 0 {
			e.t.Fatalf("the duplicate was delivered: %v", ids(ms))
		}
		e.send(q, out("d")) // within the window even after its completion
		if ms, _ := r.Receive(e.ctx, 1, 2*time.Second); len(ms) != 0 {
			e.t.Fatalf("a duplicate after completion was delivered: %v", ids(ms))
		}
	}},
	{"sessions-are-exclusive-and-ordered", func(e *nsEnv) {
		q := e.queue(QueueProperties{RequiresSession: true})
		for _, s := range []struct{ id, session string }{{"a1", "A"}, {"b1", "B"}, {"a2", "A"}, {"b2", "B"}} {
			m := out(s.id)
			m.SessionID = s.session
			e.send(q, m)
		}
		if err := e.ns.Send(e.ctx, q, out("none")); err == nil {
			e.t.Fatalf("a send without a session id to a session queue succeeded")
		}
		first, err := e.accept(q, 30*time.Second)
		if err != nil {
			e.t.Fatalf("AcceptNextSession: %v", err)
		}
		second, err := e.accept(q, 30*time.Second)
		if err != nil || second.SessionID() == first.SessionID() {
			e.t.Fatalf("second AcceptNextSession: %v; want the other session", err)
		}
		if _, err := e.accept(q, 2*time.Second); !errors.Is(err, ErrNoSession) {
			e.t.Fatalf("third AcceptNextSession: %v, want ErrNoSession", err)
		}
		got := receiveN(e, first, 2, 20*time.Second)
		want := []string{"a1", "a2"}
		if first.SessionID() == "B" {
			want = []string{"b1", "b2"}
		}
		if !slices.Equal(ids(got), want) || got[0].SessionID != first.SessionID() {
			e.t.Fatalf("session %s gave %v, want %v", first.SessionID(), ids(got), want)
		}
		if !first.LockedUntil().After(time.Now()) {
			e.t.Fatalf("session LockedUntil %v is not in the future", first.LockedUntil())
		}
		if err := first.RenewSessionLock(e.ctx); err != nil {
			e.t.Fatalf("RenewSessionLock: %v", err)
		}
		if err := first.Complete(e.ctx, got[1]); err != nil {
			e.t.Fatalf("Complete: %v", err)
		}
		// Closing the session with got[0] unsettled gives it back, its delivery counted.
		if err := first.Close(e.ctx); err != nil {
			e.t.Fatalf("Close: %v", err)
		}
		again, err := e.accept(q, 30*time.Second)
		if err != nil || again.SessionID() != first.SessionID() {
			e.t.Fatalf("AcceptNextSession after close: %v", err)
		}
		back := receiveN(e, again, 1, 20*time.Second)
		if len(back) != 1 || back[0].MessageID != want[0] || back[0].DeliveryCount != 2 {
			e.t.Fatalf("after closing the session: %+v; want %s, delivery 2", back, want[0])
		}
	}},
	{"scheduled-messages", func(e *nsEnv) {
		q := e.queue(QueueProperties{})
		seq, err := e.ns.Schedule(e.ctx, q, out("later"), time.Now().Add(time.Hour))
		if err != nil || seq == 0 {
			e.t.Fatalf("Schedule: %d, %v", seq, err)
		}
		soon := time.Now().Add(3 * time.Second)
		if _, err := e.ns.Schedule(e.ctx, q, out("soon"), soon); err != nil {
			e.t.Fatalf("Schedule: %v", err)
		}
		peek, err := e.ns.Peek(e.ctx, q, 0, 10)
		if err != nil || len(peek) != 2 || !peek[0].Scheduled || !peek[1].Scheduled {
			e.t.Fatalf("Peek: %+v, %v; want two scheduled", peek, err)
		}
		if !until(30*time.Second, func() bool {
			rp, err := e.ns.QueueRuntime(e.ctx, q)
			return err == nil && rp.Scheduled == 2 && rp.Active == 0
		}) {
			e.t.Fatalf("runtime counts never showed two scheduled messages")
		}
		if err := e.ns.CancelScheduled(e.ctx, q, []int64{seq}); err != nil {
			e.t.Fatalf("CancelScheduled: %v", err)
		}
		r := e.receiver(q)
		got := receiveN(e, r, 1, 30*time.Second)
		if len(got) != 1 || got[0].MessageID != "soon" || time.Now().Before(soon.Add(-time.Second)) {
			e.t.Fatalf("received %+v; want soon, not before its time", got)
		}
		if ms, _ := r.Receive(e.ctx, 1, 2*time.Second); len(ms) != 0 {
			e.t.Fatalf("the cancelled message was delivered: %v", ids(ms))
		}
	}},
	{"time-to-live", func(e *nsEnv) {
		q := e.queue(QueueProperties{DefaultMessageTimeToLive: 3 * time.Second})
		e.send(q, out("short"))
		time.Sleep(4 * time.Second) // only the namespace's clock expires it
		if ms, err := e.receiver(q).Receive(e.ctx, 1, 2*time.Second); err != nil || len(ms) != 0 {
			e.t.Fatalf("an expired message was delivered: %v, %v", ids(ms), err)
		}
	}},
	{"runtime-counts", func(e *nsEnv) {
		q := e.queue(QueueProperties{})
		e.send(q, out("a"), out("b"))
		if _, err := e.ns.Schedule(e.ctx, q, out("c"), time.Now().Add(time.Hour)); err != nil {
			e.t.Fatalf("Schedule: %v", err)
		}
		receiveN(e, e.receiver(q), 1, 20*time.Second) // a locked message counts as active
		if !until(30*time.Second, func() bool {
			rp, err := e.ns.QueueRuntime(e.ctx, q)
			return err == nil && rp == RuntimeProperties{Active: 2, Scheduled: 1}
		}) {
			rp, err := e.ns.QueueRuntime(e.ctx, q)
			e.t.Fatalf("runtime counts %+v, %v; want 2 active (one locked), 1 scheduled", rp, err)
		}
	}},
}
