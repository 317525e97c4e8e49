package spanner

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"time"

	"cloud.google.com/go/spanner"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// candidatesPerMessage is how many candidates the read-only scan finds per message
// wanted: concurrent receivers each claim a random choice of them, so they rarely want
// the same row and abort one another.
const candidatesPerMessage = 4

// fifoScan bounds the visible index entries a FIFO receive's scan reads to choose groups:
// beyond that many visible messages, the oldest groups among them are served first.
const fifoScan = 1000

// queueInfo is what a claim needs to know of its queue and its dead-letter queue.
type queueInfo struct {
	q        drivers.Queue
	cutoff   time.Time // messages enqueued at or before it have expired
	purged   time.Time // messages committed at or before it were purged
	dlq      string    // empty without a redrive target (sqsrule.RedriveTarget) that exists
	dlqFIFO  bool
	dlqByGrp bool
	maxRecv  int32
}

func (d *Driver) queueInfo(ctx context.Context, tx reader, name string, now time.Time) (queueInfo, error) {
	qr, err := readQueue(ctx, tx, name)
	if err != nil {
		return queueInfo{}, err
	}
	qi := queueInfo{q: qr.q, cutoff: now.Add(-retention(qr.q.Attributes)), purged: qr.purged}
	if dlq, maxCount, ok := sqsrule.RedriveTarget(qr.q.Name, qr.q.Attributes.RedrivePolicy); ok {
		dq, err := readQueue(ctx, tx, dlq)
		switch {
		case err == nil:
			qi.dlq, qi.dlqFIFO, qi.maxRecv = dlq, dq.q.Attributes.FifoQueue, maxCount
			qi.dlqByGrp = dq.q.Attributes.DeduplicationScope == "messageGroup"
		case drivers.KindOf(err) != drivers.KindNotFound:
			return queueInfo{}, err
		}
	}
	return qi, nil
}

func (m *msgRow) message(key []byte, queue string, fifo bool) (drivers.Message, error) {
	out := drivers.Message{
		MessageID:        m.MessageID,
		ReceiptHandle:    handle{queueHash: queueHash(queue), part: m.Part, seq: m.Seq, token: m.Token.StringVal}.seal(key),
		Body:             m.Body,
		SenderID:         m.SenderID.StringVal,
		SentAt:           m.SentAt,
		FirstReceivedAt:  m.FirstReceivedAt.Time,
		ReceiveCount:     int32(m.ReceiveCount),
		MessageGroupID:   m.GroupID.StringVal,
		DeadLetterSource: m.DlqSource.StringVal,
	}
	if fifo {
		out.MessageDeduplicationID = m.DedupID.StringVal
		out.SequenceNumber = seqString(m.Seq)
	}
	var err error
	if out.Attributes, err = decodeAttrs(m.Attrs); err != nil {
		return out, err
	}
	out.SystemAttributes, err = decodeAttrs(m.SysAttrs)
	return out, err
}

// claimState collects one claim transaction's writes and results; reset on every
// attempt of the transaction.
type claimState struct {
	// next, when nextKnown, is the queue's next-visible time, read by a scan that found
	// no candidates.
	next      time.Time
	nextKnown bool
	msgs      []drivers.Message
	claimed   []claimedKey
	moved     int
	ms        []*spanner.Mutation
	dlqGrps   map[string]*group
}

type claimedKey struct {
	Part  string `json:"p"`
	Seq   int64  `json:"s"`
	Token string `json:"t"`
}

// claimOne writes m's claim, or its move to the dead-letter queue when it has been
// received maxReceiveCount times already.
func (d *Driver) claimOne(ctx context.Context, tx *spanner.ReadWriteTransaction, qi queueInfo, st *claimState, m msgRow, now, deadline time.Time) error {
	if qi.dlq != "" && sqsrule.RedriveDue(m.ReceiveCount, qi.maxRecv) {
		st.ms = append(st.ms, spanner.Delete("Messages", m.key()))
		mv := m
		mv.Queue, mv.VisibleAt, mv.Token, mv.ReceivedAt = qi.dlq, now, spanner.NullString{}, spanner.NullTime{}
		mv.DlqSource = nullString(qi.q.Name)
		mv.EnqueuedAt = sqsrule.DLQEnqueueTime(qi.dlqFIFO, m.EnqueuedAt, now)
		if qi.dlqFIFO {
			// As in SQS, the message's deduplication id becomes its MessageId.
			if st.dlqGrps == nil {
				st.dlqGrps = map[string]*group{}
			}
			g, ok := st.dlqGrps[m.GroupID.StringVal]
			if !ok {
				gr, err := readGroup(ctx, tx, qi.dlq, m.GroupID.StringVal)
				if err != nil {
					return err
				}
				g = &gr
				st.dlqGrps[m.GroupID.StringVal] = g
			}
			mv.Part, mv.Seq = m.GroupID.StringVal, g.takeSeq(now)
			mv.DedupID = nullString(m.MessageID)
		}
		st.ms = append(st.ms, spanner.Insert("Messages", messageCols, mv.values()))
		st.moved++
		return nil
	}
	m.Token = nullString(uuid.NewString())
	m.VisibleAt, m.ReceivedAt = deadline, spanner.NullTime{Time: now, Valid: true}
	m.ReceiveCount++
	if !m.FirstReceivedAt.Valid {
		m.FirstReceivedAt = spanner.NullTime{Time: now, Valid: true}
	}
	st.ms = append(st.ms, spanner.Update("Messages", []string{"QueueName", "Part", "Seq", "Token", "VisibleAt", "ReceivedAt", "ReceiveCount", "FirstReceivedAt"},
		[]any{m.Queue, m.Part, m.Seq, m.Token, m.VisibleAt, m.ReceivedAt, m.ReceiveCount, m.FirstReceivedAt}))
	msg, err := m.message(d.receiptKey, qi.q.Name, qi.q.Attributes.FifoQueue)
	if err != nil {
		return err
	}
	st.msgs = append(st.msgs, msg)
	st.claimed = append(st.claimed, claimedKey{Part: m.Part, Seq: m.Seq, Token: m.Token.StringVal})
	return nil
}

func (st *claimState) finish(tx *spanner.ReadWriteTransaction, dlq string) error {
	for id, g := range st.dlqGrps {
		st.ms = append(st.ms, g.mutation(dlq, id))
	}
	return tx.BufferWrite(st.ms)
}

// ReceiveMessages claims up to MaxMessages messages: a strong read-only scan finds
// candidates, then a read-write transaction reads the chosen ones again, claims those
// still visible (or moves them to the dead-letter queue) and commits. Rounds repeat while
// a round lost candidates to other receivers or moved messages, and more are wanted.
func (d *Driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	want := min(max(req.MaxMessages, 1), 10)
	fifo := isFIFO(req.Name)
	if fifo && req.ReceiveRequestAttemptID != "" {
		res, ok, err := d.replay(ctx, req)
		if err != nil || ok {
			return res, err
		}
	}
	deadline := req.Now.Add(time.Duration(req.VisibilityTimeout) * time.Second)
	var res drivers.ReceiveMessagesResult
	var attempt []claimedKey
	var next time.Time
	nextKnown := false
	for round := 0; round < 4 && len(res.Messages) < want; round++ {
		var st claimState
		var more bool
		var err error
		if fifo {
			st, more, err = d.claimFIFO(ctx, req, want-len(res.Messages), deadline, attempt)
		} else {
			st, more, err = d.claimStandard(ctx, req, want-len(res.Messages), deadline)
		}
		if err != nil {
			return drivers.ReceiveMessagesResult{}, mapErr(ctx, err, "receive from "+req.Name)
		}
		res.Messages = append(res.Messages, st.msgs...)
		res.DeadLettered += int32(st.moved)
		attempt = append(attempt, st.claimed...)
		next, nextKnown = st.next, st.nextKnown
		if !more {
			break
		}
	}
	if len(res.Messages) < want {
		if !nextKnown {
			var err error
			if next, err = d.nextVisible(ctx, req); err != nil {
				return drivers.ReceiveMessagesResult{}, mapErr(ctx, err, "receive from "+req.Name)
			}
		}
		if len(res.Messages) > 0 && (next.IsZero() || deadline.Before(next)) {
			next = deadline
		}
		res.NextVisibleAt = next
	}
	return res, nil
}

// candidates is the read-only scan by the sharded visibility index: for a standard
// queue up to n visible, unexpired messages' keys in random order, for a FIFO queue up
// to n groups with such messages and no earlier message hidden, in order of the moment
// their first one became visible.
func (d *Driver) candidates(ctx context.Context, name string, now time.Time, n int) (queueInfo, []msgRow, time.Time, error) {
	tx, done := d.snapshot(ctx)
	defer done()
	qi, err := d.queueInfo(ctx, tx, name, now)
	if err != nil {
		return qi, nil, time.Time{}, err
	}
	sql := `SELECT Part, Seq, GroupId FROM Messages@{FORCE_INDEX=MessagesByVisible}
		WHERE QueueName = @q AND Shard IN UNNEST(@shards) AND VisibleAt <= @now AND EnqueuedAt > @cutoff
			AND Committed > @purged LIMIT @n`
	fifo := qi.q.Attributes.FifoQueue
	if fifo {
		// Groups in order of the moment their first visible message (among the first
		// fifoScan visible index entries, which bounds the scan) became visible, as the
		// Driver contract asks. A group is left out when an earlier message of it is
		// hidden (in flight or delayed): its row's BusyUntil says at once that nothing is
		// in flight, else a short read of the group's messages before that one decides.
		// The claim checks again.
		sql = fifoGroupScan("")
	}
	sh := rand.Perm(shards)
	s64 := make([]int64, len(sh))
	for i, s := range sh {
		s64[i] = int64(s)
	}
	var out []msgRow
	err = tx.Query(ctx, spanner.Statement{SQL: sql, Params: map[string]any{"q": name, "shards": s64, "now": now,
		"cutoff": qi.cutoff, "purged": qi.purged, "n": int64(n)}}).Do(func(r *spanner.Row) error {
		m := msgRow{Queue: name}
		if err := r.Columns(&m.Part, &m.Seq, &m.GroupID); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return qi, nil, time.Time{}, err
	}
	if len(out) == 0 {
		// Nothing to claim: the long poll wants the next-visible time, from this snapshot.
		next, err := nextVisibleIn(ctx, tx, name, now, qi)
		return qi, nil, next, err
	}
	if !fifo {
		rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return qi, out, time.Time{}, nil
}

// claimStandard claims up to want of the scan's candidates. more says a further round
// may find messages: candidates were lost to other receivers, or moved.
func (d *Driver) claimStandard(ctx context.Context, req drivers.ReceiveMessagesRequest, want int, deadline time.Time) (claimState, bool, error) {
	_, cands, next, err := d.candidates(ctx, req.Name, req.Now, want*candidatesPerMessage)
	if err != nil || len(cands) == 0 {
		return claimState{next: next, nextKnown: err == nil}, false, err
	}
	pick := cands[:min(want, len(cands))]
	keys := spanner.KeySets()
	for _, c := range pick {
		keys = spanner.KeySets(keys, c.key())
	}
	var st claimState
	err = d.rw(ctx, "receive from "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		st = claimState{}
		qi, err := d.queueInfo(ctx, tx, req.Name, req.Now)
		if err != nil {
			return err
		}
		err = tx.Read(ctx, "Messages", keys, messageCols).Do(func(r *spanner.Row) error {
			m, err := scanMsg(r)
			if err != nil {
				return err
			}
			if m.VisibleAt.After(req.Now) || !m.EnqueuedAt.After(qi.cutoff) || !m.Committed.After(qi.purged) {
				return nil // claimed, or changed, since the scan
			}
			return d.claimOne(ctx, tx, qi, &st, m, req.Now, deadline)
		})
		if err != nil {
			return err
		}
		return st.finish(tx, qi.dlq)
	})
	if err != nil {
		return claimState{}, false, err
	}
	return st, len(st.msgs) < len(pick) || st.moved > 0, nil
}

// claimFIFO claims from the groups the scan found, in the scan's order: per group, in
// the read-write transaction, the group's first unexpired messages are claimed in order
// while they are visible, so a group whose head is hidden gives nothing and one whose
// head came back gives it while later messages stay in flight.
func (d *Driver) claimFIFO(ctx context.Context, req drivers.ReceiveMessagesRequest, want int, deadline time.Time, earlier []claimedKey) (claimState, bool, error) {
	_, cands, next, err := d.candidates(ctx, req.Name, req.Now, want+candidatesPerMessage)
	if err != nil || len(cands) == 0 {
		return claimState{next: next, nextKnown: err == nil}, false, err
	}
	var st claimState
	var stale int
	err = d.rw(ctx, "receive from "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		st, stale = claimState{}, 0
		qi, err := d.queueInfo(ctx, tx, req.Name, req.Now)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if len(st.msgs) >= want {
				break
			}
			g, err := readGroup(ctx, tx, req.Name, c.Part)
			if err != nil {
				return err
			}
			if !g.exists {
				stale++
				continue
			}
			before := len(st.msgs)
			var lastSeq int64
			stop := false
			err = tx.Query(ctx, spanner.Statement{SQL: `SELECT ` + cols(messageCols) + ` FROM Messages
				WHERE QueueName = @q AND Part = @g AND EnqueuedAt > @cutoff AND Committed > @purged ORDER BY Seq LIMIT @n`,
				Params: map[string]any{"q": req.Name, "g": c.Part, "cutoff": qi.cutoff, "purged": qi.purged,
					"n": int64(want - len(st.msgs) + 10)}}).
				Do(func(r *spanner.Row) error {
					if stop {
						return nil
					}
					m, err := scanMsg(r)
					if err != nil {
						return err
					}
					// The query passes over expired messages.
					if sqsrule.RunNext(false, !m.VisibleAt.After(req.Now), len(st.msgs), want) == sqsrule.RunEnd {
						stop = true
						return nil
					}
					lastSeq = m.Seq
					return d.claimOne(ctx, tx, qi, &st, m, req.Now, deadline)
				})
			if err != nil {
				return err
			}
			if len(st.msgs) > before {
				// Other messages of the group may still be in flight (after a released
				// head): BusyUntil and BusyTo only ever cover more here.
				if deadline.After(g.busyUntil) {
					g.busyUntil = deadline
				}
				g.busyTo = max(g.busyTo, lastSeq)
				st.ms = append(st.ms, g.mutation(req.Name, c.Part))
			} else {
				stale++
			}
		}
		if req.ReceiveRequestAttemptID != "" && len(st.claimed)+len(earlier) > 0 {
			b, err := json.Marshal(append(append([]claimedKey{}, earlier...), st.claimed...))
			if err != nil {
				return err
			}
			st.ms = append(st.ms, spanner.InsertOrUpdate("ReceiveAttempts", []string{"QueueName", "AttemptId", "Shard", "Claimed", "ExpiresAt"},
				[]any{req.Name, req.ReceiveRequestAttemptID, shardOf(req.ReceiveRequestAttemptID), string(b), sqsrule.AttemptExpiry(req.Now)}))
		}
		return st.finish(tx, qi.dlq)
	})
	if err != nil {
		return claimState{}, false, err
	}
	return st, stale > 0 || st.moved > 0, nil
}

// nextVisible is the earliest future moment a message of the queue becomes visible.
func (d *Driver) nextVisible(ctx context.Context, req drivers.ReceiveMessagesRequest) (time.Time, error) {
	tx, done := d.snapshot(ctx)
	defer done()
	qi, err := d.queueInfo(ctx, tx, req.Name, req.Now)
	if err != nil {
		return time.Time{}, err
	}
	return nextVisibleIn(ctx, tx, req.Name, req.Now, qi)
}

func nextVisibleIn(ctx context.Context, tx *spanner.ReadOnlyTransaction, name string, now time.Time, qi queueInfo) (time.Time, error) {
	var next spanner.NullTime
	err := tx.Query(ctx, spanner.Statement{SQL: `SELECT MIN(VisibleAt) FROM Messages@{FORCE_INDEX=MessagesByVisible}
		WHERE QueueName = @q AND VisibleAt > @now AND EnqueuedAt > @cutoff AND Committed > @purged`,
		Params: map[string]any{"q": name, "now": now, "cutoff": qi.cutoff, "purged": qi.purged}}).Do(func(r *spanner.Row) error {
		return r.Columns(&next)
	})
	return next.Time, err
}

// replay answers a repeated ReceiveRequestAttemptId with the first call's messages and
// receipt handles when all of them are still in flight under those handles.
func (d *Driver) replay(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, bool, error) {
	tx, done := d.snapshot(ctx)
	defer done()
	qr, err := readQueue(ctx, tx, req.Name)
	if err != nil {
		return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
	}
	r, err := tx.ReadRow(ctx, "ReceiveAttempts", spanner.Key{req.Name, req.ReceiveRequestAttemptID}, []string{"Claimed", "ExpiresAt"})
	if spanner.ErrCode(err) == codes.NotFound {
		return drivers.ReceiveMessagesResult{}, false, nil
	}
	if err != nil {
		return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
	}
	var claimed string
	var exp time.Time
	if err := r.Columns(&claimed, &exp); err != nil {
		return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
	}
	var keys []claimedKey
	if err := json.Unmarshal([]byte(claimed), &keys); err != nil || !sqsrule.AttemptLive(exp, req.Now) || len(keys) == 0 {
		return drivers.ReceiveMessagesResult{}, false, nil
	}
	var res drivers.ReceiveMessagesResult
	for _, k := range keys {
		row, err := tx.ReadRow(ctx, "Messages", spanner.Key{req.Name, k.Part, k.Seq}, messageCols)
		if spanner.ErrCode(err) == codes.NotFound {
			return drivers.ReceiveMessagesResult{}, false, nil
		}
		if err != nil {
			return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
		}
		m, err := scanMsg(row)
		if err != nil {
			return drivers.ReceiveMessagesResult{}, false, mapErr(ctx, err, "receive from "+req.Name)
		}
		if !sqsrule.AttemptHeld(m.Committed.After(qr.purged), m.Token.StringVal == k.Token, m.VisibleAt, req.Now) {
			return drivers.ReceiveMessagesResult{}, false, nil
		}
		msg, err := m.message(d.receiptKey, req.Name, true)
		if err != nil {
			return drivers.ReceiveMessagesResult{}, false, err
		}
		res.Messages = append(res.Messages, msg)
	}
	return res, true, nil
}

func cols(c []string) string {
	s := ""
	for i, x := range c {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// fifoGroupScan is a FIFO receive's candidate query: groups in order of the moment
// their first visible message became visible, leaving out those with an earlier message
// hidden. filter adds conditions on the scanned message m (a move's, for one).
func fifoGroupScan(filter string) string {
	return `SELECT x.Part, x.MinSeq, x.GroupId FROM (
				SELECT c.Part, MIN(c.Seq) AS MinSeq, ANY_VALUE(c.GroupId) AS GroupId,
					ANY_VALUE(c.VisibleAt HAVING MIN c.Seq) AS HeadVisible, ANY_VALUE(g.BusyUntil) AS BusyUntil
				FROM (
					SELECT m.Part, m.Seq, m.GroupId, m.VisibleAt FROM Messages@{FORCE_INDEX=MessagesByVisible} m
					WHERE m.QueueName = @q AND m.Shard IN UNNEST(@shards) AND m.VisibleAt <= @now AND m.EnqueuedAt > @cutoff
						AND m.Committed > @purged` + filter + `
					LIMIT ` + strconv.Itoa(fifoScan) + `) c
				JOIN FifoGroups g ON g.QueueName = @q AND g.GroupId = c.Part
				GROUP BY c.Part) x
			WHERE x.BusyUntil <= @now OR NOT EXISTS (SELECT 1 FROM Messages b
				WHERE b.QueueName = @q AND b.Part = x.Part AND b.Seq < x.MinSeq AND b.VisibleAt > @now
					AND b.EnqueuedAt > @cutoff AND b.Committed > @purged)
			ORDER BY x.HeadVisible, x.Part LIMIT @n`
}
