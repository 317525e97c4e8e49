package cosmos_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/cosmos"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestCosmiumWireFormat checks, on cosmium (ANYSQS_TEST_COSMIUM_ENDPOINT), the two
// request shapes the cosmosdb-server runs cannot: point reads of missing items (a real
// 404, so no query reads) and the SDK's transactional batch exactly as it sends it (no
// test transport). It stops short of receives: cosmium v0.1.20 answers the driver's
// queries wrongly, and it ignores If-Match (a stale replace succeeds), so it judges
// nothing about claims.
func TestCosmiumWireFormat(t *testing.T) {
	ep := os.Getenv("ANYSQS_TEST_COSMIUM_ENDPOINT")
	if ep == "" {
		t.Skip("not run: ANYSQS_TEST_COSMIUM_ENDPOINT is not set (scripts/services/cosmos.sh starts cosmium when it can build it)")
	}
	tg := target{name: "cosmium", opts: cosmos.Options{Endpoint: ep, Key: emulatorKey, InsecureSkipVerify: true,
		CreateContainer: true, Database: "anysqs-test"}}
	reachable(t, tg.opts)
	ctx := context.Background()
	d := newStorage(t, tg).open(t)
	if _, err := d.GetQueue(ctx, drivers.GetQueueRequest{Name: "missing"}); drivers.KindOf(err) != drivers.KindNotFound {
		t.Fatalf("GetQueue of a missing queue: %v, want KindNotFound from a 404 point read", err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	name := "wire-" + randomHex(3) + ".fifo"
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: drivertest.FIFOAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	send := func(mid, dedup string) drivers.SendEntryResult {
		t.Helper()
		res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: []drivers.SendEntry{
			{EntryID: "1", MessageID: mid, Body: "b-" + dedup, MessageGroupID: "g", MessageDeduplicationID: dedup}}})
		if err != nil || res.Entries[0].Err != nil {
			t.Fatalf("SendMessages: %v %v", err, res.Entries)
		}
		return res.Entries[0]
	}
	first, second := send("m1", "d1"), send("m2", "d2")
	if first.Duplicate || second.Duplicate || second.SequenceNumber <= first.SequenceNumber {
		t.Fatalf("two FIFO sends: %+v, %+v; want new messages with increasing sequence numbers", first, second)
	}
	dup := send("m3", "d1")
	if !dup.Duplicate || dup.MessageID != "m1" || dup.SequenceNumber != first.SequenceNumber {
		t.Fatalf("resend of d1: %+v, want a duplicate echoing m1 and %s", dup, first.SequenceNumber)
	}
}
