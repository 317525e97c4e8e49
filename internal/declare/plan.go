package declare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/anysqs/anysqs/gateway/queueattr"
)

// Target is one account's queues, where declarations are applied: a gateway, or AWS SQS.
type Target interface {
	// Get returns the queue's attributes, as GetQueueAttributes returns All of them, and,
	// when tags is set, its tags; found is false when the queue does not exist.
	Get(ctx context.Context, name string, tags bool) (cur Current, found bool, err error)
	Create(ctx context.Context, name string, attrs, tags map[string]string) (Result, error)
	SetAttributes(ctx context.Context, name string, attrs map[string]string) (Result, error)
	Tag(ctx context.Context, name string, tags map[string]string) (Result, error)
}

// Current is what a target holds for a queue.
type Current struct {
	Attributes map[string]string
	Tags       map[string]string
}

// Result is what a change reported beside success.
type Result struct {
	// Degraded lists the capabilities an anysqs gateway served only in degraded form
	// (its X-Anysqs-Degraded header).
	Degraded []string
}

// Targets gives the target of an account ("" for the default one). An error wrapping
// ErrSkip leaves that account's queues out of the plan, with the error as the reason.
type Targets func(account string) (Target, error)

// ErrSkip marks an account the targets cannot reach.
var ErrSkip = errors.New("skipped")

// Op is what applying does to one queue.
type Op int

const (
	Unchanged Op = iota
	Create
	Update
	Skip
)

// Change is the plan for one declared queue.
type Change struct {
	Queue Queue
	Op    Op
	// Attributes are the attributes set: for a create, every declared one (From empty).
	Attributes []Diff
	Tags       []Diff
	Reason     string // Skip: why
	// Degraded is filled in by Apply: the capabilities the target degraded for it.
	Degraded []string
}

// Diff is one attribute or tag's current and declared values.
type Diff struct {
	Name, From, To string
	Existed        bool // From is a value the queue has (a tag may be absent)
}

// Label names the queue in plans and logs: NAME, or ACCOUNT/NAME for another account.
func (c Change) Label() string {
	if c.Queue.Account != "" {
		return c.Queue.Account + "/" + c.Queue.Name
	}
	return c.Queue.Name
}

// pendingARN stands for the ARN of a dead-letter queue the plan creates first.
func pendingARN(name string) string { return "(the ARN of " + name + ", created first)" }

// Plan compares the declarations with what the targets hold, dead-letter queues first.
// A dead-letter queue named but neither declared nor existing fails the plan, at the
// RedrivePolicy's line.
func Plan(ctx context.Context, targets Targets, qs []Queue) ([]Change, error) {
	if err := Check(qs); err != nil {
		return nil, err
	}
	idx, err := order(qs)
	if err != nil {
		return nil, err
	}
	p := planner{targets: targets, arns: map[string]string{}, creating: map[string]bool{}, tgt: map[string]Target{}}
	out := make([]Change, 0, len(qs))
	for _, i := range idx {
		c, err := p.plan(ctx, qs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

type planner struct {
	targets  Targets
	tgt      map[string]Target
	arns     map[string]string // queue key → ARN of an existing queue
	creating map[string]bool   // queue key → the plan creates it
}

func (p *planner) target(account string) (Target, error) {
	if t, ok := p.tgt[account]; ok {
		return t, nil
	}
	t, err := p.targets(account)
	if err != nil {
		return nil, err
	}
	p.tgt[account] = t
	return t, nil
}

func (p *planner) plan(ctx context.Context, q Queue) (Change, error) {
	c := Change{Queue: q}
	t, err := p.target(q.Account)
	if errors.Is(err, ErrSkip) {
		c.Op, c.Reason = Skip, err.Error()
		return c, nil
	}
	if err != nil {
		return c, err
	}
	cur, found, err := t.Get(ctx, q.Name, len(q.Tags) > 0)
	if err != nil {
		return c, q.errAt("", "reading the queue: "+sqsMessage(err))
	}
	if found {
		p.arns[q.Key()] = cur.Attributes[queueattr.QueueArn]
	}
	want, err := p.resolve(ctx, t, &q)
	if err != nil {
		return c, err
	}
	if !found {
		p.creating[q.Key()] = true
		c.Op = Create
		for _, n := range sortedKeys(want) {
			c.Attributes = append(c.Attributes, Diff{Name: n, To: want[n]})
		}
		for _, k := range sortedKeys(q.Tags) {
			c.Tags = append(c.Tags, Diff{Name: k, To: q.Tags[k]})
		}
		return c, nil
	}
	existing, err := queueattr.Parse(q.Name, cur.Attributes, anyARN)
	if err != nil {
		return c, q.errAt("", "the existing queue's attributes cannot be read: "+sqsMessage(err))
	}
	for _, n := range queueattr.Mismatches(existing, want, anyARN) {
		from, had := cur.Attributes[n]
		if n == queueattr.FifoQueue {
			return c, q.errAt(n, "the existing queue's type differs; SQS cannot change it: delete the queue and apply again")
		}
		c.Attributes = append(c.Attributes, Diff{Name: n, From: from, To: want[n], Existed: had})
	}
	for _, k := range sortedKeys(q.Tags) {
		if v, had := cur.Tags[k]; !had || v != q.Tags[k] {
			c.Tags = append(c.Tags, Diff{Name: k, From: v, To: q.Tags[k], Existed: had})
		}
	}
	if len(c.Attributes) > 0 || len(c.Tags) > 0 {
		c.Op = Update
	}
	return c, nil
}

// resolve returns q's attributes with its dead-letter queue's ARN filled in: read from
// the target, or a placeholder when the plan creates that queue first.
func (p *planner) resolve(ctx context.Context, t Target, q *Queue) (map[string]string, error) {
	if q.DeadLetter == "" {
		return q.Attributes, nil
	}
	key := q.Account + "/" + q.DeadLetter
	arn, known := p.arns[key]
	if !known && !p.creating[key] {
		cur, found, err := t.Get(ctx, q.DeadLetter, false)
		if err != nil {
			return nil, q.errAt(queueattr.RedrivePolicy, "reading the dead-letter queue "+q.DeadLetter+": "+sqsMessage(err))
		}
		if !found {
			return nil, q.errAt(queueattr.RedrivePolicy, "the dead-letter queue "+q.DeadLetter+" is neither declared nor existing")
		}
		arn, known = cur.Attributes[queueattr.QueueArn], true
		p.arns[key] = arn
	}
	if !known {
		return q.resolved(pendingARN), nil
	}
	return q.resolved(func(string) string { return arn }), nil
}

// Apply carries out the plan in its order, calling done after each queue it changed.
// A queue that another applier created meanwhile is compared again and updated. An
// error names the declaration's file and line, and the attribute at fault when the
// target's error names one.
func Apply(ctx context.Context, targets Targets, plan []Change, done func(Change)) error {
	p := planner{targets: targets, arns: map[string]string{}, creating: map[string]bool{}, tgt: map[string]Target{}}
	for _, c := range plan {
		if c.Op == Unchanged || c.Op == Skip {
			continue
		}
		t, err := p.target(c.Queue.Account)
		if err != nil {
			return err
		}
		q := c.Queue
		if c.Op == Create {
			want, err := p.resolve(ctx, t, &q)
			if err != nil {
				return err
			}
			res, err := t.Create(ctx, q.Name, want, q.Tags)
			if err == nil {
				c.Degraded = res.Degraded
				done(c)
				continue
			}
			if !exists(err) {
				return blame(&q, want, err)
			}
			// Created meanwhile, with other attributes: bring it into line instead.
			if c, err = p.plan(ctx, q); err != nil {
				return err
			}
			if c.Op == Unchanged {
				continue
			}
		}
		if err := update(ctx, t, &c); err != nil {
			return err
		}
		done(c)
	}
	return nil
}

func update(ctx context.Context, t Target, c *Change) error {
	q := &c.Queue
	if len(c.Attributes) > 0 {
		set := map[string]string{}
		for _, d := range c.Attributes {
			set[d.Name] = d.To
		}
		res, err := t.SetAttributes(ctx, q.Name, set)
		if err != nil {
			return blame(q, set, err)
		}
		c.Degraded = append(c.Degraded, res.Degraded...)
	}
	if len(c.Tags) > 0 {
		set := map[string]string{}
		for _, d := range c.Tags {
			set[d.Name] = d.To
		}
		res, err := t.Tag(ctx, q.Name, set)
		if err != nil {
			return q.errAt("", "tags: "+sqsMessage(err))
		}
		c.Degraded = append(c.Degraded, res.Degraded...)
	}
	return nil
}

// exists reports whether a create failed because the queue is there with other
// attributes.
func exists(err error) bool {
	m := sqsMessage(err)
	return strings.HasPrefix(m, "QueueNameExists") || strings.HasPrefix(m, "QueueAlreadyExists")
}

// blame locates a target's refusal: at the attribute its message names, else the queue.
func blame(q *Queue, attrs map[string]string, err error) error {
	msg := sqsMessage(err)
	names := sortedKeys(attrs)
	// Longest first: "RedrivePolicy" must not be taken for a shorter name it contains.
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		if strings.Contains(msg, n) {
			return q.errAt(n, msg)
		}
	}
	return q.errAt("", msg)
}

// Counts returns how many queues the plan creates, updates, leaves and skips.
func Counts(plan []Change) (create, update, unchanged, skip int) {
	for _, c := range plan {
		switch c.Op {
		case Create:
			create++
		case Update:
			update++
		case Unchanged:
			unchanged++
		case Skip:
			skip++
		}
	}
	return
}

// Print writes the plan as terraform plan does: + create, ~ update, = unchanged, - skip,
// each change's attributes and tags beneath it, then the counts.
func Print(w io.Writer, plan []Change) {
	for _, c := range plan {
		switch c.Op {
		case Create:
			fmt.Fprintf(w, "+ create %s\n", c.Label())
			for _, d := range c.Attributes {
				fmt.Fprintf(w, "      %s = %s\n", d.Name, d.To)
			}
			for _, d := range c.Tags {
				fmt.Fprintf(w, "      tag %s = %s\n", d.Name, d.To)
			}
		case Update:
			fmt.Fprintf(w, "~ update %s\n", c.Label())
			for _, d := range c.Attributes {
				fmt.Fprintf(w, "      %s: %s -> %s\n", d.Name, shown(d), d.To)
			}
			for _, d := range c.Tags {
				fmt.Fprintf(w, "      tag %s: %s -> %s\n", d.Name, shown(d), d.To)
			}
		case Unchanged:
			fmt.Fprintf(w, "= unchanged %s\n", c.Label())
		case Skip:
			fmt.Fprintf(w, "- skip %s: %s\n", c.Label(), c.Reason)
		}
	}
	cr, up, un, sk := Counts(plan)
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d unchanged", cr, up, un)
	if sk > 0 {
		fmt.Fprintf(w, ", %d skipped", sk)
	}
	fmt.Fprintln(w, ".")
}

func shown(d Diff) string {
	if !d.Existed {
		return "(none)"
	}
	return d.From
}
