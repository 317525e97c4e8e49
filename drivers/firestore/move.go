package firestore

import (
	"context"
	"sort"
	"time"

	fs "cloud.google.com/go/firestore"
	"github.com/google/uuid"

	"github.com/anysqs/anysqs/drivers"
)

// mover moves messages into one destination queue inside a transaction: it reads the
// destination's FIFO groups as it goes (reads precede every write, which are buffered)
// and writes each touched group once at the end.
type mover struct {
	d        *Driver
	src, dst *queue
	now      int64
	redrive  bool
	maxCount int32
	groups   map[string]*groupDoc
	w        writes
	bytes    int // chunk bytes moved so far
}

// full says the transaction moved as many chunk bytes as one commit should carry.
func (mv *mover) full() bool { return mv.bytes >= moveBudget }

// redriveMover returns the mover to q's dead-letter queue, or nil when q has none (or
// it no longer exists, in which case messages are delivered as usual).
func (d *Driver) redriveMover(ctx context.Context, tx *fs.Transaction, q *queue, now int64) (*mover, error) {
	rp := q.attrs.RedrivePolicy
	if rp == nil || rp.MaxReceiveCount <= 0 || rp.DeadLetterQueue == "" || rp.DeadLetterQueue == q.doc.Name {
		return nil, nil
	}
	dlq, err := d.loadQueue(ctx, tx, rp.DeadLetterQueue)
	if drivers.KindOf(err) == drivers.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &mover{d: d, src: q, dst: dlq, now: now, redrive: true, maxCount: rp.MaxReceiveCount, groups: map[string]*groupDoc{}}, nil
}

// add moves m (at ref) to the destination. A redrive keeps the message, its delivery
// history and (standard DLQ) its enqueue time, and records the source, as SQS does; a
// FIFO DLQ restarts retention and takes the MessageID as deduplication id. A move task's
// message is new: new MessageID, sent and enqueued now, fresh delivery state.
func (mv *mover) add(tx *fs.Transaction, ref *fs.DocumentRef, m *msgDoc) error {
	n := *m
	n.Vis, n.Gen, n.Claimed, n.Received = mv.now, 0, false, 0
	if mv.redrive {
		n.DLS = mv.src.doc.Name
		if mv.dst.doc.FIFO {
			n.Enq, n.Dedup = mv.now, m.MID
		}
	} else {
		n.MID = uuid.NewString()
		n.Sent, n.Enq, n.RC, n.First, n.DLS = mv.now, mv.now, 0, 0, ""
	}
	n.Seq = 0
	if mv.dst.doc.FIFO {
		g, err := mv.group(tx, n.Group)
		if err != nil {
			return err
		}
		g.Last++
		n.Seq = g.Last
		n.Shard = g.Shard
		if g.Ready == noReady {
			g.Order = time.Now().UnixNano()
		}
		g.Ready = min(g.Ready, n.Vis)
	} else {
		n.Shard = int64(randInt(int(mv.dst.doc.Shards)))
	}
	chunks, err := mv.d.readChunks(txGet(tx), &mv.src.doc, ref.ID, m)
	if err != nil {
		return err
	}
	dst := mv.d.messages(&mv.dst.doc).Doc(messageDocID(n.MID))
	mv.w.create(dst, &n)
	mv.d.writeChunks(&mv.w, &mv.dst.doc, dst.ID, chunks)
	mv.w.delete(ref)
	for _, c := range mv.d.chunkRefs(&mv.src.doc, ref.ID, m.Chunks) {
		mv.w.delete(c)
	}
	mv.bytes += chunkedBytes(chunks)
	return nil
}

func (mv *mover) group(tx *fs.Transaction, id string) (*groupDoc, error) {
	if g, ok := mv.groups[id]; ok {
		return g, nil
	}
	s, err := tx.Get(mv.d.groups(&mv.dst.doc).Doc(hashID(id)))
	g := &groupDoc{Group: id, Shard: shardOf(id, mv.dst.doc.Shards), Ready: noReady}
	switch {
	case err == nil:
		if err := s.DataTo(g); err != nil {
			return nil, err
		}
	case s != nil && !s.Exists():
	default:
		return nil, err
	}
	mv.groups[id] = g
	return g, nil
}

// flush appends the mover's writes to w.
func (mv *mover) flush(w *writes) {
	*w = append(*w, mv.w...)
	for id, g := range mv.groups {
		w.set(mv.d.groups(&mv.dst.doc).Doc(hashID(id)), g)
	}
}

// MoveMessages moves up to req.Limit visible messages out of req.Source in one
// transaction per call (at most 50 messages, so a call stays within Firestore's
// transaction limits).
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 50)
	now := toNanos(req.Now)
	var res drivers.MoveMessagesResult
	err := d.runTx(ctx, "move from "+req.Source, func(ctx context.Context, tx *fs.Transaction) error {
		res = drivers.MoveMessagesResult{}
		src, err := d.loadQueue(ctx, tx, req.Source)
		if err != nil {
			return err
		}
		var fixed *queue
		if req.Destination != "" {
			if fixed, err = d.loadQueue(ctx, tx, req.Destination); err != nil {
				return err
			}
		}
		// Visible, unexpired messages in visibility order (FIFO: then by sequence, so a
		// group's messages keep their order in the destination).
		snaps, err := tx.Documents(d.messages(&src.doc).Where("sh", "in", allShards(src.doc.Shards)).
			Where("vis", "<=", now).Where("enq", ">", src.retentionCutoff(now)).OrderBy("vis", fs.Asc).Limit(2*limit + 1)).GetAll()
		if err != nil {
			return err
		}
		if src.doc.FIFO {
			sort.SliceStable(snaps, func(i, j int) bool {
				a, _ := snaps[i].DataAt("seq")
				b, _ := snaps[j].DataAt("seq")
				x, _ := a.(int64)
				y, _ := b.(int64)
				return x < y
			})
		}
		movers := map[string]*mover{}
		for _, s := range snaps {
			m, err := readMsg(s)
			if err != nil {
				return err
			}
			if m.Vis > now {
				continue
			}
			var dst *queue
			if fixed != nil {
				dst = fixed
			} else if m.DLS != "" {
				if mv, ok := movers[m.DLS]; ok {
					dst = mv.dst
				} else if dst, err = d.loadQueue(ctx, tx, m.DLS); drivers.KindOf(err) == drivers.KindNotFound {
					continue // nowhere to go back to
				} else if err != nil {
					return err
				}
			} else {
				continue
			}
			if res.Moved == limit || movedBytes(movers) >= moveBudget {
				res.More = true
				break
			}
			mv, ok := movers[dst.doc.Name]
			if !ok {
				mv = &mover{d: d, src: src, dst: dst, now: now, groups: map[string]*groupDoc{}}
				movers[dst.doc.Name] = mv
			}
			if err := mv.add(tx, s.Ref, m); err != nil {
				return err
			}
			res.Moved++
		}
		var w writes
		for _, mv := range movers {
			mv.flush(&w)
		}
		return w.apply(tx)
	})
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	return res, nil
}

func movedBytes(movers map[string]*mover) int {
	n := 0
	for _, mv := range movers {
		n += mv.bytes
	}
	return n
}
