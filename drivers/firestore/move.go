package firestore

import (
	"context"
	"sort"
	"time"

	fs "cloud.google.com/go/firestore"
	"github.com/google/uuid"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
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
	moved    int // messages added so far
}

// full says the transaction moved as many chunk bytes as one commit should carry.
func (mv *mover) full() bool { return mv.bytes >= moveBudget }

// redriveMover returns the mover to q's dead-letter queue (sqsrule.RedriveTarget), or
// nil when q has none or it no longer exists.
func (d *Driver) redriveMover(ctx context.Context, tx *fs.Transaction, q *queue, now int64) (*mover, error) {
	name, maxCount, ok := sqsrule.RedriveTarget(q.doc.Name, q.attrs.RedrivePolicy)
	if !ok {
		return nil, nil
	}
	dlq, err := d.loadQueue(ctx, tx, name)
	if drivers.KindOf(err) == drivers.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &mover{d: d, src: q, dst: dlq, now: now, redrive: true, maxCount: maxCount, groups: map[string]*groupDoc{}}, nil
}

// add moves m (at ref) to the destination. A redrive keeps the message and its delivery
// history and records the source, as SQS does; its enqueue time is
// sqsrule.DLQEnqueueTime, and a FIFO DLQ takes the MessageID as deduplication id. A move task's
// message is new: new MessageID, sent and enqueued now, fresh delivery state.
func (mv *mover) add(tx *fs.Transaction, ref *fs.DocumentRef, m *msgDoc) error {
	mv.moved++
	n := *m
	n.Vis, n.Gen, n.Claimed, n.Received = mv.now, 0, false, 0
	if mv.redrive {
		n.DLS = mv.src.doc.Name
		n.Enq = sqsrule.DLQEnqueueTime(mv.dst.doc.FIFO, m.Enq, mv.now)
		if mv.dst.doc.FIFO {
			n.Dedup = m.MID
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
// transaction limits). Candidates are found outside the transaction (scan), which reads
// past messages that cannot move however many come first; the transaction reads each
// again and moves those still visible. A step of a move task (req.Task) checks the
// task and adds what moved to its count in that transaction.
func (d *Driver) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 50)
	now := toNanos(req.Now)
	what := "move from " + req.Source
	scanned, err := d.loadQueue(ctx, nil, req.Source)
	if err != nil {
		return drivers.MoveMessagesResult{}, classify(ctx, err, what)
	}
	if req.Destination != "" {
		if _, err := d.loadQueue(ctx, nil, req.Destination); err != nil {
			return drivers.MoveMessagesResult{}, classify(ctx, err, what)
		}
	}
	cands, more, err := d.moveCandidates(ctx, scanned, req.Destination, now, limit)
	if err != nil {
		return drivers.MoveMessagesResult{}, classify(ctx, err, what)
	}
	if len(cands) == 0 && req.Task == nil {
		return drivers.MoveMessagesResult{}, nil
	}
	var res drivers.MoveMessagesResult
	err = d.runTx(ctx, what, func(ctx context.Context, tx *fs.Transaction) error {
		res = drivers.MoveMessagesResult{}
		var task *taskStep
		if req.Task != nil {
			var err error
			if task, err = d.readTaskStep(tx, req.Task); err != nil {
				return err
			}
		}
		src, err := d.loadQueue(ctx, tx, req.Source)
		if err != nil {
			return err
		}
		if task != nil && task.doc.QID != src.doc.QID {
			return drivers.Errorf(drivers.KindFailedPrecondition, "move task %s: its source queue %s was deleted", req.Task.Handle, req.Source)
		}
		var fixed *queue
		if req.Destination != "" {
			if fixed, err = d.loadQueue(ctx, tx, req.Destination); err != nil {
				return err
			}
		}
		var w writes
		if src.doc.QID == scanned.doc.QID && src.doc.MI == scanned.doc.MI {
			if res, err = d.moveIn(ctx, tx, src, fixed, cands, now, limit, &w); err != nil {
				return err
			}
			res.More = res.More || more
		} else {
			res.More = true // purged or created again since the scan: the next call scans again
		}
		if task != nil {
			task.doc.Moved += int64(res.Moved)
			task.doc.Lease = toNanos(req.Task.LeaseUntil)
			w.set(task.ref, task.doc)
		}
		return w.apply(tx)
	})
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	return res, nil
}

// moveCandidates reads src's visible, unexpired messages outside any transaction, in
// visibility order, a page at a time, and returns the first limit+1 that can move: to
// dst, or (dst empty) back to their DeadLetterSource when that queue exists. Messages
// that cannot move are read past, so they never hide movable ones behind them. more
// says that movable messages remain past the limit.
func (d *Driver) moveCandidates(ctx context.Context, src *queue, dst string, now int64, limit int) ([]*fs.DocumentRef, bool, error) {
	// The order is the one Firestore gives the query anyway (vis, then the other
	// inequality field, then the document name), spelled out for the page cursor.
	q := d.messages(&src.doc).Where("sh", "in", allShards(src.doc.Shards)).
		Where("vis", "<=", now).Where("enq", ">", src.retentionCutoff(now)).
		OrderBy("vis", fs.Asc).OrderBy("enq", fs.Asc).OrderBy(fs.DocumentID, fs.Asc).
		Select("vis", "enq", "dls")
	exists := map[string]bool{} // DeadLetterSource queue -> it exists
	var cands []*fs.DocumentRef
	var last *fs.DocumentSnapshot
	for page := 2*limit + 1; ; page = min(2*page, maxMoveScanPage) {
		pq := q.Limit(page)
		if last != nil {
			pq = pq.StartAfter(last)
		}
		snaps, err := pq.Documents(ctx).GetAll()
		if err != nil {
			return nil, false, err
		}
		for _, s := range snaps {
			if dst == "" {
				v, _ := s.DataAt("dls")
				dls, _ := v.(string)
				if dls == "" {
					continue // it was not dead-lettered: nowhere to go back to
				}
				ok, seen := exists[dls]
				if !seen {
					_, err := d.loadQueue(ctx, nil, dls)
					if err != nil && drivers.KindOf(err) != drivers.KindNotFound {
						return nil, false, err
					}
					ok = err == nil
					exists[dls] = ok
				}
				if !ok {
					continue // its source queue is gone: it stays
				}
			}
			if len(cands) == limit {
				return cands, true, nil
			}
			cands = append(cands, s.Ref)
		}
		if len(snaps) < page {
			return cands, false, nil
		}
		last = snaps[len(snaps)-1]
	}
}

// maxMoveScanPage bounds a page of moveCandidates' scan; pages double up to it.
const maxMoveScanPage = 400

// moveIn moves the candidates that are still visible and unexpired, up to limit and
// moveBudget chunk bytes, inside tx; the writes go to w. Everything is read before w is
// applied, as a transaction requires.
func (d *Driver) moveIn(ctx context.Context, tx *fs.Transaction, src, fixed *queue, cands []*fs.DocumentRef, now int64, limit int, w *writes) (drivers.MoveMessagesResult, error) {
	var res drivers.MoveMessagesResult
	snaps, err := getAll(tx, cands)
	if err != nil {
		return res, err
	}
	type found struct {
		ref *fs.DocumentRef
		m   *msgDoc
	}
	var msgs []found
	cutoff := src.retentionCutoff(now)
	for _, s := range snaps {
		if !s.Exists() {
			continue // deleted (or moved by another call) since the scan
		}
		m, err := readMsg(s)
		if err != nil {
			return res, err
		}
		if m.Vis > now || m.Enq <= cutoff {
			continue // received or expired since the scan
		}
		msgs = append(msgs, found{s.Ref, m})
	}
	if src.doc.FIFO {
		// In sequence order, so a group's messages keep their order in the destination.
		sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].m.Seq < msgs[j].m.Seq })
	}
	movers := map[string]*mover{}
	dests := map[string]*queue{} // DeadLetterSource -> its queue, nil when gone
	for _, f := range msgs {
		dst := fixed
		if dst == nil {
			if f.m.DLS == "" {
				continue
			}
			var ok bool
			if dst, ok = dests[f.m.DLS]; !ok {
				if dst, err = d.loadQueue(ctx, tx, f.m.DLS); drivers.KindOf(err) == drivers.KindNotFound {
					dst = nil
				} else if err != nil {
					return res, err
				}
				dests[f.m.DLS] = dst
			}
			if dst == nil {
				continue // its source queue was deleted since the scan
			}
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
		if err := mv.add(tx, f.ref, f.m); err != nil {
			return res, err
		}
		res.Moved++
	}
	for _, mv := range movers {
		mv.flush(w)
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
