package firestore

import (
	"context"
	"encoding/json"
	"time"

	fs "cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// queue is a stored queue with its decoded attributes.
type queue struct {
	doc   queueDoc
	attrs drivers.QueueAttributes
}

func decodeQueue(snap *fs.DocumentSnapshot) (*queue, error) {
	q := &queue{}
	if err := snap.DataTo(&q.doc); err != nil {
		return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: queue document "+snap.Ref.ID)
	}
	if err := json.Unmarshal([]byte(q.doc.Attrs), &q.attrs); err != nil {
		return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: queue "+q.doc.Name+": attributes")
	}
	if q.doc.Shards < 1 {
		q.doc.Shards = 1
	}
	return q, nil
}

func (q *queue) public() drivers.Queue {
	tags := map[string]string{}
	for k, v := range q.doc.Tags {
		tags[k] = v
	}
	return drivers.Queue{Name: q.doc.Name, Attributes: q.attrs, Tags: tags,
		CreatedAt: fromNanos(q.doc.Created), LastModified: fromNanos(q.doc.Modified)}
}

// retentionCutoff: messages enqueued at or before it have expired at now.
func (q *queue) retentionCutoff(now int64) int64 {
	return now - int64(q.attrs.MessageRetentionPeriod)*int64(time.Second)
}

// loadQueue reads a queue inside tx (nil: outside any transaction).
func (d *Driver) loadQueue(ctx context.Context, tx *fs.Transaction, name string) (*queue, error) {
	ref := d.queueRef(name)
	var snap *fs.DocumentSnapshot
	var err error
	if tx != nil {
		snap, err = tx.Get(ref)
	} else {
		snap, err = ref.Get(ctx)
	}
	if status.Code(err) == codes.NotFound {
		return nil, notFound(name)
	}
	if err != nil {
		return nil, err
	}
	return decodeQueue(snap)
}

func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// CreateQueue creates the queue or returns the existing one with Existed set.
func (d *Driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	var res drivers.CreateQueueResult
	in := req.Queue
	if in.Name == "" {
		return res, drivers.Errorf(drivers.KindInvalidArgument, "queue name is empty")
	}
	attrs, err := json.Marshal(in.Attributes)
	if err != nil {
		return res, drivers.Wrap(drivers.KindInternal, err, "firestore: encode attributes")
	}
	doc := queueDoc{Name: in.Name, QID: newID(), MI: newID(), FIFO: in.Attributes.FifoQueue, Attrs: string(attrs),
		Tags: in.Tags, Created: toNanos(in.CreatedAt), Modified: toNanos(in.LastModified), Shards: int64(d.shards)}
	if doc.Tags == nil {
		doc.Tags = map[string]string{}
	}
	err = d.runTx(ctx, "create queue "+in.Name, func(ctx context.Context, tx *fs.Transaction) error {
		res = drivers.CreateQueueResult{}
		existing, err := d.loadQueue(ctx, tx, in.Name)
		if err == nil {
			res = drivers.CreateQueueResult{Queue: existing.public(), Existed: true}
			return nil
		}
		if drivers.KindOf(err) != drivers.KindNotFound {
			return err
		}
		if !in.CreatedAt.IsZero() {
			snap, err := tx.Get(d.deleted().Doc(queueID(in.Name)))
			if err != nil && status.Code(err) != codes.NotFound {
				return err
			}
			if err == nil {
				var del deletedDoc
				if err := snap.DataTo(&del); err == nil && del.At != 0 {
					if err := sqsrule.CheckNameReuse(in.Name, fromNanos(del.At), in.CreatedAt); err != nil {
						return err
					}
				}
			}
		}
		q := &queue{doc: doc, attrs: in.Attributes}
		res.Queue = q.public()
		return tx.Create(d.queueRef(in.Name), doc)
	})
	return res, err
}

// GetQueue returns one queue or KindNotFound.
func (d *Driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	q, err := d.loadQueue(ctx, nil, req.Name)
	if err != nil {
		return drivers.Queue{}, classify(ctx, err, "get queue "+req.Name)
	}
	return q.public(), nil
}

// ListQueues pages through queues by name, one query per page.
func (d *Driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	query := d.queues().OrderBy("name", fs.Asc)
	if req.Prefix != "" {
		// Queue names are ASCII: every name with the prefix sorts before prefix+"\x7f".
		query = query.Where("name", ">=", req.Prefix).Where("name", "<", req.Prefix+"\x7f")
	}
	if req.After != "" {
		query = query.Where("name", ">", req.After)
	}
	if req.Limit > 0 {
		query = query.Limit(req.Limit + 1)
	}
	snaps, err := query.Documents(ctx).GetAll()
	if err != nil {
		return drivers.ListQueuesResult{}, classify(ctx, err, "list queues")
	}
	var res drivers.ListQueuesResult
	for _, s := range snaps {
		if req.Limit > 0 && len(res.Queues) == req.Limit {
			res.More = true
			break
		}
		q, err := decodeQueue(s)
		if err != nil {
			return drivers.ListQueuesResult{}, err
		}
		res.Queues = append(res.Queues, q.public())
	}
	return res, nil
}

// SetQueueAttributes replaces the queue's attributes.
func (d *Driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	attrs, err := json.Marshal(req.Attributes)
	if err != nil {
		return drivers.Wrap(drivers.KindInternal, err, "firestore: encode attributes")
	}
	return d.runTx(ctx, "set attributes of "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		if _, err := d.loadQueue(ctx, tx, req.Name); err != nil {
			return err
		}
		return tx.Update(d.queueRef(req.Name), []fs.Update{{Path: "attrs", Value: string(attrs)}, {Path: "modified", Value: toNanos(req.Now)}})
	})
}

// UpdateQueueTags sets and removes tags in one transaction.
func (d *Driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	return d.runTx(ctx, "tag "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		q, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		tags := map[string]string{}
		for k, v := range q.doc.Tags {
			tags[k] = v
		}
		for k, v := range req.Set {
			tags[k] = v
		}
		for _, k := range req.Remove {
			delete(tags, k)
		}
		// The whole map is replaced: tag keys may hold characters a field path cannot.
		return tx.Update(d.queueRef(req.Name), []fs.Update{{Path: "tags", Value: tags}})
	})
}

// DeleteQueue removes the queue document and records its deletion; its messages, groups
// and records are left to Sweep (through <p>_cleanup), which no reader reaches any more:
// a queue created again under the name gets new storage ids.
func (d *Driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	return d.runTx(ctx, "delete queue "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		q, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		delRef := d.deleted().Doc(queueID(req.Name))
		at := toNanos(req.Now)
		if snap, err := tx.Get(delRef); err == nil {
			var old deletedDoc
			if snap.DataTo(&old) == nil && old.At > at {
				at = old.At
			}
		} else if status.Code(err) != codes.NotFound {
			return err
		}
		now := toNanos(req.Now)
		if err := tx.Delete(d.queueRef(req.Name)); err != nil {
			return err
		}
		if err := tx.Set(delRef, deletedDoc{Name: req.Name, At: at}); err != nil {
			return err
		}
		if err := tx.Create(d.cleanup().Doc(newID()), cleanupDoc{Store: q.doc.QID + "." + q.doc.MI, Colls: []string{"messages", "chunks"}, At: now}); err != nil {
			return err
		}
		return tx.Create(d.cleanup().Doc(newID()), cleanupDoc{Store: q.doc.QID, Colls: []string{"groups", "dedup", "attempts"}, At: now})
	})
}

// PurgeQueue gives the queue fresh message storage, at most once per 60 seconds: every
// message sent before the purge is left behind in one small transaction, whatever the
// queue's depth, and Sweep deletes the old storage later. Sends read the queue document
// in their own transaction, so each lands wholly before or after the purge.
func (d *Driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	return d.runTx(ctx, "purge "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		q, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		now := toNanos(req.Now)
		var last time.Time
		if q.doc.Purged != 0 {
			last = fromNanos(q.doc.Purged)
		}
		if err := sqsrule.CheckPurge(req.Name, last, req.Now); err != nil {
			return err
		}
		if err := tx.Update(d.queueRef(req.Name), []fs.Update{{Path: "mi", Value: newID()}, {Path: "purged", Value: now}}); err != nil {
			return err
		}
		return tx.Create(d.cleanup().Doc(newID()), cleanupDoc{Store: q.doc.QID + "." + q.doc.MI, Colls: []string{"messages", "chunks"}, At: now})
	})
}

// QueueStats counts messages by state at req.Now with three aggregation queries (each
// costs one document read per 1,000 index entries counted, at least one).
func (d *Driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	q, err := d.loadQueue(ctx, nil, req.Name)
	if err != nil {
		return drivers.QueueStats{}, classify(ctx, err, "stats of "+req.Name)
	}
	now := toNanos(req.Now)
	cutoff := q.retentionCutoff(now)
	msgs := d.messages(&q.doc)
	shards := allShards(q.doc.Shards)
	count := func(query fs.Query) (int64, error) {
		query = query.Where("enq", ">", cutoff)
		res, err := query.NewAggregationQuery().WithCount("n").Get(ctx)
		if err != nil {
			return 0, classify(ctx, err, "count messages of "+req.Name)
		}
		v, ok := res["n"].(*pb.Value)
		if !ok {
			return 0, drivers.Errorf(drivers.KindInternal, "firestore: count of %s: unexpected result %T", req.Name, res["n"])
		}
		return v.GetIntegerValue(), nil
	}
	var s drivers.QueueStats
	if s.Visible, err = count(msgs.Where("sh", "in", shards).Where("vis", "<=", now)); err != nil {
		return drivers.QueueStats{}, err
	}
	if s.NotVisible, err = count(msgs.Where("cl", "==", true).Where("sh", "in", shards).Where("vis", ">", now)); err != nil {
		return drivers.QueueStats{}, err
	}
	if s.Delayed, err = count(msgs.Where("cl", "==", false).Where("sh", "in", shards).Where("vis", ">", now)); err != nil {
		return drivers.QueueStats{}, err
	}
	return s, nil
}

func allShards(n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
