package cosmos_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// failMarked fails (400) every transactional batch whose body holds marker, as a write
// that failed for good would, and passes everything else to the emulator.
type failMarked struct {
	next   *http.Client
	marker string
}

func (f failMarked) Do(r *http.Request) (*http.Response, error) {
	if r.Header.Get("x-ms-cosmos-is-batch-request") == "True" && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(f.marker)) {
			return &http.Response{StatusCode: http.StatusBadRequest, Request: r,
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   io.NopCloser(strings.NewReader(`{"code":"BadRequest","message":"injected failure"}`))}, nil
		}
	}
	return f.next.Do(r)
}

// TestFIFOBatchStopsGroupAtFailure: when a FIFO batch entry fails, the later entries of
// its group in the same request fail too, unwritten, while other groups go on. SQS
// enqueues a batch's messages in the order sent; a later message stored ahead of a
// failed one that the client then retries would be delivered before it.
func TestFIFOBatchStopsGroupAtFailure(t *testing.T) {
	tg := emulatorTarget(t)
	s := newStorage(t, tg)
	s.opts.Transport = failMarked{marker: "fail-this-write",
		next: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	d := s.open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	name := "stopgroup-" + randomHex(4) + ".fifo"
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: name,
		Attributes: drivertest.FIFOAttributes(), CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	entry := func(id, body, group string) drivers.SendEntry {
		return drivers.SendEntry{EntryID: id, MessageID: body + "-" + randomHex(3), Body: body, MessageGroupID: group, MessageDeduplicationID: body}
	}
	res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now, Entries: []drivers.SendEntry{
		entry("1", "g-1", "g"), entry("2", "fail-this-write", "g"), entry("3", "g-3", "g"), entry("4", "h-1", "h")}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false, true} {
		if got := res.Entries[i].Err == nil; got != want {
			t.Errorf("entry %d: error %v, want success %v", i+1, res.Entries[i].Err, want)
		}
	}
	if e2, e3 := res.Entries[1].Err, res.Entries[2].Err; e2 != nil && e3 != nil && drivers.KindOf(e3) != drivers.KindOf(e2) {
		t.Errorf("entry 3 failed with kind %v, want its group's failure, %v", drivers.KindOf(e3), drivers.KindOf(e2))
	}
	got, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: name, Now: now, MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range got.Messages {
		bodies = append(bodies, m.Body)
	}
	if strings.Join(bodies, ",") != "g-1,h-1" && strings.Join(bodies, ",") != "h-1,g-1" {
		t.Fatalf("received %v, want g-1 and h-1 only: g-3 must not be stored ahead of the failed entry", bodies)
	}
}
