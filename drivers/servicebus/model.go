package servicebus

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Model is an in-memory model of one Service Bus namespace, following the documented
// behaviour of queue entities that the driver relies on: peek-lock receives whose locks
// run out on the model's own clock (the wall clock; nobody can move it), delivery counts
// and dead-lettering at MaxDeliveryCount (to the entity named by
// ForwardDeadLetteredMessagesTo, else to the entity's dead-letter subqueue), duplicate
// detection by MessageID within the entity's window, exclusive session locks, scheduled
// messages, and time-to-live. It is a test double and a demo backend: nothing survives
// the process, and what it does has not been compared with a real namespace except where
// the namespace contract suite ran against one.
//
// Its limits are Service Bus Standard's: locks of 5 s to 5 min, a duplicate-detection
// window of at least 20 s, 1024 characters of user metadata, 256 KiB messages.
//
// Where the documentation leaves a choice open the model makes one, which the namespace
// contract suite does not (yet) pin down: AcceptNextSession offers the session whose next
// message has waited longest; a message forwarded to a dead-letter entity starts a new
// delivery count and time-to-live there; duplicate detection applies to a scheduled
// message when it is scheduled.
type Model struct {
	mu      sync.Mutex
	queues  map[string]*mQueue // by lower-case name: entity names are case-insensitive
	changed chan struct{}      // closed and replaced on every change, to wake waiters
	tokens  uint64
}

// NewModel returns an empty model namespace.
func NewModel() *Model {
	return &Model{queues: map[string]*mQueue{}, changed: make(chan struct{})}
}

var (
	modelsMu sync.Mutex
	models   = map[string]*Model{}
)

// SharedModel returns the model namespace called name, creating it on first use: every
// driver of this process that names it sees the same namespace, as gateways sharing a
// real namespace would.
func SharedModel(name string) *Model {
	modelsMu.Lock()
	defer modelsMu.Unlock()
	m, ok := models[name]
	if !ok {
		m = NewModel()
		models[name] = m
	}
	return m
}

// Connect opens a connection to the model, as a client opens one to a namespace:
// closing it releases the session locks of its receivers.
func (m *Model) Connect() Namespace { return &modelConn{m: m} }

type mQueue struct {
	props    QueueProperties
	seq      int64
	msgs     []*mMsg // by sequence number: scheduled, available and locked
	dlq      []*mMsg // the dead-letter subqueue
	dedup    map[string]time.Time
	sessions map[string]*mSession // locked sessions
}

type mMsg struct {
	id, session      string
	body             []byte
	props            map[string]any
	seq              int64
	deliveries       uint32
	enqueued         time.Time
	expires          time.Time
	deadLetterSource string
	// since is when it last became available: sessions are offered longest-waiting first.
	since time.Time
	// token is the current lock (0: not locked); owner the receiver holding it.
	token       uint64
	owner       any
	lockedUntil time.Time
}

type mSession struct {
	owner       *modelSession
	lockedUntil time.Time
}

func (m *Model) now() time.Time { return time.Now() }

// broadcast wakes every waiter; call with m.mu held.
func (m *Model) broadcast() {
	close(m.changed)
	m.changed = make(chan struct{})
}

func (m *Model) queue(name string) (*mQueue, error) {
	q, ok := m.queues[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: queue %s", ErrNotFound, name)
	}
	return q, nil
}

func validateProps(p QueueProperties) error {
	switch {
	case p.Name == "" || len(p.Name) > MaxEntityNameBytes || strings.Trim(p.Name, "/.") != p.Name ||
		strings.IndexFunc(p.Name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r))
		}) >= 0:
		return fmt.Errorf("servicebus model: invalid entity name %q", p.Name)
	case p.LockDuration < MinLockDuration || p.LockDuration > MaxLockDuration:
		return fmt.Errorf("servicebus model: lock duration %v is outside 5s..5m", p.LockDuration)
	case p.RequiresDuplicateDetection && (p.DuplicateDetectionWindow < MinDedupWindow || p.DuplicateDetectionWindow > 7*24*time.Hour):
		return fmt.Errorf("servicebus model: duplicate detection window %v is outside 20s..7d", p.DuplicateDetectionWindow)
	case p.DefaultMessageTimeToLive <= 0:
		return fmt.Errorf("servicebus model: time-to-live %v is not positive", p.DefaultMessageTimeToLive)
	case p.MaxDeliveryCount < 1:
		return fmt.Errorf("servicebus model: max delivery count %d is below 1", p.MaxDeliveryCount)
	case len([]rune(p.UserMetadata)) > MaxUserMetadata:
		return fmt.Errorf("servicebus model: user metadata of %d characters exceeds %d", len([]rune(p.UserMetadata)), MaxUserMetadata)
	}
	return nil
}

// expire applies what the clock did to q since the last look: ended locks end their
// delivery, expired messages go, the duplicate-detection history forgets.
func (m *Model) expire(q *mQueue, now time.Time) {
	for id, s := range q.sessions {
		if !now.Before(s.lockedUntil) {
			delete(q.sessions, id)
		}
	}
	for _, g := range slices.Clone(q.msgs) {
		if g.token == 0 {
			continue
		}
		if g.session != "" && q.props.RequiresSession {
			if s, ok := q.sessions[g.session]; !ok || s.owner != g.owner {
				m.endDelivery(q, g, nil, now)
			}
		} else if !now.Before(g.lockedUntil) {
			m.endDelivery(q, g, nil, now)
		}
	}
	q.msgs = slices.DeleteFunc(q.msgs, func(g *mMsg) bool { return g.token == 0 && !now.Before(g.expires) })
	for id, at := range q.dedup {
		if now.Sub(at) >= q.props.DuplicateDetectionWindow {
			delete(q.dedup, id)
		}
	}
}

// endDelivery unlocks g after an abandon or a lost lock; at MaxDeliveryCount it is
// dead-lettered.
func (m *Model) endDelivery(q *mQueue, g *mMsg, props map[string]any, now time.Time) {
	g.token, g.owner, g.since = 0, nil, now
	for k, v := range props {
		g.props[k] = copyValue(v)
	}
	if g.deliveries >= uint32(q.props.MaxDeliveryCount) {
		m.deadLetter(q, g, now)
	}
}

func (m *Model) deadLetter(q *mQueue, g *mMsg, now time.Time) {
	q.msgs = slices.DeleteFunc(q.msgs, func(x *mMsg) bool { return x == g })
	if to, err := m.queue(q.props.ForwardDeadLetteredMessagesTo); err == nil && q.props.ForwardDeadLetteredMessagesTo != "" {
		to.seq++
		to.msgs = append(to.msgs, &mMsg{id: g.id, session: g.session, body: g.body, props: g.props, seq: to.seq,
			enqueued: now, expires: now.Add(to.props.DefaultMessageTimeToLive), deadLetterSource: q.props.Name})
		return
	}
	g.deadLetterSource = q.props.Name
	q.dlq = append(q.dlq, g)
}

func (g *mMsg) available(now time.Time) bool {
	return g.token == 0 && !now.Before(g.enqueued) && now.Before(g.expires)
}

func (g *mMsg) availableSince() time.Time {
	if g.since.After(g.enqueued) {
		return g.since
	}
	return g.enqueued
}

func (g *mMsg) view(now time.Time) *ReceivedMessage {
	props := make(map[string]any, len(g.props))
	for k, v := range g.props {
		props[k] = copyValue(v)
	}
	return &ReceivedMessage{MessageID: g.id, Body: slices.Clone(g.body), Properties: props, SessionID: g.session,
		SequenceNumber: g.seq, DeliveryCount: g.deliveries, EnqueuedTime: g.enqueued, LockedUntil: g.lockedUntil,
		DeadLetterSource: g.deadLetterSource, Scheduled: now.Before(g.enqueued), native: g.token}
}

func copyValue(v any) any {
	if b, ok := v.([]byte); ok {
		return slices.Clone(b)
	}
	return v
}

// nextEvent is the earliest future time at which q changes by the clock alone.
func nextEvent(q *mQueue, now time.Time) time.Time {
	var next time.Time
	earlier := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, s := range q.sessions {
		earlier(s.lockedUntil)
	}
	for _, g := range q.msgs {
		earlier(g.enqueued)
		if g.token != 0 {
			earlier(g.lockedUntil)
		}
	}
	return next
}

// await waits, with m.mu held on entry and on return, for a change, for the clock to
// reach q's next event, until deadline, or until ctx ends; false when there is no time
// left.
func (m *Model) await(ctx context.Context, q *mQueue, deadline time.Time) bool {
	now := m.now()
	if !now.Before(deadline) || ctx.Err() != nil {
		return false
	}
	wake := deadline
	if n := nextEvent(q, now); !n.IsZero() && n.Before(wake) {
		wake = n
	}
	ch := m.changed
	m.mu.Unlock()
	t := time.NewTimer(wake.Sub(now))
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()
	m.mu.Lock()
	return true
}

// messageSize approximates the size Service Bus charges against its message limit.
func messageSize(msg OutMessage) int {
	n := len(msg.Body) + len(msg.MessageID) + len(msg.SessionID)
	for k, v := range msg.Properties {
		n += len(k) + len(fmt.Sprint(v))
	}
	return n
}

// modelConn is one client connection to the model.
type modelConn struct {
	m        *Model
	mu       sync.Mutex
	sessions []*modelSession
	closed   bool
}

func (c *modelConn) CreateQueue(ctx context.Context, name string, p QueueProperties) error {
	p.Name = name
	if err := validateProps(p); err != nil {
		return err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if _, ok := c.m.queues[strings.ToLower(name)]; ok {
		return fmt.Errorf("%w: queue %s", ErrExists, name)
	}
	if err := c.checkForward(p); err != nil {
		return err
	}
	c.m.queues[strings.ToLower(name)] = &mQueue{props: p, dedup: map[string]time.Time{}, sessions: map[string]*mSession{}}
	return nil
}

func (c *modelConn) checkForward(p QueueProperties) error {
	if p.ForwardDeadLetteredMessagesTo == "" {
		return nil
	}
	if _, err := c.m.queue(p.ForwardDeadLetteredMessagesTo); err != nil {
		return fmt.Errorf("servicebus model: forwarding destination %s does not exist: %w", p.ForwardDeadLetteredMessagesTo, err)
	}
	return nil
}

func (c *modelConn) GetQueue(ctx context.Context, name string) (QueueProperties, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(name)
	if err != nil {
		return QueueProperties{}, err
	}
	return q.props, nil
}

func (c *modelConn) UpdateQueue(ctx context.Context, name string, p QueueProperties) error {
	p.Name = name
	if err := validateProps(p); err != nil {
		return err
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(name)
	if err != nil {
		return err
	}
	if p.RequiresSession != q.props.RequiresSession || p.RequiresDuplicateDetection != q.props.RequiresDuplicateDetection {
		return fmt.Errorf("servicebus model: queue %s: sessions and duplicate detection cannot change after creation", name)
	}
	if err := c.checkForward(p); err != nil {
		return err
	}
	p.Name = q.props.Name
	q.props = p
	c.m.broadcast()
	return nil
}

func (c *modelConn) DeleteQueue(ctx context.Context, name string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if _, err := c.m.queue(name); err != nil {
		return err
	}
	delete(c.m.queues, strings.ToLower(name))
	c.m.broadcast()
	return nil
}

func (c *modelConn) ListQueues(ctx context.Context) ([]QueueProperties, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	out := make([]QueueProperties, 0, len(c.m.queues))
	for _, q := range c.m.queues {
		out = append(out, q.props)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (c *modelConn) QueueRuntime(ctx context.Context, name string) (RuntimeProperties, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(name)
	if err != nil {
		return RuntimeProperties{}, err
	}
	now := c.m.now()
	c.m.expire(q, now)
	rp := RuntimeProperties{DeadLetter: int64(len(q.dlq))}
	for _, g := range q.msgs {
		if now.Before(g.enqueued) {
			rp.Scheduled++
		} else {
			rp.Active++
		}
	}
	return rp, nil
}

func (c *modelConn) Send(ctx context.Context, queue string, msg OutMessage) error {
	_, err := c.enqueue(ctx, queue, msg, time.Time{})
	return err
}

func (c *modelConn) Schedule(ctx context.Context, queue string, msg OutMessage, at time.Time) (int64, error) {
	return c.enqueue(ctx, queue, msg, at)
}

func (c *modelConn) enqueue(ctx context.Context, queue string, msg OutMessage, at time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if n := messageSize(msg); n > MaxMessageBytesStandard {
		return 0, fmt.Errorf("servicebus model: message of %d bytes exceeds %d", n, MaxMessageBytesStandard)
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(queue)
	if err != nil {
		return 0, err
	}
	if q.props.RequiresSession && msg.SessionID == "" {
		return 0, fmt.Errorf("servicebus model: queue %s requires a session id", queue)
	}
	now := c.m.now()
	c.m.expire(q, now)
	if q.props.RequiresDuplicateDetection {
		if _, seen := q.dedup[msg.MessageID]; seen {
			return 0, nil // dropped; the sender is not told
		}
		q.dedup[msg.MessageID] = now
	}
	if at.Before(now) {
		at = now
	}
	props := make(map[string]any, len(msg.Properties))
	for k, v := range msg.Properties {
		props[k] = copyValue(v)
	}
	q.seq++
	q.msgs = append(q.msgs, &mMsg{id: msg.MessageID, session: msg.SessionID, body: slices.Clone(msg.Body), props: props,
		seq: q.seq, enqueued: at, expires: at.Add(q.props.DefaultMessageTimeToLive)})
	c.m.broadcast()
	return q.seq, nil
}

func (c *modelConn) CancelScheduled(ctx context.Context, queue string, seqs []int64) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(queue)
	if err != nil {
		return err
	}
	now := c.m.now()
	q.msgs = slices.DeleteFunc(q.msgs, func(g *mMsg) bool { return now.Before(g.enqueued) && slices.Contains(seqs, g.seq) })
	return nil
}

func (c *modelConn) Peek(ctx context.Context, queue string, from int64, max int) ([]*ReceivedMessage, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(queue)
	if err != nil {
		return nil, err
	}
	now := c.m.now()
	c.m.expire(q, now)
	var out []*ReceivedMessage
	for _, g := range q.msgs {
		if g.seq >= from && len(out) < max {
			v := g.view(now)
			v.native = nil // a peeked message cannot be settled
			out = append(out, v)
		}
	}
	return out, nil
}

func (c *modelConn) NewReceiver(ctx context.Context, queue string) (Receiver, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	q, err := c.m.queue(queue)
	if err != nil {
		return nil, err
	}
	if q.props.RequiresSession {
		return nil, fmt.Errorf("servicebus model: queue %s requires sessions: accept a session to receive", queue)
	}
	return &modelReceiver{m: c.m, queue: queue}, nil
}

func (c *modelConn) AcceptNextSession(ctx context.Context, queue string) (SessionReceiver, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = c.m.now().Add(time.Minute) // Service Bus's own accept timeout
	}
	for {
		q, err := c.m.queue(queue)
		if err != nil {
			return nil, err
		}
		if !q.props.RequiresSession {
			return nil, fmt.Errorf("servicebus model: queue %s has no sessions", queue)
		}
		now := c.m.now()
		c.m.expire(q, now)
		var next *mMsg
		for _, g := range q.msgs {
			if _, locked := q.sessions[g.session]; locked || !g.available(now) {
				continue
			}
			if next == nil || g.availableSince().Before(next.availableSince()) {
				next = g
			}
		}
		if g := next; g != nil {
			s := &modelSession{modelReceiver: modelReceiver{m: c.m, queue: queue}, id: g.session, conn: c}
			s.self = s
			s.until = now.Add(q.props.LockDuration)
			q.sessions[g.session] = &mSession{owner: s, lockedUntil: s.until}
			c.mu.Lock()
			c.sessions = append(c.sessions, s)
			c.mu.Unlock()
			return s, nil
		}
		if !c.m.await(ctx, q, deadline) {
			if err := ctx.Err(); err != nil && ctx.Err() != context.DeadlineExceeded {
				return nil, err
			}
			return nil, fmt.Errorf("%w: queue %s", ErrNoSession, queue)
		}
	}
}

func (c *modelConn) Close(ctx context.Context) error {
	c.mu.Lock()
	sessions := c.sessions
	c.sessions, c.closed = nil, true
	c.mu.Unlock()
	for _, s := range sessions {
		_ = s.Close(ctx)
	}
	return nil
}

// modelReceiver is a peek-lock receiver without sessions.
type modelReceiver struct {
	m      *Model
	queue  string
	closed bool
	self   *modelSession // set when this receiver is a session's
}

func (r *modelReceiver) owner() any {
	if r.self != nil {
		return r.self
	}
	return r
}

func (r *modelReceiver) Receive(ctx context.Context, max int, wait time.Duration) ([]*ReceivedMessage, error) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	deadline := r.m.now().Add(wait)
	for {
		q, err := r.m.queue(r.queue)
		if err != nil {
			return nil, err
		}
		now := r.m.now()
		r.m.expire(q, now)
		if r.closed {
			return nil, fmt.Errorf("servicebus model: receiver closed: %w", ErrLockLost)
		}
		var until time.Time
		if r.self != nil {
			s, ok := q.sessions[r.self.id]
			if !ok || s.owner != r.self {
				return nil, fmt.Errorf("%w: session %s of queue %s", ErrLockLost, r.self.id, r.queue)
			}
			until = s.lockedUntil
		} else {
			until = now.Add(q.props.LockDuration)
		}
		var out []*ReceivedMessage
		for _, g := range q.msgs {
			if len(out) == max {
				break
			}
			if !g.available(now) || (r.self != nil && g.session != r.self.id) {
				continue
			}
			r.m.tokens++
			g.token, g.owner, g.lockedUntil = r.m.tokens, r.owner(), until
			g.deliveries++
			out = append(out, g.view(now))
		}
		if len(out) > 0 {
			return out, nil
		}
		if !r.m.await(ctx, q, deadline) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, nil
		}
	}
}

// locked finds the message m names if r still holds its lock.
func (r *modelReceiver) locked(m *ReceivedMessage) (*mQueue, *mMsg, error) {
	q, err := r.m.queue(r.queue)
	if err != nil {
		return nil, nil, err
	}
	now := r.m.now()
	r.m.expire(q, now)
	token, _ := m.native.(uint64)
	for _, g := range q.msgs {
		if g.seq == m.SequenceNumber && g.token != 0 && g.token == token && g.owner == r.owner() && !r.closed {
			return q, g, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: message %d of queue %s", ErrLockLost, m.SequenceNumber, r.queue)
}

func (r *modelReceiver) Complete(ctx context.Context, m *ReceivedMessage) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	q, g, err := r.locked(m)
	if err != nil {
		return err
	}
	q.msgs = slices.DeleteFunc(q.msgs, func(x *mMsg) bool { return x == g })
	r.m.broadcast()
	return nil
}

func (r *modelReceiver) Abandon(ctx context.Context, m *ReceivedMessage, props map[string]any) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	q, g, err := r.locked(m)
	if err != nil {
		return err
	}
	r.m.endDelivery(q, g, props, r.m.now())
	r.m.broadcast()
	return nil
}

func (r *modelReceiver) DeadLetter(ctx context.Context, m *ReceivedMessage, reason string) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	q, g, err := r.locked(m)
	if err != nil {
		return err
	}
	g.token, g.owner = 0, nil
	g.props["DeadLetterReason"] = reason
	r.m.deadLetter(q, g, r.m.now())
	r.m.broadcast()
	return nil
}

func (r *modelReceiver) RenewLock(ctx context.Context, m *ReceivedMessage) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.self != nil {
		return fmt.Errorf("servicebus model: a session message's lock is its session's: renew the session")
	}
	q, g, err := r.locked(m)
	if err != nil {
		return err
	}
	g.lockedUntil = r.m.now().Add(q.props.LockDuration)
	m.LockedUntil = g.lockedUntil
	return nil
}

func (r *modelReceiver) Close(ctx context.Context) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.closed = true
	return nil
}

// modelSession is a receiver holding a session lock.
type modelSession struct {
	modelReceiver
	id    string
	conn  *modelConn
	until time.Time
}

func (s *modelSession) SessionID() string { return s.id }

func (s *modelSession) LockedUntil() time.Time {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.until
}

func (s *modelSession) RenewSessionLock(ctx context.Context) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	q, err := s.m.queue(s.queue)
	if err != nil {
		return err
	}
	now := s.m.now()
	s.m.expire(q, now)
	ms, ok := q.sessions[s.id]
	if !ok || ms.owner != s || s.closed {
		return fmt.Errorf("%w: session %s of queue %s", ErrLockLost, s.id, s.queue)
	}
	ms.lockedUntil = now.Add(q.props.LockDuration)
	s.until = ms.lockedUntil
	for _, g := range q.msgs {
		if g.owner == s {
			g.lockedUntil = s.until
		}
	}
	return nil
}

// Close releases the session lock: its unsettled messages end their delivery.
func (s *modelSession) Close(ctx context.Context) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.closed = true
	q, err := s.m.queue(s.queue)
	if err != nil {
		return nil
	}
	if ms, ok := q.sessions[s.id]; ok && ms.owner == s {
		delete(q.sessions, s.id)
	}
	s.m.expire(q, s.m.now())
	s.m.broadcast()
	return nil
}
