package cosmos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// itemTTL is the Cosmos TTL (seconds) of messages and their records: the longest
// retention SQS allows plus a day. Retention itself is decided from stored times on the
// gateway clock; TTL only reclaims what Sweep did not reach.
const itemTTL = sqsrule.MaxMessageRetentionPeriod + 86400

// recordTTL is the Cosmos TTL of deduplication markers and receive attempts.
const recordTTL = 86400

// msgDoc is one message in its queue's partition.
type msgDoc struct {
	ID     string                              `json:"id"` // "m:" + message id
	PK     string                              `json:"pk"`
	Kind   string                              `json:"kind"` // "msg"
	MID    string                              `json:"mid"`
	Body   string                              `json:"body"`
	Attrs  map[string]drivers.MessageAttribute `json:"attrs,omitempty"`
	Sys    map[string]drivers.MessageAttribute `json:"sys,omitempty"`
	Sender string                              `json:"sender"`
	Sent   int64                               `json:"sent"`  // SentTimestamp
	Enq    int64                               `json:"enq"`   // retention runs from here
	Vis    int64                               `json:"vis"`   // visible from (delay or visibility deadline)
	RC     int32                               `json:"rc"`    // receive count
	First  int64                               `json:"first"` // first receive
	Tok    string                              `json:"tok"`   // claim token of the current receive, "" if never received
	Recv   int64                               `json:"recv"`  // time of the current receive (12-hour cap)
	Group  string                              `json:"grp"`
	Dedup  string                              `json:"dedup"`
	Seq    int64                               `json:"seq"`
	DLS    string                              `json:"dls"`
	Gen    int64                               `json:"gen"`
	TTL    int                                 `json:"ttl"`
	ETag   azcore.ETag                         `json:"_etag,omitempty"`
	// Body64 and Attrs64 hold the body and the attributes (as JSON) base64-encoded
	// instead, when escaping would make the item too large (see packed).
	Body64  []byte `json:"b64,omitempty"`
	Attrs64 []byte `json:"a64,omitempty"`
}

// packedLimit is the encoded size above which a message item stores its body, and then
// its attributes, base64-encoded: JSON escaping can double a body's size (quotes,
// backslashes, control characters), base64 adds a third, and an item may hold 2 MB.
const packedLimit = 3 << 19 // 1.5 MiB

// packed returns m as it is stored: as is, or with the body and then the attributes
// base64-encoded when their JSON form would be larger than packedLimit. A 1 MiB message
// (body and attributes, as SQS counts it) then stays under 1.7 MB.
func (m msgDoc) packed() msgDoc {
	raw := len(m.Body)
	for k, a := range m.Attrs {
		raw += len(k) + len(a.DataType) + len(a.StringValue) + 2*len(a.BinaryValue)
	}
	// SQS bodies hold no control characters but tab, LF and CR: escaping at most doubles.
	if m.Body64 != nil || m.Attrs64 != nil || 2*raw <= packedLimit || jsonLen(m.Body)+jsonLen(m.Attrs) <= packedLimit {
		return m
	}
	m.Body64, m.Body = []byte(m.Body), ""
	if jsonLen(m.Attrs) > packedLimit/4 {
		m.Attrs64, m.Attrs = mustJSON(m.Attrs), nil
	}
	return m
}

// unpacked undoes packed after a read.
func (m msgDoc) unpacked() (msgDoc, error) {
	if m.Body64 != nil {
		m.Body, m.Body64 = string(m.Body64), nil
	}
	if m.Attrs64 != nil {
		if err := json.Unmarshal(m.Attrs64, &m.Attrs); err != nil {
			return m, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode attributes of "+m.MID)
		}
		m.Attrs64 = nil
	}
	return m, nil
}

func jsonLen(v any) int { return len(mustJSON(v)) }

func msgItemID(mid string) string { return "m:" + mid }

// headDoc is a FIFO queue's sequence head. Every FIFO write to the queue replaces it
// conditionally in the same transactional batch as the message, so sequence numbers
// follow the order writes commit in and no number is taken without its message.
type headDoc struct {
	ID  string `json:"id"` // "head"
	PK  string `json:"pk"`
	Seq int64  `json:"seq"`
}

// dedupDoc is a deduplication marker: the message a deduplication id was first sent
// as, until Exp.
type dedupDoc struct {
	ID   string `json:"id"` // "d:" + hash of the scoped id
	PK   string `json:"pk"`
	Kind string `json:"kind"` // "dedup"
	MID  string `json:"mid"`
	Seq  int64  `json:"seq"`
	Exp  int64  `json:"exp"`
	TTL  int    `json:"ttl"`
}

// dedupItemID names the marker of a deduplication id in the queue's scope: the whole
// queue, or (DeduplicationScope messageGroup) the message group.
func dedupItemID(q queueDoc, group, dedup string) string {
	key := "queue\x00" + dedup
	if q.Attrs.DeduplicationScope == "messageGroup" {
		key = "group\x00" + group + "\x00" + dedup
	}
	h := sha256.Sum256([]byte(key))
	return "d:" + hex.EncodeToString(h[:20])
}

// SendMessages stores each entry with its own write: a create for a standard queue, a
// transactional batch (head, marker, message) for a FIFO queue. On a FIFO queue an
// entry that fails fails the later entries of its group in the request unwritten, with
// the same error: SQS enqueues a batch's messages in the order sent, and a later message
// stored ahead of an earlier one that the client then retries would be delivered first.
func (d *Driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	q, _, err := d.loadQueue(ctx, "SendMessages", req.Name)
	if err != nil {
		return drivers.SendMessagesResult{}, err
	}
	res := drivers.SendMessagesResult{Entries: make([]drivers.SendEntryResult, 0, len(req.Entries))}
	now := ms(req.Now)
	failed := map[string]*drivers.Error{} // FIFO group -> the error of its first failed entry
	for _, e := range req.Entries {
		out := drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID}
		m := msgDoc{ID: msgItemID(e.MessageID), PK: q.pk(), Kind: "msg", MID: e.MessageID, Body: e.Body,
			Attrs: e.Attributes, Sys: e.SystemAttributes, Sender: e.SenderID, Sent: now, Enq: now,
			Vis: now + int64(e.DelaySeconds)*1000, Group: e.MessageGroupID, Dedup: e.MessageDeduplicationID,
			Gen: q.Gen, TTL: itemTTL}
		if !q.Attrs.FifoQueue {
			if _, err := d.create(ctx, "SendMessages", q.pk(), m); err != nil {
				if ctx.Err() != nil {
					return drivers.SendMessagesResult{}, ctx.Err()
				}
				out.Err = entryError(mapErr(ctx, err, "send"))
			}
			res.Entries = append(res.Entries, out)
			continue
		}
		if err, ok := failed[e.MessageGroupID]; ok {
			out.Err = err
			res.Entries = append(res.Entries, out)
			continue
		}
		mid, seq, dup, err := d.sendFIFO(ctx, "SendMessages", q, m, req.Now, true)
		if err != nil {
			if ctx.Err() != nil {
				return drivers.SendMessagesResult{}, ctx.Err()
			}
			out.Err = entryError(err)
			failed[e.MessageGroupID] = out.Err
		} else {
			out.MessageID, out.SequenceNumber, out.Duplicate = mid, sqsrule.SequenceNumber(seq), dup
		}
		res.Entries = append(res.Entries, out)
	}
	return res, nil
}

func entryError(err error) *drivers.Error {
	if e, ok := err.(*drivers.Error); ok {
		return e
	}
	return &drivers.Error{Kind: drivers.KindInternal, Message: err.Error(), Err: err}
}

// fifoAttempts bounds how often a FIFO write retries after losing the head to a
// concurrent write (a failed batch applied nothing, so retrying is safe).
const fifoAttempts = 8

// sendFIFO writes m into FIFO queue q: one transactional batch replaces the head
// conditionally on its ETag (taking the next sequence number), writes the
// deduplication marker (when dedup) and creates the message. The head serialises the
// queue's FIFO writes, so the marker read before the batch is still current when it
// commits. It returns the stored message's id and sequence number, the original ones
// for a duplicate. A message whose item already exists (a retried move) is reported
// as a duplicate of itself.
func (d *Driver) sendFIFO(ctx context.Context, op string, q queueDoc, m msgDoc, now time.Time, dedup bool) (string, int64, bool, error) {
	pk := azcosmos.NewPartitionKeyString(q.pk())
	var lost error // the last batch lost to a concurrent write
	for attempt := 0; attempt < fifoAttempts; attempt++ {
		var head headDoc
		etag, found, err := d.readItem(ctx, op, q.pk(), "head", &head)
		if err != nil {
			return "", 0, false, err
		}
		marker := dedupDoc{ID: dedupItemID(q, m.Group, m.Dedup), PK: q.pk(), Kind: "dedup", MID: m.MID,
			Exp: ms(sqsrule.DedupExpiry(now)), TTL: recordTTL}
		if dedup {
			var old dedupDoc
			_, seen, err := d.readItem(ctx, op, q.pk(), marker.ID, &old)
			if err != nil {
				return "", 0, false, err
			}
			if seen && sqsrule.DedupHolds(time.UnixMilli(old.Exp), now, time.UnixMilli(q.LastPurge)) {
				return old.MID, old.Seq, true, nil
			}
		}
		next := headDoc{ID: "head", PK: q.pk(), Seq: head.Seq + 1}
		m.Seq, marker.Seq = next.Seq, next.Seq
		b := d.c.NewTransactionalBatch(pk)
		if found {
			b.ReplaceItem("head", mustJSON(next), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag})
		} else {
			b.CreateItem(mustJSON(next), nil)
		}
		if dedup {
			b.UpsertItem(mustJSON(marker), nil)
		}
		m.ETag = ""
		b.CreateItem(mustJSON(m), nil)
		failed, err := d.batch(ctx, op, b)
		if err != nil {
			return "", 0, false, mapErr(ctx, err, op+": FIFO write")
		}
		if failed == nil {
			return m.MID, m.Seq, false, nil
		}
		switch failed.status {
		case http.StatusPreconditionFailed, http.StatusConflict:
			lost = failed
			// Lost the head to a concurrent write, or the message item exists already.
			var existing msgDoc
			if _, there, err := d.readItem(ctx, op, q.pk(), m.ID, &existing); err != nil {
				return "", 0, false, err
			} else if there {
				return existing.MID, existing.Seq, true, nil
			}
			// Back off a little, at random, so that racing writers do not keep colliding.
			t := time.NewTimer(time.Duration(rand.Int64N(int64(attempt+1) * int64(5*time.Millisecond))))
			select {
			case <-ctx.Done():
				t.Stop()
				return "", 0, false, ctx.Err()
			case <-t.C:
			}
			continue
		default:
			return "", 0, false, mapErr(ctx, failed, op+": FIFO write")
		}
	}
	return "", 0, false, &drivers.Error{Kind: drivers.KindAborted,
		Message: fmt.Sprintf("cosmos: %s: FIFO queue %q is contended; retry", op, q.Name), Err: lost}
}
