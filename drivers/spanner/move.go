package spanner

import (
	"context"

	"cloud.google.com/go/spanner"
	"github.com/google/uuid"

	"github.com/anysqs/anysqs/drivers"
)

// MoveMessages moves up to Limit visible messages in one transaction: a read-only scan
// finds candidates, the transaction reads them again and moves those still visible, each
// with a new MessageId and fresh delivery state (and, FIFO, a new sequence number in its
// group there).
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	_, cands, _, err := d.candidates(ctx, req.Source, req.Now, limit)
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
	var res drivers.MoveMessagesResult
	if len(cands) > 0 {
		err = d.rw(ctx, "move messages from "+req.Source, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
			res = drivers.MoveMessagesResult{}
			src, err := d.queueInfo(ctx, tx, req.Source, req.Now)
			if err != nil {
				return err
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
					err := tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(messageCols) + ` FROM Messages
						WHERE QueueName = @q AND Part = @g AND VisibleAt <= @now AND EnqueuedAt > @cutoff AND Committed > @purged
						ORDER BY Seq LIMIT @n`,
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
			return tx.BufferWrite(ms)
		})
		if err != nil {
			return drivers.MoveMessagesResult{}, err
		}
	}
	_, left, _, err := d.candidates(ctx, req.Source, req.Now, 1)
	if err != nil {
		return drivers.MoveMessagesResult{}, mapErr(ctx, err, "move messages from "+req.Source)
	}
	res.More = len(left) > 0
	return res, nil
}
