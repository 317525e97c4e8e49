package migrate

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// Gap is something a source queue uses that the destination declares it cannot keep as
// the source does.
type Gap struct {
	Queue      string
	Capability capabilities.ID
	From, To   capabilities.Level
	Note       string // the destination's note on its declaration
	Effect     string // what the migration does about it
}

func (g Gap) String() string {
	s := fmt.Sprintf("%s: %s is %s at the destination (%s at the source): %s", g.Queue, g.Capability, g.To, g.From, g.Effect)
	if g.Note != "" {
		s += " (" + g.Note + ")"
	}
	return s
}

// use is one capability a queue may use: whether q uses it, and, when the destination
// does not support it, what to drop so the queue can still be created (nil: the queue is
// refused).
type use struct {
	id   capabilities.ID
	uses func(q drivers.Queue) bool
	drop func(q *drivers.Queue)
}

func attrs(q drivers.Queue) drivers.QueueAttributes { return q.Attributes }

var uses = []use{
	{capabilities.QueueStandard, func(q drivers.Queue) bool { return !q.Attributes.FifoQueue }, nil},
	{capabilities.QueueFIFO, func(q drivers.Queue) bool { return q.Attributes.FifoQueue }, nil},
	{capabilities.FIFOOrdering, func(q drivers.Queue) bool { return q.Attributes.FifoQueue }, func(*drivers.Queue) {}},
	{capabilities.FIFODedupExplicit, func(q drivers.Queue) bool { return q.Attributes.FifoQueue }, func(*drivers.Queue) {}},
	{capabilities.FIFODedupContent, func(q drivers.Queue) bool { return attrs(q).ContentBasedDeduplication },
		func(q *drivers.Queue) { q.Attributes.ContentBasedDeduplication = false }},
	{capabilities.FIFODedupScopeGroup, func(q drivers.Queue) bool { return attrs(q).DeduplicationScope == "messageGroup" },
		func(q *drivers.Queue) { q.Attributes.DeduplicationScope = "queue" }},
	{capabilities.QueueTags, func(q drivers.Queue) bool { return len(q.Tags) > 0 }, func(q *drivers.Queue) { q.Tags = nil }},
	{capabilities.DelayQueue, func(q drivers.Queue) bool { return attrs(q).DelaySeconds > 0 },
		func(q *drivers.Queue) { q.Attributes.DelaySeconds = 0 }},
	{capabilities.RedriveDLQ, func(q drivers.Queue) bool { return attrs(q).RedrivePolicy != nil },
		func(q *drivers.Queue) { q.Attributes.RedrivePolicy = nil }},
	{capabilities.AttrRedrivePolicy, func(q drivers.Queue) bool { return attrs(q).RedrivePolicy != nil },
		func(q *drivers.Queue) { q.Attributes.RedrivePolicy = nil }},
	{capabilities.RedriveAllow, func(q drivers.Queue) bool { return attrs(q).RedriveAllowPolicy != "" },
		func(q *drivers.Queue) { q.Attributes.RedriveAllowPolicy = "" }},
	{capabilities.AttrRedriveAllow, func(q drivers.Queue) bool { return attrs(q).RedriveAllowPolicy != "" },
		func(q *drivers.Queue) { q.Attributes.RedriveAllowPolicy = "" }},
	{capabilities.AttrPolicy, func(q drivers.Queue) bool { return attrs(q).Policy != "" },
		func(q *drivers.Queue) { q.Attributes.Policy = "" }},
	{capabilities.AttrThroughputLimit, func(q drivers.Queue) bool { return attrs(q).FifoThroughputLimit == "perMessageGroupId" }, func(*drivers.Queue) {}},
	{capabilities.AttrKMS, func(q drivers.Queue) bool { return attrs(q).KmsMasterKeyID != "" }, func(*drivers.Queue) {}},
	{capabilities.AttrSSE, func(q drivers.Queue) bool { return attrs(q).SqsManagedSseEnabled }, func(*drivers.Queue) {}},
	{capabilities.RetentionPeriod, func(q drivers.Queue) bool { return true }, func(*drivers.Queue) {}},
	{capabilities.MessageAttrs, func(q drivers.Queue) bool { return true }, func(*drivers.Queue) {}},
	{capabilities.MessageSystem, func(q drivers.Queue) bool { return true }, func(*drivers.Queue) {}},
	{capabilities.DelayMessage, func(q drivers.Queue) bool { return !q.Attributes.FifoQueue }, func(*drivers.Queue) {}},
	{capabilities.MessageMaxSize, func(q drivers.Queue) bool { return attrs(q).MaximumMessageSize > 256<<10 }, func(*drivers.Queue) {}},
}

// rank orders levels by how much of SQS they keep.
func rank(l capabilities.Level) int {
	switch l {
	case capabilities.Native, capabilities.Emulated:
		return 2
	case capabilities.Degraded:
		return 1
	}
	return 0
}

// queuePlan is the queues to migrate, in creation order, and what cannot be kept.
type queuePlan struct {
	queues  []drivers.Queue // as they will be created at the destination
	refused map[string]string
	gaps    []Gap
}

// plan lists the source queues, works out the gaps and the creation order. It writes
// nothing.
func (m *migration) plan(ctx context.Context) (queuePlan, error) {
	p := queuePlan{refused: map[string]string{}}
	all, err := listQueues(ctx, m.o.From.Driver)
	if err != nil {
		return p, fmt.Errorf("source: list queues: %w", err)
	}
	selected := map[string]drivers.Queue{}
	var names []string
	for _, q := range all {
		ok, err := path.Match(m.queuePattern(), q.Name)
		if err != nil {
			return p, fmt.Errorf("--queues %q: %w", m.o.Queues, err)
		}
		if ok {
			selected[q.Name] = q
			names = append(names, q.Name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		q := selected[name]
		q.Attributes.RedriveAllowPolicy = m.rewriteARNs(q.Attributes.RedriveAllowPolicy)
		q.Attributes.Policy = m.rewriteARNs(q.Attributes.Policy)
		for _, u := range uses {
			if !u.uses(q) {
				continue
			}
			from, _ := m.fromDesc.Declaration(u.id)
			to, _ := m.toDesc.Declaration(u.id)
			if rank(to.Level) >= rank(from.Level) {
				continue
			}
			g := Gap{Queue: name, Capability: u.id, From: from.Level, To: to.Level, Note: to.Note}
			switch {
			case to.Level == capabilities.Degraded || to.Level == "":
				g.Effect = "kept in the destination's degraded form"
			case u.drop == nil:
				g.Effect = "queue not migrated"
				p.refused[name] = fmt.Sprintf("the destination does not support %s", u.id)
			default:
				g.Effect = "the queue is created without it"
				u.drop(&q)
			}
			p.gaps = append(p.gaps, g)
		}
		selected[name] = q
	}
	// Dead-letter queues first: a depth-first walk along RedrivePolicy.
	seen := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		q := selected[name]
		if rp := q.Attributes.RedrivePolicy; rp != nil {
			if _, ok := selected[rp.DeadLetterQueue]; ok {
				visit(rp.DeadLetterQueue)
			}
		}
		p.queues = append(p.queues, q)
	}
	for _, name := range names {
		visit(name)
	}
	return p, nil
}

func (m *migration) queuePattern() string {
	if m.o.Queues == "" {
		return "*"
	}
	return m.o.Queues
}

// rewriteARNs points the queue ARNs in a policy document at the destination's account
// and region, when they differ from the source's.
func (m *migration) rewriteARNs(doc string) string {
	from := "arn:aws:sqs:" + m.o.From.Region + ":" + m.o.From.AccountID + ":"
	to := "arn:aws:sqs:" + m.o.To.Region + ":" + m.o.To.AccountID + ":"
	if doc == "" || from == to {
		return doc
	}
	return strings.ReplaceAll(doc, from, to)
}

func listQueues(ctx context.Context, d drivers.Driver) ([]drivers.Queue, error) {
	var all []drivers.Queue
	after := ""
	for {
		res, err := d.ListQueues(ctx, drivers.ListQueuesRequest{After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		all = append(all, res.Queues...)
		if !res.More || len(res.Queues) == 0 {
			return all, nil
		}
		after = res.Queues[len(res.Queues)-1].Name
	}
}

// createQueues creates the planned queues at the destination, in order. A queue that
// exists there with other attributes, or whose dead-letter queue is missing or refused,
// is refused.
func (m *migration) createQueues(ctx context.Context, p queuePlan) []QueueReport {
	var out []QueueReport
	refused := p.refused
	for _, q := range p.queues {
		r := QueueReport{Name: q.Name, Refused: refused[q.Name]}
		if r.Refused == "" {
			r.Existed, r.Refused = m.createQueue(ctx, q, refused)
		}
		if r.Refused != "" {
			refused[q.Name] = r.Refused
			m.o.Log.Warn("queue refused", "queue", q.Name, "reason", r.Refused)
		} else {
			m.o.Log.Info("queue ready", "queue", q.Name, "existed", r.Existed)
		}
		out = append(out, r)
	}
	return out
}

func (m *migration) createQueue(ctx context.Context, q drivers.Queue, refused map[string]string) (existed bool, reason string) {
	to := m.o.To.Driver
	if rp := q.Attributes.RedrivePolicy; rp != nil {
		if why, ok := refused[rp.DeadLetterQueue]; ok {
			return false, fmt.Sprintf("its dead-letter queue %s was not migrated: %s", rp.DeadLetterQueue, why)
		}
		if _, err := to.GetQueue(ctx, drivers.GetQueueRequest{Name: rp.DeadLetterQueue}); err != nil {
			return false, fmt.Sprintf("its dead-letter queue %s is not at the destination (include it in --queues): %v", rp.DeadLetterQueue, err)
		}
	}
	now := m.o.Now()
	want := q
	want.CreatedAt, want.LastModified = now, now
	res, err := to.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: want})
	if err != nil {
		return false, fmt.Sprintf("create at the destination: %v", err)
	}
	if res.Existed {
		if !reflect.DeepEqual(res.Queue.Attributes, q.Attributes) {
			return true, fmt.Sprintf("exists at the destination with other attributes (%s); "+
				"delete it there or make them equal, then run again", attrDiff(res.Queue.Attributes, q.Attributes))
		}
	}
	if len(q.Tags) > 0 && (res.Existed || !reflect.DeepEqual(res.Queue.Tags, q.Tags)) {
		if err := to.UpdateQueueTags(ctx, drivers.UpdateQueueTagsRequest{Name: q.Name, Set: q.Tags}); err != nil {
			return res.Existed, fmt.Sprintf("tag at the destination: %v", err)
		}
	}
	return res.Existed, ""
}

// attrDiff names the attributes that differ, destination value first.
func attrDiff(have, want drivers.QueueAttributes) string {
	hv, wv := reflect.ValueOf(have), reflect.ValueOf(want)
	var diffs []string
	for i := range hv.NumField() {
		a, b := hv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s %v there, %v here", hv.Type().Field(i).Name, show(a), show(b)))
		}
	}
	return strings.Join(diffs, "; ")
}

func show(v any) any {
	if rp, ok := v.(*drivers.RedrivePolicy); ok && rp != nil {
		return *rp
	}
	return v
}
