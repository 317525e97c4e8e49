package capabilities

// Capability IDs. The catalog (catalog.go) describes each one; every driver declares a
// level for every ID.
const (
	QueueStandard ID = "queue.standard" // standard queues
	QueueFIFO     ID = "queue.fifo"     // FIFO queues
	QueueCreate   ID = "queue.create-runtime"
	QueuePurge    ID = "queue.purge"
	QueueBrowse   ID = "queue.browse" // look at messages without receiving them (anysqs extension)
	QueueTags     ID = "queue.tags"

	FIFOOrdering        ID = "fifo.ordering"          // strict order within a message group
	FIFOGroupBatch      ID = "fifo.group-batch"       // several messages of one group in one receive
	FIFODedupExplicit   ID = "fifo.dedup-explicit"    // MessageDeduplicationId
	FIFODedupContent    ID = "fifo.dedup-content"     // ContentBasedDeduplication
	FIFODedupEcho       ID = "fifo.dedup-echo"        // duplicate returns original MessageId/SequenceNumber
	FIFODedupScopeGroup ID = "fifo.dedup-scope-group" // DeduplicationScope=messageGroup
	FIFOSequenceNumber  ID = "fifo.sequence-number"
	FIFOReceiveAttempt  ID = "fifo.receive-attempt-id" // ReceiveRequestAttemptId replay
	FIFOGroupRelease    ID = "fifo.group-release"      // a released message is receivable while later ones are in flight; batch fill

	VisibilityTimeout ID = "visibility.timeout" // queue default and per-receive override
	VisibilityMax     ID = "visibility.max"     // up to 12 hours
	VisibilityChange  ID = "visibility.change"  // ChangeMessageVisibility(Batch)
	VisibilityRelease ID = "visibility.zero-release"

	ReceiptDurable ID = "receipt.durable" // handles survive a gateway restart
	ReceiptStale   ID = "receipt.stale"   // SQS behaviour for stale handles

	DelayQueue   ID = "delay.queue"   // DelaySeconds queue attribute
	DelayMessage ID = "delay.message" // per-message DelaySeconds (standard queues)

	RedriveDLQ       ID = "redrive.dlq" // maxReceiveCount moves to the DLQ
	RedriveAllow     ID = "redrive.allow-policy"
	RedriveMoveTasks ID = "redrive.move-tasks" // StartMessageMoveTask and friends

	RetentionPeriod ID = "retention.period" // MessageRetentionPeriod 60 s..14 days enforced
	MessageMaxSize  ID = "message.max-size" // up to 1 MiB
	MessageAttrs    ID = "message.attributes"
	MessageSystem   ID = "message.system-attributes" // SentTimestamp, ApproximateReceiveCount, ...

	LongPolling     ID = "receive.long-polling"
	RedeliveryOrder ID = "receive.redelivery-order" // standard queues: returned messages before newer ones
	CountsApprox    ID = "counts.approximate"       // ApproximateNumberOfMessages*
	FairQueues      ID = "receive.fair"             // standard queues: quiet message groups before a noisy one
	InFlightLimit   ID = "receive.in-flight-limit"  // at most 120,000 in-flight messages per queue

	AttrVisibilityTimeout ID = "attribute.VisibilityTimeout"
	AttrDelaySeconds      ID = "attribute.DelaySeconds"
	AttrRetention         ID = "attribute.MessageRetentionPeriod"
	AttrMaxMessageSize    ID = "attribute.MaximumMessageSize"
	AttrReceiveWait       ID = "attribute.ReceiveMessageWaitTimeSeconds"
	AttrRedrivePolicy     ID = "attribute.RedrivePolicy"
	AttrRedriveAllow      ID = "attribute.RedriveAllowPolicy"
	AttrPolicy            ID = "attribute.Policy"
	AttrContentDedup      ID = "attribute.ContentBasedDeduplication"
	AttrDedupScope        ID = "attribute.DeduplicationScope"
	AttrThroughputLimit   ID = "attribute.FifoThroughputLimit"
	AttrKMS               ID = "attribute.KmsMasterKeyId"
	AttrKMSReuse          ID = "attribute.KmsDataKeyReusePeriodSeconds"
	AttrSSE               ID = "attribute.SqsManagedSseEnabled"
)
