package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// casAttempts bounds the read-modify-write rounds of a queue record under contention.
const casAttempts = 5

// queueDoc is a queue's record in the catalog partition. A deleted queue leaves it as a
// tombstone (Deleted set) so that the name-reuse delay holds for every gateway.
type queueDoc struct {
	ID        string                  `json:"id"` // "q:" + name
	PK        string                  `json:"pk"`
	Kind      string                  `json:"kind"` // "queue"
	Name      string                  `json:"name"`
	Inc       string                  `json:"inc"` // incarnation: names the queue's partition
	Attrs     drivers.QueueAttributes `json:"attrs"`
	Tags      map[string]string       `json:"tags"`
	Created   int64                   `json:"created"`
	Modified  int64                   `json:"modified"`
	LastPurge int64                   `json:"lastPurge"`
	Gen       int64                   `json:"gen"` // purge generation: older messages are gone
	Deleted   int64                   `json:"deleted"`
}

// deadDoc names the partition of a deleted incarnation, whose items Sweep removes.
type deadDoc struct {
	ID   string `json:"id"` // "dead:" + inc
	PK   string `json:"pk"`
	Kind string `json:"kind"` // "dead"
	Name string `json:"name"`
	Inc  string `json:"inc"`
}

func queueID(name string) string { return "q:" + name }

func (q *queueDoc) pk() string { return queuePK(q.Name, q.Inc) }

func (q *queueDoc) public() drivers.Queue {
	tags := q.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return drivers.Queue{Name: q.Name, Attributes: q.Attrs, Tags: tags, CreatedAt: fromMS(q.Created), LastModified: fromMS(q.Modified)}
}

// readItem is read, or readOrMissing where the backend cannot point-read a missing item.
func (d *Driver) readItem(ctx context.Context, op, pk, id string, v any) (azcore.ETag, bool, error) {
	if d.opts.QueryReads {
		return d.readOrMissing(ctx, op, pk, id, v)
	}
	return d.read(ctx, op, pk, id, v)
}

// loadQueue reads a live queue's record, or fails with KindNotFound.
func (d *Driver) loadQueue(ctx context.Context, op, name string) (queueDoc, azcore.ETag, error) {
	var q queueDoc
	etag, found, err := d.readItem(ctx, op, catalogPK, queueID(name), &q)
	if err != nil {
		return q, "", err
	}
	if !found || q.Deleted != 0 {
		return q, "", drivers.Errorf(drivers.KindNotFound, "queue %q does not exist", name)
	}
	return q, etag, nil
}

// CreateQueue creates the record with a fresh incarnation, or returns the live one.
func (d *Driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	in := req.Queue
	if in.Name == "" {
		return drivers.CreateQueueResult{}, drivers.Errorf(drivers.KindInvalidArgument, "queue name is empty")
	}
	var lost error // the last write that lost to another gateway's
	for attempt := 0; attempt < casAttempts; attempt++ {
		var old queueDoc
		etag, found, err := d.readItem(ctx, "CreateQueue", catalogPK, queueID(in.Name), &old)
		if err != nil {
			return drivers.CreateQueueResult{}, err
		}
		if found && old.Deleted == 0 {
			return drivers.CreateQueueResult{Queue: old.public(), Existed: true}, nil
		}
		if found {
			if err := sqsrule.CheckNameReuse(in.Name, fromMS(old.Deleted), in.CreatedAt); err != nil {
				return drivers.CreateQueueResult{}, err
			}
		}
		tags := in.Tags
		if tags == nil {
			tags = map[string]string{}
		}
		q := queueDoc{ID: queueID(in.Name), PK: catalogPK, Kind: "queue", Name: in.Name, Inc: newID(),
			Attrs: in.Attributes, Tags: tags, Created: ms(in.CreatedAt), Modified: ms(in.LastModified)}
		if found {
			_, err = d.replace(ctx, "CreateQueue", catalogPK, q.ID, etag, q)
		} else {
			_, err = d.create(ctx, "CreateQueue", catalogPK, q)
		}
		switch s := statusOf(err); {
		case err == nil:
			return drivers.CreateQueueResult{Queue: q.public()}, nil
		case s == http.StatusConflict || s == http.StatusPreconditionFailed:
			lost = err
			continue // another gateway created it meanwhile: read what it made
		default:
			return drivers.CreateQueueResult{}, mapErr(ctx, err, "CreateQueue")
		}
	}
	return drivers.CreateQueueResult{}, contended(in.Name, lost)
}

// contended is the error of a queue record that kept changing under casAttempts
// read-modify-writes; lost is the last write's refusal.
func contended(name string, lost error) error {
	return &drivers.Error{Kind: drivers.KindAborted, Message: fmt.Sprintf("cosmos: queue %q is being changed concurrently", name), Err: lost}
}

// GetQueue returns a live queue.
func (d *Driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	q, _, err := d.loadQueue(ctx, "GetQueue", req.Name)
	if err != nil {
		return drivers.Queue{}, err
	}
	return q.public(), nil
}

// ListQueues pages through live queues by name, in the catalog partition.
func (d *Driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	max := 0
	if req.Limit > 0 {
		max = req.Limit + 1
	}
	items, err := d.query(ctx, "ListQueues", catalogPK,
		"SELECT * FROM c WHERE c.kind = 'queue' AND c.deleted = 0 AND STARTSWITH(c.name, @prefix) AND c.name > @after ORDER BY c.name",
		[]azcosmos.QueryParameter{{Name: "@prefix", Value: req.Prefix}, {Name: "@after", Value: req.After}}, max)
	if err != nil {
		return drivers.ListQueuesResult{}, err
	}
	var res drivers.ListQueuesResult
	for _, it := range items {
		var q queueDoc
		if err := json.Unmarshal(it, &q); err != nil {
			return drivers.ListQueuesResult{}, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode queue")
		}
		if req.Limit > 0 && len(res.Queues) == req.Limit {
			res.More = true
			break
		}
		res.Queues = append(res.Queues, q.public())
	}
	return res, nil
}

// updateQueue applies change to the live record with an ETag-conditioned replace,
// re-reading on a concurrent change.
func (d *Driver) updateQueue(ctx context.Context, op, name string, change func(q *queueDoc) error) (queueDoc, error) {
	var lost error // the last write that lost to another gateway's
	for attempt := 0; attempt < casAttempts; attempt++ {
		q, etag, err := d.loadQueue(ctx, op, name)
		if err != nil {
			return q, err
		}
		if err := change(&q); err != nil {
			return q, err
		}
		_, err = d.replace(ctx, op, catalogPK, q.ID, etag, q)
		if err == nil {
			return q, nil
		}
		if statusOf(err) != http.StatusPreconditionFailed {
			return q, mapErr(ctx, err, op)
		}
		lost = err
	}
	return queueDoc{}, contended(name, lost)
}

// SetQueueAttributes replaces the attributes.
func (d *Driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	_, err := d.updateQueue(ctx, "SetQueueAttributes", req.Name, func(q *queueDoc) error {
		q.Attrs, q.Modified = req.Attributes, ms(req.Now)
		return nil
	})
	return err
}

// UpdateQueueTags sets and removes tags in one conditional replace.
func (d *Driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	_, err := d.updateQueue(ctx, "UpdateQueueTags", req.Name, func(q *queueDoc) error {
		if q.Tags == nil {
			q.Tags = map[string]string{}
		}
		for k, v := range req.Set {
			q.Tags[k] = v
		}
		for _, k := range req.Remove {
			delete(q.Tags, k)
		}
		return nil
	})
	return err
}

// DeleteQueue records the incarnation for Sweep, then turns the record into a
// tombstone. The incarnation's partition is unreachable from then on.
func (d *Driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	q, _, err := d.loadQueue(ctx, "DeleteQueue", req.Name)
	if err != nil {
		return err
	}
	if err := d.upsert(ctx, "DeleteQueue", catalogPK, deadDoc{ID: "dead:" + q.Inc, PK: catalogPK, Kind: "dead", Name: q.Name, Inc: q.Inc}); err != nil {
		return mapErr(ctx, err, "DeleteQueue")
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	_, err = d.updateQueue(ctx, "DeleteQueue", req.Name, func(t *queueDoc) error {
		if t.Inc != q.Inc {
			return drivers.Errorf(drivers.KindNotFound, "queue %q does not exist", req.Name)
		}
		t.Deleted = ms(now)
		return nil
	})
	return err
}

// PurgeQueue starts a new purge generation: every message written under an older one
// is never delivered again, and Sweep deletes it.
func (d *Driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	_, err := d.updateQueue(ctx, "PurgeQueue", req.Name, func(q *queueDoc) error {
		var last time.Time
		if q.LastPurge != 0 {
			last = fromMS(q.LastPurge)
		}
		if err := sqsrule.CheckPurge(q.Name, last, req.Now); err != nil {
			return err
		}
		q.Gen++
		q.LastPurge = ms(req.Now)
		return nil
	})
	return err
}

// QueueStats counts live messages by state with three count queries in the queue's
// partition.
func (d *Driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	q, _, err := d.loadQueue(ctx, "QueueStats", req.Name)
	if err != nil {
		return drivers.QueueStats{}, err
	}
	now := ms(req.Now)
	base := "SELECT VALUE COUNT(1) FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND "
	params := []azcosmos.QueryParameter{{Name: "@gen", Value: q.Gen}, {Name: "@cutoff", Value: retentionCutoff(q, req.Now)}, {Name: "@now", Value: now}}
	count := func(cond string) (int64, error) {
		items, err := d.query(ctx, "QueueStats", q.pk(), base+cond, params, 0)
		if err != nil {
			return 0, err
		}
		var total int64
		for _, it := range items {
			var n int64
			if err := json.Unmarshal(it, &n); err != nil {
				return 0, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode count")
			}
			total += n
		}
		return total, nil
	}
	var s drivers.QueueStats
	if s.Visible, err = count("c.vis <= @now"); err != nil {
		return s, err
	}
	if s.NotVisible, err = count("c.vis > @now AND c.tok != ''"); err != nil {
		return s, err
	}
	if s.Delayed, err = count("c.vis > @now AND c.tok = ''"); err != nil {
		return s, err
	}
	// The oldest message's enqueue time, over the same range: MIN over no item returns
	// no item.
	items, err := d.query(ctx, "QueueStats", q.pk(),
		"SELECT VALUE MIN(c.enq) FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff", params[:2], 0)
	if err != nil {
		return s, err
	}
	for _, it := range items {
		var enq *int64
		if err := json.Unmarshal(it, &enq); err != nil {
			return s, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode oldest enqueue time")
		}
		if enq != nil && (s.OldestSentAt.IsZero() || time.UnixMilli(*enq).Before(s.OldestSentAt)) {
			s.OldestSentAt = time.UnixMilli(*enq).UTC()
		}
	}
	return s, nil
}

// retentionCutoff is the enqueue time at or before which a message has expired at now.
func retentionCutoff(q queueDoc, now time.Time) int64 {
	return ms(now) - int64(q.Attrs.MessageRetentionPeriod)*1000
}
