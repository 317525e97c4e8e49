package spanner

import (
	"context"
	"encoding/json"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

var queueCols = []string{"QueueName", "Attributes", "Tags", "CreatedAt", "LastModified", "LastPurge", "PurgeCommitted"}

// queueRow is a Queues row as the driver reads it.
type queueRow struct {
	q         drivers.Queue
	lastPurge spanner.NullTime
	// purged: messages committed at or before it were purged (the epoch if never).
	purged time.Time
}

func scanQueue(r *spanner.Row) (queueRow, error) {
	var qr queueRow
	var attrs, tags string
	var purged spanner.NullTime
	if err := r.Columns(&qr.q.Name, &attrs, &tags, &qr.q.CreatedAt, &qr.q.LastModified, &qr.lastPurge, &purged); err != nil {
		return qr, drivers.Wrap(drivers.KindInternal, err, "read queue row")
	}
	qr.purged = epoch
	if purged.Valid {
		qr.purged = purged.Time
	}
	if err := json.Unmarshal([]byte(attrs), &qr.q.Attributes); err != nil {
		return qr, drivers.Wrap(drivers.KindInternal, err, "stored attributes of "+qr.q.Name)
	}
	if err := json.Unmarshal([]byte(tags), &qr.q.Tags); err != nil {
		return qr, drivers.Wrap(drivers.KindInternal, err, "stored tags of "+qr.q.Name)
	}
	return qr, nil
}

// reader is what both kinds of transaction read with.
type reader interface {
	ReadRow(ctx context.Context, table string, key spanner.Key, columns []string) (*spanner.Row, error)
}

// readQueue reads a queue row; KindNotFound when there is none.
func readQueue(ctx context.Context, tx reader, name string) (queueRow, error) {
	r, err := tx.ReadRow(ctx, "Queues", spanner.Key{name}, queueCols)
	if spanner.ErrCode(err) == codes.NotFound {
		return queueRow{}, notFound(name)
	}
	if err != nil {
		return queueRow{}, err
	}
	return scanQueue(r)
}

// retention is a queue's retention period; messages enqueued at or before Now minus it
// are never delivered.
func retention(a drivers.QueueAttributes) time.Duration {
	if a.MessageRetentionPeriod <= 0 {
		return sqsrule.DefaultMessageRetentionPeriod * time.Second
	}
	return time.Duration(a.MessageRetentionPeriod) * time.Second
}

// CreateQueue inserts the queue, or returns the existing one with Existed set.
func (d *Driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	q := req.Queue
	attrs, err := json.Marshal(q.Attributes)
	if err != nil {
		return drivers.CreateQueueResult{}, drivers.Wrap(drivers.KindInternal, err, "encode attributes")
	}
	if q.Tags == nil {
		q.Tags = map[string]string{}
	}
	tags, err := json.Marshal(q.Tags)
	if err != nil {
		return drivers.CreateQueueResult{}, drivers.Wrap(drivers.KindInternal, err, "encode tags")
	}
	if q.CreatedAt.IsZero() {
		q.CreatedAt = time.Now()
	}
	if q.LastModified.IsZero() {
		q.LastModified = q.CreatedAt
	}
	var res drivers.CreateQueueResult
	err = d.rw(ctx, "create queue "+q.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		res = drivers.CreateQueueResult{}
		existing, err := readQueue(ctx, tx, q.Name)
		if err == nil {
			res = drivers.CreateQueueResult{Queue: existing.q, Existed: true}
			return nil
		}
		if drivers.KindOf(err) != drivers.KindNotFound {
			return err
		}
		r, err := tx.ReadRow(ctx, "DeletedQueues", spanner.Key{q.Name}, []string{"DeletedAt"})
		if err == nil {
			var at time.Time
			if err := r.Columns(&at); err != nil {
				return err
			}
			if err := sqsrule.CheckNameReuse(q.Name, at, q.CreatedAt); err != nil {
				return err
			}
		} else if spanner.ErrCode(err) != codes.NotFound {
			return err
		}
		res.Queue = q
		return tx.BufferWrite([]*spanner.Mutation{spanner.Insert("Queues",
			[]string{"QueueName", "Fifo", "Attributes", "Tags", "CreatedAt", "LastModified"},
			[]any{q.Name, q.Attributes.FifoQueue, string(attrs), string(tags), q.CreatedAt, q.LastModified})})
	})
	return res, err
}

// GetQueue returns one queue or KindNotFound.
func (d *Driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	tx, done := d.snapshot(ctx)
	defer done()
	qr, err := readQueue(ctx, tx, req.Name)
	return qr.q, mapErr(ctx, err, "get queue "+req.Name)
}

// ListQueues pages through queues in byte order of their names.
func (d *Driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	sql := `SELECT QueueName, Attributes, Tags, CreatedAt, LastModified, LastPurge, PurgeCommitted FROM Queues
		WHERE STARTS_WITH(QueueName, @prefix) AND QueueName > @after ORDER BY QueueName`
	params := map[string]any{"prefix": req.Prefix, "after": req.After}
	if req.Limit > 0 {
		sql += " LIMIT @limit"
		params["limit"] = int64(req.Limit) + 1 // one more says whether another page follows
	}
	var res drivers.ListQueuesResult
	tx, done := d.snapshot(ctx)
	defer done()
	err := tx.Query(ctx, spanner.Statement{SQL: sql, Params: params}).Do(func(r *spanner.Row) error {
		qr, err := scanQueue(r)
		res.Queues = append(res.Queues, qr.q)
		return err
	})
	if err != nil {
		return drivers.ListQueuesResult{}, mapErr(ctx, err, "list queues")
	}
	if req.Limit > 0 && len(res.Queues) > req.Limit {
		res.Queues, res.More = res.Queues[:req.Limit], true
	}
	return res, nil
}

// SetQueueAttributes replaces the attributes.
func (d *Driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	attrs, err := json.Marshal(req.Attributes)
	if err != nil {
		return drivers.Wrap(drivers.KindInternal, err, "encode attributes")
	}
	return d.rw(ctx, "set attributes of "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		if _, err := readQueue(ctx, tx, req.Name); err != nil {
			return err
		}
		return tx.BufferWrite([]*spanner.Mutation{spanner.Update("Queues",
			[]string{"QueueName", "Fifo", "Attributes", "LastModified"},
			[]any{req.Name, req.Attributes.FifoQueue, string(attrs), req.Now})})
	})
}

// UpdateQueueTags merges Set and removes Remove.
func (d *Driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	return d.rw(ctx, "tag queue "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		qr, err := readQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		tags := qr.q.Tags
		if tags == nil {
			tags = map[string]string{}
		}
		for _, k := range req.Remove {
			delete(tags, k)
		}
		for k, v := range req.Set {
			tags[k] = v
		}
		b, err := json.Marshal(tags)
		if err != nil {
			return drivers.Wrap(drivers.KindInternal, err, "encode tags")
		}
		return tx.BufferWrite([]*spanner.Mutation{spanner.Update("Queues", []string{"QueueName", "Tags"}, []any{req.Name, string(b)})})
	})
}

// DeleteQueue deletes the queue row, which deletes every row interleaved in it, and the
// queue's move tasks, and records the deletion for drivers.QueueNameReuseDelay.
func (d *Driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	return d.rw(ctx, "delete queue "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		if _, err := readQueue(ctx, tx, req.Name); err != nil {
			return err
		}
		ms := []*spanner.Mutation{spanner.Delete("Queues", spanner.Key{req.Name}),
			spanner.InsertOrUpdate("DeletedQueues", []string{"Name", "DeletedAt"}, []any{req.Name, req.Now})}
		err := tx.Query(ctx, spanner.Statement{SQL: `SELECT Handle FROM MoveTasks@{FORCE_INDEX=MoveTasksBySource} WHERE Source = @s`,
			Params: map[string]any{"s": req.Name}}).Do(func(r *spanner.Row) error {
			var h string
			if err := r.Columns(&h); err != nil {
				return err
			}
			ms = append(ms, spanner.Delete("MoveTasks", spanner.Key{h}))
			return nil
		})
		if err != nil {
			return err
		}
		return tx.BufferWrite(ms)
	})
}

// PurgeQueue purges the queue at most once per 60 seconds. Its transaction records its
// own commit timestamp in the queue row: from then on claims, counts, moves and replays
// leave out every message committed before it, which is exactly what was in the queue.
// A partitioned delete then removes those rows, in as many commits as Spanner needs.
func (d *Driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	ts, err := d.rwAt(ctx, "purge queue "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		qr, err := readQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		var last time.Time
		if qr.lastPurge.Valid {
			last = qr.lastPurge.Time
		}
		if err := sqsrule.CheckPurge(req.Name, last, req.Now); err != nil {
			return err
		}
		// Purged in-flight messages no longer hold their groups, and, as in SQS, the
		// deduplication ids used before the purge are free again. Both in this
		// transaction: a send after the purge must not find a record from before it.
		if qr.q.Attributes.FifoQueue {
			if _, err := tx.Update(ctx, spanner.Statement{SQL: `UPDATE FifoGroups SET BusyUntil = @zero
				WHERE QueueName = @q AND BusyUntil > @zero`,
				Params: map[string]any{"q": req.Name, "zero": epoch}}); err != nil {
				return err
			}
			if _, err := tx.Update(ctx, spanner.Statement{SQL: `DELETE FROM Dedup WHERE QueueName = @q`,
				Params: map[string]any{"q": req.Name}}); err != nil {
				return err
			}
		}
		return tx.BufferWrite([]*spanner.Mutation{spanner.Update("Queues", []string{"QueueName", "LastPurge", "PurgeCommitted"},
			[]any{req.Name, req.Now, spanner.CommitTimestamp})})
	})
	if err != nil {
		return err
	}
	// The purge is done; the rows go now. Should the delete fail, they stay hidden, counted
	// in Metrics, until the next purge's delete or the queue's deletion removes them.
	release, err := d.take(ctx)
	if err != nil {
		d.purgeLeft.Add(1)
		return nil
	}
	defer release()
	if _, err := d.client.PartitionedUpdate(ctx, spanner.Statement{SQL: `DELETE FROM Messages WHERE QueueName = @q AND Committed <= @ts`,
		Params: map[string]any{"q": req.Name, "ts": ts}}); err != nil {
		d.purgeLeft.Add(1)
	}
	return nil
}

// QueueStats counts messages by state in one strong read, leaving out expired messages
// the sweep has not deleted yet.
func (d *Driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	tx, done := d.snapshot(ctx)
	defer done()
	qr, err := readQueue(ctx, tx, req.Name)
	if err != nil {
		return drivers.QueueStats{}, mapErr(ctx, err, "count messages of "+req.Name)
	}
	var s drivers.QueueStats
	var oldest spanner.NullTime
	cutoff := req.Now.Add(-retention(qr.q.Attributes))
	// The scan that counts also gives the oldest message's enqueue time.
	err = tx.Query(ctx, spanner.Statement{SQL: `SELECT COUNTIF(VisibleAt <= @now),
			COUNTIF(VisibleAt > @now AND Token IS NOT NULL), COUNTIF(VisibleAt > @now AND Token IS NULL), MIN(EnqueuedAt)
		FROM Messages WHERE QueueName = @q AND EnqueuedAt > @cutoff AND Committed > @purged`,
		Params: map[string]any{"q": req.Name, "now": req.Now, "cutoff": cutoff, "purged": qr.purged}}).Do(func(r *spanner.Row) error {
		return r.Columns(&s.Visible, &s.NotVisible, &s.Delayed, &oldest)
	})
	if oldest.Valid {
		s.OldestSentAt = oldest.Time.UTC()
	}
	return s, mapErr(ctx, err, "count messages of "+req.Name)
}

// epoch stands for "never" in timestamp comparisons.
var epoch = time.Unix(0, 0).UTC()

func scanQueueAttrs(name, attrs string) (drivers.QueueAttributes, error) {
	var a drivers.QueueAttributes
	if err := json.Unmarshal([]byte(attrs), &a); err != nil {
		return a, drivers.Wrap(drivers.KindInternal, err, "stored attributes of "+name)
	}
	return a, nil
}
