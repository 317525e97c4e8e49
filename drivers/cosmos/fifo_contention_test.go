package cosmos_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestFIFOSendContention has senders on four driver instances write to one FIFO group
// at once, so their batches race for the queue's head item. Every send that succeeded
// must be stored exactly once, with its own sequence number, and a receive must return
// the group in sequence order.
func TestFIFOSendContention(t *testing.T) {
	tg := emulatorTarget(t)
	const instances, perSender = 4, 6
	ctx := context.Background()
	s := newStorage(t, tg)
	ds := make([]drivers.Driver, instances)
	for i := range ds {
		ds[i] = s.open(t)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	name := "sendrace-" + randomHex(4) + ".fifo"
	if _, err := ds[0].CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name, Attributes: drivertest.FIFOAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		sent = map[string]string{} // MessageId -> SequenceNumber
		wg   sync.WaitGroup
	)
	for i, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perSender; j++ {
				body := fmt.Sprintf("s%d-%d", i, j)
				res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: []drivers.SendEntry{
					{EntryID: "1", MessageID: body + "-" + randomHex(3), Body: body, MessageGroupID: "g", MessageDeduplicationID: body}}})
				if err != nil {
					t.Errorf("send %s: %v", body, err)
					return
				}
				r := res.Entries[0]
				if r.Err != nil {
					if drivers.KindOf(r.Err) == drivers.KindAborted {
						continue // contended and not applied: the client would retry
					}
					t.Errorf("send %s: %v", body, r.Err)
					return
				}
				mu.Lock()
				sent[r.MessageID] = r.SequenceNumber
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seqs := map[string]bool{}
	for id, seq := range sent {
		if seqs[seq] {
			t.Fatalf("sequence number %s given twice (%s)", seq, id)
		}
		seqs[seq] = true
	}
	var got []drivers.Message
	for len(got) < len(sent) {
		res, err := ds[0].ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 600})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			break
		}
		got = append(got, res.Messages...)
		var del []drivers.DeleteEntry
		for j, m := range res.Messages {
			del = append(del, drivers.DeleteEntry{EntryID: fmt.Sprint(j), ReceiptHandle: m.ReceiptHandle})
		}
		if _, err := ds[0].DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: now, Entries: del}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(sent) {
		t.Fatalf("%d messages received, %d sends succeeded: a send reported success without storing its message", len(got), len(sent))
	}
	if !sort.SliceIsSorted(got, func(a, b int) bool { return got[a].SequenceNumber < got[b].SequenceNumber }) {
		t.Fatalf("the group came back out of sequence order")
	}
	for _, m := range got {
		if sent[m.MessageID] != m.SequenceNumber {
			t.Fatalf("message %s has sequence number %s, its send said %s", m.MessageID, m.SequenceNumber, sent[m.MessageID])
		}
	}
	t.Logf("%d of %d concurrent sends stored, each once, in sequence order", len(sent), instances*perSender)
}
