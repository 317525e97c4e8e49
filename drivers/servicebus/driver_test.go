package servicebus_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/servicebus"
)

func openModel(t *testing.T, o servicebus.Options) *servicebus.Driver {
	t.Helper()
	o.Model = newModelName(t)
	d, err := servicebus.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func create(t *testing.T, d drivers.Driver, name string, tags map[string]string) error {
	t.Helper()
	attrs := drivertest.StandardAttributes()
	if strings.HasSuffix(name, ".fifo") {
		attrs = drivertest.FIFOAttributes()
	}
	_, err := d.CreateQueue(context.Background(), drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: attrs, Tags: tags}})
	return err
}

// A visibility timeout beyond max_visibility_seconds is rejected, never shortened.
func TestVisibilityBeyondWhatIsHeldIsRejected(t *testing.T) {
	ctx := context.Background()
	d := openModel(t, servicebus.Options{MaxVisibilitySeconds: 300, LockDurationSeconds: 5})
	if err := create(t, d, "q", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: time.Now(),
		Entries: []drivers.SendEntry{{EntryID: "e", MessageID: "m1", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	_, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: time.Now(), MaxMessages: 1, VisibilityTimeout: 301})
	if drivers.KindOf(err) != drivers.KindInvalidArgument {
		t.Fatalf("receive with 301 s: %v, want KindInvalidArgument", err)
	}
	got, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: time.Now(), MaxMessages: 1, VisibilityTimeout: 300})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("receive with 300 s: %v, %d messages", err, len(got.Messages))
	}
	res, err := d.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: "q", Now: time.Now(), Entries: []drivers.ChangeVisibilityEntry{
		{EntryID: "c", ReceiptHandle: got.Messages[0].ReceiptHandle, VisibilityTimeout: 301}}})
	if err != nil || res.Entries[0].Err == nil || res.Entries[0].Err.Kind != drivers.KindInvalidArgument {
		t.Fatalf("change to 301 s: %v, %+v; want the entry to fail with KindInvalidArgument", err, res.Entries)
	}
}

// Service Bus entity names are case-insensitive; SQS queue names are not.
func TestNamesDifferingInCase(t *testing.T) {
	d := openModel(t, servicebus.Options{})
	if err := create(t, d, "Orders", nil); err != nil {
		t.Fatal(err)
	}
	if err := create(t, d, "orders", nil); drivers.KindOf(err) != drivers.KindAlreadyExists {
		t.Fatalf("create orders beside Orders: %v, want KindAlreadyExists", err)
	}
	if _, err := d.GetQueue(context.Background(), drivers.GetQueueRequest{Name: "orders"}); drivers.KindOf(err) != drivers.KindNotFound {
		t.Fatalf("GetQueue orders: %v, want KindNotFound", err)
	}
}

// failingGet fails every GetQueue once fail is set, as a namespace that is down would.
type failingGet struct {
	servicebus.Namespace
	fail bool
}

func (f *failingGet) GetQueue(ctx context.Context, name string) (servicebus.QueueProperties, error) {
	if f.fail {
		return servicebus.QueueProperties{}, fmt.Errorf("injected: the namespace answered 503 ServerBusy for %s", name)
	}
	return f.Namespace.GetQueue(ctx, name)
}

// A create that finds the entity there reads it to tell this queue from another entity;
// when the read fails, the create fails with what the namespace said, not with
// KindAlreadyExists, which would hide the failure behind a client's mistake.
func TestCreateOverAFailedRead(t *testing.T) {
	ctx := context.Background()
	ns := &failingGet{Namespace: servicebus.NewModel().Connect()}
	d, err := servicebus.NewWithNamespace(ctx, ns, "in-repo model", servicebus.Options{LockDurationSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := create(t, d, "q", nil); err != nil {
		t.Fatal(err)
	}
	ns.fail = true
	err = create(t, d, "q", nil)
	if k := drivers.KindOf(err); k != drivers.KindUnavailable || !strings.Contains(fmt.Sprint(err), "503 ServerBusy") {
		t.Fatalf("create over a failed read: %v (kind %v), want KindUnavailable with what the namespace said", err, k)
	}
}

// Tags share the entity's 1024 characters of user metadata; beyond that a change fails
// and nothing changes.
func TestMetadataBudget(t *testing.T) {
	ctx := context.Background()
	d := openModel(t, servicebus.Options{})
	big := map[string]string{}
	for i := range 20 {
		big[fmt.Sprintf("key-%02d", i)] = strings.Repeat("v", 60)
	}
	if err := create(t, d, "too-many", big); drivers.KindOf(err) != drivers.KindInvalidArgument {
		t.Fatalf("create with %d characters of tags: %v, want KindInvalidArgument", 20*66, err)
	}
	if err := create(t, d, "q", map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := d.UpdateQueueTags(ctx, drivers.UpdateQueueTagsRequest{Name: "q", Set: big}); drivers.KindOf(err) != drivers.KindInvalidArgument {
		t.Fatalf("tagging beyond the budget: %v, want KindInvalidArgument", err)
	}
	q, err := d.GetQueue(ctx, drivers.GetQueueRequest{Name: "q"})
	if err != nil || len(q.Tags) != 1 || q.Tags["a"] != "1" {
		t.Fatalf("after the refused change: %+v, %v", q.Tags, err)
	}
}

// failingSend fails the send of one message body, once.
type failingSend struct {
	servicebus.Namespace
	body string
	done bool
}

func (f *failingSend) Send(ctx context.Context, queue string, m servicebus.OutMessage) error {
	if string(m.Body) == f.body && !f.done {
		f.done = true
		return fmt.Errorf("injected: the broker refused %s", f.body)
	}
	return f.Namespace.Send(ctx, queue, m)
}

// A FIFO batch entry that fails fails the later entries of its group unwritten: stored,
// they would be delivered before the failed one once the client retries it.
func TestFIFOBatchStopsGroupAtFailure(t *testing.T) {
	ctx := context.Background()
	ns := &failingSend{Namespace: servicebus.NewModel().Connect(), body: "g-2"}
	d, err := servicebus.NewWithNamespace(ctx, ns, "in-repo model", servicebus.Options{LockDurationSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := create(t, d, "q.fifo", nil); err != nil {
		t.Fatal(err)
	}
	var entries []drivers.SendEntry
	for i, b := range []string{"g-1", "g-2", "g-3", "h-1"} {
		entries = append(entries, drivers.SendEntry{EntryID: fmt.Sprint(i), MessageID: fmt.Sprint("m", i), Body: b,
			MessageGroupID: b[:1], MessageDeduplicationID: b})
	}
	res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q.fifo", Now: time.Now(), Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for i, e := range res.Entries {
		if e.Err != nil {
			failed = append(failed, entries[i].Body)
		}
	}
	if fmt.Sprint(failed) != "[g-2 g-3]" {
		t.Fatalf("failed entries %v, want [g-2 g-3]", failed)
	}
	got, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q.fifo", Now: time.Now(), MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range got.Messages {
		bodies = append(bodies, m.Body)
	}
	if len(bodies) != 2 || !slices.Contains(bodies, "g-1") || !slices.Contains(bodies, "h-1") {
		t.Fatalf("stored %v, want g-1 and h-1 only", bodies)
	}
}
