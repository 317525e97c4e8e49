package firestore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Describe names the driver and the target (the emulator, or the database) and declares
// the capabilities.
func (d *Driver) Describe(ctx context.Context) (drivers.Description, error) {
	target := "Cloud Firestore (native mode)"
	if d.emulator != "" {
		target = "Cloud Firestore emulator at " + d.emulator
	}
	desc := drivers.Description{Name: "firestore", Version: Version, ServiceVersion: target,
		Clock: drivers.ClockGateway, ReceiptScope: drivers.ReceiptStorage, SharedStorage: true,
		Activity: drivers.ActivityPoll, PollInterval: d.poll, MoveTaskStore: true,
		Capabilities: declarations(d.poll.Milliseconds()),
		Operations:   operations()}
	if d.unchecked && d.emulator == "" {
		desc.Warnings = append(desc.Warnings, "check_indexes is off: a missing composite index fails the first request "+
			"that needs it (FAILED_PRECONDITION, answered as InternalError); create the indexes listed in docs/backends/firestore.md")
	}
	return desc, nil
}

func declarations(pollMS int64) []capabilities.Declaration {
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, ""),
		native(capabilities.QueueFIFO, ""),
		native(capabilities.QueueCreate, "a queue is one document, created in a transaction"),
		native(capabilities.QueuePurge, "a purge switches the queue to fresh message storage in one transaction; Sweep deletes the old documents later"),
		native(capabilities.QueueTags, "", "max_tags", strconv.Itoa(sqsrule.MaxQueueTags)),
		native(capabilities.FIFOOrdering, "a claim transaction reads the group document and the group's messages in sequence order"),
		native(capabilities.FIFOGroupRelease, "groups are claimed in order of their ready time (when their head became visible) and walked from the head while messages are visible"),
		native(capabilities.FIFOGroupBatch, "", "max_messages", strconv.Itoa(sqsrule.MaxReceiveMessages)),
		native(capabilities.FIFODedupExplicit, "deduplication records are documents written in the send's transaction", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.FIFODedupContent, "", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.FIFODedupEcho, ""),
		native(capabilities.FIFODedupScopeGroup, ""),
		native(capabilities.FIFOSequenceNumber, "a counter in the group's document, incremented in the send's transaction"),
		native(capabilities.FIFOReceiveAttempt, "", "window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)),
		native(capabilities.VisibilityTimeout, ""),
		native(capabilities.VisibilityMax, "", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout)),
		native(capabilities.VisibilityChange, ""),
		native(capabilities.VisibilityRelease, ""),
		native(capabilities.ReceiptDurable, "handles name the message document and its claim generation, MAC-signed with a key kept in the database; any gateway accepts them"),
		native(capabilities.ReceiptStale, "a newer claim increments the generation, so an older handle cannot touch the newer delivery"),
		native(capabilities.DelayQueue, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.DelayMessage, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.RedriveDLQ, "moved inside the claim's transaction", "max_receive_count", strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move", "atomic"),
		native(capabilities.RedriveAllow, "stored with the queue"),
		native(capabilities.RedriveMoveTasks, "tasks are documents: every gateway lists and cancels them, and another gateway adopts a task whose gateway stopped",
			"max_messages_per_second", "500", "move", "atomic"),
		native(capabilities.RetentionPeriod, "expired messages are never delivered or counted; Sweep deletes them in bounded batches",
			"min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "driver"),
		native(capabilities.MessageMaxSize, "a message over 1,000,000 bytes keeps body and attributes in chunk documents written in the same transaction (a Firestore document holds at most 1 MiB)",
			"max_bytes", strconv.Itoa(sqsrule.MaxMessageSize)),
		native(capabilities.MessageAttrs, "", "max_count", strconv.Itoa(sqsrule.MaxMessageAttributes)),
		native(capabilities.MessageSystem, ""),
		degraded(capabilities.RedeliveryOrder, "a receive takes messages in the order they became visible, per index shard: a returned message waits behind newer messages that were visible earlier"),
		native(capabilities.QueueBrowse, "peek queries the message documents in id order outside any transaction; nothing is written"),
		degraded(capabilities.FairQueues, "MessageGroupId is kept and returned on standard queues, but a receive ignores it: one group's flood delays the other groups' messages"),
		native(capabilities.LongPolling, fmt.Sprintf("the gateway re-checks a waiting receive at least every %d ms; a message sent through another gateway is picked up at most that late", pollMS),
			"mode", "polled", "max_overrun_ms", strconv.FormatInt(pollMS, 10)),
		native(capabilities.InFlightLimit, "counted by the gateway from the queue's exact in-flight count (an aggregation query), shared by every gateway"),
		native(capabilities.CountsApprox, "three aggregation (COUNT) queries over the queue's index", "accuracy", "exact"),
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
		degraded(capabilities.AttrThroughputLimit, "stored and returned; throughput is Firestore's, per document and index range (see the guide)"),
		degraded(capabilities.AttrKMS, "stored and returned; Firestore encrypts at rest with Google-managed or CMEK keys of its own configuration"),
		degraded(capabilities.AttrKMSReuse, "stored and returned without effect"),
		native(capabilities.AttrSSE, "Firestore encrypts all data at rest with Google-managed keys, as SSE-SQS does with SQS-owned keys; the value is returned as set, and false does not turn encryption off"),
	}
}

// Ping reads the receipt key document: one document read.
func (d *Driver) Ping(ctx context.Context) error {
	_, err := d.client.Collection(d.prefix + "_meta").Doc("receipt").Get(ctx)
	return classify(ctx, err, "ping")
}

// Metrics reports the transaction counters: how often Firestore aborted a transaction
// for contention, how many of those the driver retried, and how many calls ran out of
// retries (answered with a retryable error).
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	return []drivers.Metric{
		{Name: "anysqs_firestore_transactions_total", Type: drivers.Counter,
			Help: "Firestore transactions committed.", Value: float64(d.txs.Load())},
		{Name: "anysqs_firestore_transaction_aborts_total", Type: drivers.Counter,
			Help: "Transaction attempts Firestore aborted for contention.", Value: float64(d.aborts.Load())},
		{Name: "anysqs_firestore_transaction_retries_total", Type: drivers.Counter,
			Help: "Transaction attempts run again after an abort or a changed candidate.", Value: float64(d.retries.Load())},
		{Name: "anysqs_firestore_contention_exhausted_total", Type: drivers.Counter,
			Help: "Calls that ran out of contention retries and answered a retryable error.", Value: float64(d.exhausted.Load())},
	}, nil
}
