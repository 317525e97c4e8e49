package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

const queueColumns = `name, attributes, tags, created_at, last_modified`

func scanQueue(row pgx.Row) (drivers.Queue, error) {
	var q drivers.Queue
	var attrs, tags []byte
	if err := row.Scan(&q.Name, &attrs, &tags, &q.CreatedAt, &q.LastModified); err != nil {
		return q, err
	}
	if err := json.Unmarshal(attrs, &q.Attributes); err != nil {
		return q, drivers.Wrap(drivers.KindInternal, err, "stored attributes of "+q.Name)
	}
	if err := json.Unmarshal(tags, &q.Tags); err != nil {
		return q, drivers.Wrap(drivers.KindInternal, err, "stored tags of "+q.Name)
	}
	return q, nil
}

// attrColumns are the attributes the driver's SQL reads, kept in columns beside the JSON.
type attrColumns struct {
	fifo, dedupGroup bool
	retention        int32
	maxReceive       *int32  // with dlqName, the redrive target (sqsrule.RedriveTarget);
	dlqName          *string // both nil when there is none
	json             []byte
}

func columnsOf(name string, a drivers.QueueAttributes) (attrColumns, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return attrColumns{}, drivers.Wrap(drivers.KindInternal, err, "encode attributes")
	}
	c := attrColumns{fifo: a.FifoQueue, dedupGroup: a.DeduplicationScope == "messageGroup",
		retention: a.MessageRetentionPeriod, json: b}
	if c.retention <= 0 {
		c.retention = sqsrule.DefaultMessageRetentionPeriod // the gateway normally resolves it
	}
	if dlq, maxCount, ok := sqsrule.RedriveTarget(name, a.RedrivePolicy); ok {
		c.maxReceive, c.dlqName = &maxCount, &dlq
	}
	return c, nil
}

// CreateQueue inserts the queue, or returns the existing one with Existed set.
func (d *Driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	q := req.Queue
	c, err := columnsOf(q.Name, q.Attributes)
	if err != nil {
		return drivers.CreateQueueResult{}, err
	}
	tags := q.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	tagJSON, err := json.Marshal(tags)
	if err != nil {
		return drivers.CreateQueueResult{}, drivers.Wrap(drivers.KindInternal, err, "encode tags")
	}
	now := q.CreatedAt
	if now.IsZero() {
		now = time.Now()
	}
	lastMod := q.LastModified
	if lastMod.IsZero() {
		lastMod = now
	}
	// ON CONFLICT waits for a concurrent creation of the same name to commit; the
	// follow-up read (a new statement, so a new snapshot) then sees it. The deletion check
	// and the insert are one transaction, so a name deleted through another gateway is
	// seen as such.
	var created bool
	err = d.inTx(ctx, "create queue "+q.Name, func(tx pgx.Tx) error {
		var latest *time.Time
		if err := tx.QueryRow(ctx, `SELECT max(deleted_at) FROM deleted_queues WHERE name = $1 AND deleted_at > $2`,
			q.Name, now.Add(-drivers.QueueNameReuseDelay)).Scan(&latest); err != nil {
			return err
		}
		if latest != nil {
			if err := sqsrule.CheckNameReuse(q.Name, *latest, now); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `INSERT INTO queues (name, fifo, dedup_group, retention, max_receive, dlq_name,
			attributes, tags, created_at, last_modified) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
			ON CONFLICT (name) DO NOTHING`,
			q.Name, c.fifo, c.dedupGroup, c.retention, c.maxReceive, c.dlqName, c.json, tagJSON, now, lastMod)
		created = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return drivers.CreateQueueResult{}, err
	}
	stored, err := d.GetQueue(ctx, drivers.GetQueueRequest{Name: q.Name})
	if err != nil {
		return drivers.CreateQueueResult{}, err
	}
	return drivers.CreateQueueResult{Queue: stored, Existed: !created}, nil
}

// GetQueue returns one queue or KindNotFound.
func (d *Driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	q, err := scanQueue(d.pool.QueryRow(ctx, `SELECT `+queueColumns+` FROM queues WHERE name = $1`, req.Name))
	if errors.Is(err, pgx.ErrNoRows) {
		return q, notFound(req.Name)
	}
	if err != nil {
		return q, mapErr(ctx, err, "get queue "+req.Name)
	}
	return q, nil
}

func notFound(name string) error {
	return drivers.Errorf(drivers.KindNotFound, "queue %s does not exist", name)
}

// ListQueues pages through queues in byte order of their names.
func (d *Driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	limit := int64(-1)
	if req.Limit > 0 {
		limit = int64(req.Limit) + 1 // one more says whether another page follows
	}
	rows, err := d.pool.Query(ctx, `SELECT `+queueColumns+` FROM queues
		WHERE starts_with(name, $1) AND name > $2 ORDER BY name
		LIMIT CASE WHEN $3::bigint < 0 THEN NULL ELSE $3::bigint END`, req.Prefix, req.After, limit)
	if err != nil {
		return drivers.ListQueuesResult{}, mapErr(ctx, err, "list queues")
	}
	defer rows.Close()
	var res drivers.ListQueuesResult
	for rows.Next() {
		q, err := scanQueue(rows)
		if err != nil {
			return drivers.ListQueuesResult{}, mapErr(ctx, err, "list queues")
		}
		res.Queues = append(res.Queues, q)
	}
	if err := rows.Err(); err != nil {
		return drivers.ListQueuesResult{}, mapErr(ctx, err, "list queues")
	}
	if req.Limit > 0 && len(res.Queues) > req.Limit {
		res.Queues, res.More = res.Queues[:req.Limit], true
	}
	return res, nil
}

// SetQueueAttributes replaces the attributes and the columns derived from them.
func (d *Driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	c, err := columnsOf(req.Name, req.Attributes)
	if err != nil {
		return err
	}
	// A new retention period moves the moments FIFO heads expire, which fifo_groups'
	// ready_at takes into account: make the queue's groups ready, claims correct them.
	var updated int64
	err = d.pool.QueryRow(ctx, `WITH old AS (SELECT id, retention FROM queues WHERE name = $1 FOR UPDATE),
		up AS (UPDATE queues SET fifo = $2, dedup_group = $3, retention = $4, max_receive = $5,
			dlq_name = $6, attributes = $7, last_modified = $8 WHERE name = $1 RETURNING id),
		gl AS (SELECT g.group_id FROM fifo_groups g, old WHERE g.queue_id = old.id AND old.retention <> $4
			ORDER BY g.group_id COLLATE "C" FOR UPDATE OF g),
		gu AS (UPDATE fifo_groups g SET ready_at = least(g.ready_at, $8) FROM old
			WHERE g.queue_id = old.id AND g.group_id IN (SELECT group_id FROM gl) RETURNING 1)
		SELECT count(*) FROM up`,
		req.Name, c.fifo, c.dedupGroup, c.retention, c.maxReceive, c.dlqName, c.json, req.Now).Scan(&updated)
	if err != nil {
		return mapErr(ctx, err, "set attributes of "+req.Name)
	}
	if updated == 0 {
		return notFound(req.Name)
	}
	return nil
}

// UpdateQueueTags merges Set and removes Remove in one statement.
func (d *Driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	set := req.Set
	if set == nil {
		set = map[string]string{}
	}
	setJSON, err := json.Marshal(set)
	if err != nil {
		return drivers.Wrap(drivers.KindInternal, err, "encode tags")
	}
	remove := req.Remove
	if remove == nil {
		remove = []string{}
	}
	tag, err := d.pool.Exec(ctx, `UPDATE queues SET tags = (tags - $3::text[]) || $2::jsonb WHERE name = $1`,
		req.Name, setJSON, remove)
	if err != nil {
		return mapErr(ctx, err, "tag queue "+req.Name)
	}
	if tag.RowsAffected() == 0 {
		return notFound(req.Name)
	}
	return nil
}

// DeleteQueue removes the queue row and everything stored under it in one transaction.
func (d *Driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	d.fair.set(req.Name, false)
	return d.inTx(ctx, "delete queue "+req.Name, func(tx pgx.Tx) error {
		var id int32
		err := tx.QueryRow(ctx, `DELETE FROM queues WHERE name = $1 RETURNING id`, req.Name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(req.Name)
		}
		if err != nil {
			return err
		}
		for _, table := range []string{"messages", "dedup", "receive_attempts", "fifo_groups", "move_tasks", "fair_time"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE queue_id = $1`, id); err != nil {
				return err
			}
		}
		// A zero Now records a deletion at year 1, which blocks nothing.
		_, err = tx.Exec(ctx, `INSERT INTO deleted_queues (name, deleted_at) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET deleted_at = greatest(deleted_queues.deleted_at, excluded.deleted_at)`, req.Name, req.Now)
		return err
	})
}

// PurgeQueue deletes the messages sent up to req.Now and the queue's deduplication records,
// at most once per 60 seconds.
func (d *Driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	return d.inTx(ctx, "purge queue "+req.Name, func(tx pgx.Tx) error {
		var id int32
		var last *time.Time
		err := tx.QueryRow(ctx, `SELECT id, last_purge FROM queues WHERE name = $1 FOR UPDATE`, req.Name).Scan(&id, &last)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(req.Name)
		}
		if err != nil {
			return err
		}
		var lastPurge time.Time
		if last != nil {
			lastPurge = *last
		}
		if err := sqsrule.CheckPurge(req.Name, lastPurge, req.Now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE queues SET last_purge = $2 WHERE id = $1`, id, req.Now); err != nil {
			return err
		}
		// SQS forgets deduplication ids at a purge. First, before any group row is locked:
		// a FIFO send writes its dedup row before its group's.
		if _, err := tx.Exec(ctx, `DELETE FROM dedup WHERE queue_id = $1`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE queue_id = $1 AND enqueued_at <= $2`, id, req.Now); err != nil {
			return err
		}
		// Purged in-flight messages no longer block their FIFO groups; claims correct the
		// early ready_at (and drop the rows of emptied groups). Group order: see sendGroupsSQL.
		_, err = tx.Exec(ctx, `UPDATE fifo_groups g SET ready_at = least(g.ready_at, $2) FROM (
			SELECT group_id FROM fifo_groups WHERE queue_id = $1 ORDER BY group_id COLLATE "C" FOR UPDATE) l
			WHERE g.queue_id = $1 AND g.group_id = l.group_id`, id, req.Now)
		return err
	})
}

// QueueStats counts messages by state, leaving out expired messages the sweep has not
// deleted yet, and finds the oldest one's enqueue time (its send time; a FIFO
// dead-letter queue's move time) in the same scan. The counts are exact at the
// statement's snapshot.
func (d *Driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	var s drivers.QueueStats
	var oldest *time.Time
	err := d.pool.QueryRow(ctx, `SELECT
			count(m.id) FILTER (WHERE m.visible_at <= $2),
			count(m.id) FILTER (WHERE m.visible_at > $2 AND m.receipt IS NOT NULL),
			count(m.id) FILTER (WHERE m.visible_at > $2 AND m.receipt IS NULL),
			min(m.enqueued_at)
		FROM queues q LEFT JOIN messages m ON m.queue_id = q.id
			AND m.enqueued_at > $2::timestamptz - make_interval(secs => q.retention)
		WHERE q.name = $1 GROUP BY q.id`,
		req.Name, req.Now).Scan(&s.Visible, &s.NotVisible, &s.Delayed, &oldest)
	if oldest != nil {
		s.OldestSentAt = *oldest
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return s, notFound(req.Name)
	}
	if err != nil || !req.Groups || isFIFO(req.Name) {
		return s, mapErr(ctx, err, "count messages of "+req.Name)
	}
	var groups int64
	err = d.pool.QueryRow(ctx, fairStatsSQL, req.Name, req.Now).Scan(&groups, &s.NoisyGroups)
	s.QuietGroups = groups - s.NoisyGroups
	return s, mapErr(ctx, err, "count message groups of "+req.Name)
}

// inTx runs f in a transaction and commits. Errors f returns that are already
// *drivers.Error pass through; native ones are mapped.
func (d *Driver) inTx(ctx context.Context, what string, f func(pgx.Tx) error) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return mapErr(ctx, err, what)
	}
	defer tx.Rollback(context.Background())
	if err := f(tx); err != nil {
		return mapErr(ctx, err, what)
	}
	return mapErr(ctx, tx.Commit(ctx), what)
}

func itoa(i int) string { return strconv.Itoa(i) }
