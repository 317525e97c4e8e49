package servicebus

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// meta is what an entity's user metadata keeps: the SQS queue's name as given (entity
// names are case-insensitive), its times, its tags, and the attributes Service Bus has no
// property for. Attributes it has a property for live there: FifoQueue is
// RequiresSession, MessageRetentionPeriod the default time-to-live, the redrive policy
// MaxDeliveryCount and ForwardDeadLetteredMessagesTo.
type meta struct {
	Version      int               `json:"anysqs"`
	Name         string            `json:"n"`
	Created      int64             `json:"c"` // Unix milliseconds
	Modified     int64             `json:"m"`
	Visibility   int32             `json:"v"`
	Delay        int32             `json:"d,omitempty"`
	MaxSize      int32             `json:"s,omitempty"`
	Wait         int32             `json:"w,omitempty"`
	RedriveAllow string            `json:"ra,omitempty"`
	Policy       string            `json:"p,omitempty"`
	ContentDedup bool              `json:"cd,omitempty"`
	DedupScope   string            `json:"ds,omitempty"`
	Throughput   string            `json:"ft,omitempty"`
	KMS          string            `json:"k,omitempty"`
	KMSReuse     int32             `json:"kr,omitempty"`
	SSE          bool              `json:"e,omitempty"`
	Tags         map[string]string `json:"t,omitempty"`
	// Redrive is the redrive policy as set. The entity forwards to the entity of its
	// target (sqsrule.RedriveTarget) when that exists, which the gateway checks before
	// setting one.
	Redrive *drivers.RedrivePolicy `json:"r,omitempty"`
}

const metaVersion = 1

// noRedrive is the MaxDeliveryCount of a queue without a redrive target: Service Bus
// always dead-letters at some count, so the count is its largest.
const noRedrive = 1<<31 - 1

func (d *Driver) properties(ctx context.Context, q drivers.Queue) (QueueProperties, error) {
	a := q.Attributes
	m := meta{Version: metaVersion, Name: q.Name, Created: q.CreatedAt.UnixMilli(), Modified: q.LastModified.UnixMilli(),
		Visibility: a.VisibilityTimeout, Delay: a.DelaySeconds, MaxSize: a.MaximumMessageSize, Wait: a.ReceiveMessageWaitTimeSeconds,
		RedriveAllow: a.RedriveAllowPolicy, Policy: a.Policy, ContentDedup: a.ContentBasedDeduplication, DedupScope: a.DeduplicationScope,
		Throughput: a.FifoThroughputLimit, KMS: a.KmsMasterKeyID, KMSReuse: a.KmsDataKeyReusePeriodSeconds, SSE: a.SqsManagedSseEnabled,
		Tags: q.Tags, Redrive: a.RedrivePolicy}
	b, err := json.Marshal(m)
	if err != nil {
		return QueueProperties{}, err
	}
	if n := len([]rune(string(b))); n > MaxUserMetadata {
		return QueueProperties{}, drivers.Errorf(drivers.KindInvalidArgument,
			"servicebus: queue %s: its tags, policy and other attributes take %d characters, more than the %d Service Bus keeps in an entity's user metadata",
			q.Name, n, MaxUserMetadata)
	}
	p := QueueProperties{Name: d.entity(q.Name), LockDuration: d.lockDuration(), RequiresSession: a.FifoQueue,
		RequiresDuplicateDetection: a.FifoQueue, DefaultMessageTimeToLive: time.Duration(a.MessageRetentionPeriod) * time.Second,
		MaxDeliveryCount: noRedrive, UserMetadata: string(b)}
	if a.FifoQueue {
		p.DuplicateDetectionWindow = sqsrule.DedupWindow
	}
	if dlq, maxCount, ok := sqsrule.RedriveTarget(q.Name, a.RedrivePolicy); ok {
		if _, _, err := d.get(ctx, dlq); err == nil {
			p.MaxDeliveryCount = maxCount
			p.ForwardDeadLetteredMessagesTo = d.entity(dlq)
		} else if drivers.KindOf(err) != drivers.KindNotFound {
			return QueueProperties{}, err
		}
	}
	return p, nil
}

// queueOf decodes an entity; ok is false for entities anysqs does not manage.
func (d *Driver) queueOf(p QueueProperties) (drivers.Queue, bool) {
	var m meta
	if json.Unmarshal([]byte(p.UserMetadata), &m) != nil || m.Version != metaVersion || m.Name == "" ||
		!strings.EqualFold(d.entity(m.Name), p.Name) {
		return drivers.Queue{}, false
	}
	a := drivers.QueueAttributes{DelaySeconds: m.Delay, MaximumMessageSize: m.MaxSize,
		MessageRetentionPeriod: int32(p.DefaultMessageTimeToLive / time.Second), ReceiveMessageWaitTimeSeconds: m.Wait,
		VisibilityTimeout: m.Visibility, RedriveAllowPolicy: m.RedriveAllow, Policy: m.Policy, FifoQueue: p.RequiresSession,
		ContentBasedDeduplication: m.ContentDedup, DeduplicationScope: m.DedupScope, FifoThroughputLimit: m.Throughput,
		KmsMasterKeyID: m.KMS, KmsDataKeyReusePeriodSeconds: m.KMSReuse, SqsManagedSseEnabled: m.SSE}
	a.RedrivePolicy = m.Redrive
	tags := m.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return drivers.Queue{Name: m.Name, Attributes: a, Tags: tags, CreatedAt: time.UnixMilli(m.Created).UTC(),
		LastModified: time.UnixMilli(m.Modified).UTC()}, true
}

// get reads a queue; KindNotFound for a missing entity, one anysqs does not manage, or one
// whose name differs in case (Service Bus names are case-insensitive, SQS's are not).
func (d *Driver) get(ctx context.Context, name string) (drivers.Queue, QueueProperties, error) {
	p, err := d.ns.GetQueue(ctx, d.entity(name))
	if err != nil {
		return drivers.Queue{}, p, classify(err, "servicebus: queue "+name)
	}
	q, ok := d.queueOf(p)
	if !ok || q.Name != name {
		return drivers.Queue{}, p, drivers.Errorf(drivers.KindNotFound, "servicebus: queue %s does not exist", name)
	}
	return q, p, nil
}

// CreateQueue creates the entity with the queue's metadata. Service Bus has no
// name-reuse delay, so this instance keeps it for the deletions it made itself.
func (d *Driver) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	q := req.Queue
	now := d.now()
	q.CreatedAt, q.LastModified = now.UTC().Truncate(time.Millisecond), now.UTC().Truncate(time.Millisecond)
	if q.Tags == nil {
		q.Tags = map[string]string{}
	}
	if len(d.entity(q.Name)) > MaxEntityNameBytes {
		return drivers.CreateQueueResult{}, drivers.Errorf(drivers.KindInvalidArgument, "servicebus: queue name %s with the entity prefix exceeds %d characters", q.Name, MaxEntityNameBytes)
	}
	d.mu.Lock()
	at, deleted := d.deleted[strings.ToLower(q.Name)]
	d.mu.Unlock()
	if reuse := sqsrule.CheckNameReuse(q.Name, at, now); deleted && reuse != nil {
		existing, _, err := d.get(ctx, q.Name)
		if err == nil {
			return drivers.CreateQueueResult{Queue: existing, Existed: true}, nil
		}
		if drivers.KindOf(err) != drivers.KindNotFound {
			return drivers.CreateQueueResult{}, err
		}
		return drivers.CreateQueueResult{}, reuse
	}
	p, err := d.properties(ctx, q)
	if err != nil {
		return drivers.CreateQueueResult{}, err
	}
	err = d.ns.CreateQueue(ctx, p.Name, p)
	if errors.Is(err, ErrExists) {
		existing, _, gerr := d.get(ctx, q.Name)
		if gerr != nil && drivers.KindOf(gerr) != drivers.KindNotFound {
			return drivers.CreateQueueResult{}, gerr // the namespace failed the read: what it said
		}
		if gerr != nil {
			return drivers.CreateQueueResult{}, drivers.Errorf(drivers.KindAlreadyExists,
				"servicebus: entity %s exists and is not this anysqs queue (another name differing only in case, or an entity anysqs does not manage)", p.Name)
		}
		return drivers.CreateQueueResult{Queue: existing, Existed: true}, nil
	}
	if err != nil {
		return drivers.CreateQueueResult{}, classify(err, "servicebus: create queue "+q.Name)
	}
	return drivers.CreateQueueResult{Queue: q}, nil
}

// GetQueue reads the entity and its metadata.
func (d *Driver) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	q, _, err := d.get(ctx, req.Name)
	return q, err
}

// ListQueues lists the namespace's entities and keeps the anysqs queues.
func (d *Driver) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	all, err := d.ns.ListQueues(ctx)
	if err != nil {
		return drivers.ListQueuesResult{}, classify(err, "servicebus: list queues")
	}
	var qs []drivers.Queue
	for _, p := range all {
		if q, ok := d.queueOf(p); ok && strings.HasPrefix(q.Name, req.Prefix) && q.Name > req.After {
			qs = append(qs, q)
		}
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].Name < qs[j].Name })
	var out drivers.ListQueuesResult
	if req.Limit > 0 && len(qs) > req.Limit {
		qs, out.More = qs[:req.Limit], true
	}
	out.Queues = qs
	return out, nil
}

// SetQueueAttributes updates the entity's properties and metadata.
func (d *Driver) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	q, _, err := d.get(ctx, req.Name)
	if err != nil {
		return err
	}
	q.Attributes = req.Attributes
	q.LastModified = d.now().UTC().Truncate(time.Millisecond)
	d.forgetScope(req.Name)
	return d.update(ctx, q)
}

func (d *Driver) update(ctx context.Context, q drivers.Queue) error {
	p, err := d.properties(ctx, q)
	if err != nil {
		return err
	}
	return classify(d.ns.UpdateQueue(ctx, p.Name, p), "servicebus: update queue "+q.Name)
}

// UpdateQueueTags rewrites the metadata. Two gateways tagging one queue at the same
// moment may lose one of the changes: the admin API offers no conditional update here.
func (d *Driver) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	q, _, err := d.get(ctx, req.Name)
	if err != nil {
		return err
	}
	for k, v := range req.Set {
		q.Tags[k] = v
	}
	for _, k := range req.Remove {
		delete(q.Tags, k)
	}
	return d.update(ctx, q)
}

// DeleteQueue deletes the entity with its messages.
func (d *Driver) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	if _, _, err := d.get(ctx, req.Name); err != nil {
		return err
	}
	if err := d.ns.DeleteQueue(ctx, d.entity(req.Name)); err != nil {
		return classify(err, "servicebus: delete queue "+req.Name)
	}
	d.dropReceivers(req.Name)
	d.forgetScope(req.Name)
	d.mu.Lock()
	d.deleted[strings.ToLower(req.Name)] = d.now()
	for h, x := range d.held {
		if x.queue == req.Name {
			d.forgetLocked(x, false)
			delete(d.held, h)
		}
	}
	for k := range d.dedups {
		if k.queue == req.Name {
			delete(d.dedups, k)
		}
	}
	d.mu.Unlock()
	return nil
}

// PurgeQueue deletes the messages this instance holds, every available message
// (receiving and completing them), and the scheduled ones (cancelling them). Messages
// that another gateway instance holds locked are out of reach and survive.
func (d *Driver) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	if _, _, err := d.get(ctx, req.Name); err != nil {
		return err
	}
	now := d.now()
	key := strings.ToLower(req.Name)
	d.mu.Lock()
	if err := sqsrule.CheckPurge(req.Name, d.purged[key], now); err != nil {
		d.mu.Unlock()
		return err
	}
	d.purged[key] = now
	d.mu.Unlock()
	d.releaseQueue(ctx, req.Name, true)
	if _, err := d.drain(ctx, req.Name, -1, func(m *ReceivedMessage) error { return nil }); err != nil {
		return err
	}
	var from int64
	for {
		page, err := d.ns.Peek(ctx, d.entity(req.Name), from, 100)
		if err != nil {
			return classify(err, "servicebus: purge "+req.Name)
		}
		if len(page) == 0 {
			return nil
		}
		var seqs []int64
		for _, m := range page {
			if m.Scheduled {
				seqs = append(seqs, m.SequenceNumber)
			}
			from = m.SequenceNumber + 1
		}
		if len(seqs) > 0 {
			if err := d.ns.CancelScheduled(ctx, d.entity(req.Name), seqs); err != nil {
				return classify(err, "servicebus: purge "+req.Name)
			}
		}
	}
}

// drain receives available messages of queue (up to limit; -1: all), hands each to use
// and completes it when use succeeds; a message use refuses is abandoned and the drain
// stops with use's error. It returns how many were completed.
func (d *Driver) drain(ctx context.Context, queue string, limit int, use func(*ReceivedMessage) error) (int, error) {
	done := 0
	want := func() int {
		if limit < 0 {
			return 100
		}
		return min(100, limit-done)
	}
	settle := func(r Receiver, msgs []*ReceivedMessage) error {
		for i, m := range msgs {
			if err := use(m); err != nil {
				for _, rest := range msgs[i:] {
					_ = r.Abandon(ctx, rest, nil)
				}
				return err
			}
			if err := r.Complete(ctx, m); err != nil {
				return classify(err, "servicebus: complete in "+queue)
			}
			done++
		}
		return nil
	}
	for want() > 0 {
		if isFIFO(queue) {
			actx, cancel := context.WithTimeout(ctx, 0)
			sr, err := d.ns.AcceptNextSession(actx, d.entity(queue))
			cancel()
			if errors.Is(err, ErrNoSession) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return done, nil
			}
			if err != nil {
				return done, classify(err, "servicebus: accept a session of "+queue)
			}
			for want() > 0 {
				msgs, err := sr.Receive(ctx, want(), 0)
				if err == nil && len(msgs) > 0 {
					err = settle(sr, msgs)
				}
				if err != nil || len(msgs) == 0 {
					_ = sr.Close(context.Background())
					if err != nil {
						return done, err
					}
					break
				}
			}
			_ = sr.Close(context.Background())
			continue
		}
		r, err := d.receiver(ctx, queue)
		if err != nil {
			return done, err
		}
		msgs, err := r.Receive(ctx, want(), 0)
		if err == nil {
			err = settle(r, msgs)
		}
		d.idle(queue, r)
		if err != nil {
			return done, classify(err, "servicebus: receive from "+queue)
		}
		if len(msgs) == 0 {
			return done, nil
		}
	}
	return done, nil
}

// QueueStats reads the entity's runtime counts (Manage rights). Service Bus counts a
// locked message as active; the messages this instance holds are counted in flight, those
// other instances hold as visible.
func (d *Driver) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	if _, _, err := d.get(ctx, req.Name); err != nil {
		return drivers.QueueStats{}, err
	}
	rp, err := d.ns.QueueRuntime(ctx, d.entity(req.Name))
	if err != nil {
		return drivers.QueueStats{}, classify(err, "servicebus: counts of "+req.Name)
	}
	d.mu.Lock()
	var mine int64
	for _, h := range d.held {
		if h.queue == req.Name {
			mine++
		}
	}
	d.mu.Unlock()
	mine = min(mine, rp.Active)
	return drivers.QueueStats{Visible: rp.Active - mine, NotVisible: mine, Delayed: rp.Scheduled}, nil
}
