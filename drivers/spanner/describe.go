package spanner

import (
	"context"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Describe reports the driver and the capability declarations. Spanner has no version
// query; the service version says whether it is the emulator.
func (d *Driver) Describe(ctx context.Context) (drivers.Description, error) {
	if err := d.Ping(ctx); err != nil {
		return drivers.Description{}, err
	}
	service := "Cloud Spanner"
	if d.emulator != "" {
		service = "Cloud Spanner emulator at " + d.emulator
	}
	desc := drivers.Description{Name: "spanner", Version: Version, ServiceVersion: service,
		Clock: drivers.ClockGateway, ReceiptScope: drivers.ReceiptStorage, SharedStorage: true,
		Activity: drivers.ActivityPoll, PollInterval: d.poll, MoveTaskStore: true,
		Capabilities: declarations(d.poll.Milliseconds()),
		Operations:   operations()}
	if d.serial != nil && d.emulator == "" {
		desc.Warnings = append(desc.Warnings, "serialize_read_write is always: this gateway runs one Spanner "+
			"read-write transaction at a time, which caps its throughput; it is meant for the emulator only")
	}
	return desc, nil
}

func declarations(pollMS int64) []capabilities.Declaration {
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	window := []string{"window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)}
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, ""),
		native(capabilities.QueueFIFO, ""),
		native(capabilities.QueueCreate, "a queue is a row; its messages are interleaved in it and deleted with it"),
		native(capabilities.QueuePurge, "one transaction deletes every message sent up to the purge"),
		native(capabilities.QueueTags, "", "max_tags", strconv.Itoa(sqsrule.MaxQueueTags)),
		native(capabilities.FIFOOrdering, "a group's messages are keyed by group and sequence number; a claim re-reads the group's row and head in its read-write transaction"),
		native(capabilities.FIFOGroupRelease, "the scan orders groups by the visibility of their first visible message and leaves out those with an earlier message hidden; the claim takes each group from its head while messages are visible"),
		native(capabilities.FIFOGroupBatch, "", "max_messages", strconv.Itoa(sqsrule.MaxReceiveMessages)),
		native(capabilities.FIFODedupExplicit, "the dedup record is written in the send's transaction", window...),
		native(capabilities.FIFODedupContent, "", window...),
		native(capabilities.FIFODedupEcho, ""),
		native(capabilities.FIFODedupScopeGroup, ""),
		native(capabilities.FIFOSequenceNumber, "64-bit, increasing within a message group (not across groups)"),
		native(capabilities.FIFOReceiveAttempt, "", window...),
		native(capabilities.VisibilityTimeout, ""),
		native(capabilities.VisibilityMax, "", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout)),
		native(capabilities.VisibilityChange, ""),
		native(capabilities.VisibilityRelease, ""),
		native(capabilities.ReceiptDurable, "handles name a row and a token stored in it; any gateway accepts them"),
		native(capabilities.ReceiptStale, ""),
		native(capabilities.DelayQueue, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.DelayMessage, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.RedriveDLQ, "moved in the claim's read-write transaction", "max_receive_count", strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move", "atomic"),
		native(capabilities.RedriveAllow, ""),
		native(capabilities.RedriveMoveTasks, "tasks are kept in the database: every gateway lists and cancels them, and another gateway adopts a task whose gateway stopped", "max_messages_per_second", "500", "move", "atomic"),
		native(capabilities.RetentionPeriod, "expired messages are never received; the sweep deletes them in bounded batches later", "min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "driver"),
		native(capabilities.MessageMaxSize, "", "max_bytes", strconv.Itoa(sqsrule.MaxMessageSize)),
		native(capabilities.MessageAttrs, "", "max_count", strconv.Itoa(sqsrule.MaxMessageAttributes)),
		native(capabilities.MessageSystem, ""),
		degraded(capabilities.RedeliveryOrder, "a receive picks at random among the visible messages its sharded index scan finds: a returned message does not reliably go before newer ones"),
		native(capabilities.QueueBrowse, "peek reads a snapshot in primary-key order (partition, sequence); nothing is written"),
		degraded(capabilities.FairQueues, "MessageGroupId is kept and returned on standard queues, but a receive ignores it: one group's flood delays the other groups' messages"),
		degraded(capabilities.LongPolling, "waiting receives re-check at most poll_interval apart: a message sent through another gateway is picked up up to that late", "mode", "polled", "max_overrun_ms", strconv.FormatInt(pollMS, 10)),
		native(capabilities.InFlightLimit, "counted by the gateway from the queue's exact in-flight count, shared by every gateway"),
		native(capabilities.CountsApprox, "counted in one strong read", "accuracy", "exact"),
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
		degraded(capabilities.AttrThroughputLimit, "stored and returned; throughput is Spanner's own"),
		degraded(capabilities.AttrKMS, "stored and returned; encryption at rest is Spanner's own"),
		degraded(capabilities.AttrKMSReuse, "stored and returned without effect"),
		native(capabilities.AttrSSE, "Spanner encrypts all data at rest with Google-managed keys, as SSE-SQS does with SQS-owned keys; the value is returned as set, and false does not turn encryption off"),
	}
}

// Metrics reports the driver's read-write transactions and how many attempts Spanner
// aborted (each retried by the client), the measure of contention between claims.
func (d *Driver) Metrics(context.Context) ([]drivers.Metric, error) {
	return []drivers.Metric{
		{Name: "anysqs_spanner_transactions_total", Type: drivers.Counter,
			Help: "Read-write transactions run.", Value: float64(d.transactions.Load())},
		{Name: "anysqs_spanner_transaction_aborts_total", Type: drivers.Counter,
			Help: "Read-write transaction attempts Spanner aborted and the client retried.", Value: float64(d.aborts.Load())},
		{Name: "anysqs_spanner_purge_deletes_failed_total", Type: drivers.Counter,
			Help:  "Purges whose partitioned delete failed: the purged rows stay, never returned, until the next purge or the queue's deletion.",
			Value: float64(d.purgeLeft.Load())},
		{Name: "anysqs_spanner_unknown_outcomes_resolved_total", Type: drivers.Counter,
			Help: "Sends whose commit outcome was unknown and that a read showed committed.", Value: float64(d.unknown.Load())},
	}, nil
}
