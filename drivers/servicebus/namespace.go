package servicebus

import (
	"context"
	"errors"
	"time"
)

// Namespace is everything the driver asks of a Service Bus namespace: the admin
// operations on queue entities and the messaging operations of peek-lock receivers. It
// is the driver's own narrow view of the SDK, so that the driver's logic can be judged
// against the in-memory model (NewModel) where no namespace is reachable, and so that
// the adapter to the real SDK (azureNamespace) stays a thin translation.
//
// Errors: ErrNotFound (no such entity), ErrExists (CreateQueue of an existing entity),
// ErrLockLost (the message or session lock expired or belongs to a closed receiver),
// ErrNoSession (AcceptNextSession found no session before its context ended), each
// wrapping the native error when there is one; other errors are the SDK's.
type Namespace interface {
	// CreateQueue creates a queue entity, or fails with ErrExists.
	CreateQueue(ctx context.Context, name string, p QueueProperties) error
	// GetQueue returns an entity's properties, or ErrNotFound.
	GetQueue(ctx context.Context, name string) (QueueProperties, error)
	// UpdateQueue replaces an entity's updatable properties (RequiresSession and
	// RequiresDuplicateDetection are fixed at creation, as in Service Bus).
	UpdateQueue(ctx context.Context, name string, p QueueProperties) error
	// DeleteQueue deletes an entity and its messages, or fails with ErrNotFound.
	DeleteQueue(ctx context.Context, name string) error
	// ListQueues returns every queue entity of the namespace with its properties.
	ListQueues(ctx context.Context) ([]QueueProperties, error)
	// QueueRuntime returns an entity's live message counts (Manage rights).
	QueueRuntime(ctx context.Context, name string) (RuntimeProperties, error)

	// Send enqueues one message. A message whose MessageID the entity's duplicate
	// detection saw within its window is dropped, and Send still succeeds: Service Bus
	// does not tell the sender.
	Send(ctx context.Context, queue string, m OutMessage) error
	// Schedule enqueues m at the service time at and returns its sequence number.
	Schedule(ctx context.Context, queue string, m OutMessage, at time.Time) (int64, error)
	// CancelScheduled removes scheduled messages by sequence number.
	CancelScheduled(ctx context.Context, queue string, seqs []int64) error
	// Peek returns up to max messages, active and scheduled, from sequence number from
	// on, without locking them.
	Peek(ctx context.Context, queue string, from int64, max int) ([]*ReceivedMessage, error)
	// NewReceiver opens a peek-lock receiver on a queue without sessions.
	NewReceiver(ctx context.Context, queue string) (Receiver, error)
	// AcceptNextSession locks the next session that has an available message, waiting
	// until ctx ends (then ErrNoSession).
	AcceptNextSession(ctx context.Context, queue string) (SessionReceiver, error)
	// Close closes the connection; session locks it held are released.
	Close(ctx context.Context) error
}

// Receiver is a peek-lock receiver. Settlement goes through the receiver that received
// the message.
type Receiver interface {
	// Receive waits up to wait for at least one available message and returns up to max
	// of them, locked; none when the wait passes. wait 0 looks once.
	Receive(ctx context.Context, max int, wait time.Duration) ([]*ReceivedMessage, error)
	// Complete deletes a locked message.
	Complete(ctx context.Context, m *ReceivedMessage) error
	// Abandon releases a locked message at once, setting props on it; its delivery
	// count stays incremented, and at the entity's MaxDeliveryCount it is dead-lettered.
	Abandon(ctx context.Context, m *ReceivedMessage, props map[string]any) error
	// DeadLetter moves a locked message to the entity's dead-letter subqueue (or its
	// ForwardDeadLetteredMessagesTo entity) with a reason.
	DeadLetter(ctx context.Context, m *ReceivedMessage, reason string) error
	// RenewLock extends a message's lock by the entity's lock duration and updates
	// m.LockedUntil. Session messages are renewed with their session instead.
	RenewLock(ctx context.Context, m *ReceivedMessage) error
	// Close closes the receiver. Message locks it holds run out on their own.
	Close(ctx context.Context) error
}

// SessionReceiver is a receiver holding one session's exclusive lock.
type SessionReceiver interface {
	Receiver
	SessionID() string
	// LockedUntil is when the session lock runs out unless renewed.
	LockedUntil() time.Time
	// RenewSessionLock extends the session lock by the entity's lock duration.
	RenewSessionLock(ctx context.Context) error
}

// QueueProperties are the entity properties the driver sets and reads.
type QueueProperties struct {
	Name                       string
	LockDuration               time.Duration
	RequiresSession            bool
	RequiresDuplicateDetection bool
	DuplicateDetectionWindow   time.Duration
	DefaultMessageTimeToLive   time.Duration
	MaxDeliveryCount           int32
	// ForwardDeadLetteredMessagesTo names the entity dead-lettered messages go to;
	// empty: the entity's own dead-letter subqueue.
	ForwardDeadLetteredMessagesTo string
	// UserMetadata is free text kept with the entity, at most MaxUserMetadata characters.
	UserMetadata string
}

// RuntimeProperties are an entity's live counts.
type RuntimeProperties struct {
	// Active counts messages that are available or locked.
	Active     int64
	Scheduled  int64
	DeadLetter int64
}

// OutMessage is a message to send.
type OutMessage struct {
	// MessageID is what duplicate detection compares.
	MessageID  string
	SessionID  string
	Body       []byte
	Properties map[string]any
}

// ReceivedMessage is a received or peeked message.
type ReceivedMessage struct {
	MessageID        string
	Body             []byte
	Properties       map[string]any
	SessionID        string
	SequenceNumber   int64
	DeliveryCount    uint32
	EnqueuedTime     time.Time
	LockedUntil      time.Time
	DeadLetterSource string
	// Scheduled is set on peeked messages that are not yet enqueued.
	Scheduled bool

	native any // the adapter's message, for settlement
}

// Service Bus limits the driver and the model rely on.
const (
	MinLockDuration    = 5 * time.Second
	MaxLockDuration    = 5 * time.Minute
	MinDedupWindow     = 20 * time.Second
	MaxUserMetadata    = 1024
	MaxEntityNameBytes = 260
	// MaxMessageBytesStandard is the largest message of the Standard tier (body and
	// properties).
	MaxMessageBytesStandard = 256 * 1024
)

// Errors of the Namespace contract; match them with errors.Is.
var (
	ErrNotFound  = errors.New("servicebus: entity not found")
	ErrExists    = errors.New("servicebus: entity already exists")
	ErrLockLost  = errors.New("servicebus: lock lost")
	ErrNoSession = errors.New("servicebus: no session available")
)
