package cosmos

import (
	"context"
	"net/url"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Describe names the driver and the account endpoint, and states the declarations.
func (d *Driver) Describe(ctx context.Context) (drivers.Description, error) {
	host := d.opts.Endpoint
	if u, err := url.Parse(d.opts.Endpoint); err == nil && u.Host != "" {
		host = u.Host
	}
	return drivers.Description{Name: "cosmos", Version: Version, ServiceVersion: host,
		Clock: drivers.ClockGateway, ReceiptScope: drivers.ReceiptStorage, SharedStorage: true,
		Activity: drivers.ActivityPoll, PollInterval: d.poll, Capabilities: declarations(d.poll.Milliseconds()),
		Operations: operations(),
		Warnings:   d.warnings}, nil
}

func declarations(pollMS int64) []capabilities.Declaration {
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	window := []string{"window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)}
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, ""),
		native(capabilities.QueueFIFO, "a FIFO queue's writes go through one transactional batch each in the queue's logical partition"),
		native(capabilities.QueueCreate, "a queue is a record in the catalog partition and a logical partition of its own"),
		native(capabilities.QueuePurge, "a purge starts a new generation in one conditional write; Sweep deletes the old messages later, none is delivered"),
		native(capabilities.QueueTags, "", "max_tags", strconv.Itoa(sqsrule.MaxQueueTags)),
		native(capabilities.FIFOOrdering, "a receive claims each group's visible prefix in sequence order, skipping groups whose head is in flight"),
		native(capabilities.FIFOGroupRelease, "a receive reads the received messages first, so a group whose head came back is served while later messages are in flight; groups go in order of their head's visibility within the 500 oldest messages it reads"),
		native(capabilities.FIFOGroupBatch, "", "max_messages", strconv.Itoa(sqsrule.MaxReceiveMessages)),
		native(capabilities.FIFODedupExplicit, "the marker, the sequence head and the message are written in one transactional batch", window...),
		native(capabilities.FIFODedupContent, "", window...),
		native(capabilities.FIFODedupEcho, ""),
		native(capabilities.FIFODedupScopeGroup, "markers are keyed by group; the queue stays one logical partition, so queue-wide deduplication is never weakened"),
		native(capabilities.FIFOSequenceNumber, "64-bit, increasing within the queue, taken by a conditional replace of the queue's head item"),
		native(capabilities.FIFOReceiveAttempt, "", window...),
		native(capabilities.VisibilityTimeout, "the deadline is stored in the message and compared with the gateway's clock"),
		native(capabilities.VisibilityMax, "a stored deadline: no lock ceiling", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout)),
		native(capabilities.VisibilityChange, ""),
		native(capabilities.VisibilityRelease, ""),
		native(capabilities.ReceiptDurable, "handles name the message and its claim token, MAC-signed with a key kept in the container; any gateway accepts them"),
		native(capabilities.ReceiptStale, "every claim, delete and visibility change is conditional on the message's ETag"),
		native(capabilities.DelayQueue, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.DelayMessage, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		degraded(capabilities.RedriveDLQ, "the dead-letter queue is another logical partition, so the move is not one transaction: the copy is written under the message's id first, then the source deleted; a message may reach the dead-letter queue twice, with the same MessageId", "max_receive_count", strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move", "at-least-once"),
		native(capabilities.RedriveAllow, "stored with the queue"),
		degraded(capabilities.RedriveMoveTasks, "copy then delete across partitions: a retried move may leave a duplicate with the same MessageId, and moved messages keep their MessageId; tasks are kept in the gateway's memory", "max_messages_per_second", "500", "move", "at-least-once"),
		native(capabilities.RetentionPeriod, "expiry is decided from the stored enqueue time; Sweep deletes expired messages and a 15-day item TTL reclaims what it misses", "min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "driver"),
		native(capabilities.MessageMaxSize, "a message is one item (Cosmos allows 2 MB)", "max_bytes", strconv.Itoa(sqsrule.MaxMessageSize)),
		native(capabilities.MessageAttrs, "", "max_count", strconv.Itoa(sqsrule.MaxMessageAttributes)),
		native(capabilities.MessageSystem, ""),
		degraded(capabilities.RedeliveryOrder, "a receive takes messages in the order they became visible: a returned message waits behind messages sent after it that were visible earlier"),
		native(capabilities.QueueBrowse, "peek queries the queue's partition in item id order; nothing is written"),
		degraded(capabilities.FairQueues, "MessageGroupId is kept and returned on standard queues, but a receive ignores it: one group's flood delays the other groups' messages"),
		native(capabilities.LongPolling, "Cosmos has no notification: a waiting receive re-checks at most poll_interval apart", "mode", "polled", "max_overrun_ms", strconv.FormatInt(pollMS, 10)),
		native(capabilities.InFlightLimit, "counted by the gateway from a count query in the queue's partition, shared by every gateway"),
		native(capabilities.CountsApprox, "three count queries in the queue's partition, not one snapshot", "accuracy", "approximate"),
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
		degraded(capabilities.AttrThroughputLimit, "stored and returned; a queue is one logical partition whatever the setting (about 10,000 RU/s at most)"),
		degraded(capabilities.AttrKMS, "stored and returned; encryption at rest is the Cosmos account's own"),
		degraded(capabilities.AttrKMSReuse, "stored and returned without effect"),
		native(capabilities.AttrSSE, "Cosmos DB encrypts all data at rest with service-managed keys, as SSE-SQS does with SQS-owned keys; the value is returned as set, and false does not turn encryption off"),
	}
}
