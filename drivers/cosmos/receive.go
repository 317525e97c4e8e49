package cosmos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// maxRedriveRounds bounds how many candidate rounds one receive makes when redrive
// keeps moving the candidates away.
const maxRedriveRounds = 5

// fifoWindow is how many of a FIFO queue's oldest messages one receive looks at.
const fifoWindow = 500

// maxExcludedGroups bounds the groups a FIFO receive's read leaves out by name (query
// size); beyond it, blocked groups are only skipped after the read.
const maxExcludedGroups = 1000

// attemptDoc records the claims of a FIFO receive for ReceiveRequestAttemptId replay.
type attemptDoc struct {
	ID     string     `json:"id"` // attemptItemID
	PK     string     `json:"pk"`
	Kind   string     `json:"kind"` // "attempt"
	Claims []claimRef `json:"claims"`
	Exp    int64      `json:"exp"`
	TTL    int        `json:"ttl"`
}

type claimRef struct {
	MID string `json:"m"`
	Tok string `json:"t"`
}

// attemptItemID names an attempt's record by a hash: attempt ids may hold characters
// ('/', '#', '?', '\\') that Cosmos ids cannot.
func attemptItemID(attempt string) string {
	h := sha256.Sum256([]byte(attempt))
	return "a:" + hex.EncodeToString(h[:20])
}

func (d *Driver) toMessage(q queueDoc, m msgDoc) drivers.Message {
	out := drivers.Message{MessageID: m.MID, Body: m.Body, Attributes: m.Attrs, SystemAttributes: m.Sys,
		SenderID: m.Sender, SentAt: fromMS(m.Sent), FirstReceivedAt: fromMS(m.First), ReceiveCount: m.RC,
		MessageGroupID: m.Group, MessageDeduplicationID: m.Dedup, SequenceNumber: sqsrule.SequenceNumber(m.Seq), DeadLetterSource: m.DLS}
	if m.Tok != "" {
		out.ReceiptHandle = d.encodeHandle(receipt{inc: q.Inc, mid: m.MID, tok: m.Tok})
	}
	return out
}

// ReceiveMessages claims messages one by one, each with an ETag-conditioned replace
// that sets a fresh claim token and the visibility deadline: of two receivers reading
// the same message, only one replace succeeds.
func (d *Driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	q, _, err := d.loadQueue(ctx, "ReceiveMessages", req.Name)
	if err != nil {
		return drivers.ReceiveMessagesResult{}, err
	}
	now := ms(req.Now)
	if q.Attrs.FifoQueue && req.ReceiveRequestAttemptID != "" {
		msgs, ok, err := d.replayAttempt(ctx, q, req.ReceiveRequestAttemptID, now)
		if err != nil || ok {
			return drivers.ReceiveMessagesResult{Messages: msgs}, err
		}
	}
	max := req.MaxMessages
	if max <= 0 {
		max = 1
	}
	dlq, maxCount, err := d.redriveTarget(ctx, q)
	if err != nil {
		return drivers.ReceiveMessagesResult{}, err
	}
	var res drivers.ReceiveMessagesResult
	var claims []claimRef
	for round := 0; len(res.Messages) < max && round < maxRedriveRounds; round++ {
		var cands [][]msgDoc // runs: each is claimed in order, stopping at the first loss
		if q.Attrs.FifoQueue {
			cands, err = d.fifoCandidates(ctx, q, req.Now, max-len(res.Messages))
		} else {
			cands, err = d.standardCandidates(ctx, q, req.Now, max-len(res.Messages))
		}
		if err != nil {
			return drivers.ReceiveMessagesResult{}, err
		}
		redriven := 0
		for _, run := range cands {
			for _, m := range run {
				if len(res.Messages) == max {
					break
				}
				if dlq != nil && sqsrule.RedriveDue(int64(m.RC), maxCount) {
					if err := d.deadLetter(ctx, q, *dlq, m, req.Now); err != nil {
						return drivers.ReceiveMessagesResult{}, err
					}
					redriven++
					res.DeadLettered++
					break // the group's next message is looked at in the next round
				}
				got, ok, err := d.claim(ctx, q, m, now, req.VisibilityTimeout)
				if err != nil {
					return drivers.ReceiveMessagesResult{}, err
				}
				if !ok {
					break // lost to another receiver: the rest of a group waits
				}
				res.Messages = append(res.Messages, d.toMessage(q, got))
				claims = append(claims, claimRef{MID: got.MID, Tok: got.Tok})
			}
		}
		if redriven == 0 {
			break
		}
	}
	if q.Attrs.FifoQueue && req.ReceiveRequestAttemptID != "" && len(claims) > 0 {
		a := attemptDoc{ID: attemptItemID(req.ReceiveRequestAttemptID), PK: q.pk(), Kind: "attempt", Claims: claims,
			Exp: ms(sqsrule.AttemptExpiry(req.Now)), TTL: recordTTL}
		if err := d.upsert(ctx, "ReceiveMessages", q.pk(), a); err != nil {
			return drivers.ReceiveMessagesResult{}, mapErr(ctx, err, "record receive attempt")
		}
	}
	if len(res.Messages) < max {
		if res.NextVisibleAt, err = d.nextVisible(ctx, q, req.Now); err != nil {
			return drivers.ReceiveMessagesResult{}, err
		}
	}
	return res, nil
}

// claim takes m (as read, with its ETag) for this receive. ok is false when another
// writer changed it first.
func (d *Driver) claim(ctx context.Context, q queueDoc, m msgDoc, now int64, vis int32) (msgDoc, bool, error) {
	etag := m.ETag
	m.ETag = ""
	m.Tok = newID()
	m.RC++
	if m.First == 0 {
		m.First = now
	}
	m.Vis, m.Recv = now+int64(vis)*1000, now
	_, err := d.replace(ctx, "ReceiveMessages", q.pk(), m.ID, etag, m)
	switch s := statusOf(err); {
	case err == nil:
		return m, true, nil
	case s == http.StatusPreconditionFailed, s == http.StatusNotFound:
		return m, false, nil
	}
	return m, false, mapErr(ctx, err, "claim")
}

func decodeMsgs(items [][]byte) ([]msgDoc, error) {
	out := make([]msgDoc, 0, len(items))
	for _, it := range items {
		var m msgDoc
		if err := json.Unmarshal(it, &m); err != nil {
			return nil, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode message")
		}
		m, err := m.unpacked()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func liveParams(q queueDoc, now time.Time) []azcosmos.QueryParameter {
	return []azcosmos.QueryParameter{{Name: "@gen", Value: q.Gen}, {Name: "@cutoff", Value: retentionCutoff(q, now)}, {Name: "@now", Value: ms(now)}}
}

// standardCandidates reads visible messages, more than wanted, in random order so that
// concurrent receivers spread over them instead of all racing for the oldest.
func (d *Driver) standardCandidates(ctx context.Context, q queueDoc, now time.Time, want int) ([][]msgDoc, error) {
	items, err := d.query(ctx, "ReceiveMessages", q.pk(),
		"SELECT * FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND c.vis <= @now ORDER BY c.vis",
		liveParams(q, now), 3*want+2)
	if err != nil {
		return nil, err
	}
	msgs, err := decodeMsgs(items)
	if err != nil {
		return nil, err
	}
	rand.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	runs := make([][]msgDoc, len(msgs))
	for i := range msgs {
		runs[i] = msgs[i : i+1]
	}
	return runs, nil
}

// fifoCandidates reads the queue's oldest live messages in sequence order and returns
// each group's receivable messages as one run, claimed in order: from the group's head
// (its first message in that order) up to its first message that is not visible or
// comes at or after the group's first message in flight, so no message passes an
// earlier one of its group while a released head is receivable again. Runs are ordered
// by the moment their head became visible (its vis), as the Driver contract asks.
// Received messages are read first: groups with a message in flight and none of them
// returned below it (a head released or expired) have nothing to give and, when there
// are not too many, are left out of the read, so a long blocked group does not fill the
// window.
func (d *Driver) fifoCandidates(ctx context.Context, q queueDoc, now time.Time, want int) ([][]msgDoc, error) {
	params := liveParams(q, now)
	items, err := d.query(ctx, "ReceiveMessages", q.pk(),
		"SELECT c.grp, c.seq, c.vis FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND c.tok != ''", params, 0)
	if err != nil {
		return nil, err
	}
	nowMS := ms(now)
	inFlight := map[string]int64{} // group -> lowest sequence number in flight
	returned := map[string]int64{} // group -> lowest sequence number received and visible again
	for _, it := range items {
		var v struct {
			Group string `json:"grp"`
			Seq   int64  `json:"seq"`
			Vis   int64  `json:"vis"`
		}
		if err := json.Unmarshal(it, &v); err != nil {
			return nil, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode group")
		}
		low := returned
		if v.Vis > nowMS {
			low = inFlight
		}
		if s, ok := low[v.Group]; !ok || v.Seq < s {
			low[v.Group] = v.Seq
		}
	}
	var blocked []string
	for g, s := range inFlight {
		if r, ok := returned[g]; !ok || r > s {
			blocked = append(blocked, g)
		}
	}
	filter := ""
	if len(blocked) > 0 && len(blocked) <= maxExcludedGroups {
		filter = " AND NOT ARRAY_CONTAINS(@blocked, c.grp)"
		params = append(params, azcosmos.QueryParameter{Name: "@blocked", Value: blocked})
	}
	items, err = d.query(ctx, "ReceiveMessages", q.pk(),
		"SELECT * FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff"+filter+" ORDER BY c.seq",
		params, d.fifoWindow)
	if err != nil {
		return nil, err
	}
	msgs, err := decodeMsgs(items)
	if err != nil {
		return nil, err
	}
	return fifoRuns(msgs, inFlight, nowMS, want), nil
}

// fifoRuns cuts msgs (in sequence order) into the groups' runs of receivable messages
// (sqsrule.FIFORuns), at most want each. inFlight holds each group's lowest sequence
// number in flight, as read before msgs; a message claimed since then is caught by its
// own vis.
func fifoRuns(msgs []msgDoc, inFlight map[string]int64, nowMS int64, want int) [][]msgDoc {
	return sqsrule.FIFORuns(msgs, want, func(m msgDoc) sqsrule.RunMessage {
		s, held := inFlight[m.Group]
		return sqsrule.RunMessage{Group: m.Group, Seq: m.Seq, VisibleAt: m.Vis,
			Receivable: m.Vis <= nowMS && !(held && m.Seq >= s)}
	})
}

// nextVisible is the earliest future visibility deadline or delay end, zero if none.
func (d *Driver) nextVisible(ctx context.Context, q queueDoc, now time.Time) (time.Time, error) {
	items, err := d.query(ctx, "ReceiveMessages", q.pk(),
		"SELECT TOP 1 c.vis FROM c WHERE c.kind = 'msg' AND c.gen >= @gen AND c.enq > @cutoff AND c.vis > @now ORDER BY c.vis",
		liveParams(q, now), 1)
	if err != nil || len(items) == 0 {
		return time.Time{}, err
	}
	var v struct {
		Vis int64 `json:"vis"`
	}
	if err := json.Unmarshal(items[0], &v); err != nil {
		return time.Time{}, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode deadline")
	}
	return fromMS(v.Vis), nil
}

// replayAttempt returns the messages of an earlier receive with the same attempt id if
// they are all still in flight under its claims.
func (d *Driver) replayAttempt(ctx context.Context, q queueDoc, attempt string, now int64) ([]drivers.Message, bool, error) {
	var a attemptDoc
	_, found, err := d.readItem(ctx, "ReceiveMessages", q.pk(), attemptItemID(attempt), &a)
	if err != nil || !found || !sqsrule.AttemptLive(fromMS(a.Exp), fromMS(now)) {
		return nil, false, err
	}
	out := make([]drivers.Message, 0, len(a.Claims))
	for _, c := range a.Claims {
		var m msgDoc
		_, there, err := d.readItem(ctx, "ReceiveMessages", q.pk(), msgItemID(c.MID), &m)
		if err != nil {
			return nil, false, err
		}
		if !sqsrule.AttemptHeld(there && m.Gen >= q.Gen, m.Tok == c.Tok, fromMS(m.Vis), fromMS(now)) {
			return nil, false, nil
		}
		if m, err = m.unpacked(); err != nil {
			return nil, false, err
		}
		out = append(out, d.toMessage(q, m))
	}
	return out, true, nil
}

// redriveTarget returns the queue's dead-letter queue (sqsrule.RedriveTarget), or nil
// when it has none or the named queue does not exist.
func (d *Driver) redriveTarget(ctx context.Context, q queueDoc) (*queueDoc, int32, error) {
	name, maxCount, ok := sqsrule.RedriveTarget(q.Name, q.Attrs.RedrivePolicy)
	if !ok {
		return nil, 0, nil
	}
	dlq, _, err := d.loadQueue(ctx, "ReceiveMessages", name)
	if drivers.KindOf(err) == drivers.KindNotFound {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return &dlq, maxCount, nil
}
