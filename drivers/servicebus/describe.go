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

func declarations(o Options) []capabilities.Declaration {
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	visibility := native(capabilities.VisibilityMax,
		"timeouts longer than the entity's lock duration are held by renewing the lock while the gateway runs", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout))
	if o.MaxVisibilitySeconds < sqsrule.MaxVisibilityTimeout {
		visibility = degraded(capabilities.VisibilityMax,
			"max_visibility_seconds limits how long the driver holds a lock; longer visibility timeouts are rejected",
			"max_seconds", strconv.Itoa(o.MaxVisibilitySeconds))
	}
	size := native(capabilities.MessageMaxSize, "", "max_bytes", strconv.Itoa(sqsrule.MaxMessageSize))
	if o.MaxMessageBytes < sqsrule.MaxMessageSize {
		size = degraded(capabilities.MessageMaxSize,
			"a Standard-tier message holds 256 KiB with its properties; Premium namespaces may raise max_message_bytes",
			"max_bytes", strconv.Itoa(o.MaxMessageBytes))
	}
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, "a Service Bus queue"),
		native(capabilities.QueueFIFO, "a session-enabled queue with duplicate detection; MessageGroupId is the session id"),
		native(capabilities.QueueCreate, "the driver creates and deletes entities: the credential needs Manage rights"),
		degraded(capabilities.QueuePurge,
			"Service Bus has no purge: the driver receives and completes every available message and cancels scheduled ones; messages another gateway instance holds locked survive the purge; the entity's duplicate detection keeps its history, so a deduplication id used in the five minutes before a purge still drops a send after it"),
		degraded(capabilities.QueueTags,
			"tags are kept with the other attributes Service Bus has no property for in the entity's user metadata, 1024 characters in all; a change beyond that fails with InvalidParameterValue",
			"max_tags", strconv.Itoa(sqsrule.MaxQueueTags)),
		native(capabilities.FIFOOrdering, "each message group is a session, locked by one receiver at a time: order holds across gateway instances"),
		degraded(capabilities.FIFOGroupRelease,
			"a group is a session that one receiver locks whole: a message released while a later one of its group is in flight waits for it, and a receive takes one session's messages"),
		native(capabilities.FIFOGroupBatch, "a receive takes several messages of a session it holds", "max_messages", strconv.Itoa(sqsrule.MaxReceiveMessages)),
		native(capabilities.FIFODedupExplicit, "Service Bus duplicate detection on MessageID, with a 5-minute window", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.FIFODedupContent, "the gateway's body hash is the MessageID duplicate detection compares", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		degraded(capabilities.FIFODedupEcho,
			"Service Bus drops a duplicate without telling the sender: a duplicate sent through the gateway instance that sent the original, within 5 minutes, returns the original MessageId; through another instance or after a restart it returns a fresh MessageId; never a SequenceNumber"),
		native(capabilities.FIFODedupScopeGroup, "the MessageID is a hash of group and deduplication id"),
		degraded(capabilities.FIFOSequenceNumber,
			"SendMessage returns no SequenceNumber: Service Bus assigns it when it stores the message; received messages carry the broker's 20-digit sequence number, increasing within the queue"),
		capabilities.Unsupported.Declare(capabilities.FIFOReceiveAttempt,
			"Service Bus does not replay a receive; ReceiveRequestAttemptId is rejected"),
		native(capabilities.VisibilityTimeout,
			"the driver holds the peek lock and abandons the message when the timeout ends, by this gateway's clock; the broker's lock is the backstop"),
		visibility,
		native(capabilities.VisibilityChange, "extending renews the lock as needed"),
		native(capabilities.VisibilityRelease, "abandons the message: it is delivered again at once, in order within its group"),
		degraded(capabilities.ReceiptDurable,
			"a receipt handle is a lock held by one gateway instance; through another instance or after a restart it fails with ReceiptHandleIsInvalid; a gateway that closes abandons its locks, one that crashes leaves them to run out within the lock duration"),
		degraded(capabilities.ReceiptStale,
			"once its visibility timeout has ended a handle no longer holds a lock: deleting with it succeeds without effect on a standard queue and the message is received again; ChangeMessageVisibility with it, or with an older receive's handle, fails with InvalidParameterValue (SQS applies the change on standard queues)"),
		native(capabilities.DelayQueue, "a scheduled enqueue time", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.DelayMessage, "a scheduled enqueue time", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		degraded(capabilities.RedriveDLQ,
			"maxReceiveCount is the entity's MaxDeliveryCount and dead-lettered messages are forwarded to the dead-letter queue's entity: a message moves when its last lock ends rather than at the next receive, and the forward is not one transaction with the receive",
			"max_receive_count", strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move", "at-least-once"),
		native(capabilities.RedriveAllow, "kept in the entity's user metadata"),
		degraded(capabilities.RedriveMoveTasks,
			"a move sends a copy to the destination, then completes the source message: a retried move may leave a duplicate with the same MessageId, and moved messages keep their MessageId; tasks are kept in the gateway's memory; a message whose source queue is gone stops a move back to the sources: the task fails, naming the queue, and the message stays in the dead-letter queue",
			"max_messages_per_second", "500", "move", "at-least-once"),
		degraded(capabilities.RetentionPeriod,
			"the entity's default time-to-live; a message's time-to-live is fixed when it is enqueued, so a changed retention period applies to messages sent afterwards, and it restarts in a dead-letter queue",
			"min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "ttl"),
		size,
		native(capabilities.MessageAttrs, "application properties of the message", "max_count", strconv.Itoa(sqsrule.MaxMessageAttributes)),
		degraded(capabilities.MessageSystem,
			"ApproximateFirstReceiveTimestamp is written on the message when the driver releases it; after a gateway stops without closing it restarts at the next receive"),
		native(capabilities.RedeliveryOrder,
			"Service Bus delivers in sequence-number order and an abandoned message keeps its number: a returned message comes before messages sent after it"),
		native(capabilities.QueueBrowse,
			"Service Bus's peek, which locks nothing and counts no delivery; a message locked through another gateway shows as visible, since a peek does not say who holds a lock"),
		degraded(capabilities.FairQueues,
			"MessageGroupId is kept and returned on standard queues (as an application property), but Service Bus delivers in sequence-number order: one group's flood delays the other groups' messages"),
		degraded(capabilities.LongPolling,
			"receives wait in the broker, which hands them messages sent through any gateway; on a real namespace a receive of no wait listens for 1 s, and a FIFO receive on an empty queue may overrun its wait by one session-accept window",
			"mode", "native", "max_overrun_ms", "60000"),
		degraded(capabilities.InFlightLimit,
			"Service Bus counts locked messages as active, so the gateway counts only the messages it holds: each gateway instance enforces the limit on its own"),
		degraded(capabilities.CountsApprox,
			"the entity's runtime counts (Manage rights), which may lag; Service Bus counts locked messages as active, so messages other gateway instances hold count as visible",
			"accuracy", "approximate"),
		native(capabilities.AttrVisibilityTimeout, "kept in the entity's user metadata"),
		native(capabilities.AttrDelaySeconds, "kept in the entity's user metadata"),
		native(capabilities.AttrRetention, "the entity's default time-to-live"),
		native(capabilities.AttrMaxMessageSize, "kept in the entity's user metadata"),
		native(capabilities.AttrReceiveWait, "kept in the entity's user metadata"),
		native(capabilities.AttrRedrivePolicy, "the entity's MaxDeliveryCount and dead-letter forwarding"),
		native(capabilities.AttrRedriveAllow, "kept in the entity's user metadata"),
		native(capabilities.AttrPolicy, "the document is kept in the entity's user metadata; Service Bus's own SAS rules and Azure RBAC govern the gateway's access, not the clients'"),
		native(capabilities.AttrContentDedup, "kept in the entity's user metadata"),
		native(capabilities.AttrDedupScope, "kept in the entity's user metadata"),
		degraded(capabilities.AttrThroughputLimit, "kept and returned; throughput is the namespace tier's"),
		degraded(capabilities.AttrKMS, "kept and returned; Service Bus encrypts at rest with its own keys, or customer-managed keys on Premium, configured in Azure"),
		degraded(capabilities.AttrKMSReuse, "kept and returned without effect"),
		native(capabilities.AttrSSE, "Service Bus encrypts all messages at rest with Microsoft-managed keys, as SSE-SQS does with SQS-owned keys; the value is returned as set, and false does not turn encryption off"),
	}
}
