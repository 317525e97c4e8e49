package servicebus

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Application properties the driver keeps on every Service Bus message.
const (
	propID     = "anysqs.id"     // the SQS MessageId
	propSent   = "anysqs.sent"   // SentTimestamp, Unix milliseconds
	propFirst  = "anysqs.first"  // ApproximateFirstReceiveTimestamp, set when the driver releases a message
	propAttrs  = "anysqs.attrs"  // message attributes, JSON (binary values in propBinary+name)
	propBinary = "anysqs.b."     // prefix of binary attribute values
	propSys    = "anysqs.sys"    // system attributes (AWSTraceHeader), JSON
	propSender = "anysqs.sender" // SenderId
	propDedup  = "anysqs.dedup"  // MessageDeduplicationId
	propCount  = "anysqs.count"  // deliveries before the last release, carried into a dead-letter queue
	propGroup  = "anysqs.group"  // MessageGroupId of a standard queue's message (a FIFO one's is the session)
)

// held is an in-flight message whose lock this instance holds.
type held struct {
	handle     string
	queue      string
	fifo       bool
	key        seqKey
	msg        *ReceivedMessage
	rcv        Receiver // settles the message: the standard queue's receiver, or the session
	sess       *session // FIFO: the session holding the message
	receivedAt time.Time
	deadline   time.Time // when its visibility ends; the driver releases it then
	first      time.Time // first receive, kept on the message when released
	timer      *time.Timer
}

// session is a FIFO group this instance holds, with its messages in flight.
type session struct {
	sr    SessionReceiver
	msgs  map[*held]bool
	timer *time.Timer // renews the session lock while messages are in flight
}

// ReceiveMessages receives through peek-lock receivers (standard queues) or by
// accepting sessions (FIFO queues, one session per message group), and holds each lock
// for the visibility timeout.
func (d *Driver) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	if req.ReceiveRequestAttemptID != "" {
		return drivers.ReceiveMessagesResult{}, drivers.Errorf(drivers.KindUnsupported,
			"servicebus: queue %s: ReceiveRequestAttemptId replay is not supported: Service Bus does not replay a receive", req.Name)
	}
	if req.VisibilityTimeout > int32(d.opts.MaxVisibilitySeconds) || req.VisibilityTimeout < 0 {
		return drivers.ReceiveMessagesResult{}, d.tooLong(req.Name, req.VisibilityTimeout)
	}
	if req.MaxMessages < 1 || req.MaxMessages > sqsrule.MaxReceiveMessages {
		return drivers.ReceiveMessagesResult{}, drivers.Errorf(drivers.KindInvalidArgument, "servicebus: queue %s: MaxMessages %d is outside 1..10", req.Name, req.MaxMessages)
	}
	if err := d.checkOpen(); err != nil {
		return drivers.ReceiveMessagesResult{}, err
	}
	var (
		got []*held
		err error
	)
	if isFIFO(req.Name) {
		got, err = d.receiveSessions(ctx, req)
	} else {
		got, err = d.receiveStandard(ctx, req)
	}
	if err != nil {
		return drivers.ReceiveMessagesResult{}, err
	}
	// The broker forwards a message to the dead-letter queue itself, when its last lock
	// ends: no receive moves one, and the driver cannot count them.
	out := drivers.ReceiveMessagesResult{Messages: make([]drivers.Message, 0, len(got)), DeadLettered: -1}
	out.NextVisibleAt = d.nextVisible(req.Name)
	for _, h := range got {
		out.Messages = append(out.Messages, d.message(h))
	}
	if req.VisibilityTimeout == 0 {
		// Visible again at once: release before answering.
		for _, h := range got {
			if d.take(h) {
				d.release(ctx, h, true)
			}
		}
	}
	return out, nil
}

// nextVisible is the earliest future time this instance knows a message of queue becomes
// visible: a deadline of a message it holds, or a delayed message it sent. Messages other
// instances hold or delayed are not known; zero then.
func (d *Driver) nextVisible(queue string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	var next time.Time
	earlier := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, h := range d.held {
		if h.queue == queue {
			earlier(h.deadline)
		}
	}
	kept := d.delayed[queue][:0]
	for _, t := range d.delayed[queue] {
		if t.After(now) {
			earlier(t)
			kept = append(kept, t)
		}
	}
	d.delayed[queue] = kept
	return next
}

func (d *Driver) tooLong(queue string, seconds int32) *drivers.Error {
	return drivers.Errorf(drivers.KindInvalidArgument,
		"servicebus: queue %s: visibility timeout %d s is outside what this driver holds (0 to %d s, max_visibility_seconds)", queue, seconds, d.opts.MaxVisibilitySeconds)
}

func (d *Driver) checkOpen() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return drivers.Errorf(drivers.KindUnavailable, "servicebus: driver closed")
	}
	return nil
}

func isFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }

// receiver takes an idle receiver of a standard queue, or opens one.
func (d *Driver) receiver(ctx context.Context, queue string) (Receiver, error) {
	d.mu.Lock()
	if list := d.receivers[queue]; len(list) > 0 {
		r := list[len(list)-1]
		d.receivers[queue] = list[:len(list)-1]
		d.mu.Unlock()
		return r, nil
	}
	d.mu.Unlock()
	r, err := d.ns.NewReceiver(ctx, d.entity(queue))
	if err != nil {
		return nil, classify(err, "servicebus: queue "+queue)
	}
	return r, nil
}

func (d *Driver) idle(queue string, r Receiver) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.receivers[queue] = append(d.receivers[queue], r)
	}
}

// dropReceivers forgets a deleted queue's receivers.
func (d *Driver) dropReceivers(queue string) {
	d.mu.Lock()
	rs := d.receivers[queue]
	delete(d.receivers, queue)
	d.mu.Unlock()
	for _, r := range rs {
		_ = r.Close(context.Background())
	}
}

func (d *Driver) receiveStandard(ctx context.Context, req drivers.ReceiveMessagesRequest) ([]*held, error) {
	r, err := d.receiver(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	msgs, err := r.Receive(ctx, req.MaxMessages, req.WaitTime)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			_ = r.Close(context.Background())
			d.dropReceivers(req.Name)
		} else {
			d.idle(req.Name, r)
		}
		return nil, classify(err, "servicebus: receive from "+req.Name)
	}
	d.idle(req.Name, r) // settlement through r goes on while others receive with it
	out := make([]*held, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, d.hold(req, r, nil, m))
	}
	return out, nil
}

// receiveSessions accepts sessions until MaxMessages are in hand: the first accept waits
// up to WaitTime, the others only take sessions available at once. Each session gives
// what it has, in order, up to what is still wanted; a session that gives nothing is
// closed again.
func (d *Driver) receiveSessions(ctx context.Context, req drivers.ReceiveMessagesRequest) ([]*held, error) {
	var out []*held
	wait := req.WaitTime
	for len(out) < req.MaxMessages {
		actx, cancel := context.WithTimeout(ctx, wait)
		sr, err := d.ns.AcceptNextSession(actx, d.entity(req.Name))
		cancel()
		if errors.Is(err, ErrNoSession) || (err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)) {
			break
		}
		if err != nil {
			if len(out) > 0 && !errors.Is(err, ErrNotFound) {
				break // keep what was received
			}
			return out, classify(err, "servicebus: accept a session of "+req.Name)
		}
		wait = 0
		msgs, err := sr.Receive(ctx, req.MaxMessages-len(out), 0)
		if err != nil || len(msgs) == 0 {
			_ = sr.Close(context.Background())
			if err != nil && len(out) == 0 {
				return nil, classify(err, "servicebus: receive from a session of "+req.Name)
			}
			continue
		}
		s := &session{sr: sr, msgs: map[*held]bool{}}
		for _, m := range msgs {
			out = append(out, d.hold(req, sr, s, m))
		}
		d.renewSessionLater(s)
	}
	return out, nil
}

// hold records a received message as in flight and arms its visibility timer.
func (d *Driver) hold(req drivers.ReceiveMessagesRequest, r Receiver, s *session, m *ReceivedMessage) *held {
	now := d.now()
	first := now
	if ms, ok := int64Prop(m.Properties[propFirst]); ok {
		first = time.UnixMilli(ms)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := &held{handle: d.newHandle(req.Name), queue: req.Name, fifo: s != nil, key: seqKey{req.Name, m.SequenceNumber},
		msg: m, rcv: r, sess: s, receivedAt: now, deadline: now.Add(time.Duration(req.VisibilityTimeout) * time.Second), first: first}
	if old, ok := d.latest[h.key]; ok {
		delete(d.expired, old) // superseded: no longer "not in flight" but stale
	}
	d.latest[h.key] = h.handle
	d.held[h.handle] = h
	if s != nil {
		s.msgs[h] = true
	}
	d.armLocked(h)
	return h
}

// armLocked sets h's timer to its deadline, or earlier to renew a standard message's
// lock (at half its remaining time); call with d.mu held.
func (d *Driver) armLocked(h *held) {
	if h.timer != nil {
		h.timer.Stop()
	}
	at := h.deadline
	if !h.fifo {
		if renew := h.msg.LockedUntil.Add(-d.lockDuration() / 2); renew.Before(at) {
			at = renew
		}
	}
	h.timer = time.AfterFunc(time.Until(at), func() { d.tick(h) })
}

func (d *Driver) lockDuration() time.Duration {
	return time.Duration(d.opts.LockDurationSeconds) * time.Second
}

// tick ends h's visibility at its deadline, or renews its lock before then.
func (d *Driver) tick(h *held) {
	d.mu.Lock()
	if d.held[h.handle] != h {
		d.mu.Unlock()
		return
	}
	if !d.now().Before(h.deadline) {
		d.mu.Unlock()
		if d.take(h) {
			d.release(context.Background(), h, true)
		}
		return
	}
	renewed := *h.msg // RenewLock writes LockedUntil; h.msg is read under d.mu meanwhile
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), d.lockDuration()/2)
	err := h.rcv.RenewLock(ctx, &renewed)
	cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held[h.handle] != h {
		return
	}
	if err == nil {
		h.msg.LockedUntil = renewed.LockedUntil
	}
	if err != nil && !d.now().Before(h.msg.LockedUntil) {
		// The lock is gone: the message is the broker's again. Forget the handle.
		d.forgetLocked(h, true)
		return
	}
	d.armLocked(h)
}

// renewSessionLater renews s's lock at half its remaining time while it holds messages.
func (d *Driver) renewSessionLater(s *session) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armSessionLocked(s)
}

func (d *Driver) armSessionLocked(s *session) {
	if len(s.msgs) == 0 {
		return
	}
	wait := time.Until(s.sr.LockedUntil()) / 2
	s.timer = time.AfterFunc(wait, func() {
		d.mu.Lock()
		busy := len(s.msgs) > 0 && !d.closed
		d.mu.Unlock()
		if !busy {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), d.lockDuration()/2)
		err := s.sr.RenewSessionLock(ctx)
		cancel()
		d.mu.Lock()
		defer d.mu.Unlock()
		if err != nil && !d.now().Before(s.sr.LockedUntil()) {
			for h := range s.msgs {
				d.forgetLocked(h, true)
			}
			return
		}
		d.armSessionLocked(s)
	})
}

// take removes h from the in-flight set; true for the one caller that then settles it.
func (d *Driver) take(h *held) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held[h.handle] != h {
		return false
	}
	delete(d.held, h.handle)
	if h.timer != nil {
		h.timer.Stop()
	}
	return true
}

// forgetLocked drops h after its lock was lost; call with d.mu held.
func (d *Driver) forgetLocked(h *held, expired bool) {
	if d.held[h.handle] == h {
		delete(d.held, h.handle)
		if h.timer != nil {
			h.timer.Stop()
		}
	}
	if expired {
		d.expired[h.handle] = expiredHandle{key: h.key, at: d.now()}
	} else if d.latest[h.key] == h.handle {
		delete(d.latest, h.key) // settled: nothing is left to tell apart
	}
	if h.sess != nil {
		delete(h.sess.msgs, h)
	}
}

// release abandons a message taken from the in-flight set, keeping its first-receive
// time on it, and gives up its session when that held nothing else. expired records the
// handle as one whose visibility ended (stale rather than invalid).
func (d *Driver) release(ctx context.Context, h *held, expired bool) {
	props := map[string]any{propFirst: h.first.UnixMilli()}
	if h.msg.DeadLetterSource == "" {
		props[propCount] = int64(h.msg.DeliveryCount)
	}
	_ = h.rcv.Abandon(ctx, h.msg, props)
	d.settled(h, expired)
}

// settled forgets a message taken from the in-flight set and closes its session when
// that holds nothing more: closing only after every message is settled keeps delivery
// counts right.
func (d *Driver) settled(h *held, expired bool) {
	d.mu.Lock()
	d.forgetLocked(h, expired)
	var closeSession SessionReceiver
	if h.sess != nil && len(h.sess.msgs) == 0 {
		closeSession = h.sess.sr
		if h.sess.timer != nil {
			h.sess.timer.Stop()
		}
		h.sess.msgs = nil
	}
	d.pruneLocked()
	d.mu.Unlock()
	if closeSession != nil {
		_ = closeSession.Close(context.Background())
	}
}

// expiredKept is how long a handle whose visibility ended is remembered as this
// instance's; afterwards it is merely stale.
const expiredKept = 15 * time.Minute

func (d *Driver) pruneLocked() {
	if len(d.expired) < 1024 {
		return
	}
	cut := d.now().Add(-expiredKept)
	for h, e := range d.expired {
		if e.at.Before(cut) {
			delete(d.expired, h)
			if d.latest[e.key] == h {
				delete(d.latest, e.key)
			}
		}
	}
}

// message converts a held message for the gateway.
func (d *Driver) message(h *held) drivers.Message {
	m := h.msg
	p := m.Properties
	out := drivers.Message{ReceiptHandle: h.handle, Body: string(m.Body), ReceiveCount: d.receiveCount(m),
		FirstReceivedAt: h.first, SenderID: strProp(p[propSender])}
	out.MessageID = strProp(p[propID])
	if ms, ok := int64Prop(p[propSent]); ok {
		out.SentAt = time.UnixMilli(ms)
	} else {
		out.SentAt = m.EnqueuedTime
	}
	out.Attributes = decodeAttributes(strProp(p[propAttrs]), p)
	out.SystemAttributes = decodeAttributes(strProp(p[propSys]), nil)
	if m.DeadLetterSource != "" {
		out.DeadLetterSource = strings.TrimPrefix(m.DeadLetterSource, d.opts.EntityPrefix)
	}
	if h.fifo {
		out.MessageGroupID = m.SessionID
		out.MessageDeduplicationID = strProp(p[propDedup])
		out.SequenceNumber = sqsrule.SequenceNumber(m.SequenceNumber)
		if out.DeadLetterSource != "" {
			out.MessageDeduplicationID = out.MessageID // as in an SQS FIFO dead-letter queue
		}
	} else {
		out.MessageGroupID = strProp(p[propGroup])
	}
	return out
}

// receiveCount is the SQS receive count: the delivery count, plus, in a dead-letter
// queue, the deliveries in the source that the driver wrote on the message when it last
// released it there (the forwarded message's delivery count starts again).
func (d *Driver) receiveCount(m *ReceivedMessage) int32 {
	n := int32(m.DeliveryCount)
	if m.DeadLetterSource != "" {
		if c, ok := int64Prop(m.Properties[propCount]); ok {
			n += int32(c)
		}
	}
	return n
}

func strProp(v any) string {
	s, _ := v.(string)
	return s
}

func int64Prop(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case uint64:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}
