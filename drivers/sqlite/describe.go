package sqlite

import (
	"context"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Describe names the driver, the SQLite library version and the capability declarations.
func (d *Driver) Describe(ctx context.Context) (drivers.Description, error) {
	var v string
	err := d.read(ctx, func(db queryer) error {
		return db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&v)
	})
	if err != nil {
		return drivers.Description{}, err
	}
	return drivers.Description{Name: "sqlite", Version: Version, ServiceVersion: v,
		Clock: drivers.ClockGateway, ReceiptScope: drivers.ReceiptStorage, Activity: drivers.ActivityLocal,
		MoveTaskStore: true, Capabilities: declarations(d.memory),
		Operations: operations()}, nil
}

// declarations states one level per catalog capability. Everything SQS does with a
// queue's storage is done here; attributes whose effect lies outside storage (access
// policy, encryption, throughput partitions) are stored and returned, declared
// Degraded, and their notes say what is not done.
func declarations(memory bool) []capabilities.Declaration {
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	durable := native(capabilities.ReceiptDurable, "receipt handles are stored with the message and MAC-signed with a key kept in the database")
	if memory {
		durable = degraded(capabilities.ReceiptDurable, "data_dir \":memory:\" keeps nothing across a restart; use a directory for durability")
	}
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, ""),
		native(capabilities.QueueFIFO, ""),
		native(capabilities.QueueCreate, ""),
		native(capabilities.QueuePurge, "purge deletes at once, within the purge transaction"),
		native(capabilities.QueueTags, "", "max_tags", strconv.Itoa(sqsrule.MaxQueueTags)),
		native(capabilities.FIFOOrdering, ""),
		native(capabilities.FIFOGroupBatch, "", "max_messages", strconv.Itoa(sqsrule.MaxReceiveMessages)),
		native(capabilities.FIFOGroupRelease, "groups are walked in order of the moment their first message became visible"),
		native(capabilities.FIFODedupExplicit, "", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.FIFODedupContent, "", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.FIFODedupEcho, ""),
		native(capabilities.FIFODedupScopeGroup, ""),
		native(capabilities.FIFOSequenceNumber, "20-digit decimal, increasing per queue"),
		native(capabilities.FIFOReceiveAttempt, "", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.VisibilityTimeout, ""),
		native(capabilities.VisibilityMax, "", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout)),
		native(capabilities.VisibilityChange, ""),
		native(capabilities.VisibilityRelease, ""),
		durable,
		native(capabilities.ReceiptStale, ""),
		native(capabilities.DelayQueue, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.DelayMessage, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.RedriveDLQ, "moved inside the receive transaction", "max_receive_count", strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move", "atomic"),
		native(capabilities.RedriveAllow, "stored with the queue"),
		native(capabilities.RedriveMoveTasks, "the gateway paces MoveMessages; tasks are kept in the database and resume after a restart", "max_messages_per_second", "500", "move", "atomic"),
		native(capabilities.RetentionPeriod, "expired messages are never delivered; Sweep removes them",
			"min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "driver"),
		native(capabilities.MessageMaxSize, "", "max_bytes", strconv.Itoa(sqsrule.MaxMessageSize)),
		native(capabilities.MessageAttrs, "", "max_count", strconv.Itoa(sqsrule.MaxMessageAttributes)),
		native(capabilities.MessageSystem, ""),
		native(capabilities.RedeliveryOrder, "a receive looks at the longest-visible messages and the longest-visible returned ones, and hands out older sends first"),
		native(capabilities.QueueBrowse, "peek reads the stored rows in send order; nothing is written"),
		native(capabilities.FairQueues, "a group holding 30 or more in-flight messages and over 10% of them, or over 10% of the recent processing time (receive to delete, in this process's memory), is noisy until it has sent nothing for 5 minutes; a receive hands out the other groups' visible messages first (those without a group among the 200 visible longest), then the noisy groups', the fewest in flight first"),
		native(capabilities.LongPolling, "single process: the gateway wakes waiters on its own writes and at NextVisibleAt",
			"mode", "native"),
		native(capabilities.InFlightLimit, "counted by the gateway from the queue's exact in-flight count"),
		native(capabilities.CountsApprox, "counts are exact", "accuracy", "exact"),
		native(capabilities.AttrVisibilityTimeout, ""),
		native(capabilities.AttrDelaySeconds, ""),
		native(capabilities.AttrRetention, ""),
		native(capabilities.AttrMaxMessageSize, ""),
		native(capabilities.AttrReceiveWait, ""),
		native(capabilities.AttrRedrivePolicy, ""),
		native(capabilities.AttrRedriveAllow, ""),
		native(capabilities.AttrPolicy, "the document is stored with the queue"),
		native(capabilities.AttrContentDedup, ""),
		native(capabilities.AttrDedupScope, ""),
		degraded(capabilities.AttrThroughputLimit, "stored and returned; throughput is that of one SQLite writer, without per-group partitions"),
		degraded(capabilities.AttrKMS, "stored and returned; messages are not encrypted with a KMS key (the database file is plain)"),
		degraded(capabilities.AttrKMSReuse, "stored and returned; no KMS data keys are used"),
		degraded(capabilities.AttrSSE, "stored and returned; the database file is not encrypted at rest (use disk encryption)"),
	}
}

// Ping checks that the database answers a read.
func (d *Driver) Ping(ctx context.Context) error {
	return d.read(ctx, func(q queryer) error {
		var one int
		return q.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
	})
}

// Metrics returns nothing: the driver has no series of its own.
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) { return nil, nil }
