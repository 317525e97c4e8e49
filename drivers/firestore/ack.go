package firestore

import (
	"context"
	"time"

	fs "cloud.google.com/go/firestore"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// looked is one batch entry's handle and the message it names, read in the transaction.
type looked struct {
	state   sqsrule.HandleState
	ref     *fs.DocumentRef
	msg     *msgDoc
	applied bool // a visibility change of this entry is written
}

// lookupHandles reads, inside tx, the messages the handles name. Entries naming the same
// message share one read, and see each other's effect in order (seen).
func (d *Driver) lookupHandles(tx *fs.Transaction, q *queue, handles []string, now int64) ([]*looked, error) {
	out := make([]*looked, len(handles))
	var refs []*fs.DocumentRef
	idx := map[string]int{}
	for i, h := range handles {
		r, ok := d.decodeHandle(h)
		out[i] = &looked{state: sqsrule.HandleForeign}
		if !ok || r.qid != q.doc.QID {
			continue
		}
		if r.mi != q.doc.MI {
			out[i].state = sqsrule.HandleGone // the queue was purged since
			continue
		}
		ref := d.messages(&q.doc).Doc(r.doc)
		out[i].ref = ref
		if _, ok := idx[ref.ID]; !ok {
			idx[ref.ID] = len(refs)
			refs = append(refs, ref)
		}
		out[i].msg = &msgDoc{Gen: r.gen} // the handle's generation until the read below
	}
	if len(refs) == 0 {
		return out, nil
	}
	snaps, err := getAll(tx, refs)
	if err != nil {
		return nil, err
	}
	docs := make([]*msgDoc, len(snaps))
	for i, s := range snaps {
		if s.Exists() {
			if docs[i], err = readMsg(s); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range out {
		if l.ref == nil {
			continue
		}
		m := docs[idx[l.ref.ID]]
		switch {
		case m == nil:
			l.state = sqsrule.HandleGone
		case m.Gen != l.msg.Gen:
			l.state = sqsrule.HandleStale
		case m.Vis <= now:
			l.state = sqsrule.HandleExpired
		default:
			l.state = sqsrule.HandleInFlight
		}
		l.msg = m
	}
	return out, nil
}

// fifoGroups reads the group documents of the given messages.
func (d *Driver) fifoGroups(tx *fs.Transaction, q *queue, msgs []*msgDoc) (map[string]*groupDoc, error) {
	var entries []drivers.SendEntry
	for _, m := range msgs {
		entries = append(entries, drivers.SendEntry{MessageGroupID: m.Group})
	}
	if len(entries) == 0 {
		return nil, nil
	}
	return d.readGroups(tx, q, entries)
}

// deletesLast says whether msgs hold group's message with sequence number last.
func deletesLast(msgs []*msgDoc, group string, last int64) bool {
	for _, m := range msgs {
		if m.Group == group && m.Seq == last {
			return true
		}
	}
	return false
}

// DeleteMessages deletes by receipt handle in one transaction; see drivers.Driver for
// the stale-handle rules. For FIFO queues the group documents learn that the group may
// be free.
func (d *Driver) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	var res drivers.BatchResult
	now := toNanos(req.Now)
	handles := make([]string, len(req.Entries))
	for i, e := range req.Entries {
		handles[i] = e.ReceiptHandle
	}
	err := d.runTx(ctx, "delete from "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		res = drivers.BatchResult{Entries: make([]drivers.EntryResult, len(req.Entries))}
		q, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		found, err := d.lookupHandles(tx, q, handles, now)
		if err != nil {
			return err
		}
		var w writes
		var deleted []*msgDoc
		gone := map[string]bool{}
		for i, l := range found {
			res.Entries[i].EntryID = req.Entries[i].EntryID
			if l.ref != nil && gone[l.ref.ID] {
				l.state = sqsrule.HandleStale
			}
			remove, rerr := sqsrule.Delete(l.state, q.doc.FIFO)
			res.Entries[i].Err = rerr
			if remove {
				w.delete(l.ref)
				for _, c := range d.chunkRefs(&q.doc, l.ref.ID, l.msg.Chunks) {
					w.delete(c)
				}
				gone[l.ref.ID] = true
				deleted = append(deleted, l.msg)
			}
		}
		if q.doc.FIFO {
			groups, err := d.fifoGroups(tx, q, deleted)
			if err != nil {
				return err
			}
			for id, g := range groups {
				for doc := range gone {
					delete(g.InFlight, doc)
				}
				g.Ready = min(g.Ready, now) // the group may be free: the next claim finds out
				if len(g.InFlight) == 0 && deletesLast(deleted, id, g.Last) {
					// A claim takes a group's messages in order from its head, so when
					// the last one issued is gone and none it claimed is left, the group
					// is empty: it drops out of the receives' candidates.
					g.Ready = noReady
				}
				w.set(d.groups(&q.doc).Doc(hashID(id)), g)
			}
		}
		return w.apply(tx)
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return res, nil
}

// ChangeVisibility moves visibility deadlines; see drivers.Driver for which handles apply.
func (d *Driver) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	var res drivers.BatchResult
	now := toNanos(req.Now)
	handles := make([]string, len(req.Entries))
	for i, e := range req.Entries {
		handles[i] = e.ReceiptHandle
	}
	err := d.runTx(ctx, "change visibility in "+req.Name, func(ctx context.Context, tx *fs.Transaction) error {
		res = drivers.BatchResult{Entries: make([]drivers.EntryResult, len(req.Entries))}
		q, err := d.loadQueue(ctx, tx, req.Name)
		if err != nil {
			return err
		}
		found, err := d.lookupHandles(tx, q, handles, now)
		if err != nil {
			return err
		}
		var w writes
		var changed []*msgDoc
		refs := map[string]*fs.DocumentRef{}
		for i, l := range found {
			e := req.Entries[i]
			res.Entries[i].EntryID = e.EntryID
			deadline := now + int64(e.VisibilityTimeout)*int64(time.Second)
			// Standard queues take any handle of a message that still exists, as SQS does;
			// FIFO queues only the current handle of an in-flight message.
			var received int64
			if l.msg != nil {
				received = l.msg.Received
			}
			apply, rerr := sqsrule.ChangeVisibility(l.state, q.doc.FIFO, e.VisibilityTimeout, fromNanos(deadline), fromNanos(received))
			res.Entries[i].Err = rerr
			if apply {
				l.msg.Vis = deadline
				l.applied = true
				if _, ok := refs[l.ref.ID]; !ok {
					changed = append(changed, l.msg)
				}
				refs[l.ref.ID] = l.ref
			}
		}
		// Entries naming one message share its document, written once with the last value.
		for id, ref := range refs {
			vis := found[lastIndex(found, id)].msg.Vis
			w = append(w, func(tx *fs.Transaction) error { return tx.Update(ref, []fs.Update{{Path: "vis", Value: vis}}) })
		}
		if q.doc.FIFO {
			// Only an earlier deadline can free a group sooner; a later one is found by the
			// claim that the old ready time lets in.
			groups, err := d.fifoGroups(tx, q, changed)
			if err != nil {
				return err
			}
			lowered := map[string]bool{}
			for _, m := range changed {
				if g := groups[m.Group]; m.Vis < g.Ready {
					g.Ready = m.Vis
					lowered[m.Group] = true
				}
			}
			for id := range lowered {
				w.set(d.groups(&q.doc).Doc(hashID(id)), groups[id])
			}
		}
		return w.apply(tx)
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return res, nil
}

// lastIndex is the last entry of found that names document id.
func lastIndex(found []*looked, id string) int {
	last := -1
	for i, l := range found {
		if l.ref != nil && l.ref.ID == id && l.applied {
			last = i
		}
	}
	return last
}
