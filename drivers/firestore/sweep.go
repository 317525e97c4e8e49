package firestore

import (
	"context"

	fs "cloud.google.com/go/firestore"

	"github.com/anysqs/anysqs/drivers"
)

// defaultSweepLimit bounds one Sweep call when the request gives no limit.
const defaultSweepLimit = 500

// sweeper deletes documents within one Sweep call's budget.
type sweeper struct {
	d     *Driver
	ctx   context.Context
	left  int
	res   drivers.SweepResult
	count bool // deletions of this kind count towards res.Deleted
	// chunks, when set, names the chunk documents of a message being deleted.
	chunks func(*fs.DocumentSnapshot) []*fs.DocumentRef
}

// query deletes up to the remaining budget of q's documents; it reports whether the
// budget ran out.
func (s *sweeper) query(q fs.Query) (bool, error) {
	if s.left <= 0 {
		s.res.More = true
		return true, nil
	}
	snaps, err := q.Limit(s.left).Documents(s.ctx).GetAll()
	if err != nil {
		return false, err
	}
	if len(snaps) == 0 {
		return false, nil
	}
	bw := s.d.client.BulkWriter(s.ctx)
	jobs := make([]*fs.BulkWriterJob, 0, len(snaps))
	for _, snap := range snaps {
		refs := []*fs.DocumentRef{snap.Ref}
		if s.chunks != nil {
			refs = append(refs, s.chunks(snap)...)
		}
		for _, ref := range refs {
			j, err := bw.Delete(ref)
			if err != nil {
				bw.End()
				return false, err
			}
			jobs = append(jobs, j)
		}
	}
	bw.End()
	for _, j := range jobs {
		if _, err := j.Results(); err != nil {
			return false, err
		}
	}
	s.left -= len(snaps)
	if s.count {
		s.res.Deleted += len(snaps)
	}
	if s.left <= 0 {
		s.res.More = true
		return true, nil
	}
	return false, nil
}

// Sweep deletes, within req.Limit documents, expired messages, deduplication and
// receive-attempt records, name-reuse records older than the delay, and the storage of
// deleted and purged queues. Expired messages are never delivered or counted meanwhile.
func (d *Driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = defaultSweepLimit
	}
	s := &sweeper{d: d, ctx: ctx, left: limit, count: true}
	now := toNanos(req.Now)
	err := d.sweep(s, now)
	if err != nil {
		return drivers.SweepResult{}, classify(ctx, err, "sweep")
	}
	return s.res, nil
}

func (d *Driver) sweep(s *sweeper, now int64) error {
	qsnaps, err := d.queues().Documents(s.ctx).GetAll()
	if err != nil {
		return err
	}
	for _, qs := range qsnaps {
		q, err := decodeQueue(qs)
		if err != nil {
			return err
		}
		cutoff := q.retentionCutoff(now)
		s.chunks = func(snap *fs.DocumentSnapshot) []*fs.DocumentRef {
			v, _ := snap.DataAt("ck")
			n, _ := v.(int64)
			return d.chunkRefs(&q.doc, snap.Ref.ID, n)
		}
		for sh := int64(0); sh < q.doc.Shards; sh++ {
			if done, err := s.query(d.messages(&q.doc).Where("sh", "==", sh).Where("enq", "<=", cutoff)); done || err != nil {
				return err
			}
		}
		s.chunks = nil
		if !q.doc.FIFO {
			continue
		}
		for _, c := range []*fs.CollectionRef{d.dedups(&q.doc), d.attempts(&q.doc)} {
			if done, err := s.query(c.Where("exp", "<=", now)); done || err != nil {
				return err
			}
		}
	}
	if done, err := s.query(d.deleted().Where("at", "<=", now-int64(drivers.QueueNameReuseDelay))); done || err != nil {
		return err
	}
	return d.sweepCleanup(s)
}

// sweepCleanup deletes the storage of deleted and purged queues, then the record.
func (d *Driver) sweepCleanup(s *sweeper) error {
	snaps, err := d.cleanup().Limit(20).Documents(s.ctx).GetAll()
	if err != nil {
		return err
	}
	for _, snap := range snaps {
		var c cleanupDoc
		if err := snap.DataTo(&c); err != nil {
			return err
		}
		for _, coll := range c.Colls {
			before := s.left
			if done, err := s.query(d.store().Doc(c.Store).Collection(coll).Query); done || err != nil {
				return err
			}
			if s.left != before {
				// The collection may hold more than the query saw: look again next time.
				s.res.More = true
				return nil
			}
		}
		if _, err := snap.Ref.Delete(s.ctx); err != nil {
			return err
		}
	}
	return nil
}
