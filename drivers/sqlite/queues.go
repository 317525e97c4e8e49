package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// queryer is what *sql.DB and *sql.Tx have in common.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queueRow is a queue as the message methods need it.
type queueRow struct {
	id        int64
	name      string
	fifo      bool
	attrs     drivers.QueueAttributes
	lastPurge sql.NullInt64
}

const queueCols = `id, name, fifo, attrs, tags, created_at, last_modified, last_purge`

func scanQueue(sc interface{ Scan(...any) error }) (queueRow, drivers.Queue, error) {
	var (
		r              queueRow
		attrs, tags    string
		created, lastM int64
	)
	if err := sc.Scan(&r.id, &r.name, &r.fifo, &attrs, &tags, &created, &lastM, &r.lastPurge); err != nil {
		return r, drivers.Queue{}, err
	}
	if err := json.Unmarshal([]byte(attrs), &r.attrs); err != nil {
		return r, drivers.Queue{}, drivers.Wrap(drivers.KindInternal, err, "sqlite: queue "+r.name+": attributes")
	}
	q := drivers.Queue{Name: r.name, Attributes: r.attrs, CreatedAt: fromNanos(created), LastModified: fromNanos(lastM)}
	if err := json.Unmarshal([]byte(tags), &q.Tags); err != nil {
		return r, drivers.Queue{}, drivers.Wrap(drivers.KindInternal, err, "sqlite: queue "+r.name+": tags")
	}
	return r, q, nil
}

func loadQueue(ctx context.Context, db queryer, name string) (queueRow, drivers.Queue, error) {
	r, q, err := scanQueue(db.QueryRowContext(ctx, `SELECT `+queueCols+` FROM queues WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return r, q, drivers.Errorf(drivers.KindNotFound, "queue %q does not exist", name)
	}
	return r, q, err
}

// queueRow returns the named queue for a message operation, from d.queues when it holds
// the queue. Only writes use it (they hold the writer connection, which guards d.queues).
// The cache is exact because this process is the only writer of the database (the data
// directory's lock) and every change to a queue's row outside next_seq calls
// forgetQueues, as does every rollback, so an entry never outlives the state it was read
// from. Nothing is cached for a queue that does not exist.
func (c conn) queueRow(name string) (queueRow, error) {
	if q, ok := c.d.queues[name]; ok {
		return q, nil
	}
	q, _, err := loadQueue(c.ctx, c, name)
	if err != nil {
		return q, err
	}
	if len(c.d.queues) >= maxCachedQueues {
		c.d.forgetQueues()
	}
	c.d.queues[name] = q
	return q, nil
}

// maxCachedQueues bounds d.queues; past it the cache starts again from empty.
const maxCachedQueues = 4096

// forgetQueues empties the queue cache; see conn.queueRow.
func (d *Driver) forgetQueues() { clear(d.queues) }

// checkNotDeletedRecently fails with KindDeletedRecently when name was deleted less than
// drivers.QueueNameReuseDelay before now. A zero now (no creation time given) checks
// nothing: there is no time to measure the delay from.
func checkNotDeletedRecently(ctx context.Context, tx conn, name string, now time.Time) error {
	if now.IsZero() {
		return nil
	}
	var latest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(deleted_at) FROM deleted_queues WHERE name = ? AND deleted_at > ?`,
		name, toNanos(now.Add(-drivers.QueueNameReuseDelay))).Scan(&latest); err != nil {
		return err
	}
	var deleted time.Time
	if latest.Valid {
		deleted = fromNanos(latest.Int64)
	}
	return sqsrule.CheckNameReuse(name, deleted, now)
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

func retentionNanos(a drivers.QueueAttributes) int64 {
	return int64(a.MessageRetentionPeriod) * int64(time.Second)
}

// CreateQueue creates the queue or returns the existing one with Existed set.
func (d *Driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	var res drivers.CreateQueueResult
	q := req.Queue
	if q.Name == "" {
		return res, drivers.Errorf(drivers.KindInvalidArgument, "queue name is empty")
	}
	attrs, err := json.Marshal(q.Attributes)
	if err != nil {
		return res, drivers.Wrap(drivers.KindInternal, err, "sqlite: encode attributes")
	}
	tags := q.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	tagsJSON, err := json.Marshal(tags)
	if err != nil {
		return res, drivers.Wrap(drivers.KindInternal, err, "sqlite: encode tags")
	}
	err = d.write(ctx, func(tx conn) error {
		_, existing, err := loadQueue(ctx, tx, q.Name)
		if err == nil {
			res = drivers.CreateQueueResult{Queue: existing, Existed: true}
			return nil
		}
		if drivers.KindOf(err) != drivers.KindNotFound {
			return err
		}
		if err := checkNotDeletedRecently(ctx, tx, q.Name, q.CreatedAt); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO queues(name, fifo, attrs, tags, retention_ns, created_at, last_modified)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, q.Name, q.Attributes.FifoQueue, string(attrs), string(tagsJSON),
			retentionNanos(q.Attributes), toNanos(q.CreatedAt), toNanos(q.LastModified))
		if err != nil {
			return err
		}
		_, res.Queue, err = loadQueue(ctx, tx, q.Name)
		return err
	})
	return res, err
}

// GetQueue returns one queue or KindNotFound.
func (d *Driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	var q drivers.Queue
	err := d.read(ctx, func(db queryer) error {
		var err error
		_, q, err = loadQueue(ctx, db, req.Name)
		return err
	})
	return q, err
}

// ListQueues pages through queues by name.
func (d *Driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	var res drivers.ListQueuesResult
	limit := -1
	if req.Limit > 0 {
		limit = req.Limit + 1 // one more tells whether More is true
	}
	err := d.read(ctx, func(db queryer) error {
		res = drivers.ListQueuesResult{}
		rows, err := db.QueryContext(ctx, `SELECT `+queueCols+` FROM queues
			WHERE substr(name, 1, length(?1)) = ?1 AND name > ?2 ORDER BY name LIMIT ?3`,
			req.Prefix, req.After, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			_, q, err := scanQueue(rows)
			if err != nil {
				return err
			}
			if req.Limit > 0 && len(res.Queues) == req.Limit {
				res.More = true
				break
			}
			res.Queues = append(res.Queues, q)
		}
		return rows.Err()
	})
	if err != nil {
		return drivers.ListQueuesResult{}, err
	}
	return res, nil
}

// SetQueueAttributes replaces the queue's attributes.
func (d *Driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	attrs, err := json.Marshal(req.Attributes)
	if err != nil {
		return drivers.Wrap(drivers.KindInternal, err, "sqlite: encode attributes")
	}
	return d.write(ctx, func(tx conn) error {
		tx.d.forgetQueues()
		r, err := tx.ExecContext(ctx, `UPDATE queues SET attrs = ?, retention_ns = ?, last_modified = ? WHERE name = ?`,
			string(attrs), retentionNanos(req.Attributes), toNanos(req.Now), req.Name)
		if err != nil {
			return err
		}
		return mustAffect(r, req.Name)
	})
}

func mustAffect(r sql.Result, name string) error {
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return drivers.Errorf(drivers.KindNotFound, "queue %q does not exist", name)
	}
	return nil
}

// UpdateQueueTags sets and removes tags in one transaction.
func (d *Driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	return d.write(ctx, func(tx conn) error {
		_, q, err := loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		tags := q.Tags
		if tags == nil {
			tags = map[string]string{}
		}
		for k, v := range req.Set {
			tags[k] = v
		}
		for _, k := range req.Remove {
			delete(tags, k)
		}
		b, err := json.Marshal(tags)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE queues SET tags = ? WHERE name = ?`, string(b), req.Name)
		return err
	})
}

// DeleteQueue removes the queue; its messages and records go with it (ON DELETE CASCADE).
func (d *Driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	return d.write(ctx, func(tx conn) error {
		if q, err := tx.queueRow(req.Name); err == nil {
			tx.d.fairMu.Lock()
			delete(tx.d.fair, q.id) // its processing times: a new queue may take its id
			tx.d.fairMu.Unlock()
		}
		tx.d.forgetQueues()
		r, err := tx.ExecContext(ctx, `DELETE FROM queues WHERE name = ?`, req.Name)
		if err != nil {
			return err
		}
		if err := mustAffect(r, req.Name); err != nil {
			return err
		}
		// A zero Now records a deletion at time 0, which blocks nothing.
		_, err = tx.ExecContext(ctx, `INSERT INTO deleted_queues(name, deleted_at) VALUES (?, ?)
			ON CONFLICT(name) DO UPDATE SET deleted_at = max(deleted_at, excluded.deleted_at)`, req.Name, toNanos(req.Now))
		return err
	})
}

// PurgeQueue deletes every message sent up to req.Now and the queue's deduplication
// records, at most once per 60 seconds.
func (d *Driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	return d.write(ctx, func(tx conn) error {
		q, _, err := loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		now := toNanos(req.Now)
		var last time.Time
		if q.lastPurge.Valid {
			last = fromNanos(q.lastPurge.Int64)
		}
		if err := sqsrule.CheckPurge(req.Name, last, req.Now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE queue_id = ? AND sent_at <= ?`, q.id, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM dedup WHERE queue_id = ?`, q.id); err != nil {
			return err
		}
		tx.d.forgetQueues()
		_, err = tx.ExecContext(ctx, `UPDATE queues SET last_purge = ? WHERE id = ?`, now, q.id)
		return err
	})
}

// QueueStats counts messages by state at req.Now, and finds the oldest message's enqueue
// time (its send time; a FIFO dead-letter queue's move time). The counts are exact.
func (d *Driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	var s drivers.QueueStats
	err := d.read(ctx, func(db queryer) error {
		q, _, err := loadQueue(ctx, db, req.Name)
		if err != nil {
			return err
		}
		now := toNanos(req.Now)
		cutoff := now - retentionNanos(q.attrs)
		// Visible messages are counted from the index alone; the not-visible range (in
		// flight or delayed) is usually short and needs the token from the rows.
		err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages INDEXED BY messages_visible
			WHERE queue_id = ?1 AND visible_at <= ?2 AND enqueued_at > ?3`, q.id, now, cutoff).Scan(&s.Visible)
		if err != nil {
			return err
		}
		err = db.QueryRowContext(ctx, `SELECT
				COALESCE(SUM(token IS NOT NULL), 0), COALESCE(SUM(token IS NULL), 0)
			FROM messages INDEXED BY messages_visible
			WHERE queue_id = ?1 AND visible_at > ?2 AND enqueued_at > ?3`, q.id, now, cutoff).
			Scan(&s.NotVisible, &s.Delayed)
		if err != nil {
			return err
		}
		// The oldest unexpired message: one probe of the enqueue-time index.
		var oldest sql.NullInt64
		if err := db.QueryRowContext(ctx, `SELECT MIN(enqueued_at) FROM messages INDEXED BY messages_enqueued
			WHERE queue_id = ?1 AND enqueued_at > ?2`, q.id, cutoff).Scan(&oldest); err != nil {
			return err
		}
		if oldest.Valid {
			s.OldestSentAt = fromNanos(oldest.Int64)
		}
		if req.Groups && !q.fifo {
			s.NoisyGroups, s.QuietGroups, err = d.groupStates(ctx, db, q, now)
			return err
		}
		return nil
	})
	if err != nil {
		return drivers.QueueStats{}, err
	}
	return s, nil
}
