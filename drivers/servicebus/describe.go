package servicebus

import (
	"context"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Describe names the driver and the namespace, and declares what Service Bus gives an
// SQS application. The model declares what the real namespace would: it is a model of it.
func (d *Driver) Describe(ctx context.Context) (drivers.Description, error) {
	return drivers.Description{Name: "servicebus", Version: Version, ServiceVersion: d.service,
		Clock: drivers.ClockService, ReceiptScope: drivers.ReceiptInstance, SharedStorage: true,
		Activity: drivers.ActivityLocal, BlockingReceive: true, Capabilities: declarations(d.opts),
		Operations: operations()}, nil
}

func decl(id capabilities.ID, level capabilities.Level, note string, limits ...string) capabilities.Declaration {
	c := capabilities.Declaration{ID: id, Level: level, Note: note}
	if len(limits) > 0 {
		c.Limits = map[string]string{}
		for i := 0; i+1 < len(limits); i += 2 {
			c.Limits[limits[i]] = limits[i+1]
		}
	}
	return c
}

const (
	native   = capabilities.Native
	degraded = capabilities.Degraded
)

func declarations(o Options) []capabilities.Declaration {
	visibility := decl(capabilities.VisibilityMax, native,
		"timeouts longer than the entity's lock duration are held by renewing the lock while the gateway runs", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout))
	if o.MaxVisibilitySeconds < sqsrule.MaxVisibilityTimeout {
		visibility = decl(capabilities.VisibilityMax, degraded,
			"max_visibility_seconds limits how long the driver holds a lock; longer visibility timeouts are rejected",
			"max_seconds", strconv.Itoa(o.MaxVisibilitySeconds))
	}
	size := decl(capabilities.MessageMaxSize, native, "", "max_bytes", strconv.Itoa(sqsrule.MaxMessageSize))
	if o.MaxMessageBytes < sqsrule.MaxMessageSize {
		size = decl(capabilities.MessageMaxSize, degraded,
			"a Standard-tier message holds 256 KiB with its properties; Premium namespaces may raise max_message_bytes",
			"max_bytes", strconv.Itoa(o.MaxMessageBytes))
	}
	return []capabilities.Declaration{
		decl(capabilities.QueueStandard, native, "a Service Bus queue"),
		decl(capabilities.QueueFIFO, native, "a session-enabled queue with duplicate detection; MessageGroupId is the session id"),
		decl(capabilities.QueueCreate, native, "the driver creates and deletes entities: the credential needs Manage rights"),
		decl(capabilities.QueuePurge, degraded,
			"Service Bus has no purge: the driver receives and completes every available message and cancels scheduled ones; messages another gateway instance holds locked survive the purge; the entity's duplicate detection keeps its history, so a deduplication id used in the five minutes before a purge still drops a send after it"),
		decl(capabilities.QueueTags, degraded,
			"tags are kept with the other attributes Service Bus has no property for in the entity's user metadata, 1024 characters in all; a change beyond that fails with InvalidParameterValue",
			"max_tags", "50"),
		decl(capabilities.FIFOOrdering, native, "each message group is a session, locked by one receiver at a time: order holds across gateway instances"),
		decl(capabilities.FIFOGroupRelease, degraded,
			"a group is a session that one receiver locks whole: a message released while a later one of its group is in flight waits for it, and a receive takes one session's messages"),
		decl(capabilities.FIFOGroupBatch, native, "a receive takes several messages of a session it holds", "max_messages", "10"),
		decl(capabilities.FIFODedupExplicit, native, "Service Bus duplicate detection on MessageID, with a 5-minute window", "window_seconds", "300"),
		decl(capabilities.FIFODedupContent, native, "the gateway's body hash is the MessageID duplicate detection compares", "window_seconds", "300"),
		decl(capabilities.FIFODedupEcho, degraded,
			"Service Bus drops a duplicate without telling the sender: a duplicate sent through the gateway instance that sent the original, within 5 minutes, returns the original MessageId; through another instance or after a restart it returns a fresh MessageId; never a SequenceNumber"),
		decl(capabilities.FIFODedupScopeGroup, native, "the MessageID is a hash of group and deduplication id"),
		decl(capabilities.FIFOSequenceNumber, degraded,
			"SendMessage returns no SequenceNumber: Service Bus assigns it when it stores the message; received messages carry the broker's 20-digit sequence number, increasing within the queue"),
		decl(capabilities.FIFOReceiveAttempt, capabilities.Unsupported,
			"Service Bus does not replay a receive; ReceiveRequestAttemptId is rejected"),
		decl(capabilities.VisibilityTimeout, native,
			"the driver holds the peek lock and abandons the message when the timeout ends, by this gateway's clock; the broker's lock is the backstop"),
		visibility,
		decl(capabilities.VisibilityChange, native, "extending renews the lock as needed"),
		decl(capabilities.VisibilityRelease, native, "abandons the message: it is delivered again at once, in order within its group"),
		decl(capabilities.ReceiptDurable, degraded,
			"a receipt handle is a lock held by one gateway instance; through another instance or after a restart it fails with ReceiptHandleIsInvalid; a gateway that closes abandons its locks, one that crashes leaves them to run out within the lock duration"),
		decl(capabilities.ReceiptStale, degraded,
			"once its visibility timeout has ended a handle no longer holds a lock: deleting with it succeeds without effect on a standard queue and the message is received again; ChangeMessageVisibility with it, or with an older receive's handle, fails with InvalidParameterValue (SQS applies the change on standard queues)"),
		decl(capabilities.DelayQueue, native, "a scheduled enqueue time", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		decl(capabilities.DelayMessage, native, "a scheduled enqueue time", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		decl(capabilities.RedriveDLQ, degraded,
			"maxReceiveCount is the entity's MaxDeliveryCount and dead-lettered messages are forwarded to the dead-letter queue's entity: a message moves when its last lock ends rather than at the next receive, and the forward is not one transaction with the receive",
			"max_receive_count", "1000", "move", "at-least-once"),
		decl(capabilities.RedriveAllow, native, "kept in the entity's user metadata; the gateway enforces it"),
		decl(capabilities.RedriveMoveTasks, degraded,
			"a move sends a copy to the destination, then completes the source message: a retried move may leave a duplicate with the same MessageId, and moved messages keep their MessageId; tasks are kept in the gateway's memory",
			"max_messages_per_second", "500", "move", "at-least-once"),
		decl(capabilities.RetentionPeriod, degraded,
			"the entity's default time-to-live; a message's time-to-live is fixed when it is enqueued, so a changed retention period applies to messages sent afterwards, and it restarts in a dead-letter queue",
			"min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "ttl"),
		size,
		decl(capabilities.MessageAttrs, native, "application properties of the message", "max_count", "10"),
		decl(capabilities.MessageSystem, degraded,
			"ApproximateFirstReceiveTimestamp is written on the message when the driver releases it; after a gateway stops without closing it restarts at the next receive"),
		decl(capabilities.RedeliveryOrder, native,
			"Service Bus delivers in sequence-number order and an abandoned message keeps its number: a returned message comes before messages sent after it"),
		decl(capabilities.QueueBrowse, native,
			"Service Bus's peek, which locks nothing and counts no delivery; a message locked through another gateway shows as visible, since a peek does not say who holds a lock"),
		decl(capabilities.FairQueues, degraded,
			"MessageGroupId is kept and returned on standard queues (as an application property), but Service Bus delivers in sequence-number order: one group's flood delays the other groups' messages"),
		decl(capabilities.LongPolling, degraded,
			"receives wait in the broker, which hands them messages sent through any gateway; on a real namespace a receive of no wait listens for 1 s, and a FIFO receive on an empty queue may overrun its wait by one session-accept window",
			"mode", "native", "max_overrun_ms", "60000"),
		decl(capabilities.CountsApprox, degraded,
			"the entity's runtime counts (Manage rights), which may lag; Service Bus counts locked messages as active, so messages other gateway instances hold count as visible",
			"accuracy", "approximate"),
		decl(capabilities.AttrVisibilityTimeout, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrDelaySeconds, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrRetention, native, "the entity's default time-to-live"),
		decl(capabilities.AttrMaxMessageSize, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrReceiveWait, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrRedrivePolicy, native, "the entity's MaxDeliveryCount and dead-letter forwarding"),
		decl(capabilities.AttrRedriveAllow, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrPolicy, native, "the document is kept in the entity's user metadata; the gateway enforces it for other accounts (account principals, sqs actions, queue resources; conditions are refused when set). Service Bus's own SAS rules and Azure RBAC govern the gateway's access, not the clients'"),
		decl(capabilities.AttrContentDedup, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrDedupScope, native, "kept in the entity's user metadata"),
		decl(capabilities.AttrThroughputLimit, degraded, "kept and returned; throughput is the namespace tier's"),
		decl(capabilities.AttrKMS, degraded, "kept and returned; Service Bus encrypts at rest with its own keys, or customer-managed keys on Premium, configured in Azure"),
		decl(capabilities.AttrKMSReuse, degraded, "kept and returned without effect"),
		decl(capabilities.AttrSSE, native, "Service Bus encrypts all messages at rest with Microsoft-managed keys, as SSE-SQS does with SQS-owned keys; the value is returned as set, and false does not turn encryption off"),
	}
}
