package sqsrule

import (
	"fmt"
	"time"
)

// Limits as the SQS API reference gives them, each defined here only: the gateway
// validates requests against them, drivers declare them, and the mq command checks its
// flags against them. Seconds are untyped constants, so that MaxVisibilityTimeout*
// time.Second is the duration and the gateway compares integers.
const (
	// MaxVisibilityTimeout is the longest visibility timeout in seconds (12 hours), and
	// the longest a message may stay invisible after one receive, however often its
	// visibility is changed.
	MaxVisibilityTimeout = 43200
	// DefaultVisibilityTimeout is a new queue's VisibilityTimeout in seconds.
	DefaultVisibilityTimeout = 30
	// MaxDelaySeconds is the longest queue or message delay in seconds (15 minutes).
	MaxDelaySeconds = 900
	// MaxWaitTimeSeconds is the longest long-poll wait of a receive in seconds.
	MaxWaitTimeSeconds = 20
	// MaxMessageSize is the largest message in bytes (body plus attributes), and the
	// largest and default MaximumMessageSize of a queue: SQS raised both from 256 KiB to
	// 1 MiB in 2025.
	MaxMessageSize = 1048576
	// MinMaximumMessageSize is the smallest MaximumMessageSize of a queue in bytes.
	MinMaximumMessageSize = 1024
	// MinMessageRetentionPeriod and MaxMessageRetentionPeriod bound a queue's
	// MessageRetentionPeriod in seconds (1 minute to 14 days);
	// DefaultMessageRetentionPeriod is a new queue's (4 days).
	MinMessageRetentionPeriod     = 60
	MaxMessageRetentionPeriod     = 1209600
	DefaultMessageRetentionPeriod = 345600
	// MaxBatchEntries is the most entries of one batch request (SendMessageBatch,
	// DeleteMessageBatch, ChangeMessageVisibilityBatch).
	MaxBatchEntries = 10
	// MaxReceiveMessages is the most messages one ReceiveMessage returns
	// (MaxNumberOfMessages).
	MaxReceiveMessages = 10
	// MaxMessageAttributes is the most message attributes one message carries.
	MaxMessageAttributes = 10
	// MaxQueueTags is the most tags of one queue.
	MaxQueueTags = 50
	// MaxMaxReceiveCount is the largest maxReceiveCount of a RedrivePolicy.
	MaxMaxReceiveCount = 1000
	// DedupWindowSeconds is DedupWindow in seconds, as declarations state it.
	DedupWindowSeconds = 300
)

// DedupWindow is how long SQS remembers a FIFO deduplication id (5 minutes).
const DedupWindow = DedupWindowSeconds * time.Second

// ReceiveAttemptWindow is how long SQS replays a FIFO receive by its
// ReceiveRequestAttemptId: as long as it remembers a deduplication id.
const ReceiveAttemptWindow = DedupWindow

// SequenceNumber renders a FIFO message's sequence number as SQS does, in 20 decimal
// digits. Zero is no sequence number (a standard queue's message): the empty string.
func SequenceNumber(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%020d", n)
}
