package spanner

import (
	"context"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/anysqs/anysqs/drivers"
)

// parsed is one well-formed handle of a batch with its entry's index.
type parsed struct {
	h   handle
	ord int
}

func (d *Driver) parseAll(queue string, n int, get func(int) string, errs []*drivers.Error) []parsed {
	var out []parsed
	for i := 0; i < n; i++ {
		h, err := openHandle(d.receiptKey, queue, get(i))
		if err != nil {
			errs[i] = err
			continue
		}
		out = append(out, parsed{h: h, ord: i})
	}
	return out
}

// readHandled reads the rows the handles name, by key.
func readHandled(ctx context.Context, tx *spanner.ReadWriteTransaction, queue string, ps []parsed) (map[string]msgRow, error) {
	keys := spanner.KeySets()
	for _, p := range ps {
		keys = spanner.KeySets(keys, p.h.key(queue))
	}
	rows := map[string]msgRow{}
	err := tx.Read(ctx, "Messages", keys, messageCols).Do(func(r *spanner.Row) error {
		m, err := scanMsg(r)
		rows[rowID(m.Part, m.Seq)] = m
		return err
	})
	return rows, err
}

func rowID(part string, seq int64) string { return part + "\x00" + seqString(seq) }

// regroup rewrites the rows of FIFO groups whose in-flight messages changed: BusyUntil
// becomes the latest deadline of the group's messages still in flight, which lie among
// its first BusyTo sequence numbers. changed holds the new deadlines of rows this
// transaction changes (zero: deleted), which its own reads do not see.
func regroup(ctx context.Context, tx *spanner.ReadWriteTransaction, queue string, purged, now time.Time, changed map[string]map[string]time.Time) ([]*spanner.Mutation, error) {
	var ms []*spanner.Mutation
	for gid, rows := range changed {
		g, err := readGroup(ctx, tx, queue, gid)
		if err != nil || !g.exists {
			return nil, err
		}
		busy := time.Time{}
		err = tx.Query(ctx, spanner.Statement{SQL: `SELECT Part, Seq, VisibleAt FROM Messages
			WHERE QueueName = @q AND Part = @g AND Seq <= @to AND Token IS NOT NULL AND VisibleAt > @now AND Committed > @purged`,
			Params: map[string]any{"q": queue, "g": gid, "to": g.busyTo, "now": now, "purged": purged}}).Do(func(r *spanner.Row) error {
			var part string
			var seq int64
			var vis time.Time
			if err := r.Columns(&part, &seq, &vis); err != nil {
				return err
			}
			if v, ok := rows[rowID(part, seq)]; ok {
				vis = v
			}
			if vis.After(busy) {
				busy = vis
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, v := range rows { // rows made in flight again by this change
			if v.After(busy) {
				busy = v
			}
		}
		g.busyUntil = busy
		ms = append(ms, g.mutation(queue, gid))
	}
	return ms, nil
}

// DeleteMessages deletes by receipt handle in one transaction.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	n := len(req.Entries)
	var errs []*drivers.Error
	err := d.rw(ctx, "delete from "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		errs = make([]*drivers.Error, n)
		ps := d.parseAll(req.Name, n, func(i int) string { return req.Entries[i].ReceiptHandle }, errs)
		qr, err := readQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		fifo := qr.q.Attributes.FifoQueue
		rows, err := readHandled(ctx, tx, req.Name, ps)
		if err != nil {
			return err
		}
		var ms []*spanner.Mutation
		changed := map[string]map[string]time.Time{}
		done := map[string]bool{}
		for _, p := range ps {
			id := rowID(p.h.part, p.h.seq)
			m, ok := rows[id]
			current := ok && m.Token.StringVal == p.h.token && (!fifo || m.VisibleAt.After(req.Now))
			if !current {
				if fifo {
					errs[p.ord] = drivers.Errorf(drivers.KindStaleReceiptHandle,
						"receipt handle of queue %s has expired: the message was deleted, received again or its visibility timeout passed", req.Name)
				}
				continue
			}
			if done[id] {
				continue
			}
			done[id] = true
			ms = append(ms, spanner.Delete("Messages", m.key()))
			if fifo {
				if changed[m.Part] == nil {
					changed[m.Part] = map[string]time.Time{}
				}
				changed[m.Part][id] = time.Time{}
			}
		}
		gms, err := regroup(ctx, tx, req.Name, qr.purged, req.Now, changed)
		if err != nil {
			return err
		}
		return tx.BufferWrite(append(ms, gms...))
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return batchResult(n, func(i int) string { return req.Entries[i].EntryID }, errs), nil
}

func batchResult(n int, id func(int) string, errs []*drivers.Error) drivers.BatchResult {
	res := drivers.BatchResult{Entries: make([]drivers.EntryResult, n)}
	for i := range res.Entries {
		res.Entries[i] = drivers.EntryResult{EntryID: id(i), Err: errs[i]}
	}
	return res
}

// maxInvisible is how long after the receive that issued its handle a message may stay
// invisible, as in SQS.
const maxInvisible = 12 * time.Hour

// ChangeVisibility sets deadlines in one transaction; see drivers.Driver for which
// handles apply.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	n := len(req.Entries)
	var errs []*drivers.Error
	err := d.rw(ctx, "change visibility in "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		errs = make([]*drivers.Error, n)
		ps := d.parseAll(req.Name, n, func(i int) string { return req.Entries[i].ReceiptHandle }, errs)
		qr, err := readQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		fifo := qr.q.Attributes.FifoQueue
		rows, err := readHandled(ctx, tx, req.Name, ps)
		if err != nil {
			return err
		}
		var ms []*spanner.Mutation
		changed := map[string]map[string]time.Time{}
		for _, p := range ps {
			id := rowID(p.h.part, p.h.seq)
			m, ok := rows[id]
			// Standard queues take any handle of a message that still exists, as SQS does;
			// FIFO queues only the current handle of an in-flight message.
			switch {
			case !ok || !m.Committed.After(qr.purged):
				errs[p.ord] = drivers.Errorf(drivers.KindStaleReceiptHandle,
					"receipt handle of queue %s names no message: it was deleted", req.Name)
				continue
			case fifo && (m.Token.StringVal != p.h.token || !m.VisibleAt.After(req.Now)):
				errs[p.ord] = drivers.Errorf(drivers.KindStaleReceiptHandle,
					"receipt handle of queue %s has expired: the message was received again or its visibility timeout passed", req.Name)
				continue
			}
			deadline := req.Now.Add(time.Duration(req.Entries[p.ord].VisibilityTimeout) * time.Second)
			if m.ReceivedAt.Valid && deadline.After(m.ReceivedAt.Time.Add(maxInvisible)) {
				errs[p.ord] = drivers.Errorf(drivers.KindInvalidArgument,
					"VisibilityTimeout %d s would keep the message hidden more than 12 hours after it was received",
					req.Entries[p.ord].VisibilityTimeout)
				continue
			}
			m.VisibleAt = deadline
			rows[id] = m
			ms = append(ms, spanner.Update("Messages", []string{"QueueName", "Part", "Seq", "VisibleAt"},
				[]any{req.Name, m.Part, m.Seq, deadline}))
			if fifo {
				if changed[m.Part] == nil {
					changed[m.Part] = map[string]time.Time{}
				}
				if deadline.After(req.Now) {
					changed[m.Part][id] = deadline
				} else {
					changed[m.Part][id] = time.Time{}
				}
			}
		}
		gms, err := regroup(ctx, tx, req.Name, qr.purged, req.Now, changed)
		if err != nil {
			return err
		}
		return tx.BufferWrite(append(ms, gms...))
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return batchResult(n, func(i int) string { return req.Entries[i].EntryID }, errs), nil
}
