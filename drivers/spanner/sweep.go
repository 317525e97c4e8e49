package spanner

import (
	"context"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
)

// groupIdle is how long after its last send an empty FIFO group's row is kept. The row
// holds the group's sequence counter; a group created again numbers from the time in
// microseconds, so the hour covers any clock difference between gateways.
const groupIdle = time.Hour

func (d *Driver) cursor(queue string) string {
	d.groupMu.Lock()
	defer d.groupMu.Unlock()
	return d.groupCursor[queue]
}

func (d *Driver) setCursor(queue, group string) {
	d.groupMu.Lock()
	defer d.groupMu.Unlock()
	if d.groupCursor == nil {
		d.groupCursor = map[string]string{}
	}
	d.groupCursor[queue] = group
}

// Sweep deletes, in one transaction of at most req.Limit rows per kind, expired messages
// (found by the sharded visibility index: a message's deadline is never before its
// enqueue time, so an expired one is found once its deadline has passed too), expired
// deduplication and receive-attempt records, old deletion records, and the rows of FIFO
// groups without messages and without a send for groupIdle, a page of groups per pass.
func (d *Driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 1000
	}
	type q struct {
		name string
		ret  time.Duration
		fifo bool
	}
	var queues []q
	tx, done := d.snapshot(ctx)
	defer done()
	err := tx.Query(ctx, spanner.Statement{SQL: `SELECT QueueName, Attributes FROM Queues`}).Do(func(r *spanner.Row) error {
		qr := queueRow{}
		var attrs string
		if err := r.Columns(&qr.q.Name, &attrs); err != nil {
			return err
		}
		full, err := scanQueueAttrs(qr.q.Name, attrs)
		queues = append(queues, q{name: qr.q.Name, ret: retention(full), fifo: full.FifoQueue})
		return err
	})
	if err != nil {
		return drivers.SweepResult{}, mapErr(ctx, err, "retention sweep")
	}
	var res drivers.SweepResult
	var keys []spanner.Key
	var tables []string
	budget := limit
	add := func(table string, k spanner.Key) {
		keys = append(keys, k)
		tables = append(tables, table)
	}
	scan := func(sql string, params map[string]any, table string, key func(r *spanner.Row) (spanner.Key, error)) error {
		if budget <= 0 {
			res.More = true
			return nil
		}
		params["n"] = int64(budget + 1)
		n := 0
		err := tx.Query(ctx, spanner.Statement{SQL: sql, Params: params}).Do(func(r *spanner.Row) error {
			n++
			if n > budget {
				res.More = true
				return nil
			}
			k, err := key(r)
			add(table, k)
			return err
		})
		budget -= min(n, budget)
		return err
	}
	msgKey := func(name string) func(r *spanner.Row) (spanner.Key, error) {
		return func(r *spanner.Row) (spanner.Key, error) {
			var part string
			var seq int64
			err := r.Columns(&part, &seq)
			return spanner.Key{name, part, seq}, err
		}
	}
	twoKey := func(name string) func(r *spanner.Row) (spanner.Key, error) {
		return func(r *spanner.Row) (spanner.Key, error) {
			var a, b string
			err := r.Columns(&a, &b)
			return spanner.Key{name, a, b}, err
		}
	}
	for _, qu := range queues {
		cutoff := req.Now.Add(-qu.ret)
		if err := scan(`SELECT Part, Seq FROM Messages@{FORCE_INDEX=MessagesByVisible}
			WHERE QueueName = @q AND VisibleAt <= @cutoff AND EnqueuedAt <= @cutoff LIMIT @n`,
			map[string]any{"q": qu.name, "cutoff": cutoff}, "Messages", msgKey(qu.name)); err != nil {
			return drivers.SweepResult{}, mapErr(ctx, err, "retention sweep")
		}
	}
	res.Deleted = len(keys)
	budget = limit
	for _, qu := range queues {
		if err := scan(`SELECT Scope, DedupId FROM Dedup@{FORCE_INDEX=DedupByExpiry} WHERE QueueName = @q AND ExpiresAt <= @now LIMIT @n`,
			map[string]any{"q": qu.name, "now": req.Now}, "Dedup", twoKey(qu.name)); err != nil {
			return drivers.SweepResult{}, mapErr(ctx, err, "retention sweep")
		}
		if err := scan(`SELECT AttemptId, '' FROM ReceiveAttempts@{FORCE_INDEX=AttemptsByExpiry} WHERE QueueName = @q AND ExpiresAt <= @now LIMIT @n`,
			map[string]any{"q": qu.name, "now": req.Now}, "ReceiveAttempts", func(r *spanner.Row) (spanner.Key, error) {
				var a, b string
				err := r.Columns(&a, &b)
				return spanner.Key{qu.name, a}, err
			}); err != nil {
			return drivers.SweepResult{}, mapErr(ctx, err, "retention sweep")
		}
	}
	if err := scan(`SELECT Name FROM DeletedQueues WHERE DeletedAt <= @before LIMIT @n`,
		map[string]any{"before": req.Now.Add(-drivers.QueueNameReuseDelay)}, "DeletedQueues", func(r *spanner.Row) (spanner.Key, error) {
			var n string
			err := r.Columns(&n)
			return spanner.Key{n}, err
		}); err != nil {
		return drivers.SweepResult{}, mapErr(ctx, err, "retention sweep")
	}
	for _, qu := range queues {
		if !qu.fifo || budget <= 0 {
			continue
		}
		more := res.More
		res.More = false
		if err := scan(`SELECT g.GroupId, '' FROM FifoGroups g
			WHERE g.QueueName = @q AND g.GroupId > @after AND g.NextSeq < @idle AND g.BusyUntil <= @now
				AND NOT EXISTS (SELECT 1 FROM Messages m WHERE m.QueueName = @q AND m.Part = g.GroupId)
			ORDER BY g.GroupId LIMIT @n`,
			map[string]any{"q": qu.name, "after": d.cursor(qu.name), "idle": req.Now.Add(-groupIdle).UnixMicro(), "now": req.Now},
			"FifoGroups", func(r *spanner.Row) (spanner.Key, error) {
				var g, x string
				err := r.Columns(&g, &x)
				d.setCursor(qu.name, g)
				return spanner.Key{qu.name, g}, err
			}); err != nil {
			return drivers.SweepResult{}, mapErr(ctx, err, "retention sweep")
		}
		if !res.More {
			d.setCursor(qu.name, "") // the next pass starts again from the first group
		}
		res.More = res.More || more
	}
	done() // the read-write transaction below takes its own turn
	if len(keys) == 0 {
		return res, nil
	}
	// Blind deletes: a row deleted meanwhile is no error, and an expired message cannot
	// become unexpired; deletion records and dedup records are rewritten with new times,
	// so those are checked again in the transaction.
	err = d.rw(ctx, "retention sweep", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		ms := make([]*spanner.Mutation, 0, len(keys))
		for i, k := range keys {
			switch tables[i] {
			case "FifoGroups":
				// Deleted only if still idle and empty: a send meanwhile wrote the row or a message.
				g, err := readGroup(ctx, tx, k[0].(string), k[1].(string))
				if err != nil {
					return err
				}
				if !g.exists || g.nextSeq >= req.Now.Add(-groupIdle).UnixMicro() {
					continue
				}
				empty := true
				err = tx.Query(ctx, spanner.Statement{SQL: `SELECT 1 FROM Messages WHERE QueueName = @q AND Part = @g LIMIT 1`,
					Params: map[string]any{"q": k[0], "g": k[1]}}).Do(func(*spanner.Row) error { empty = false; return nil })
				if err != nil {
					return err
				}
				if !empty {
					continue
				}
			case "Dedup", "ReceiveAttempts", "DeletedQueues":
				col := map[string]string{"Dedup": "ExpiresAt", "ReceiveAttempts": "ExpiresAt", "DeletedQueues": "DeletedAt"}[tables[i]]
				r, err := tx.ReadRow(ctx, tables[i], k, []string{col})
				if spanner.ErrCode(err) == codes.NotFound {
					continue
				}
				if err != nil {
					return err
				}
				var t time.Time
				if err := r.Columns(&t); err != nil {
					return err
				}
				bound := req.Now
				if tables[i] == "DeletedQueues" {
					bound = req.Now.Add(-drivers.QueueNameReuseDelay)
				}
				if t.After(bound) {
					continue
				}
			}
			ms = append(ms, spanner.Delete(tables[i], k))
		}
		return tx.BufferWrite(ms)
	})
	if err != nil {
		return drivers.SweepResult{}, err
	}
	return res, nil
}
