// Package drivers defines the contract between the anysqs gateway and a storage backend.
//
// The gateway owns the SQS wire protocols, validation, defaults, MD5 checksums, long-poll
// waiting, message move tasks and error rendering. A driver owns storage semantics only:
// durable queues and messages, visibility, FIFO ordering, deduplication, redrive and
// retention. Everything that crosses the seam is plain data (no funcs, channels or any)
// so that the same contract maps onto an RPC for out-of-process drivers.
//
// # Time
//
// Every request that depends on time carries Now, set by the gateway from its injectable
// clock. What a driver does with it depends on the clock kind it declares in Describe:
//
//   - ClockGateway: the driver never reads the wall clock for queue semantics; it stores
//     deadlines computed from Now and compares them against the Now of later requests.
//     Tests move queue time by advancing the gateway's clock.
//   - ClockService: the backend's service keeps queue time (a broker's lock expiry, a
//     store's TTL). Deadlines run on the service's clock; Now is only the gateway's
//     reading of the time, for what the driver stamps itself. Tests wait in real time.
//
// # Abilities
//
// Every ability is a method of Driver. A driver without one returns KindUnsupported
// from it and says so in Describe: the Description's plain fields (clock kind, receipt
// scope, shared storage, activity mode, move task store, blocking receive) and its
// capability declarations are all the gateway learns of a driver, so the same contract
// holds across an RPC, where every method exists whatever the backend can do.
//
// # Guarantees common to every method
//
//   - Success means durable: when a method returns nil, what it wrote survives a crash of
//     the gateway process and of the backend's own process where the backend promises so.
//   - Errors are *Error with a Kind; native errors are wrapped once and stay reachable via
//     errors.Unwrap. Context cancellation and deadline errors are returned as they are.
//   - Batch methods return exactly one entry result per request entry, in request order.
//     A per-entry failure goes in that entry's Err; the method's own error is reserved for
//     failures of the whole call (queue missing, backend unavailable), in which case no
//     entry was applied.
//   - A driver never retries on its own a write whose outcome is unknown; it returns
//     KindUnavailable and the client retries, as with SQS.
//   - Queues are addressed by name; names are unique in the driver's namespace. Every
//     method that names a queue checks, inside its own operation, that the queue exists
//     and returns KindNotFound if not: the gateway caches queue metadata for a moment,
//     so the driver is the authority on whether a queue still exists.
package drivers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
)

// Driver is a storage backend. Implementations must be safe for concurrent use.
type Driver interface {
	// Describe tells who the driver is and what it can do. The gateway calls it once at
	// start-up and builds its capability policy, limits and long-poll strategy from it.
	Describe(ctx context.Context) (Description, error)
	// Ping checks cheaply that the backend answers; the gateway's readiness check uses it.
	Ping(ctx context.Context) error
	// Metrics returns the driver's own series (a connection pool's, say) as plain data;
	// the gateway exports them with its own. Nil when the driver has none.
	Metrics(ctx context.Context) ([]Metric, error)

	// CreateQueue creates q atomically. If a queue of that name already exists the call
	// returns that queue unchanged with Existed set and no error; the gateway decides
	// whether the existing attributes match the request. A name whose queue was deleted
	// less than QueueNameReuseDelay before q.CreatedAt fails with KindDeletedRecently.
	CreateQueue(ctx context.Context, req CreateQueueRequest) (CreateQueueResult, error)
	// GetQueue returns one queue, or KindNotFound.
	GetQueue(ctx context.Context, req GetQueueRequest) (Queue, error)
	// ListQueues returns queues whose names start with Prefix, in name order, starting after
	// the name After, at most Limit (0 means no limit).
	ListQueues(ctx context.Context, req ListQueuesRequest) (ListQueuesResult, error)
	// SetQueueAttributes replaces the queue's attributes with req.Attributes (the gateway
	// merges the change into the current set first) and sets LastModified to req.Now.
	SetQueueAttributes(ctx context.Context, req SetQueueAttributesRequest) error
	// UpdateQueueTags sets and removes tags atomically.
	UpdateQueueTags(ctx context.Context, req UpdateQueueTagsRequest) error
	// DeleteQueue removes a queue and all its messages, or returns KindNotFound.
	DeleteQueue(ctx context.Context, req DeleteQueueRequest) error
	// PurgeQueue deletes every message that was in the queue at req.Now and, as in SQS,
	// forgets the queue's deduplication history (sqsrule.DedupHolds). A second purge
	// within 60 seconds of the last successful one fails with KindPurgeInProgress and
	// changes nothing. The deletion itself may finish after the call returns (a store
	// without bulk deletes), provided no purged message is delivered afterwards and no
	// deduplication record from before the purge suppresses a later send.
	PurgeQueue(ctx context.Context, req PurgeQueueRequest) error
	// QueueStats counts messages by state at req.Now. Counts may be approximate where the
	// backend's declarations say so.
	QueueStats(ctx context.Context, req QueueStatsRequest) (QueueStats, error)
	// BrowseMessages lists the queue's messages as stored, changing none: no receive
	// count, visibility, first-receive time or lock changes. It returns at most req.Limit
	// messages in a stable order (send order where the backend keeps one), starting after
	// the cursor req.After ("" for the start), and in NextAfter the cursor to continue
	// from, "" once the end is reached. Each message carries its state at req.Now and no
	// receipt handle; messages past the retention period are left out. A backend that
	// cannot look without receiving returns KindUnsupported.
	BrowseMessages(ctx context.Context, req BrowseMessagesRequest) (BrowseMessagesResult, error)

	// SendMessages stores up to 10 messages. For each entry it either stores the message
	// durably under entry.MessageID, or (FIFO, a deduplication id whose record in the
	// queue's deduplication scope still holds: sqsrule.DedupHolds) stores nothing and
	// returns the original MessageID and SequenceNumber with Duplicate set. FIFO sequence
	// numbers increase strictly within a message group, as SQS promises; nothing is
	// promised across groups. Entries are independent: one failing does not undo another,
	// except that on a FIFO queue an entry that fails fails the later entries of its
	// message group in the request, unwritten, with the same error (stored, they would be
	// delivered before the failed one once the client retries it; SQS enqueues a batch in
	// the order sent).
	SendMessages(ctx context.Context, req SendMessagesRequest) (SendMessagesResult, error)

	// ReceiveMessages claims up to req.MaxMessages visible messages at req.Now in one atomic
	// step per message: it sets a fresh receipt handle, sets the visibility deadline to
	// Now+VisibilityTimeout, increments the receive count and sets the first-receive time if
	// unset. Two concurrent receives never claim the same message.
	//
	// Redrive: a visible message due for redrive (sqsrule.RedriveDue) to the queue's
	// redrive target (sqsrule.RedriveTarget) is moved there (receive count kept,
	// DeadLetterSource set, enqueue time sqsrule.DLQEnqueueTime) instead of being
	// returned. With an atomic move (the redrive.dlq declaration's move limit) that
	// happens in the same transaction as the claim attempt; with an at-least-once move the
	// message is never lost, may reach the dead-letter queue more than once, and every copy
	// there has the same MessageID. In a FIFO DLQ the message's deduplication id becomes
	// its MessageID.
	//
	// Order on standard queues is best effort. A message that became visible again after
	// a receive (its visibility ended or was set to 0) should come before messages sent
	// after it, as in SQS; among the messages a driver looks at, older sends go first.
	// The receive.redelivery-order declaration says whether the driver does so.
	//
	// FIFO: a call takes the groups' runs as sqsrule.RunNext walks them, in
	// sqsrule.FIFORuns' order, each whole before the next while it has room. A driver
	// whose backend cannot release a group's head on its own declares fifo.group-release
	// degraded: its groups wait until none of their messages is in flight, and a call may
	// interleave groups.
	//
	// A repeated req.ReceiveRequestAttemptID replays the earlier receive's messages and
	// receipt handles as sqsrule.AttemptLive and sqsrule.AttemptHeld say; otherwise the
	// call is a new receive.
	//
	// An empty result is normal. A driver that declares BlockingReceive may wait up to
	// req.WaitTime for a message before answering empty; others answer at once.
	// NextVisibleAt is the earliest future time at which a message that is now delayed or
	// in flight becomes visible (zero if none or unknown), so the gateway's long poll can
	// wake for it without polling. The gateway reads it only when no message was
	// returned, so a driver may leave it zero otherwise.
	ReceiveMessages(ctx context.Context, req ReceiveMessagesRequest) (ReceiveMessagesResult, error)

	// DeleteMessages deletes messages by receipt handle. A handle this driver did not
	// issue for this queue fails that entry with KindInvalidReceiptHandle, and so does,
	// with ReceiptInstance scope, a handle issued by another driver instance (another
	// gateway, or this one before a restart). For the others, as in SQS:
	//   - standard queues: the entry succeeds. The current handle deletes the message,
	//     whether or not its visibility timeout has passed; an older handle of a message
	//     received again since, or a handle of a message already deleted, has no effect
	//     (SQS: "the request will succeed, but the message might not be deleted").
	//   - FIFO queues: only the current handle of a message still in flight deletes it;
	//     any other (visibility timeout passed, received again, deleted) fails with
	//     KindStaleReceiptHandle (SQS: "The receipt handle has expired").
	DeleteMessages(ctx context.Context, req DeleteMessagesRequest) (BatchResult, error)

	// ChangeVisibility sets a message's visibility deadline to Now+Timeout (zero makes it
	// visible at once). Handles this driver did not issue for this queue fail as in
	// DeleteMessages. For the others, as in SQS:
	//   - standard queues: any handle of a message that still exists applies the change
	//     to the message: the current one, in flight or not (its visibility timeout may
	//     have passed with nobody receiving the message since), and an older one of a
	//     message received again since, whose new deadline then replaces the one the
	//     later receive set.
	//   - FIFO queues: only the current handle of a message still in flight applies.
	// Otherwise (the message was deleted; on FIFO queues also a handle whose visibility
	// timeout passed or that a later receive superseded) the entry fails with
	// KindStaleReceiptHandle. As in SQS, a message cannot stay invisible for more than 12
	// hours after its latest receive: an entry whose new deadline would pass that fails
	// with KindInvalidArgument and changes nothing. A backend that cannot act on a handle
	// whose receive has ended (a broker's lock that is gone) fails such entries with
	// KindStaleReceiptHandle and declares receipt.stale degraded.
	ChangeVisibility(ctx context.Context, req ChangeVisibilityRequest) (BatchResult, error)

	// MoveMessages moves up to req.Limit visible messages from req.Source to
	// req.Destination (or, when Destination is empty, each message back to its
	// DeadLetterSource queue). Moved messages become visible at once with receive count 0
	// and fresh delivery state; as in SQS they count as new messages, with a new MessageID
	// and their send time and retention period starting at Now. Used by message move
	// tasks, which the gateway runs. The move is atomic, or, where the redrive.move_tasks
	// declaration's move limit says at-least-once, never loses a message and may deliver
	// one to the destination more than once, every copy with the same MessageID: such a
	// driver may keep the original MessageID, which makes a retried move recognisable.
	// A message that cannot be moved (its DeadLetterSource queue is gone) stays where it
	// is and does not end the scan: More says whether movable messages remain.
	//
	// req.Task, set for drivers that keep move tasks (Description.MoveTaskStore), makes
	// the call one step of that task. In the move's own transaction the driver checks that
	// the task is RUNNING and owned by req.Task.Owner, adds the number moved to its count
	// and renews its lease until req.Task.LeaseUntil. When the check fails nothing moves
	// and the call fails with KindFailedPrecondition. So the count equals what left the
	// source whatever happens to the caller after the commit, and a runner whose task was
	// adopted by another instance moves nothing more.
	MoveMessages(ctx context.Context, req MoveMessagesRequest) (MoveMessagesResult, error)

	// Sweep deletes, in bounded batches, messages older than their queue's
	// MessageRetentionPeriod at req.Now, and expired deduplication and receive-attempt
	// records. The gateway calls it periodically; More says another call would find more.
	// A backend whose own TTL expires them (the retention declaration's sweep limit is
	// "ttl") returns an empty result; expired messages are never delivered either way.
	Sweep(ctx context.Context, req SweepRequest) (SweepResult, error)

	// AwaitActivity blocks until messages may have become visible in some queue because of
	// a write made through another gateway instance, or until req.Timeout passes, and
	// returns the names of the queues concerned. Only drivers whose Activity is
	// ActivityNotify or ActivityWatch implement it; others return KindUnsupported.
	AwaitActivity(ctx context.Context, req AwaitActivityRequest) (AwaitActivityResult, error)
	// WatchActivity, for ActivityWatch drivers (whose cross-instance notification costs
	// every write something, a NOTIFY per send), asks for writes to req.Name to be
	// reported by AwaitActivity. Before a long poll waits, the gateway calls it and then
	// receives once more, so no write is missed: after WatchActivity returns, every write
	// to req.Name either is visible to a receive that starts after the return or is
	// reported by AwaitActivity on every instance, until req.Until passes. Other drivers
	// return KindUnsupported.
	WatchActivity(ctx context.Context, req WatchActivityRequest) error

	// MoveTaskStore keeps message move tasks in the backend, when Description.MoveTaskStore
	// says so; other drivers return KindUnsupported from its methods and the gateway keeps
	// tasks in its own memory.
	MoveTaskStore

	// Close releases the driver's resources.
	Close() error
}

// WatchActivityRequest asks for notification of writes to Name until Until (gateway
// clock, compared with the Now of later writes).
type WatchActivityRequest struct {
	Name  string
	Until time.Time
}

// MoveTaskStore keeps message move tasks in storage that several gateway instances may
// share, so every instance lists and cancels every task, at most one task is active
// (running or cancelling) per source queue across all instances, and a task outlives the
// instance running it. One instance at a time runs a task: the owner of its lease, which
// the owner renews at every step and another instance adopts once it has lapsed. Times
// are gateway clock times.
type MoveTaskStore interface {
	// StartMoveTask records t, which is running, and forgets all but the latest
	// MoveTasksKept finished tasks of its source. It fails with KindFailedPrecondition
	// when a task is already active (running or cancelling) on t.Source.
	StartMoveTask(ctx context.Context, t MoveTask) error
	// ReportMoveTask records a runner's view of its task: if the task is still running
	// under req.Owner's lease, it sets its status and failure reason and renews the lease
	// until req.LeaseUntil; a report by the owner of a cancelling task makes it CANCELLED,
	// whatever req.Status. It never changes the count (MoveMessages does, with the move),
	// so a report repeated after a lost reply changes nothing more. It returns the task as
	// stored afterwards (a cancelled task, or one another owner adopted, comes back with
	// that status or owner, and its runner stops). KindNotFound: no such handle.
	ReportMoveTask(ctx context.Context, req ReportMoveTaskRequest) (MoveTask, error)
	// CancelMoveTask marks the running task handle CANCELLING and returns it; its
	// runner's next report makes it CANCELLED. KindNotFound when no running task has
	// that handle (a cancelling one included: only a running task can be cancelled).
	CancelMoveTask(ctx context.Context, handle string) (MoveTask, error)
	// ListMoveTasks returns up to limit tasks of source, the latest started first.
	ListMoveTasks(ctx context.Context, source string, limit int) ([]MoveTask, error)
	// AdoptMoveTasks gives owner the leases, until leaseUntil, of running tasks whose
	// lease lapsed before now, and returns those tasks. Cancelling tasks whose lease
	// lapsed (their runner stopped before its next report) become CANCELLED.
	AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]MoveTask, error)
}

// MoveTasksKept is how many finished move tasks a MoveTaskStore keeps per source queue
// for ListMessageMoveTasks, which lists at most 10.
const MoveTasksKept = 10

// Message move task states, as SQS names them.
const (
	MoveTaskRunning    = "RUNNING"
	MoveTaskCompleted  = "COMPLETED"
	MoveTaskCancelling = "CANCELLING" // cancelled; its runner has not stopped yet
	MoveTaskCancelled  = "CANCELLED"
	MoveTaskFailed     = "FAILED"
)

// MoveTask is a message move task as a MoveTaskStore keeps it.
type MoveTask struct {
	Handle      string
	Source      string
	Destination string // empty: each message back to its DeadLetterSource
	Rate        *int32 // MaxNumberOfMessagesPerSecond as the client gave it; nil: the default
	Started     time.Time
	ToMove      int64 // the source's visible messages when the task started
	Moved       int64
	Status      string // one of the MoveTask* states
	Failure     string // why a FAILED task failed
	Owner       string // the gateway instance running it
	LeaseUntil  time.Time
}

// ReportMoveTaskRequest is a runner's report on its task; see MoveTaskStore.ReportMoveTask.
type ReportMoveTaskRequest struct {
	Handle     string
	Owner      string
	Status     string
	Failure    string
	LeaseUntil time.Time
}

// Description is what Describe returns: everything the gateway must know of a driver
// at start-up, as plain data.
type Description struct {
	Name           string // registry name, e.g. "sqlite"
	Version        string // driver version
	ServiceVersion string // the backend service or emulator version it is talking to
	// Clock says whose clock queue time runs on (see "Time" in the package doc).
	Clock ClockKind
	// ReceiptScope says where a receipt handle is valid.
	ReceiptScope ReceiptScope
	// SharedStorage: several gateway instances may serve the same storage at once.
	SharedStorage bool
	// Activity says how a long poll learns of writes made through other instances.
	Activity ActivityMode
	// PollInterval, for ActivityPoll, is the longest the gateway waits between re-checks
	// of a waiting receive: the worst-case pickup delay of a message sent through another
	// instance. Zero means DefaultPollInterval.
	PollInterval time.Duration
	// BlockingReceive: ReceiveMessages may itself wait up to req.WaitTime for a message,
	// as a broker's receive with a timeout does.
	BlockingReceive bool
	// MoveTaskStore: the driver keeps message move tasks (the MoveTaskStore methods);
	// otherwise the gateway keeps them in its own memory.
	MoveTaskStore bool
	// Capabilities has one declaration per catalog capability, with its level and limits.
	Capabilities []capabilities.Declaration
	// Operations are the backend's operational properties (durability, availability,
	// scale-out, ordering, throughput, cost, what runs where), for the report and the
	// console; the gateway does not act on them.
	Operations capabilities.Operations
	// Warnings name settings of the backend that work but will hurt (the gateway logs
	// them at start), each with what to do about it.
	Warnings []string
}

// ClockKind says whose clock governs visibility deadlines, delays and retention.
type ClockKind string

const (
	// ClockGateway: deadlines are computed from each request's Now (the default).
	ClockGateway ClockKind = "gateway"
	// ClockService: the backend's service keeps queue time.
	ClockService ClockKind = "service"
)

// ReceiptScope says where a receipt handle is valid.
type ReceiptScope string

const (
	// ReceiptStorage: a handle works through any driver instance on the same storage,
	// across restarts (the default).
	ReceiptStorage ReceiptScope = "storage"
	// ReceiptInstance: a handle works only through the driver instance that issued it (a
	// broker's lock held by one connection); elsewhere it fails with
	// KindInvalidReceiptHandle, and the message reappears when its visibility ends.
	ReceiptInstance ReceiptScope = "instance"
)

// ActivityMode says how a waiting receive learns of messages that writes through other
// gateway instances made visible.
type ActivityMode string

const (
	// ActivityLocal: the storage serves one gateway, whose own writes wake its waiters;
	// AwaitActivity is not used (the default).
	ActivityLocal ActivityMode = "local"
	// ActivityNotify: AwaitActivity reports writes to every queue.
	ActivityNotify ActivityMode = "notify"
	// ActivityWatch: AwaitActivity reports writes to queues taken with WatchActivity.
	ActivityWatch ActivityMode = "watch"
	// ActivityPoll: no notification; the gateway re-checks waiting receives on a
	// bounded backoff, at most PollInterval apart.
	ActivityPoll ActivityMode = "poll"
)

// DefaultPollInterval is the longest gap between re-checks of a waiting receive for an
// ActivityPoll driver that names none.
const DefaultPollInterval = time.Second

// Check reports what is inconsistent in d: an unknown clock, scope or activity mode, or
// plain data that contradicts the capability declarations (an instance-scoped receipt
// declared durable, shared storage with local activity).
func (d Description) Check() error {
	var errs []string
	switch d.Clock {
	case "", ClockGateway, ClockService:
	default:
		errs = append(errs, fmt.Sprintf("clock %q is not gateway or service", d.Clock))
	}
	switch d.ReceiptScope {
	case "", ReceiptStorage:
	case ReceiptInstance:
		for _, c := range d.Capabilities {
			if c.ID == capabilities.ReceiptDurable && (c.Level == capabilities.Native || c.Level == capabilities.Emulated) {
				errs = append(errs, "instance-scoped receipt handles cannot be declared "+string(c.Level)+" for "+string(c.ID))
			}
		}
	default:
		errs = append(errs, fmt.Sprintf("receipt scope %q is not storage or instance", d.ReceiptScope))
	}
	switch d.Activity {
	case "", ActivityLocal:
		if d.SharedStorage && !d.BlockingReceive {
			errs = append(errs, "shared storage needs an activity mode other than local, or a blocking receive: waiting receives would miss other instances' writes")
		}
	case ActivityNotify, ActivityWatch:
	case ActivityPoll:
		if err := d.checkPolled(); err != "" {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Sprintf("activity mode %q is not local, notify, watch or poll", d.Activity))
	}
	if d.PollInterval < 0 {
		errs = append(errs, "poll interval is negative")
	}
	if len(errs) > 0 {
		return fmt.Errorf("driver %s description: %s", d.Name, strings.Join(errs, "; "))
	}
	return nil
}

// checkPolled says what is wrong with an ActivityPoll driver's long_polling declaration:
// its waiting receives pick up other instances' messages up to PollInterval late, which
// the declaration must state (mode polled, max_overrun_ms at least the interval).
func (d Description) checkPolled() string {
	interval := d.Normalized().PollInterval
	lp, ok := d.Declaration(capabilities.LongPolling)
	if !ok || lp.Level == capabilities.Unsupported {
		return ""
	}
	overrun, err := strconv.ParseInt(lp.Limits["max_overrun_ms"], 10, 64)
	if lp.Limits["mode"] != "polled" || err != nil || time.Duration(overrun)*time.Millisecond < interval {
		return fmt.Sprintf("activity poll re-checks every %v at most, so %s must declare mode=polled and max_overrun_ms of at least %d",
			interval, capabilities.LongPolling, interval.Milliseconds())
	}
	return ""
}

// Normalized returns d with its zero fields set to their defaults.
func (d Description) Normalized() Description {
	if d.Clock == "" {
		d.Clock = ClockGateway
	}
	if d.ReceiptScope == "" {
		d.ReceiptScope = ReceiptStorage
	}
	if d.Activity == "" {
		d.Activity = ActivityLocal
	}
	if d.Activity == ActivityPoll && d.PollInterval == 0 {
		d.PollInterval = DefaultPollInterval
	}
	return d
}

// Declaration returns d's declaration of id.
func (d Description) Declaration(id capabilities.ID) (capabilities.Declaration, bool) {
	for _, c := range d.Capabilities {
		if c.ID == id {
			return c, true
		}
	}
	return capabilities.Declaration{}, false
}

// Metric is one sample of a driver's own series, in Prometheus' data model.
type Metric struct {
	Name   string // e.g. anysqs_postgres_pool_connections
	Help   string
	Type   MetricType
	Labels []Label // in a fixed order; every sample of one Name has the same label names
	Value  float64
}

// MetricType is a metric's type.
type MetricType string

const (
	// Gauge is a value that goes up and down.
	Gauge MetricType = "gauge"
	// Counter is a value that only goes up.
	Counter MetricType = "counter"
)

// Label is one label of a metric sample.
type Label struct{ Name, Value string }

// QueueAttributes are a queue's settable attributes, validated and normalised by the
// gateway. Drivers store them as given and read the ones their semantics need.
type QueueAttributes struct {
	DelaySeconds                  int32
	MaximumMessageSize            int32
	MessageRetentionPeriod        int32 // seconds
	ReceiveMessageWaitTimeSeconds int32
	VisibilityTimeout             int32
	// RedrivePolicy is nil when the queue has no dead-letter queue.
	RedrivePolicy *RedrivePolicy
	// RedriveAllowPolicy, Policy are stored as the JSON text the client sent.
	RedriveAllowPolicy           string
	Policy                       string
	FifoQueue                    bool
	ContentBasedDeduplication    bool
	DeduplicationScope           string // "queue" or "messageGroup" (FIFO only)
	FifoThroughputLimit          string // "perQueue" or "perMessageGroupId" (FIFO only)
	KmsMasterKeyID               string
	KmsDataKeyReusePeriodSeconds int32
	SqsManagedSseEnabled         bool
}

// RedrivePolicy sends a message to DeadLetterQueue once it has been received
// MaxReceiveCount times without being deleted; sqsrule.RedriveTarget says when a policy
// has no target.
type RedrivePolicy struct {
	DeadLetterQueue string // queue name, same namespace
	MaxReceiveCount int32
}

// Queue is a stored queue.
type Queue struct {
	Name         string
	Attributes   QueueAttributes
	Tags         map[string]string
	CreatedAt    time.Time
	LastModified time.Time
}

// CreateQueueRequest creates Queue; Queue.CreatedAt and LastModified are set by the gateway.
type CreateQueueRequest struct {
	Queue Queue
}

// CreateQueueResult returns the stored queue; Existed says it was there already.
type CreateQueueResult struct {
	Queue   Queue
	Existed bool
}

// GetQueueRequest names a queue.
type GetQueueRequest struct{ Name string }

// ListQueuesRequest pages through queues by name.
type ListQueuesRequest struct {
	Prefix string
	After  string
	Limit  int
}

// ListQueuesResult holds one page; More says further queues follow.
type ListQueuesResult struct {
	Queues []Queue
	More   bool
}

// SetQueueAttributesRequest replaces a queue's attributes.
type SetQueueAttributesRequest struct {
	Name       string
	Attributes QueueAttributes
	Now        time.Time
}

// UpdateQueueTagsRequest adds or overwrites Set and deletes Remove.
type UpdateQueueTagsRequest struct {
	Name   string
	Set    map[string]string
	Remove []string
}

// DeleteQueueRequest names the queue to delete.
type DeleteQueueRequest struct {
	Name string
	Now  time.Time // when it is deleted: the name may be created again QueueNameReuseDelay later
}

// QueueNameReuseDelay is how long after a queue's deletion its name cannot be used for a
// new queue, as in SQS: CreateQueue fails with KindDeletedRecently meanwhile. Drivers
// whose storage several gateways share enforce it for all of them.
const QueueNameReuseDelay = 60 * time.Second

// PurgeQueueRequest names the queue to purge.
type PurgeQueueRequest struct {
	Name string
	Now  time.Time
}

// QueueStatsRequest asks for counts at Now.
type QueueStatsRequest struct {
	Name string
	Now  time.Time
	// Groups asks also for the fair-queue group counts (QueueStats.NoisyGroups and
	// QuietGroups), which cost more to read than the message counts.
	Groups bool
}

// QueueStats are message counts by state.
type QueueStats struct {
	Visible    int64 // ApproximateNumberOfMessages
	NotVisible int64 // ApproximateNumberOfMessagesNotVisible (in flight)
	Delayed    int64 // ApproximateNumberOfMessagesDelayed
	// OldestSentAt is the enqueue time (retention's clock: the send time, or a FIFO
	// dead-letter queue's move time) of the oldest unexpired message the queue holds, in
	// any state; zero when it holds none or the backend cannot tell.
	OldestSentAt time.Time
	// NoisyGroups and QuietGroups count a standard queue's message groups with messages
	// by fair-queue state, when the request asks (Groups) and the driver serves fair
	// queues natively (receive.fair); zero otherwise. A noisy group without visible
	// messages counts as quiet: it holds nothing back.
	NoisyGroups, QuietGroups int64
}

// BrowseMessagesRequest pages through a queue's messages (Driver.BrowseMessages).
type BrowseMessagesRequest struct {
	Name  string
	Now   time.Time
	After string // the cursor a previous page returned in NextAfter; "" for the start
	Limit int    // at most this many messages (the gateway asks for 1 to 100)
}

// BrowseMessagesResult is one page of a queue's messages.
type BrowseMessagesResult struct {
	Messages  []BrowsedMessage
	NextAfter string // "" when the end of the queue was reached
}

// MessageState is where a message stands at a moment.
type MessageState string

const (
	StateVisible  MessageState = "visible"   // a receive may return it now
	StateInFlight MessageState = "in-flight" // received, its visibility timeout running
	StateDelayed  MessageState = "delayed"   // sent with a delay that has not ended
)

// BrowsedMessage is a message as BrowseMessages sees it: the Message fields (with no
// ReceiptHandle), its state, and when an in-flight or delayed message becomes visible.
type BrowsedMessage struct {
	Message
	State     MessageState
	VisibleAt time.Time
}

// MessageAttribute is one message attribute value. DataType is "String", "Number" or
// "Binary", optionally followed by ".customType".
type MessageAttribute struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// SendEntry is one message to store. The gateway has validated it and resolved defaults:
// DelaySeconds is final, DeduplicationID is set for FIFO queues (content-based ids are
// computed by the gateway), MessageID is freshly generated.
type SendEntry struct {
	EntryID                string // batch entry id, echoed in the result
	MessageID              string
	Body                   string
	Attributes             map[string]MessageAttribute
	SystemAttributes       map[string]MessageAttribute // AWSTraceHeader
	DelaySeconds           int32
	MessageGroupID         string
	MessageDeduplicationID string
	SenderID               string
}

// SendMessagesRequest stores Entries in queue Name at Now.
type SendMessagesRequest struct {
	Name    string
	Now     time.Time
	Entries []SendEntry
}

// SendEntryResult is the outcome of one SendEntry.
type SendEntryResult struct {
	EntryID        string
	MessageID      string // the stored message's id (the original one for a duplicate)
	SequenceNumber string // FIFO only: decimal, increasing within the message group
	Duplicate      bool
	Err            *Error
}

// SendMessagesResult has one result per entry, in order.
type SendMessagesResult struct {
	Entries []SendEntryResult
}

// ReceiveMessagesRequest claims messages.
type ReceiveMessagesRequest struct {
	Name                    string
	Now                     time.Time
	MaxMessages             int   // 1..10
	VisibilityTimeout       int32 // seconds, resolved by the gateway
	ReceiveRequestAttemptID string
	// WaitTime is how long a BlockingReceive driver may wait for a message before
	// answering empty; zero (and for other drivers, always): answer at once.
	WaitTime time.Duration
}

// Message is a received message with its delivery state.
type Message struct {
	MessageID              string
	ReceiptHandle          string
	Body                   string
	Attributes             map[string]MessageAttribute
	SystemAttributes       map[string]MessageAttribute
	SenderID               string
	SentAt                 time.Time
	FirstReceivedAt        time.Time
	ReceiveCount           int32
	MessageGroupID         string
	MessageDeduplicationID string
	SequenceNumber         string
	DeadLetterSource       string // name of the queue it was redriven from, if any
}

// ReceiveMessagesResult holds the claimed messages.
type ReceiveMessagesResult struct {
	Messages      []Message
	NextVisibleAt time.Time
	// DeadLettered is how many messages the call moved to the redrive target instead
	// of returning them; -1 from a backend that dead-letters on its own and cannot
	// count the moves.
	DeadLettered int32
}

// DeleteMessagesRequest deletes by receipt handle.
type DeleteMessagesRequest struct {
	Name    string
	Now     time.Time
	Entries []DeleteEntry
}

// DeleteEntry is one receipt handle to delete.
type DeleteEntry struct {
	EntryID       string
	ReceiptHandle string
}

// ChangeVisibilityRequest changes visibility deadlines.
type ChangeVisibilityRequest struct {
	Name    string
	Now     time.Time
	Entries []ChangeVisibilityEntry
}

// ChangeVisibilityEntry is one receipt handle and its new timeout.
type ChangeVisibilityEntry struct {
	EntryID           string
	ReceiptHandle     string
	VisibilityTimeout int32 // seconds from Now
}

// BatchResult has one entry per request entry, in order; Err nil means success.
type BatchResult struct {
	Entries []EntryResult
}

// EntryResult is the outcome of one batch entry.
type EntryResult struct {
	EntryID string
	Err     *Error
}

// MoveMessagesRequest moves visible messages between queues.
type MoveMessagesRequest struct {
	Source      string
	Destination string // empty: each message's DeadLetterSource
	Now         time.Time
	Limit       int
	// Task, when set, is the move task this call is a step of; see Driver.MoveMessages.
	Task *MoveTaskStep
}

// MoveTaskStep names the move task a MoveMessages call belongs to: its handle, the
// instance running it, and the lease that instance takes with the step.
type MoveTaskStep struct {
	Handle     string
	Owner      string
	LeaseUntil time.Time
}

// MoveMessagesResult says how many moved and whether visible messages remain in Source.
type MoveMessagesResult struct {
	Moved int
	More  bool
}

// SweepRequest bounds one retention pass.
type SweepRequest struct {
	Now   time.Time
	Limit int
}

// SweepResult reports one retention pass.
type SweepResult struct {
	Deleted int
	More    bool
}

// AwaitActivityRequest bounds one wait for cross-instance activity.
type AwaitActivityRequest struct {
	Timeout time.Duration
}

// AwaitActivityResult names queues that may have new visible messages.
type AwaitActivityResult struct {
	Queues []string
}
