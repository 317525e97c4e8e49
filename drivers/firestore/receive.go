package firestore

import (
	"context"
	"time"

	fs "cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// maxClaimRounds bounds how often one receive looks for candidates again when other
// receivers took the ones it found, or redrive moved them away.
const maxClaimRounds = 6

func (d *Driver) toMessage(q *queue, ref *fs.DocumentRef, m *msgDoc) drivers.Message {
	out := drivers.Message{MessageID: m.MID, Body: m.Body, Attributes: fromAttrDocs(m.Attrs), SystemAttributes: fromAttrDocs(m.Sys),
		SenderID: m.Sender, SentAt: fromNanos(m.Sent), FirstReceivedAt: fromNanos(m.First), ReceiveCount: int32(m.RC),
		MessageGroupID: m.Group, MessageDeduplicationID: m.Dedup, SequenceNumber: sqsrule.SequenceNumber(m.Seq), DeadLetterSource: m.DLS}
	if m.Gen > 0 {
		out.ReceiptHandle = d.encodeHandle(receipt{qid: q.doc.QID, mi: q.doc.MI, doc: ref.ID, gen: m.Gen})
	}
	return out
}

func readMsg(s *fs.DocumentSnapshot) (*msgDoc, error) {
	m := &msgDoc{}
	if err := s.DataTo(m); err != nil {
		return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: message document "+s.Ref.Path)
	}
	return m, nil
}

// ReceiveMessages finds candidates with a query outside any transaction, then claims
// them in a transaction that reads each chosen document again and writes its new
// visibility deadline and claim generation; a message another receiver claimed first is
// skipped. See the package doc for FIFO groups and redrive.
func (d *Driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	want := req.MaxMessages
	if want <= 0 {
		want = 1
	}
	now := toNanos(req.Now)
	var out []drivers.Message
	var deadLettered int32
	for round := 0; round < maxClaimRounds && len(out) < want; round++ {
		q, err := d.loadQueue(ctx, nil, req.Name)
		if err != nil {
			return drivers.ReceiveMessagesResult{}, classify(ctx, err, "receive from "+req.Name)
		}
		if round == 0 && q.doc.FIFO && req.ReceiveRequestAttemptID != "" {
			msgs, ok, err := d.replayAttempt(ctx, q, req.ReceiveRequestAttemptID, now)
			if err != nil {
				return drivers.ReceiveMessagesResult{}, classify(ctx, err, "receive from "+req.Name)
			}
			if ok {
				return drivers.ReceiveMessagesResult{Messages: msgs}, nil
			}
		}
		var got []drivers.Message
		var moved int32
		var again bool
		if q.doc.FIFO {
			got, moved, again, err = d.claimFIFO(ctx, q, req, now, want-len(out), round > 0)
		} else {
			got, moved, again, err = d.claimStandard(ctx, q, req, now, want-len(out), round > 0)
		}
		if err != nil {
			return drivers.ReceiveMessagesResult{}, err
		}
		out = append(out, got...)
		deadLettered += moved
		if !again {
			break
		}
		if len(got) == 0 {
			d.retries.Add(1)
			// Others hold these candidates: let them commit before looking again.
			select {
			case <-ctx.Done():
				return drivers.ReceiveMessagesResult{}, ctx.Err()
			case <-time.After(jitter(time.Duration(5<<round) * time.Millisecond)):
			}
		}
	}
	res := drivers.ReceiveMessagesResult{Messages: out, DeadLettered: deadLettered}
	if len(out) < want {
		res.NextVisibleAt = d.nextVisible(ctx, req.Name, now)
	}
	return res, nil
}

// nextVisible is the earliest visibility deadline after now (a hint for the long poll;
// zero when unknown).
func (d *Driver) nextVisible(ctx context.Context, name string, now int64) time.Time {
	q, err := d.loadQueue(ctx, nil, name)
	if err != nil {
		return time.Time{}
	}
	// The same shape as the receive's query, so the same index serves it.
	snaps, err := d.messages(&q.doc).Where("sh", "in", allShards(q.doc.Shards)).Where("vis", ">", now).
		Where("enq", ">", q.retentionCutoff(now)).OrderBy("vis", fs.Asc).Limit(1).Documents(ctx).GetAll()
	if err != nil || len(snaps) == 0 {
		return time.Time{}
	}
	m, err := readMsg(snaps[0])
	if err != nil {
		return time.Time{}
	}
	return fromNanos(m.Vis)
}

// findCandidates queries for up to n documents
// that no other receive of this instance is claiming, and reserves them (the caller
// releases them). spread, set after contention, queries shard by shard from a random
// one and starts at a random place among the documents found, so that receivers of other
// gateways take different ones; rotate does the latter only (FIFO groups, between which
// SQS promises no order).
func (d *Driver) findCandidates(ctx context.Context, shards int64, n int, spread, rotate bool, key func(*fs.DocumentRef) string,
	query func(shards []int64) fs.Query) ([]*fs.DocumentSnapshot, []string, bool, error) {
	limit := min(3*n, 30)
	var refs []*fs.DocumentSnapshot
	// First in order over every shard (oldest first, as SQS tends to deliver); after
	// contention, shard by shard from a random one, so gateways spread out.
	passes := [][]int64{allShards(shards)}
	if spread {
		passes = nil
		start := int64(randInt(int(shards)))
		for i := int64(0); i < shards; i++ {
			passes = append(passes, []int64{(start + i) % shards})
		}
	}
	for _, p := range passes {
		if len(refs) >= limit {
			break
		}
		snaps, err := query(p).Limit(limit - len(refs)).Documents(ctx).GetAll()
		if err != nil {
			return nil, nil, false, err
		}
		refs = append(refs, snaps...)
	}
	if (spread || rotate) && len(refs) > n {
		off := randInt(len(refs) - n + 1)
		refs = append(refs[off:], refs[:off]...)
	}
	keys := make([]string, len(refs))
	for i, r := range refs {
		keys[i] = key(r.Ref)
	}
	got := d.reserved.try(keys)
	mine := map[string]bool{}
	for _, k := range got {
		mine[k] = true
	}
	var out []*fs.DocumentSnapshot
	var kept []string
	for _, r := range refs {
		if k := key(r.Ref); mine[k] && len(out) < n {
			out = append(out, r)
			kept = append(kept, k)
			delete(mine, k)
		}
	}
	var extra []string
	for k := range mine {
		extra = append(extra, k)
	}
	d.reserved.release(extra)
	return out, kept, len(refs) > 0, nil // in query order; getAll reads them in path order
}

// claimStandard claims up to n messages of a standard queue; again says the caller
// should look for more (some candidates were taken by others or moved away).
func (d *Driver) claimStandard(ctx context.Context, q *queue, req drivers.ReceiveMessagesRequest, now int64, n int, spread bool) ([]drivers.Message, int32, bool, error) {
	var moved int32
	cutoff := q.retentionCutoff(now)
	msgs := d.messages(&q.doc)
	found1, keys, found, err := d.findCandidates(ctx, q.doc.Shards, n, spread, false, func(r *fs.DocumentRef) string { return r.Path }, func(s []int64) fs.Query {
		return msgs.Where("sh", "in", s).Where("vis", "<=", now).Where("enq", ">", cutoff).OrderBy("vis", fs.Asc)
	})
	if err != nil {
		return nil, 0, false, classify(ctx, err, "receive from "+req.Name)
	}
	defer d.reserved.release(keys)
	if len(found1) == 0 {
		return nil, 0, found, nil // found: all taken by this instance's other receives
	}
	refs := make([]*fs.DocumentRef, len(found1))
	for i, s := range found1 {
		refs[i] = s.Ref
	}
	var out []drivers.Message
	var again bool
	deadline := now + int64(req.VisibilityTimeout)*int64(time.Second)
	contended, err := d.runClaimTx(ctx, "receive from "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		out, again, moved = nil, false, 0
		cur, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		if cur.doc.QID != q.doc.QID || cur.doc.MI != q.doc.MI {
			return errRetryTx // purged or re-created since the query
		}
		snaps, err := getAll(tx, refs)
		if err != nil {
			return err
		}
		mv, err := d.redriveMover(ctx, tx, cur, now)
		if err != nil {
			return err
		}
		var w writes
		for _, s := range snaps {
			if !s.Exists() {
				again = true
				continue
			}
			m, err := readMsg(s)
			if err != nil {
				return err
			}
			if m.Vis > now || m.Enq <= cutoff {
				again = true // claimed by another receiver meanwhile
				continue
			}
			if mv != nil && sqsrule.RedriveDue(m.RC, mv.maxCount) {
				if !mv.full() {
					if err := mv.add(tx, s.Ref, m); err != nil {
						return err
					}
				}
				again = true
				continue
			}
			claim(&w, s.Ref, m, now, deadline)
			if err := d.fill(txGet(tx), &cur.doc, s.Ref.ID, m); err != nil {
				return err
			}
			out = append(out, d.toMessage(cur, s.Ref, m))
		}
		if mv != nil {
			mv.flush(&w)
			moved = int32(mv.moved)
		}
		return w.apply(tx)
	})
	if err != nil || contended {
		return nil, 0, contended, err
	}
	return out, moved, again, nil
}

// txGet reads documents in tx, in path order.
func txGet(tx *fs.Transaction) func([]*fs.DocumentRef) ([]*fs.DocumentSnapshot, error) {
	return func(refs []*fs.DocumentRef) ([]*fs.DocumentSnapshot, error) { return getAll(tx, refs) }
}

// groupKey is the reservation key of a FIFO group, the same for sends and claims.
func groupKey(queue, groupDocID string) string { return "group:" + queue + "/" + groupDocID }

// claim writes a new delivery of m: a new generation (so older handles go stale), the
// visibility deadline, the receive count and the first-receive time.
func claim(w *writes, ref *fs.DocumentRef, m *msgDoc, now, deadline int64) {
	m.Gen++
	m.RC++
	if m.First == 0 {
		m.First = now
	}
	m.Vis, m.Claimed, m.Received = deadline, true, now
	ups := []fs.Update{{Path: "gen", Value: m.Gen}, {Path: "rc", Value: m.RC}, {Path: "fr", Value: m.First},
		{Path: "vis", Value: m.Vis}, {Path: "cl", Value: true}, {Path: "rcv", Value: now}}
	*w = append(*w, func(tx *fs.Transaction) error { return tx.Update(ref, ups) })
}

// claimFIFO claims up to n messages from FIFO groups whose ready hint has come, in
// ready order (the moment the group's head became visible, or earlier). The transaction
// reads each group document, then the group's messages in sequence order from its head
// up to the first one not visible (so a head that came back is served while later
// messages of its group are still in flight, as the Driver contract asks), and writes
// the group's claim and exact ready time.
func (d *Driver) claimFIFO(ctx context.Context, q *queue, req drivers.ReceiveMessagesRequest, now int64, n int, spread bool) ([]drivers.Message, int32, bool, error) {
	var moved int32
	groups := d.groups(&q.doc)
	cands, keys, found, err := d.findCandidates(ctx, q.doc.Shards, n+2, spread, true, func(r *fs.DocumentRef) string { return groupKey(req.Name, r.ID) }, func(s []int64) fs.Query {
		return groups.Where("sh", "in", s).Where("rd", "<=", now).OrderBy("rd", fs.Asc).OrderBy("ord", fs.Asc)
	})
	if err != nil {
		return nil, 0, false, classify(ctx, err, "receive from "+req.Name)
	}
	defer d.reserved.release(keys)
	if len(cands) == 0 {
		return nil, 0, found, nil // found: all taken by this instance's other receives
	}
	// Each group's messages in sequence order, queried outside the transaction (a query
	// inside one would lock more than the documents it returns); the transaction reads
	// them again. A message sent meanwhile comes after all of them, so the prefix the
	// claim walks is still the group's head.
	refs := make([]*fs.DocumentRef, len(cands))
	heads := map[string][]*fs.DocumentRef{}
	seen := map[string]int64{} // the highest sequence number each query saw
	for i, c := range cands {
		refs[i] = c.Ref
		g, _ := c.DataAt("g")
		id, _ := g.(string)
		// Start from the group's last sequence number as the candidate query read it:
		// the messages query runs after it, so a message that exists later and that
		// it did not return was sent since. (Zero instead would make a drained group
		// look sent to, ready for ever, and drained groups would crowd out live ones.)
		if v, err := c.DataAt("n"); err == nil {
			seen[c.Ref.ID], _ = v.(int64)
		}
		snaps, err := d.messages(&q.doc).Where("grp", "==", id).OrderBy("seq", fs.Asc).Limit(n + 5).Documents(ctx).GetAll()
		if err != nil {
			return nil, 0, false, classify(ctx, err, "receive from "+req.Name)
		}
		for _, s := range snaps {
			heads[c.Ref.ID] = append(heads[c.Ref.ID], s.Ref)
			if v, err := s.DataAt("seq"); err == nil {
				seen[c.Ref.ID] = max(seen[c.Ref.ID], v.(int64))
			}
		}
	}
	cutoff := q.retentionCutoff(now)
	deadline := now + int64(req.VisibilityTimeout)*int64(time.Second)
	var out []drivers.Message
	var again bool
	contended, err := d.runClaimTx(ctx, "receive from "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		out, again, moved = nil, false, 0
		cur, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		if cur.doc.QID != q.doc.QID || cur.doc.MI != q.doc.MI {
			return errRetryTx
		}
		gsnaps, err := getAll(tx, refs)
		if err != nil {
			return err
		}
		mv, err := d.redriveMover(ctx, tx, cur, now)
		if err != nil {
			return err
		}
		var w writes
		var attempt attemptDoc
		for _, gs := range gsnaps {
			if len(out) >= n {
				break
			}
			if !gs.Exists() {
				continue
			}
			g := &groupDoc{}
			if err := gs.DataTo(g); err != nil {
				return err
			}
			if g.Ready > now {
				again = true // another receiver claimed it meanwhile
				continue
			}
			left := n - len(out)
			snaps, err := getAll(tx, heads[gs.Ref.ID])
			if err != nil {
				return err
			}
			claimed := map[string]int64{}
			ready := noReady
		walk:
			for _, s := range snaps {
				if !s.Exists() {
					continue // deleted or moved since the query
				}
				m, err := readMsg(s)
				if err != nil {
					return err
				}
				switch sqsrule.RunNext(m.Enq <= cutoff, m.Vis <= now, len(claimed), left) {
				case sqsrule.RunPass:
					continue // Sweep deletes it
				case sqsrule.RunEnd:
					ready = m.Vis
					if len(claimed) >= left {
						ready = now
					}
					break walk
				}
				if mv != nil && sqsrule.RedriveDue(m.RC, mv.maxCount) {
					if mv.full() {
						ready = now // moved by a later receive; nothing after it may go first
						break
					}
					if err := mv.add(tx, s.Ref, m); err != nil {
						return err
					}
					again = true
					continue
				}
				claim(&w, s.Ref, m, now, deadline)
				if err := d.fill(txGet(tx), &cur.doc, s.Ref.ID, m); err != nil {
					return err
				}
				claimed[s.Ref.ID] = m.Gen
				out = append(out, d.toMessage(cur, s.Ref, m))
				attempt.Docs, attempt.Gens = append(attempt.Docs, s.Ref.ID), append(attempt.Gens, m.Gen)
			}
			if ready == noReady && (len(snaps) == n+5 || g.Last > seen[gs.Ref.ID]) {
				ready = now // more messages than this walk read, or sent since the query
			}
			if len(claimed) > 0 {
				ready = deadline
			} else if ready > now {
				again = true // the group's hint was early: look at the next ones
			}
			g.InFlight, g.Ready = claimed, ready
			w.set(gs.Ref, g)
		}
		if mv != nil {
			mv.flush(&w)
			moved = int32(mv.moved)
		}
		if req.ReceiveRequestAttemptID != "" && len(attempt.Docs) > 0 {
			attempt.Expires = toNanos(sqsrule.AttemptExpiry(req.Now))
			w.set(d.attempts(&cur.doc).Doc(hashID(req.ReceiveRequestAttemptID)), attempt)
		}
		return w.apply(tx)
	})
	if err != nil || contended {
		return nil, 0, contended, err
	}
	return out, moved, again, nil
}

// replayAttempt returns the messages of an earlier receive with the same attempt id if
// it is recent and every message is still in flight under its handle.
func (d *Driver) replayAttempt(ctx context.Context, q *queue, id string, now int64) ([]drivers.Message, bool, error) {
	snap, err := d.attempts(&q.doc).Doc(hashID(id)).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var a attemptDoc
	if err := snap.DataTo(&a); err != nil || !sqsrule.AttemptLive(fromNanos(a.Expires), fromNanos(now)) || len(a.Docs) != len(a.Gens) {
		return nil, false, err
	}
	msgs := d.messages(&q.doc)
	refs := make([]*fs.DocumentRef, len(a.Docs))
	for i, id := range a.Docs {
		refs[i] = msgs.Doc(id)
	}
	snaps, err := d.client.GetAll(ctx, refs)
	if err != nil {
		return nil, false, err
	}
	out := make([]drivers.Message, 0, len(snaps))
	for i, s := range snaps {
		if !s.Exists() {
			return nil, false, nil
		}
		m, err := readMsg(s)
		if err != nil {
			return nil, false, err
		}
		if !sqsrule.AttemptHeld(true, m.Gen == a.Gens[i], fromNanos(m.Vis), fromNanos(now)) {
			return nil, false, nil
		}
		get := func(refs []*fs.DocumentRef) ([]*fs.DocumentSnapshot, error) { return d.client.GetAll(ctx, refs) }
		if err := d.fill(get, &q.doc, s.Ref.ID, m); err != nil {
			return nil, false, err
		}
		out = append(out, d.toMessage(q, s.Ref, m))
	}
	return out, true, nil
}
