package spanner

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

var messageCols = []string{"QueueName", "Part", "Seq", "Shard", "MessageId", "Body", "Attrs", "SysAttrs", "SenderId",
	"SentAt", "EnqueuedAt", "VisibleAt", "Token", "ReceivedAt", "ReceiveCount", "FirstReceivedAt", "GroupId", "DedupId", "DlqSource", "Committed"}

// msgRow is a Messages row.
type msgRow struct {
	Queue, Part     string
	Seq, Shard      int64
	MessageID, Body string
	Attrs, SysAttrs []byte
	SenderID        spanner.NullString
	SentAt          time.Time
	EnqueuedAt      time.Time
	VisibleAt       time.Time
	Token           spanner.NullString
	ReceivedAt      spanner.NullTime
	ReceiveCount    int64
	FirstReceivedAt spanner.NullTime
	GroupID         spanner.NullString
	DedupID         spanner.NullString
	DlqSource       spanner.NullString
	Committed       time.Time
}

func (m *msgRow) values() []any {
	return []any{m.Queue, m.Part, m.Seq, m.Shard, m.MessageID, m.Body, m.Attrs, m.SysAttrs, m.SenderID,
		m.SentAt, m.EnqueuedAt, m.VisibleAt, m.Token, m.ReceivedAt, m.ReceiveCount, m.FirstReceivedAt, m.GroupID, m.DedupID, m.DlqSource,
		spanner.CommitTimestamp} // values are only inserted: a new row, or a moved one
}

func scanMsg(r *spanner.Row) (msgRow, error) {
	var m msgRow
	err := r.Columns(&m.Queue, &m.Part, &m.Seq, &m.Shard, &m.MessageID, &m.Body, &m.Attrs, &m.SysAttrs, &m.SenderID,
		&m.SentAt, &m.EnqueuedAt, &m.VisibleAt, &m.Token, &m.ReceivedAt, &m.ReceiveCount, &m.FirstReceivedAt, &m.GroupID, &m.DedupID, &m.DlqSource, &m.Committed)
	return m, err
}

func (m *msgRow) key() spanner.Key { return spanner.Key{m.Queue, m.Part, m.Seq} }

func shardOf(s string) int64 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int64(h.Sum32() % shards)
}

func nullString(s string) spanner.NullString { return spanner.NullString{StringVal: s, Valid: s != ""} }

func encodeAttrs(m map[string]drivers.MessageAttribute) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, drivers.Wrap(drivers.KindInvalidArgument, err, "encode message attributes")
	}
	return b, nil
}

func decodeAttrs(b []byte) (map[string]drivers.MessageAttribute, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]drivers.MessageAttribute
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, drivers.Wrap(drivers.KindInternal, err, "stored message attributes")
	}
	return m, nil
}

// seqString renders a sequence number as SQS does: 20 decimal digits.
func seqString(n int64) string { return fmt.Sprintf("%020d", n) }

// newMessage is the row of a new message in queue.
func newMessage(queue string, now time.Time, e drivers.SendEntry) (msgRow, error) {
	attrs, err := encodeAttrs(e.Attributes)
	if err != nil {
		return msgRow{}, err
	}
	sys, err := encodeAttrs(e.SystemAttributes)
	if err != nil {
		return msgRow{}, err
	}
	return msgRow{Queue: queue, Part: e.MessageID, Shard: shardOf(e.MessageID), MessageID: e.MessageID, Body: e.Body,
		Attrs: attrs, SysAttrs: sys, SenderID: nullString(e.SenderID), SentAt: now, EnqueuedAt: now,
		VisibleAt: now.Add(time.Duration(e.DelaySeconds) * time.Second),
		GroupID:   nullString(e.MessageGroupID), DedupID: nullString(e.MessageDeduplicationID)}, nil
}

// SendMessages stores the entries in one read-write transaction: blind inserts for a
// standard queue (the interleaving checks that the queue exists), and for a FIFO queue
// the groups' sequence counters and deduplication records read and written with the
// messages.
func (d *Driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	if len(req.Entries) == 0 {
		return drivers.SendMessagesResult{}, nil
	}
	if isFIFO(req.Name) {
		return d.sendFIFO(ctx, req)
	}
	rows := make([]msgRow, len(req.Entries))
	ms := make([]*spanner.Mutation, len(req.Entries))
	res := drivers.SendMessagesResult{Entries: make([]drivers.SendEntryResult, len(req.Entries))}
	for i, e := range req.Entries {
		m, err := newMessage(req.Name, req.Now, e)
		if err != nil {
			return drivers.SendMessagesResult{}, err
		}
		// A standard queue's group (a fair queue's tenant) is kept and returned; its Part
		// stays the message id, so the group orders nothing.
		rows[i] = m
		ms[i] = spanner.Insert("Messages", messageCols, m.values())
		res.Entries[i] = drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID}
	}
	err := d.rw(ctx, "send to "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		return tx.BufferWrite(ms)
	})
	if isParentMissing(err) {
		return drivers.SendMessagesResult{}, notFound(req.Name)
	}
	if outcomeUnknown(ctx, err) && d.committedStandard(ctx, rows) {
		d.unknown.Add(1)
		return res, nil
	}
	if err != nil {
		return drivers.SendMessagesResult{}, err
	}
	return res, nil
}

// committedStandard decides a standard send whose commit outcome is unknown: the rows
// are keyed by the message ids, so it committed if they are all there.
func (d *Driver) committedStandard(ctx context.Context, rows []msgRow) bool {
	keys := make([]spanner.KeySet, len(rows))
	for i, m := range rows {
		keys[i] = m.key()
	}
	n := 0
	tx, done := d.snapshot(ctx)
	defer done()
	err := tx.Read(ctx, "Messages", spanner.KeySets(keys...), []string{"Seq"}).Do(func(*spanner.Row) error { n++; return nil })
	return err == nil && n == len(rows)
}

// isParentMissing says whether err is Spanner's refusal to insert a row interleaved in a
// Queues row that does not exist ("Parent row ... is missing" on Spanner, "key was not
// found in parent table" on the emulator), not a missing database.
func isParentMissing(err error) bool {
	return err != nil && spanner.ErrCode(err) == codes.NotFound && strings.Contains(strings.ToLower(err.Error()), "parent")
}

// group is a FifoGroups row.
type group struct {
	nextSeq   int64
	busyUntil time.Time
	busyTo    int64
	exists    bool
}

var groupCols = []string{"QueueName", "GroupId", "NextSeq", "BusyUntil", "BusyTo"}

func readGroup(ctx context.Context, tx reader, queue, id string) (group, error) {
	r, err := tx.ReadRow(ctx, "FifoGroups", spanner.Key{queue, id}, []string{"NextSeq", "BusyUntil", "BusyTo"})
	if spanner.ErrCode(err) == codes.NotFound {
		return group{}, nil
	}
	if err != nil {
		return group{}, err
	}
	g := group{exists: true}
	return g, r.Columns(&g.nextSeq, &g.busyUntil, &g.busyTo)
}

// takeSeq returns the group's next sequence number. Numbers start from the time in
// microseconds, so a group whose row the sweep dropped and a send created again still
// numbers upwards.
func (g *group) takeSeq(now time.Time) int64 {
	seq := max(g.nextSeq, now.UnixMicro())
	g.nextSeq = seq + 1
	return seq
}

func (g *group) mutation(queue, id string) *spanner.Mutation {
	bu := g.busyUntil
	if bu.IsZero() {
		bu = epoch
	}
	return spanner.InsertOrUpdate("FifoGroups", groupCols, []any{queue, id, g.nextSeq, bu, g.busyTo})
}

// sendFIFO stores FIFO messages: per entry, a live deduplication record makes it a
// duplicate; otherwise it takes its group's next sequence number and writes the message
// and the record, all in one transaction. A retry after an unknown outcome finds the
// record, so it never stores a second message.
func (d *Driver) sendFIFO(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	n := len(req.Entries)
	var res drivers.SendMessagesResult
	err := d.rw(ctx, "send to "+req.Name, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		res = drivers.SendMessagesResult{Entries: make([]drivers.SendEntryResult, n)}
		qr, err := readQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		byGroup := qr.q.Attributes.DeduplicationScope == "messageGroup"
		groups := map[string]*group{}
		type dd struct {
			messageID string
			seq       int64
		}
		dedups := map[[2]string]*dd{}
		var ms []*spanner.Mutation
		for i, e := range req.Entries {
			r := &res.Entries[i]
			r.EntryID = e.EntryID
			if e.MessageGroupID == "" || e.MessageDeduplicationID == "" {
				r.Err = drivers.Errorf(drivers.KindInvalidArgument, "FIFO queue %s needs MessageGroupId and a deduplication id", req.Name)
				continue
			}
			scope := ""
			if byGroup {
				scope = e.MessageGroupID
			}
			dk := [2]string{scope, e.MessageDeduplicationID}
			rec, seen := dedups[dk]
			if !seen {
				row, err := tx.ReadRow(ctx, "Dedup", spanner.Key{req.Name, scope, e.MessageDeduplicationID},
					[]string{"MessageId", "Seq", "ExpiresAt"})
				switch {
				case err == nil:
					var exp time.Time
					var x dd
					if err := row.Columns(&x.messageID, &x.seq, &exp); err != nil {
						return err
					}
					// A purge deletes the queue's records in its transaction: no purge time.
					if sqsrule.DedupHolds(exp, req.Now, time.Time{}) {
						rec = &x
					}
				case spanner.ErrCode(err) != codes.NotFound:
					return err
				}
				dedups[dk] = rec
			}
			if rec != nil {
				r.MessageID, r.SequenceNumber, r.Duplicate = rec.messageID, seqString(rec.seq), true
				continue
			}
			g, ok := groups[e.MessageGroupID]
			if !ok {
				gr, err := readGroup(ctx, tx, req.Name, e.MessageGroupID)
				if err != nil {
					return err
				}
				g = &gr
				groups[e.MessageGroupID] = g
			}
			m, err := newMessage(req.Name, req.Now, e)
			if err != nil {
				return err
			}
			m.Part, m.Seq = e.MessageGroupID, g.takeSeq(req.Now)
			ms = append(ms, spanner.Insert("Messages", messageCols, m.values()),
				spanner.InsertOrUpdate("Dedup", []string{"QueueName", "Scope", "DedupId", "Shard", "MessageId", "Seq", "ExpiresAt"},
					[]any{req.Name, scope, e.MessageDeduplicationID, shardOf(e.MessageDeduplicationID), e.MessageID, m.Seq, sqsrule.DedupExpiry(req.Now)}))
			dedups[dk] = &dd{messageID: e.MessageID, seq: m.Seq}
			r.MessageID, r.SequenceNumber = e.MessageID, seqString(m.Seq)
		}
		for id, g := range groups {
			ms = append(ms, g.mutation(req.Name, id))
		}
		return tx.BufferWrite(ms)
	})
	if outcomeUnknown(ctx, err) && d.committedFIFO(ctx, req, res) {
		d.unknown.Add(1)
		return res, nil
	}
	if err != nil {
		return drivers.SendMessagesResult{}, err
	}
	return res, nil
}

// committedFIFO decides a FIFO send whose commit outcome is unknown from the
// deduplication records: it committed if the record of each entry res says was stored
// names that entry's message.
func (d *Driver) committedFIFO(ctx context.Context, req drivers.SendMessagesRequest, res drivers.SendMessagesResult) bool {
	if len(res.Entries) != len(req.Entries) {
		return false
	}
	tx, done := d.snapshot(ctx)
	defer done()
	qr, err := readQueue(ctx, tx, req.Name)
	if err != nil {
		return false
	}
	for i, e := range req.Entries {
		r := res.Entries[i]
		if r.Err != nil || r.Duplicate {
			continue
		}
		scope := ""
		if qr.q.Attributes.DeduplicationScope == "messageGroup" {
			scope = e.MessageGroupID
		}
		row, err := tx.ReadRow(ctx, "Dedup", spanner.Key{req.Name, scope, e.MessageDeduplicationID}, []string{"MessageId"})
		var id string
		if err != nil || row.Columns(&id) != nil || id != e.MessageID {
			return false
		}
	}
	return true
}
