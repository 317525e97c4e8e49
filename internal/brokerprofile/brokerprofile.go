package brokerprofile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqlite"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// LockSeconds is the longest visibility timeout the profile accepts: a broker's
// message lock (Service Bus allows at most five minutes per lock).
const LockSeconds = 300

// Version is the profile's version, as Describe reports it.
const Version = "0.1.0-test"

// Open opens the SQLite driver in dataDir (sqlite.MemoryDataDir keeps it in memory) and
// wraps it in the broker profile. Each Open is a new instance with its own receipt
// handle prefix.
func Open(ctx context.Context, dataDir string) (drivers.Driver, error) {
	inner, err := sqlite.Open(ctx, sqlite.Options{DataDir: dataDir})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		inner.Close()
		return nil, err
	}
	return &driver{NoActivity: drivers.NoActivity{Name: "brokerprofile", Why: "one process serves the storage"},
		NoMoveTaskStore: drivers.NoMoveTaskStore{Name: "brokerprofile"}, inner: inner, instance: hex.EncodeToString(b)}, nil
}

// driver is the broker profile over a SQLite driver.
type driver struct {
	// One process serves the storage (ActivityLocal), and the gateway keeps move tasks.
	drivers.NoActivity
	drivers.NoMoveTaskStore
	inner    *sqlite.Driver
	instance string // prefix of every receipt handle this instance issues
}

// now is the service's clock: deadlines run on it whatever Now the gateway sent.
func (d *driver) now() time.Time { return time.Now().UTC() }

func (d *driver) Describe(ctx context.Context) (drivers.Description, error) {
	in, err := d.inner.Describe(ctx)
	if err != nil {
		return drivers.Description{}, err
	}
	return drivers.Description{Name: "brokerprofile", Version: Version, ServiceVersion: "sqlite " + in.ServiceVersion,
		Clock: drivers.ClockService, ReceiptScope: drivers.ReceiptInstance, Activity: drivers.ActivityLocal,
		Capabilities: declarations(in.Capabilities)}, nil
}

// declarations starts from SQLite's and overrides what a broker declares differently.
func declarations(base []capabilities.Declaration) []capabilities.Declaration {
	over := map[capabilities.ID]capabilities.Declaration{}
	for _, o := range overrides {
		over[o.ID] = o
	}
	out := make([]capabilities.Declaration, len(base))
	for i, b := range base {
		if o, ok := over[b.ID]; ok {
			b = o
		}
		out[i] = b
	}
	return out
}

var overrides = []capabilities.Declaration{
	{ID: capabilities.VisibilityMax, Level: capabilities.Degraded, Limits: map[string]string{"max_seconds": fmt.Sprint(LockSeconds)},
		Note: "a message lock lasts at most 5 minutes; longer visibility timeouts are not honoured"},
	{ID: capabilities.ReceiptDurable, Level: capabilities.Degraded,
		Note: "a receipt handle is a lock held by one gateway instance; after a restart, or through another instance, it fails with ReceiptHandleIsInvalid and the message reappears when its lock expires"},
	// Receive-time dead-lettering stays SQLite's atomic move underneath; atomic keeps
	// the at-least-once promise, and the declaration is what a broker can promise.
	{ID: capabilities.RedriveDLQ, Level: capabilities.Degraded, Limits: map[string]string{"max_receive_count": strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move": "at-least-once"},
		Note: "dead-lettering is not promised to be one transaction with the receive: a message may reach the dead-letter queue twice, with the same MessageId"},
	{ID: capabilities.RedriveMoveTasks, Level: capabilities.Degraded, Limits: map[string]string{"max_messages_per_second": "500", "move": "at-least-once"},
		Note: "a move copies the message to the destination, then deletes it from the source: a retried move may leave a duplicate with the same MessageId, and moved messages keep their MessageId; tasks are kept in the gateway's memory; a message whose source queue is gone stops a move back to the sources: the task fails, naming the queue, and the message stays in the dead-letter queue"},
	{ID: capabilities.FIFOReceiveAttempt, Level: capabilities.Unsupported,
		Note: "a broker does not replay a receive; ReceiveRequestAttemptId is rejected"},
	{ID: capabilities.QueuePurge, Level: capabilities.Native,
		Note: "purge deletes every message at once, within one transaction"},
	{ID: capabilities.CountsApprox, Level: capabilities.Degraded, Limits: map[string]string{"accuracy": "approximate"},
		Note: "counts come from the broker's runtime properties, which may lag the queue's state"},
	{ID: capabilities.LongPolling, Level: capabilities.Native, Limits: map[string]string{"mode": "native"},
		Note: "one process: the gateway wakes waiters on its own writes; the receive itself does not block"},
	{ID: capabilities.RetentionPeriod, Level: capabilities.Native,
		Limits: map[string]string{"min_seconds": strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds": strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep": "driver"},
		Note:   "expired messages are never delivered; Sweep removes them, on the service's clock"},
}

func (d *driver) Ping(ctx context.Context) error { return d.inner.Ping(ctx) }

func (d *driver) Metrics(ctx context.Context) ([]drivers.Metric, error) { return d.inner.Metrics(ctx) }

func (d *driver) Close() error { return d.inner.Close() }

// CreateQueue stamps the queue with the service's clock, as a broker does; the
// name-reuse delay after a delete is measured on that clock too.
func (d *driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	now := d.now()
	req.Queue.CreatedAt, req.Queue.LastModified = now, now
	return d.inner.CreateQueue(ctx, req)
}

func (d *driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	return d.inner.GetQueue(ctx, req)
}

func (d *driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	return d.inner.ListQueues(ctx, req)
}

func (d *driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	req.Now = d.now()
	return d.inner.SetQueueAttributes(ctx, req)
}

func (d *driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	return d.inner.UpdateQueueTags(ctx, req)
}

func (d *driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	req.Now = d.now()
	return d.inner.DeleteQueue(ctx, req)
}

func (d *driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	req.Now = d.now()
	return d.inner.PurgeQueue(ctx, req)
}

func (d *driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	req.Now = d.now()
	return d.inner.QueueStats(ctx, req)
}

func (d *driver) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	req.Now = d.now()
	return d.inner.BrowseMessages(ctx, req)
}

func (d *driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	req.Now = d.now()
	return d.inner.SendMessages(ctx, req)
}

func (d *driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	if req.ReceiveRequestAttemptID != "" {
		return drivers.ReceiveMessagesResult{}, drivers.Errorf(drivers.KindUnsupported,
			"brokerprofile: queue %s: ReceiveRequestAttemptId replay is not supported by a broker", req.Name)
	}
	if req.VisibilityTimeout > LockSeconds {
		return drivers.ReceiveMessagesResult{}, lockTooLong(req.Name, req.VisibilityTimeout)
	}
	req.Now = d.now()
	res, err := d.inner.ReceiveMessages(ctx, req)
	for i := range res.Messages {
		res.Messages[i].ReceiptHandle = d.wrap(res.Messages[i].ReceiptHandle)
	}
	return res, err
}

func lockTooLong(queue string, seconds int32) *drivers.Error {
	return drivers.Errorf(drivers.KindInvalidArgument,
		"brokerprofile: queue %s: visibility timeout %d s exceeds the broker's %d s lock", queue, seconds, LockSeconds)
}

func (d *driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	req.Now = d.now()
	return d.batch(len(req.Entries), func(i int) *string { return &req.Entries[i].ReceiptHandle },
		func(i int) string { return req.Entries[i].EntryID }, nil, func(keep []int) (drivers.BatchResult, error) {
			sub := req
			sub.Entries = make([]drivers.DeleteEntry, len(keep))
			for j, i := range keep {
				sub.Entries[j] = req.Entries[i]
			}
			return d.inner.DeleteMessages(ctx, sub)
		})
}

func (d *driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	req.Now = d.now()
	// A timeout beyond the lock fails its own entry, as the contract has batches fail.
	tooLong := func(i int) *drivers.Error {
		if v := req.Entries[i].VisibilityTimeout; v > LockSeconds {
			return lockTooLong(req.Name, v)
		}
		return nil
	}
	return d.batch(len(req.Entries), func(i int) *string { return &req.Entries[i].ReceiptHandle },
		func(i int) string { return req.Entries[i].EntryID }, tooLong, func(keep []int) (drivers.BatchResult, error) {
			sub := req
			sub.Entries = make([]drivers.ChangeVisibilityEntry, len(keep))
			for j, i := range keep {
				sub.Entries[j] = req.Entries[i]
			}
			return d.inner.ChangeVisibility(ctx, sub)
		})
}

// batch unwraps each entry's handle in place, fails the entries that reject (if set)
// refuses and those whose handle another instance issued, passes the others to inner and
// merges the results in request order.
func (d *driver) batch(n int, handle func(int) *string, id func(int) string, reject func(int) *drivers.Error,
	inner func(keep []int) (drivers.BatchResult, error)) (drivers.BatchResult, error) {
	out := drivers.BatchResult{Entries: make([]drivers.EntryResult, n)}
	var keep []int
	for i := range n {
		out.Entries[i].EntryID = id(i)
		if reject != nil {
			if err := reject(i); err != nil {
				out.Entries[i].Err = err
				continue
			}
		}
		h, ok := d.unwrap(*handle(i))
		if !ok {
			out.Entries[i].Err = drivers.Errorf(drivers.KindInvalidReceiptHandle,
				"brokerprofile: the receipt handle was issued by another gateway instance or before a restart")
			continue
		}
		*handle(i) = h
		keep = append(keep, i)
	}
	if len(keep) == 0 {
		return out, nil
	}
	res, err := inner(keep)
	if err != nil {
		return drivers.BatchResult{}, err
	}
	for j, i := range keep {
		out.Entries[i].Err = res.Entries[j].Err
	}
	return out, nil
}

// wrap prefixes an inner handle with the instance id: the lock belongs to this instance.
func (d *driver) wrap(h string) string { return d.instance + "." + h }

// unwrap returns the inner handle if this instance issued h. Another instance's prefix
// fails; a handle with no prefix at all is passed on, and the inner driver rejects it as
// forged, as it does any handle it did not issue.
func (d *driver) unwrap(h string) (string, bool) {
	prefix, rest, ok := strings.Cut(h, ".")
	if !ok {
		return h, true
	}
	if prefix != d.instance {
		return "", false
	}
	return rest, true
}

// MoveMessages copies each message to its destination, then deletes it from the source,
// without a transaction across the two queues: a broker has none. A crash between the
// steps leaves the message in both queues under one MessageID, and the retried move
// copies it again under that MessageID: at-least-once, as declared.
func (d *driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	if req.Destination != "" {
		if _, err := d.inner.GetQueue(ctx, drivers.GetQueueRequest{Name: req.Destination}); err != nil {
			return drivers.MoveMessagesResult{}, err
		}
	}
	var res drivers.MoveMessagesResult
	for res.Moved < limit {
		// The claim is the broker's peek-lock: the message stays in the source, invisible,
		// until the copy is stored. Claiming may dead-letter a message at its
		// maxReceiveCount, which then is in the DLQ, not lost.
		got, err := d.inner.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: req.Source, Now: d.now(),
			MaxMessages: min(10, limit-res.Moved), VisibilityTimeout: 60})
		if err != nil {
			return res, err
		}
		if len(got.Messages) == 0 {
			break
		}
		for i, m := range got.Messages {
			if err := d.moveOne(ctx, req, m); err != nil {
				// Leave this message and the rest of the claim where they were, visible again.
				entries := make([]drivers.ChangeVisibilityEntry, 0, len(got.Messages)-i)
				for j, r := range got.Messages[i:] {
					entries = append(entries, drivers.ChangeVisibilityEntry{EntryID: strconv.Itoa(j), ReceiptHandle: r.ReceiptHandle})
				}
				_, _ = d.inner.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: req.Source, Now: d.now(), Entries: entries})
				return res, err
			}
			res.Moved++
		}
	}
	stats, err := d.inner.QueueStats(ctx, drivers.QueueStatsRequest{Name: req.Source, Now: d.now()})
	if err != nil {
		return res, err
	}
	res.More = stats.Visible > 0
	return res, nil
}

func (d *driver) moveOne(ctx context.Context, req drivers.MoveMessagesRequest, m drivers.Message) error {
	dest := req.Destination
	if dest == "" {
		dest = m.DeadLetterSource
	}
	if dest == "" {
		return drivers.Errorf(drivers.KindFailedPrecondition,
			"brokerprofile: message %s in %s has no dead-letter source to move back to", m.MessageID, req.Source)
	}
	copied, err := d.inner.SendMessages(ctx, drivers.SendMessagesRequest{Name: dest, Now: d.now(), Entries: []drivers.SendEntry{{
		EntryID: "m", MessageID: m.MessageID, Body: m.Body, Attributes: m.Attributes, SystemAttributes: m.SystemAttributes,
		MessageGroupID: m.MessageGroupID, MessageDeduplicationID: m.MessageDeduplicationID, SenderID: m.SenderID}}})
	if req.Destination == "" && drivers.KindOf(err) == drivers.KindNotFound {
		// A claimed message cannot be passed over without counting a delivery, as on a
		// broker: the move stops here, saying so.
		return drivers.Errorf(drivers.KindFailedPrecondition,
			"brokerprofile: message %s in %s came from queue %s, which no longer exists; it stays in %s: %v", m.MessageID, req.Source, dest, req.Source, err)
	}
	if err != nil {
		return err
	}
	if e := copied.Entries[0].Err; e != nil {
		return e
	}
	del, err := d.inner.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: req.Source, Now: d.now(),
		Entries: []drivers.DeleteEntry{{EntryID: "m", ReceiptHandle: m.ReceiptHandle}}})
	if err != nil {
		return err
	}
	if e := del.Entries[0].Err; e != nil {
		return e
	}
	return nil
}

func (d *driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	req.Now = d.now()
	return d.inner.Sweep(ctx, req)
}
