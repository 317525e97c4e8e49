package spanner

import (
	"context"
	"math/rand/v2"

	"cloud.google.com/go/spanner"
	"github.com/google/uuid"

	"github.com/anysqs/anysqs/drivers"
)

// movableFilter keeps, in a scan of m without a fixed destination, only messages whose
// DeadLetterSource queue still exists: the others cannot move, and would otherwise fill
// a step's window (and keep More true) however many movable messages lie behind them.
const movableFilter = ` AND EXISTS (SELECT 1 FROM Queues t WHERE t.QueueName = m.DlqSource)`

// moveCandidates is candidates (receive.go) for a move: up to n visible messages
// (standard) or groups (FIFO) of req.Source that can move, read in a snapshot. Without a
// destination a message can move only back to an existing DeadLetterSource queue, and the
// scan passes over those that cannot: their index entries are read, and their rows for
// the DlqSource column, which the index does not store.
func (d *Driver) moveCandidates(ctx context.Context, req drivers.MoveMessagesRequest, n int) ([]msgRow, error) {
	tx, done := d.snapshot(ctx)
	defer done()
	qi, err := d.queueInfo(ctx, tx, req.Source, req.Now)
	if err != nil {
		return nil, err
	}
	filter := ""
	if req.Destination == "" {
		filter = movableFilter
	}
	sql := `SELECT m.Part, m.Seq, m.GroupId FROM Messages@{FORCE_INDEX=MessagesByVisible} m
		WHERE m.QueueName = @q AND m.Shard IN UNNEST(@shards) AND m.VisibleAt <= @now AND m.EnqueuedAt > @cutoff
			AND m.Committed > @purged` + filter + ` LIMIT @n`
	if qi.q.Attributes.FifoQueue {
		// As a FIFO receive's scan: groups by the age of their first visible message,
		// leaving out those with an earlier message hidden.
		sql = fifoGroupScan(filter)
	}
	s64 := make([]int64, shards)
	for i, s := range rand.Perm(shards) {
		s64[i] = int64(s)
	}
	var out []msgRow
	err = tx.Query(ctx, spanner.Statement{SQL: sql, Params: map[string]any{"q": req.Source, "shards": s64, "now": req.Now,
		"cutoff": qi.cutoff, "purged": qi.purged, "n": int64(n)}}).Do(func(r *spanner.Row) error {
		m := msgRow{Queue: req.Source}
		if err := r.Columns(&m.Part, &m.Seq, &m.GroupID); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// MoveMessages moves up to Limit visible messages in one transaction: a read-only scan
// finds candidates, the transaction reads them again and moves those still visible, each
// with a new MessageId and fresh delivery state (and, FIFO, a new sequence number in its
// group there). A step of a move task (req.Task) checks, counts and renews the task in
// that transaction, which runs even when the scan found nothing; every attempt of it
// starts its count afresh, so a retried transaction counts only what it moves.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	cands, err := d.moveCandidates(ctx, req, limit)
	if err != nil {
		return drivers.MoveMessagesResult{}, mapErr(ctx, err, "move messages from "+req.Source)
	}
	if req.Destination != "" {
		tx, done := d.snapshot(ctx)
		_, err := readQueue(ctx, tx, req.Destination)
		done()
		if err != nil {
			return drivers.MoveMessagesResult{}, mapErr(ctx, err, "move messages to "+req.Destination)
		}
	}
	filter := ""
	if req.Destination == "" {
		filter = movableFilter
	}
	var res drivers.MoveMessagesResult
	if len(cands) > 0 || req.Task != nil {
		err = d.rw(ctx, "move messages from "+req.Source, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
			res = drivers.MoveMessagesResult{}
			src, err := d.queueInfo(ctx, tx, req.Source, req.Now)
			if err != nil {
				return err
			}
			var task drivers.MoveTask
			if req.Task != nil {
				if task, err = stepTask(ctx, tx, req.Task); err != nil {
					return err
				}
			}
			targets := map[string]*queueRow{}
			target := func(name string) (*queueRow, error) {
				if t, ok := targets[name]; ok {
					return t, nil
				}
				qr, err := readQueue(ctx, tx, name)
				if drivers.KindOf(err) == drivers.KindNotFound && req.Destination == "" {
					targets[name] = nil
					return nil, nil
				}
				if err != nil {
					return nil, err
				}
				targets[name] = &qr
				return &qr, nil
			}
			var rows []msgRow
			var keys []spanner.KeySet
			if src.q.Attributes.FifoQueue {
				// The scan found groups: take their visible messages in order.
				for _, c := range cands {
					err := tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(messageCols) + ` FROM Messages m
						WHERE QueueName = @q AND Part = @g AND VisibleAt <= @now AND EnqueuedAt > @cutoff AND Committed > @purged` +
						filter + ` ORDER BY Seq LIMIT @n`,
						Params: map[string]any{"q": req.Source, "g": c.Part, "now": req.Now, "cutoff": src.cutoff,
							"purged": src.purged, "n": int64(limit - len(rows))}}).
						Do(func(r *spanner.Row) error {
							m, err := scanMsg(r)
							rows = append(rows, m)
							return err
						})
					if err != nil {
						return err
					}
					if len(rows) >= limit {
						break
					}
				}
			} else {
				for _, c := range cands {
					keys = append(keys, c.key())
				}
				err := tx.Read(ctx, "Messages", spanner.KeySets(keys...), messageCols).Do(func(r *spanner.Row) error {
					m, err := scanMsg(r)
					if err == nil && !m.VisibleAt.After(req.Now) && m.EnqueuedAt.After(src.cutoff) && m.Committed.After(src.purged) {
						rows = append(rows, m)
					}
					return err
				})
				if err != nil {
					return err
				}
			}
			var ms []*spanner.Mutation
			groups := map[[2]string]*group{}
			for _, m := range rows {
				dest := req.Destination
				if dest == "" {
					dest = m.DlqSource.StringVal
				}
				t, err := target(dest)
				if err != nil {
					return err
				}
				if t == nil || dest == "" {
					continue // its source queue is gone: it stays
				}
				ms = append(ms, spanner.Delete("Messages", m.key()))
				mv := m
				mv.Queue, mv.MessageID = dest, uuid.NewString()
				mv.VisibleAt, mv.SentAt, mv.EnqueuedAt = req.Now, req.Now, req.Now
				mv.Token, mv.ReceivedAt, mv.FirstReceivedAt = spanner.NullString{}, spanner.NullTime{}, spanner.NullTime{}
				mv.ReceiveCount, mv.DlqSource = 0, spanner.NullString{}
				mv.Shard = shardOf(mv.MessageID)
				if t.q.Attributes.FifoQueue && m.GroupID.StringVal != "" {
					gk := [2]string{dest, m.GroupID.StringVal}
					g, ok := groups[gk]
					if !ok {
						gr, err := readGroup(ctx, tx, dest, m.GroupID.StringVal)
						if err != nil {
							return err
						}
						g = &gr
						groups[gk] = g
					}
					mv.Part, mv.Seq = m.GroupID.StringVal, g.takeSeq(req.Now)
				} else {
					mv.Part, mv.Seq = mv.MessageID, 0
				}
				ms = append(ms, spanner.Insert("Messages", messageCols, mv.values()))
				res.Moved++
			}
			for gk, g := range groups {
				ms = append(ms, g.mutation(gk[0], gk[1]))
			}
			if req.Task != nil {
				ms = append(ms, spanner.Update("MoveTasks", []string{"Handle", "Moved", "LeaseUntil"},
					[]any{task.Handle, task.Moved + int64(res.Moved), req.Task.LeaseUntil}))
			}
			return tx.BufferWrite(ms)
		})
		if err != nil {
			return drivers.MoveMessagesResult{}, err
		}
	}
	left, err := d.moveCandidates(ctx, req, 1)
	if err != nil {
		return drivers.MoveMessagesResult{}, mapErr(ctx, err, "move messages from "+req.Source)
	}
	res.More = len(left) > 0
	return res, nil
}
