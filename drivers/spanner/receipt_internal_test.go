package spanner

import (
	"context"
	"encoding/base64"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/anysqs/anysqs/drivers"
)

// TestHandleFormatStable: a handle sealed under a key opens to what it names, and the
// same receipt under the same key gives the same handle, so handles survive an upgrade
// that keeps the format (the key is kept in the database). It opens under no other key,
// not after a changed byte, not for another queue, and the unsealed handles of drivers
// before the seal (version 1) do not open at all.
func TestHandleFormatStable(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	h := handle{queueHash: queueHash("q.fifo"), part: "group-1", seq: 1234567, token: "0f8fad5b-d9cb-469f-a165-70867728950e"}
	const golden = "Al9mfHgHZ3JvdXAtMY7algEwZjhmYWQ1Yi1kOWNiLTQ2OWYtYTE2NS03MDg2NzcyODk1MGVuvQMhwSTRMYnhVsJw3C5F"
	if got := h.seal(key); got != golden {
		t.Fatalf("seal = %q, want %q", got, golden)
	}
	if got, err := openHandle(key, "q.fifo", golden); err != nil || got != h {
		t.Fatalf("openHandle(golden) = %+v, %v; want %+v", got, err, h)
	}
	invalid := func(what, queue, s string, k []byte) {
		t.Helper()
		if _, err := openHandle(k, queue, s); drivers.KindOf(err) != drivers.KindInvalidReceiptHandle {
			t.Fatalf("%s opened: %v", what, err)
		}
	}
	invalid("a handle under another key", "q.fifo", golden, []byte("another key of thirty-two bytes!"))
	invalid("a handle of another queue", "other.fifo", golden, key)
	raw, _ := base64.RawURLEncoding.DecodeString(golden)
	raw[14] ^= 1 // the sequence number: another message of the group, the MAC kept
	invalid("an altered handle", "q.fifo", base64.RawURLEncoding.EncodeToString(raw), key)
	v1 := append([]byte{1}, raw[1:len(raw)-16]...) // the same fields, unsealed
	invalid("an unsealed version 1 handle", "q.fifo", base64.RawURLEncoding.EncodeToString(v1), key)
}

// TestReceiptKeyShared: drivers opening on one database at once agree on one key, so a
// handle issued through one works through the others, and a handle naming a row of the
// queue without the seal (as drivers before it issued) changes nothing.
func TestReceiptKeyShared(t *testing.T) {
	ctx := context.Background()
	o := emulatorDatabase(t, "k")
	// One open creates the schema (concurrent schema changes are refused), then the key
	// is removed, so that the opens below race to create it.
	d0, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d0.client.Apply(ctx, []*spanner.Mutation{spanner.Delete("Meta", spanner.Key{receiptKeyName})})
	d0.Close()
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]*Driver, 3)
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds[i], errs[i] = Open(ctx, o)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer ds[i].Close()
	}
	now := time.Now()
	a := drivers.QueueAttributes{MessageRetentionPeriod: 345600, VisibilityTimeout: 30}
	if _, err := ds[0].CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: a, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ds[0].SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now,
		Entries: []drivers.SendEntry{{EntryID: "0", MessageID: "m1", Body: "b"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := ds[1].ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 1, VisibilityTimeout: 30})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("receive: %+v, %v", got, err)
	}
	h := got.Messages[0].ReceiptHandle
	raw, _ := base64.RawURLEncoding.DecodeString(h)
	unsealed := base64.RawURLEncoding.EncodeToString(append([]byte{1}, raw[1:len(raw)-16]...))
	res, err := ds[2].ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: "q", Now: now,
		Entries: []drivers.ChangeVisibilityEntry{{EntryID: "0", ReceiptHandle: unsealed, VisibilityTimeout: 0}}})
	if err != nil || drivers.KindOf(res.Entries[0].Err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("visibility change with an unsealed handle: %+v, %v", res.Entries, err)
	}
	del, err := ds[2].DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: "q", Now: now,
		Entries: []drivers.DeleteEntry{{EntryID: "0", ReceiptHandle: h}}})
	if err != nil || del.Entries[0].Err != nil {
		t.Fatalf("delete through another driver: %+v, %v", del.Entries, err)
	}
	if st, err := ds[0].QueueStats(ctx, drivers.QueueStatsRequest{Name: "q", Now: now}); err != nil || st != (drivers.QueueStats{}) {
		t.Fatalf("after delete %+v %v", st, err)
	}
}
