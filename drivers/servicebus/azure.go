package servicebus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

// azureNamespace is the Namespace over the real SDK: a translation, nothing more.
type azureNamespace struct {
	client *azservicebus.Client
	admin  *admin.Client

	mu      sync.Mutex
	senders map[string]*azservicebus.Sender
}

// connectAzure opens the SDK clients from a connection string, or from a namespace and
// an Entra ID credential.
func connectAzure(connectionString, fqdn string, cred azcore.TokenCredential) (*azureNamespace, error) {
	var (
		c   *azservicebus.Client
		a   *admin.Client
		err error
	)
	if connectionString != "" {
		if c, err = azservicebus.NewClientFromConnectionString(connectionString, nil); err == nil {
			a, err = admin.NewClientFromConnectionString(connectionString, nil)
		}
	} else {
		if c, err = azservicebus.NewClient(fqdn, cred, nil); err == nil {
			a, err = admin.NewClient(fqdn, cred, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	return &azureNamespace{client: c, admin: a, senders: map[string]*azservicebus.Sender{}}, nil
}

// mapErr gives SDK errors the Namespace contract's meaning.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var sb *azservicebus.Error
	if errors.As(err, &sb) {
		switch sb.Code {
		case azservicebus.CodeNotFound:
			return fmt.Errorf("%w: %w", ErrNotFound, err)
		case azservicebus.CodeLockLost:
			return fmt.Errorf("%w: %w", ErrLockLost, err)
		}
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		switch re.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", ErrNotFound, err)
		case http.StatusConflict:
			return fmt.Errorf("%w: %w", ErrExists, err)
		}
	}
	return err
}

func toAdmin(p QueueProperties) admin.QueueProperties {
	lock, ttl, window := isoDuration(p.LockDuration), isoDuration(p.DefaultMessageTimeToLive), isoDuration(p.DuplicateDetectionWindow)
	out := admin.QueueProperties{
		LockDuration: &lock, RequiresSession: &p.RequiresSession, RequiresDuplicateDetection: &p.RequiresDuplicateDetection,
		DefaultMessageTimeToLive: &ttl, MaxDeliveryCount: &p.MaxDeliveryCount, UserMetadata: &p.UserMetadata,
		DeadLetteringOnMessageExpiration: new(bool),
	}
	if p.RequiresDuplicateDetection {
		out.DuplicateDetectionHistoryTimeWindow = &window
	}
	if p.ForwardDeadLetteredMessagesTo != "" {
		out.ForwardDeadLetteredMessagesTo = &p.ForwardDeadLetteredMessagesTo
	}
	return out
}

func fromAdmin(name string, a admin.QueueProperties) QueueProperties {
	str := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	p := QueueProperties{Name: name, LockDuration: parseISODuration(str(a.LockDuration)),
		DefaultMessageTimeToLive: parseISODuration(str(a.DefaultMessageTimeToLive)),
		DuplicateDetectionWindow: parseISODuration(str(a.DuplicateDetectionHistoryTimeWindow)),
		UserMetadata:             str(a.UserMetadata), ForwardDeadLetteredMessagesTo: entityName(str(a.ForwardDeadLetteredMessagesTo))}
	if a.RequiresSession != nil {
		p.RequiresSession = *a.RequiresSession
	}
	if a.RequiresDuplicateDetection != nil {
		p.RequiresDuplicateDetection = *a.RequiresDuplicateDetection
	}
	if a.MaxDeliveryCount != nil {
		p.MaxDeliveryCount = *a.MaxDeliveryCount
	}
	return p
}

// entityName strips the namespace URL Service Bus may return for a forwarding target.
func entityName(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return s[i+1:]
		}
	}
	return s
}

func (n *azureNamespace) CreateQueue(ctx context.Context, name string, p QueueProperties) error {
	props := toAdmin(p)
	_, err := n.admin.CreateQueue(ctx, name, &admin.CreateQueueOptions{Properties: &props})
	return mapErr(err)
}

func (n *azureNamespace) GetQueue(ctx context.Context, name string) (QueueProperties, error) {
	res, err := n.admin.GetQueue(ctx, name, nil)
	if err != nil {
		return QueueProperties{}, mapErr(err)
	}
	if res == nil {
		return QueueProperties{}, fmt.Errorf("%w: queue %s", ErrNotFound, name)
	}
	return fromAdmin(res.QueueName, res.QueueProperties), nil
}

func (n *azureNamespace) UpdateQueue(ctx context.Context, name string, p QueueProperties) error {
	_, err := n.admin.UpdateQueue(ctx, name, toAdmin(p), nil)
	return mapErr(err)
}

func (n *azureNamespace) DeleteQueue(ctx context.Context, name string) error {
	_, err := n.admin.DeleteQueue(ctx, name, nil)
	n.mu.Lock()
	if s, ok := n.senders[name]; ok {
		delete(n.senders, name)
		_ = s.Close(ctx)
	}
	n.mu.Unlock()
	return mapErr(err)
}

func (n *azureNamespace) ListQueues(ctx context.Context) ([]QueueProperties, error) {
	var out []QueueProperties
	pager := n.admin.NewListQueuesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, mapErr(err)
		}
		for _, q := range page.Queues {
			out = append(out, fromAdmin(q.QueueName, q.QueueProperties))
		}
	}
	return out, nil
}

func (n *azureNamespace) QueueRuntime(ctx context.Context, name string) (RuntimeProperties, error) {
	res, err := n.admin.GetQueueRuntimeProperties(ctx, name, nil)
	if err != nil {
		return RuntimeProperties{}, mapErr(err)
	}
	if res == nil {
		return RuntimeProperties{}, fmt.Errorf("%w: queue %s", ErrNotFound, name)
	}
	return RuntimeProperties{Active: int64(res.ActiveMessageCount), Scheduled: int64(res.ScheduledMessageCount),
		DeadLetter: int64(res.DeadLetterMessageCount)}, nil
}

func (n *azureNamespace) sender(queue string) (*azservicebus.Sender, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s, ok := n.senders[queue]; ok {
		return s, nil
	}
	s, err := n.client.NewSender(queue, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	n.senders[queue] = s
	return s, nil
}

func outMessage(m OutMessage) *azservicebus.Message {
	out := &azservicebus.Message{MessageID: &m.MessageID, Body: m.Body, ApplicationProperties: m.Properties}
	if m.SessionID != "" {
		out.SessionID = &m.SessionID
	}
	return out
}

func (n *azureNamespace) Send(ctx context.Context, queue string, m OutMessage) error {
	s, err := n.sender(queue)
	if err != nil {
		return err
	}
	return mapErr(s.SendMessage(ctx, outMessage(m), nil))
}

func (n *azureNamespace) Schedule(ctx context.Context, queue string, m OutMessage, at time.Time) (int64, error) {
	s, err := n.sender(queue)
	if err != nil {
		return 0, err
	}
	seqs, err := s.ScheduleMessages(ctx, []*azservicebus.Message{outMessage(m)}, at, nil)
	if err != nil {
		return 0, mapErr(err)
	}
	if len(seqs) != 1 {
		return 0, fmt.Errorf("servicebus: scheduling one message returned %d sequence numbers", len(seqs))
	}
	return seqs[0], nil
}

func (n *azureNamespace) CancelScheduled(ctx context.Context, queue string, seqs []int64) error {
	s, err := n.sender(queue)
	if err != nil {
		return err
	}
	return mapErr(s.CancelScheduledMessages(ctx, seqs, nil))
}

func (n *azureNamespace) Peek(ctx context.Context, queue string, from int64, max int) ([]*ReceivedMessage, error) {
	r, err := n.client.NewReceiverForQueue(queue, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	defer r.Close(ctx)
	got, err := r.PeekMessages(ctx, max, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &from})
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]*ReceivedMessage, len(got))
	for i, m := range got {
		out[i] = received(m)
		out[i].native = nil
	}
	return out, nil
}

func received(m *azservicebus.ReceivedMessage) *ReceivedMessage {
	out := &ReceivedMessage{MessageID: m.MessageID, Body: m.Body, Properties: m.ApplicationProperties,
		DeliveryCount: m.DeliveryCount, Scheduled: m.State == azservicebus.MessageStateScheduled, native: m}
	if m.SessionID != nil {
		out.SessionID = *m.SessionID
	}
	if m.SequenceNumber != nil {
		out.SequenceNumber = *m.SequenceNumber
	}
	if m.EnqueuedTime != nil {
		out.EnqueuedTime = *m.EnqueuedTime
	}
	if m.LockedUntil != nil {
		out.LockedUntil = *m.LockedUntil
	}
	if m.DeadLetterSource != nil {
		out.DeadLetterSource = entityName(*m.DeadLetterSource)
	}
	if out.Properties == nil {
		out.Properties = map[string]any{}
	}
	return out
}

func (n *azureNamespace) NewReceiver(ctx context.Context, queue string) (Receiver, error) {
	r, err := n.client.NewReceiverForQueue(queue, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	return &azureReceiver{r: r}, nil
}

func (n *azureNamespace) AcceptNextSession(ctx context.Context, queue string) (SessionReceiver, error) {
	ctx, cancel := atLeast(ctx, shortPollWait)
	defer cancel()
	s, err := n.client.AcceptNextSessionForQueue(ctx, queue, nil)
	if err != nil {
		var sb *azservicebus.Error
		if (errors.As(err, &sb) && sb.Code == azservicebus.CodeTimeout) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: %w", ErrNoSession, err)
		}
		return nil, mapErr(err)
	}
	return &azureSession{s: s}, nil
}

func (n *azureNamespace) Close(ctx context.Context) error {
	return n.client.Close(ctx)
}

// sdkReceiver is what Receiver and SessionReceiver of the SDK have in common.
type sdkReceiver interface {
	ReceiveMessages(ctx context.Context, max int, o *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
	CompleteMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.CompleteMessageOptions) error
	AbandonMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.AbandonMessageOptions) error
	DeadLetterMessage(ctx context.Context, m *azservicebus.ReceivedMessage, o *azservicebus.DeadLetterOptions) error
	Close(ctx context.Context) error
}

// sdkReceive receives with the wait as the context's deadline: the SDK returns once a
// message arrives (and a moment more for others), or when the context ends.
func sdkReceive(ctx context.Context, r sdkReceiver, n int, wait time.Duration) ([]*ReceivedMessage, error) {
	wctx, cancel := context.WithTimeout(ctx, max(wait, shortPollWait))
	defer cancel()
	got, err := r.ReceiveMessages(wctx, n, nil)
	if err != nil && (ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded)) {
		return nil, mapErr(err)
	}
	out := make([]*ReceivedMessage, len(got))
	for i, m := range got {
		out[i] = received(m)
	}
	return out, nil
}

// shortPollWait is how long a receive or session accept of no wait listens on a real
// namespace: asking takes a round trip.
const shortPollWait = time.Second

// atLeast is ctx with its deadline put off to at least d from now, if it is sooner;
// cancelling ctx before its deadline still cancels the result (after it, the result ends
// within d anyway).
func atLeast(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) >= d {
		return context.WithCancel(ctx)
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	return c, func() { stop(); cancel() }
}

func sdkMessage(m *ReceivedMessage) *azservicebus.ReceivedMessage {
	sm, _ := m.native.(*azservicebus.ReceivedMessage)
	return sm
}

type azureReceiver struct{ r *azservicebus.Receiver }

func (a *azureReceiver) Receive(ctx context.Context, max int, wait time.Duration) ([]*ReceivedMessage, error) {
	return sdkReceive(ctx, a.r, max, wait)
}

func (a *azureReceiver) Complete(ctx context.Context, m *ReceivedMessage) error {
	return mapErr(a.r.CompleteMessage(ctx, sdkMessage(m), nil))
}

func (a *azureReceiver) Abandon(ctx context.Context, m *ReceivedMessage, props map[string]any) error {
	return mapErr(a.r.AbandonMessage(ctx, sdkMessage(m), &azservicebus.AbandonMessageOptions{PropertiesToModify: props}))
}

func (a *azureReceiver) DeadLetter(ctx context.Context, m *ReceivedMessage, reason string) error {
	return mapErr(a.r.DeadLetterMessage(ctx, sdkMessage(m), &azservicebus.DeadLetterOptions{Reason: &reason}))
}

func (a *azureReceiver) RenewLock(ctx context.Context, m *ReceivedMessage) error {
	sm := sdkMessage(m)
	if err := a.r.RenewMessageLock(ctx, sm, nil); err != nil {
		return mapErr(err)
	}
	if sm.LockedUntil != nil {
		m.LockedUntil = *sm.LockedUntil
	}
	return nil
}

func (a *azureReceiver) Close(ctx context.Context) error { return a.r.Close(ctx) }

type azureSession struct{ s *azservicebus.SessionReceiver }

func (a *azureSession) Receive(ctx context.Context, max int, wait time.Duration) ([]*ReceivedMessage, error) {
	return sdkReceive(ctx, a.s, max, wait)
}

func (a *azureSession) Complete(ctx context.Context, m *ReceivedMessage) error {
	return mapErr(a.s.CompleteMessage(ctx, sdkMessage(m), nil))
}

func (a *azureSession) Abandon(ctx context.Context, m *ReceivedMessage, props map[string]any) error {
	return mapErr(a.s.AbandonMessage(ctx, sdkMessage(m), &azservicebus.AbandonMessageOptions{PropertiesToModify: props}))
}

func (a *azureSession) DeadLetter(ctx context.Context, m *ReceivedMessage, reason string) error {
	return mapErr(a.s.DeadLetterMessage(ctx, sdkMessage(m), &azservicebus.DeadLetterOptions{Reason: &reason}))
}

func (a *azureSession) RenewLock(ctx context.Context, m *ReceivedMessage) error {
	return errors.New("servicebus: a session message's lock is its session's: renew the session")
}

func (a *azureSession) Close(ctx context.Context) error { return a.s.Close(ctx) }
func (a *azureSession) SessionID() string               { return a.s.SessionID() }
func (a *azureSession) LockedUntil() time.Time          { return a.s.LockedUntil() }
func (a *azureSession) RenewSessionLock(ctx context.Context) error {
	return mapErr(a.s.RenewSessionLock(ctx, nil))
}

// isoDuration formats d as the ISO 8601 duration the admin API takes.
func isoDuration(d time.Duration) string {
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}

var isoPattern = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// parseISODuration reads the ISO 8601 durations the admin API returns (P14D, PT1M,
// PT30S, P10675199DT2H48M5.4775807S); zero when it cannot.
func parseISODuration(s string) time.Duration {
	m := isoPattern.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	var d float64
	for i, unit := range []float64{86400, 3600, 60, 1} {
		if m[i+1] != "" {
			v, _ := strconv.ParseFloat(m[i+1], 64)
			d += v * unit
		}
	}
	if d*float64(time.Second) > float64(1<<63-1) {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(d * float64(time.Second))
}
