package firestore

import (
	"context"
	"sort"
	"strings"
	"time"

	fs "cloud.google.com/go/firestore"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func toAttrDocs(a map[string]drivers.MessageAttribute) map[string]attrDoc {
	if len(a) == 0 {
		return nil
	}
	out := make(map[string]attrDoc, len(a))
	for k, v := range a {
		out[k] = attrDoc{Type: v.DataType, String: v.StringValue, Binary: v.BinaryValue}
	}
	return out
}

func fromAttrDocs(a map[string]attrDoc) map[string]drivers.MessageAttribute {
	if len(a) == 0 {
		return nil
	}
	out := make(map[string]drivers.MessageAttribute, len(a))
	for k, v := range a {
		out[k] = drivers.MessageAttribute{DataType: v.Type, StringValue: v.String, BinaryValue: v.Binary}
	}
	return out
}

// docSize estimates a message document's stored size as Firestore counts it (field
// names and values plus 32 bytes per document and 1 per string), from above.
func docSize(path string, m *msgDoc) int {
	n := len(path) + 32 + 16*40 // the fixed fields: name, value and type overhead
	n += len(m.MID) + len(m.Body) + len(m.Sender) + len(m.Group) + len(m.Dedup) + len(m.DLS)
	for _, a := range []map[string]attrDoc{m.Attrs, m.Sys} {
		for k, v := range a {
			n += len(k) + len(v.Type) + len(v.String) + len(v.Binary) + 16
		}
	}
	return n
}

// messageDocID is the document id of a message: its MessageID when that is a usable id.
func messageDocID(mid string) string {
	if mid == "" || strings.ContainsRune(mid, '/') || strings.HasPrefix(mid, "__") || mid == "." || mid == ".." || len(mid) > 700 {
		return hashID("mid", mid)
	}
	return mid
}

// SendMessages stores the entries in one transaction, which also reads the queue (so a
// send lands wholly before or after a purge or deletion) and, for FIFO queues, the
// groups' sequence counters and the deduplication records.
func (d *Driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	var res drivers.SendMessagesResult
	now := toNanos(req.Now)
	var keys []string
	for _, e := range req.Entries {
		if e.MessageGroupID != "" {
			keys = append(keys, groupKey(req.Name, hashID(e.MessageGroupID)))
		}
	}
	if len(keys) > 0 {
		held, err := d.reserved.wait(ctx, keys)
		if err != nil {
			return drivers.SendMessagesResult{}, err
		}
		defer d.reserved.release(held)
	}
	err := d.runTx(ctx, "send to "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		res = drivers.SendMessagesResult{Entries: make([]drivers.SendEntryResult, len(req.Entries))}
		q, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		var w writes
		if q.doc.FIFO {
			err = d.sendFIFO(ctx, tx, q, now, req.Entries, res.Entries, &w)
		} else {
			for i, e := range req.Entries {
				m := newMessage(e, now, int64(randInt(int(q.doc.Shards))))
				res.Entries[i] = d.stage(q, e, m, &w)
			}
		}
		if err != nil {
			return err
		}
		return w.apply(tx)
	})
	if err != nil {
		return drivers.SendMessagesResult{}, err
	}
	return res, nil
}

func newMessage(e drivers.SendEntry, now, shard int64) *msgDoc {
	return &msgDoc{MID: e.MessageID, Body: e.Body, Attrs: toAttrDocs(e.Attributes), Sys: toAttrDocs(e.SystemAttributes),
		Sender: e.SenderID, Sent: now, Enq: now, Vis: now + int64(e.DelaySeconds)*int64(time.Second),
		Group: e.MessageGroupID, Dedup: e.MessageDeduplicationID, Shard: shard}
}

// stage queues the creation of m (and its chunks, when it is too big for one document).
func (d *Driver) stage(q *queue, e drivers.SendEntry, m *msgDoc, w *writes) drivers.SendEntryResult {
	r := drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID, SequenceNumber: sqsrule.SequenceNumber(m.Seq)}
	ref := d.messages(&q.doc).Doc(messageDocID(m.MID))
	chunks, err := split(ref.Path, m)
	if err != nil {
		r.Err = drivers.Errorf(drivers.KindInvalidArgument, "%v", err)
		r.SequenceNumber = ""
		return r
	}
	w.create(ref, m)
	d.writeChunks(w, &q.doc, ref.ID, chunks)
	return r
}

func (d *Driver) sendFIFO(ctx context.Context, tx *fs.Transaction, q *queue, now int64, entries []drivers.SendEntry, out []drivers.SendEntryResult, w *writes) error {
	groups, err := d.readGroups(tx, q, entries)
	if err != nil {
		return err
	}
	scope := func(e drivers.SendEntry) string {
		if q.attrs.DeduplicationScope == "messageGroup" {
			return e.MessageGroupID
		}
		return ""
	}
	dedupRefs := make([]*fs.DocumentRef, len(entries))
	for i, e := range entries {
		dedupRefs[i] = d.dedups(&q.doc).Doc(hashID(scope(e), e.MessageDeduplicationID))
	}
	snaps, err := getAll(tx, dedupRefs)
	if err != nil {
		return err
	}
	seen := map[string]drivers.SendEntryResult{} // deduplication ids stored by this batch
	touched := map[string]bool{}
	for i, e := range entries {
		key := dedupRefs[i].ID
		if prev, ok := seen[key]; ok {
			out[i] = drivers.SendEntryResult{EntryID: e.EntryID, MessageID: prev.MessageID, SequenceNumber: prev.SequenceNumber, Duplicate: true}
			continue
		}
		if snaps[i].Exists() {
			var dd dedupDoc
			if err := snaps[i].DataTo(&dd); err != nil {
				return err
			}
			if sqsrule.DedupHolds(fromNanos(dd.Expires), fromNanos(now), fromNanos(q.doc.Purged)) {
				out[i] = drivers.SendEntryResult{EntryID: e.EntryID, MessageID: dd.MID, SequenceNumber: sqsrule.SequenceNumber(dd.Seq), Duplicate: true}
				continue
			}
		}
		g := groups[e.MessageGroupID]
		m := newMessage(e, now, g.Shard)
		g.Last++
		m.Seq = g.Last
		out[i] = d.stage(q, e, m, w)
		if out[i].Err != nil {
			g.Last--
			continue
		}
		if g.Ready == noReady {
			g.Order = time.Now().UnixNano()
		}
		g.Ready = min(g.Ready, m.Vis)
		touched[e.MessageGroupID] = true
		seen[key] = out[i]
		w.set(dedupRefs[i], dedupDoc{MID: e.MessageID, Seq: m.Seq, Expires: toNanos(sqsrule.DedupExpiry(fromNanos(now)))})
	}
	for id := range touched {
		w.set(d.groups(&q.doc).Doc(hashID(id)), groups[id])
	}
	return nil
}

// readGroups reads the group documents of the entries' groups, new ones made empty.
func (d *Driver) readGroups(tx *fs.Transaction, q *queue, entries []drivers.SendEntry) (map[string]*groupDoc, error) {
	out := map[string]*groupDoc{}
	var ids []string
	var refs []*fs.DocumentRef
	for _, e := range entries {
		if _, ok := out[e.MessageGroupID]; ok {
			continue
		}
		out[e.MessageGroupID] = nil
		ids = append(ids, e.MessageGroupID)
		refs = append(refs, d.groups(&q.doc).Doc(hashID(e.MessageGroupID)))
	}
	snaps, err := getAll(tx, refs)
	if err != nil {
		return nil, err
	}
	for i, s := range snaps {
		g := &groupDoc{Group: ids[i], Shard: shardOf(ids[i], q.doc.Shards), Ready: noReady}
		if s.Exists() {
			if err := s.DataTo(g); err != nil {
				return nil, err
			}
		}
		out[ids[i]] = g
	}
	return out, nil
}

// getAll reads refs in the transaction in path order, and returns the snapshots in the
// order of refs. Every transaction reads in path order, so two of them never wait for
// each other's locks in opposite orders (the emulator's locks then time one out).
func getAll(tx *fs.Transaction, refs []*fs.DocumentRef) ([]*fs.DocumentSnapshot, error) {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return refs[order[a]].Path < refs[order[b]].Path })
	sorted := make([]*fs.DocumentRef, len(refs))
	for i, o := range order {
		sorted[i] = refs[o]
	}
	snaps, err := tx.GetAll(sorted)
	if err != nil {
		return nil, err
	}
	out := make([]*fs.DocumentSnapshot, len(refs))
	for i, o := range order {
		out[o] = snaps[i]
	}
	return out, nil
}

// writes buffers a transaction's writes until its reads are done: Firestore
// transactions read everything before they write anything.
type writes []func(tx *fs.Transaction) error

func (w *writes) create(ref *fs.DocumentRef, v any) {
	*w = append(*w, func(tx *fs.Transaction) error { return tx.Create(ref, v) })
}

func (w *writes) set(ref *fs.DocumentRef, v any) {
	*w = append(*w, func(tx *fs.Transaction) error { return tx.Set(ref, v) })
}

func (w *writes) delete(ref *fs.DocumentRef) {
	*w = append(*w, func(tx *fs.Transaction) error { return tx.Delete(ref) })
}

func (w writes) apply(tx *fs.Transaction) error {
	for _, f := range w {
		if err := f(tx); err != nil {
			return err
		}
	}
	return nil
}
