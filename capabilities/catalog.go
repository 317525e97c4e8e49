package capabilities

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Entry describes one capability of the catalog: what SQS does, which limits a
// declaration may state, and what a conformance case must observe at each level.
type Entry struct {
	ID    ID
	Title string
	// Reference is the SQS behaviour, in one line, as the AWS SQS API reference documents it.
	Reference string
	// Limits are the keys a declaration's Limits may use for this capability.
	Limits []LimitKey
	// Native is what a conformance case must see when the level is Native or Emulated.
	Native string
	// Degraded, if set, adds to the generic Degraded expectation (see Expect).
	Degraded string
	// RejectCode is the SQS error code name the gateway returns when it refuses a request
	// that needs this capability (Unsupported, or Degraded under a strict policy); one of
	// the SQS constants, which are generated from the gateway's error table.
	RejectCode string
}

// LimitKind says how a limit's value is written.
type LimitKind string

const (
	// LimitInt values are base-10 integers.
	LimitInt LimitKind = "int"
	// LimitEnum values are one of LimitKey.Values.
	LimitEnum LimitKind = "enum"
)

// LimitKey is one limit a declaration may state for a capability.
type LimitKey struct {
	Key    string
	Kind   LimitKind
	Values []string // allowed values of an enum
	// Doc says what the limit bounds and, for a limit the gateway cannot check itself,
	// starts with "informational:" (see Informational).
	Doc string
}

// Informational reports whether the limit only describes the driver's behaviour: the
// gateway has nothing to check it against, so it reports it but enforces nothing. Every
// other limit is checked by the gateway before the driver is called.
func (k LimitKey) Informational() bool { return strings.HasPrefix(k.Doc, "informational:") }

// Expect returns what a conformance case must see for a capability declared at level.
// Emulated is held to the Native expectation: emulation is invisible to clients.
func (e Entry) Expect(level Level) string {
	switch level {
	case Native, Emulated:
		return e.Native
	case Degraded:
		s := "the fallback documented in the declaration's note happens, and the response header " +
			"X-Anysqs-Degraded names " + string(e.ID) + "; under a strict policy the request fails with " +
			e.RejectCode
		if e.Degraded != "" {
			s += "; " + e.Degraded
		}
		return s
	case Unsupported:
		return "requests that need it fail with " + e.RejectCode +
			", the message names the backend and " + string(e.ID) + ", and nothing changes in the backend"
	}
	return ""
}

// Limit returns the limit key named key, if the capability has it.
func (e Entry) Limit(key string) (LimitKey, bool) {
	for _, k := range e.Limits {
		if k.Key == key {
			return k, true
		}
	}
	return LimitKey{}, false
}

func intLimit(key, doc string) LimitKey { return LimitKey{Key: key, Kind: LimitInt, Doc: doc} }

func enumLimit(key, doc string, values ...string) LimitKey {
	return LimitKey{Key: key, Kind: LimitEnum, Values: values, Doc: doc}
}

// attr builds the entry of a settable queue attribute.
func attr(id ID, reference, native, degraded string) Entry {
	return Entry{
		ID:         id,
		Title:      "Queue attribute " + string(id[len("attribute."):]),
		Reference:  reference,
		Native:     "CreateQueue and SetQueueAttributes accept it within SQS's range, GetQueueAttributes returns it, values out of range fail with InvalidAttributeValue; " + native,
		Degraded:   degraded,
		RejectCode: SQSInvalidAttributeName,
	}
}

var catalog = []Entry{
	// Queues.
	{ID: QueueStandard, Title: "Standard queues",
		Reference:  "CreateQueue without FifoQueue makes a standard queue: at-least-once delivery, best-effort order.",
		Native:     "a standard queue is created, and send, receive and delete round-trip a message",
		RejectCode: SQSUnsupportedOperation},
	{ID: QueueFIFO, Title: "FIFO queues",
		Reference:  "CreateQueue with FifoQueue=true and a name ending in .fifo makes a FIFO queue; sends need MessageGroupId.",
		Native:     "a .fifo queue is created with FifoQueue=true; a send without MessageGroupId fails with MissingParameter",
		RejectCode: SQSUnsupportedOperation},
	{ID: QueueCreate, Title: "Runtime queue creation and deletion",
		Reference:  "CreateQueue creates a queue at once and is idempotent for identical attributes; DeleteQueue removes it.",
		Native:     "CreateQueue returns a usable URL, repeating it with the same attributes returns the same URL, with different ones fails with QueueNameExists",
		Degraded:   "queues must exist in the backend beforehand",
		RejectCode: SQSUnsupportedOperation},
	{ID: QueuePurge, Title: "PurgeQueue",
		Reference:  "PurgeQueue deletes every message in the queue; a second purge within 60 s fails with PurgeQueueInProgress.",
		Native:     "after PurgeQueue no earlier message is received, and a second purge within 60 s fails with PurgeQueueInProgress",
		RejectCode: SQSUnsupportedOperation},
	{ID: QueueBrowse, Title: "Peek: look at messages without receiving them",
		Reference: "Not an SQS action: SQS can only receive. anysqs's AnysqsPeekMessages (authorised as ReceiveMessage) " +
			"lists a queue's messages with their attributes and state, paged, changing none.",
		Native: "every message is listed once across pages, with body, attributes and state (visible, in flight, " +
			"delayed); afterwards each message's receive count, visibility and first-receive time are unchanged",
		RejectCode: SQSUnsupportedOperation},
	{ID: QueueTags, Title: "Queue tags",
		Reference:  "TagQueue, UntagQueue and ListQueueTags manage up to 50 cost-allocation tags per queue.",
		Limits:     []LimitKey{intLimit("max_tags", "tags per queue (SQS: 50); more fail with InvalidParameterValue")},
		Native:     "tags set by TagQueue and CreateQueue are listed, UntagQueue removes them",
		RejectCode: SQSUnsupportedOperation},

	// FIFO semantics.
	{ID: FIFOOrdering, Title: "FIFO ordering within a message group",
		Reference:  "Messages of one MessageGroupId are delivered in send order; no message of a group is delivered while an earlier one is in flight.",
		Native:     "messages of several interleaved groups are received in per-group send order, and a group is blocked while one of its messages is in flight",
		RejectCode: SQSUnsupportedOperation},
	{ID: FIFOGroupBatch, Title: "Several messages of one group per receive",
		Reference:  "One ReceiveMessage may return up to 10 messages of the same message group, in order.",
		Limits:     []LimitKey{intLimit("max_messages", "informational: messages of one group returned by one receive (SQS: 10); the driver's behaviour")},
		Native:     "a receive of 10 from a queue holding 10 messages of one group returns them all, in order",
		Degraded:   "a receive returns at most max_messages messages of one group",
		RejectCode: SQSInvalidParameterValue},
	{ID: FIFODedupExplicit, Title: "Explicit deduplication",
		Reference:  "A FIFO send whose MessageDeduplicationId was used within the last 5 minutes is accepted but not delivered again.",
		Limits:     []LimitKey{intLimit("window_seconds", "informational: deduplication interval (SQS: 300); the driver's behaviour")},
		Native:     "a second send with the same MessageDeduplicationId inside the window succeeds and only one message is received; after the window it is delivered again",
		RejectCode: SQSInvalidParameterValue},
	{ID: FIFODedupContent, Title: "Content-based deduplication",
		Reference:  "With ContentBasedDeduplication=true the SHA-256 of the body is the deduplication id when none is given.",
		Limits:     []LimitKey{intLimit("window_seconds", "informational: deduplication interval (SQS: 300); the driver's behaviour")},
		Native:     "two sends of the same body without MessageDeduplicationId deliver one message; a FIFO send without either fails with InvalidParameterValue",
		RejectCode: SQSInvalidParameterValue},
	{ID: FIFODedupEcho, Title: "Duplicates echo the original ids",
		Reference:  "A deduplicated send returns the MessageId and SequenceNumber of the original message.",
		Native:     "the duplicate send's MessageId and SequenceNumber equal the original's",
		Degraded:   "the duplicate send returns a fresh MessageId",
		RejectCode: SQSInvalidParameterValue},
	{ID: FIFODedupScopeGroup, Title: "Deduplication scoped to the message group",
		Reference:  "With DeduplicationScope=messageGroup a deduplication id only suppresses duplicates within its own group.",
		Native:     "the same MessageDeduplicationId in two groups delivers two messages, in one group one",
		RejectCode: SQSInvalidParameterValue},
	{ID: FIFOSequenceNumber, Title: "SequenceNumber on send",
		Reference:  "SendMessage on a FIFO queue returns a 128-bit SequenceNumber that increases within a message group.",
		Native:     "sends return non-empty numeric SequenceNumbers that increase within a group (nothing is promised across groups), and received messages carry the same SequenceNumber attribute",
		RejectCode: SQSUnsupportedOperation},
	{ID: FIFOReceiveAttempt, Title: "ReceiveRequestAttemptId replay",
		Reference:  "A FIFO receive retried with the same ReceiveRequestAttemptId within 5 minutes returns the same messages and receipt handles.",
		Limits:     []LimitKey{intLimit("window_seconds", "informational: how long an attempt id is remembered (SQS: 300); the driver's behaviour")},
		Native:     "repeating a receive with the same attempt id returns the same message ids and receipt handles while they are in flight",
		Degraded:   "a repeated attempt id behaves as a new receive",
		RejectCode: SQSInvalidParameterValue},
	{ID: FIFOGroupRelease, Title: "FIFO group release and batch fill",
		Reference:  "A FIFO message whose visibility ends is receivable again while later messages of its group stay in flight; a receive returns as many messages of one group as it can before the next group, and serves groups in the order they became available.",
		Native:     "a group's first message released while the second is in flight is received again, after the groups that were waiting; a receive of 10 takes a whole group before the next",
		Degraded:   "a group waits until none of its messages is in flight, and a receive may interleave groups; order within a group holds",
		RejectCode: SQSUnsupportedOperation},

	// Visibility and receipt handles.
	{ID: VisibilityTimeout, Title: "Visibility timeout",
		Reference:  "A received message is hidden for the queue's VisibilityTimeout, or the receive's own VisibilityTimeout, then becomes visible again.",
		Native:     "a received message is not received again before the timeout and is received again after it, with ApproximateReceiveCount incremented",
		RejectCode: SQSInvalidParameterValue},
	{ID: VisibilityMax, Title: "Visibility timeout up to 12 hours",
		Reference:  "Visibility timeouts from 0 to 43200 seconds are accepted and honoured.",
		Limits:     []LimitKey{intLimit("max_seconds", "largest visibility timeout honoured (SQS: 43200); see the degraded text for what happens above it")},
		Native:     "a 43200 s timeout keeps the message hidden just before 12 h and releases it after",
		Degraded:   "timeouts above max_seconds are honoured only up to max_seconds; a VisibilityTimeout attribute above it is stored and returned as set, and each receive that uses it is held to max_seconds",
		RejectCode: SQSInvalidParameterValue},
	{ID: VisibilityChange, Title: "ChangeMessageVisibility",
		Reference:  "ChangeMessageVisibility(Batch) sets an in-flight message's timeout anew, counted from the call.",
		Native:     "extending the timeout keeps the message hidden past the original deadline; a handle of a deleted message fails with InvalidParameterValue",
		RejectCode: SQSUnsupportedOperation},
	{ID: VisibilityRelease, Title: "Release by zero visibility",
		Reference:  "ChangeMessageVisibility with VisibilityTimeout=0 makes the message visible at once.",
		Native:     "after a change to 0 the message is received again immediately",
		RejectCode: SQSInvalidParameterValue},
	{ID: ReceiptDurable, Title: "Receipt handles survive a restart",
		Reference:  "A receipt handle stays valid until the message is received again or deleted, whatever happens to the service's hosts.",
		Native:     "a handle issued before a gateway restart deletes the message after it",
		Degraded:   "handles issued before a restart fail with ReceiptHandleIsInvalid and the message reappears after its visibility timeout",
		RejectCode: SQSUnsupportedOperation},
	{ID: ReceiptStale, Title: "Stale receipt handles",
		Reference:  "On standard queues DeleteMessage with a handle superseded by a later receive succeeds without effect, and ChangeMessageVisibility applies with any handle of a message that still exists (after its timeout passed, or superseded); FIFO handles expire with their visibility timeout; a malformed handle fails with ReceiptHandleIsInvalid.",
		Native:     "deleting with a superseded handle succeeds and the message stays; a visibility change with an expired or superseded handle applies on a standard queue and fails with InvalidParameterValue on a FIFO queue; a forged handle fails with ReceiptHandleIsInvalid",
		RejectCode: SQSUnsupportedOperation},

	// Delay.
	{ID: DelayQueue, Title: "Delay queues",
		Reference:  "The DelaySeconds queue attribute (0 to 900) hides each new message for that long.",
		Limits:     []LimitKey{intLimit("max_seconds", "largest queue delay (SQS: 900); a DelaySeconds attribute above it fails with InvalidAttributeValue")},
		Native:     "a message sent to a queue with DelaySeconds is not received before the delay and is after it",
		RejectCode: SQSInvalidAttributeName},
	{ID: DelayMessage, Title: "Per-message delay",
		Reference:  "SendMessage DelaySeconds (0 to 900) overrides the queue delay on standard queues; FIFO queues reject per-message delay.",
		Limits:     []LimitKey{intLimit("max_seconds", "largest message delay (SQS: 900); above it a send fails with InvalidParameterValue, or when degraded is delayed max_seconds")},
		Native:     "a message sent with DelaySeconds is hidden for that long; on a FIFO queue the send fails with InvalidParameterValue",
		Degraded:   "the per-message delay is replaced by the queue's delay",
		RejectCode: SQSInvalidParameterValue},

	// Redrive.
	{ID: RedriveDLQ, Title: "Dead-letter queues",
		Reference: "A message received maxReceiveCount times without deletion moves to the RedrivePolicy's dead-letter queue.",
		Limits: []LimitKey{intLimit("max_receive_count", "largest maxReceiveCount (SQS: 1000); a RedrivePolicy above it fails with InvalidParameterValue"),
			enumLimit("move", "informational: how a message reaches the dead-letter queue: atomic (one transaction, as SQS), or at-least-once (never lost; a copy may reach the dead-letter queue twice, with the same MessageId)", "atomic", "at-least-once")},
		Native:     "after maxReceiveCount receives the message is no longer received from the source and is received from the dead-letter queue with its body and attributes",
		Degraded:   "with move=at-least-once the message may be received from the dead-letter queue more than once, every copy with the same MessageId",
		RejectCode: SQSInvalidAttributeName},
	{ID: RedriveAllow, Title: "Redrive allow policy",
		Reference:  "RedriveAllowPolicy (allowAll, denyAll, byQueue) restricts which source queues may use a queue as their dead-letter queue.",
		Native:     "a RedrivePolicy naming a dead-letter queue whose allow policy denies the source fails with InvalidParameterValue",
		RejectCode: SQSInvalidAttributeName},
	{ID: RedriveMoveTasks, Title: "Message move tasks",
		Reference: "StartMessageMoveTask moves messages from a dead-letter queue back to their source or to a given queue; List/CancelMessageMoveTask manage tasks.",
		Limits: []LimitKey{intLimit("max_messages_per_second", "largest MaxNumberOfMessagesPerSecond (SQS: 500), also the rate of a task that names none; above it StartMessageMoveTask fails with InvalidParameterValue"),
			enumLimit("move", "informational: how a message is moved: atomic (one transaction, as SQS), or at-least-once (never lost; a copy may reach the destination twice, with the same MessageId)", "atomic", "at-least-once")},
		Native:     "a started task moves every message back and ListMessageMoveTasks reports it COMPLETED with the moved count",
		Degraded:   "with move=at-least-once a moved message may be received from the destination more than once, every copy with the same MessageId",
		RejectCode: SQSUnsupportedOperation},

	// Messages.
	{ID: RetentionPeriod, Title: "Message retention",
		Reference: "Messages older than MessageRetentionPeriod (60 s to 14 days, default 4 days) are deleted.",
		Limits: []LimitKey{intLimit("min_seconds", "smallest retention period (SQS: 60); a MessageRetentionPeriod below it fails with InvalidAttributeValue"),
			intLimit("max_seconds", "largest retention period (SQS: 1209600); a MessageRetentionPeriod above it fails with InvalidAttributeValue"),
			enumLimit("sweep", "informational: what deletes expired messages: driver (the gateway's periodic Sweep) or ttl (the backend's own time-to-live; Sweep does nothing)", "driver", "ttl")},
		Native:     "a message is received before its retention period ends and never after it",
		Degraded:   "messages are deleted later than the retention period",
		RejectCode: SQSInvalidAttributeName},
	{ID: MessageMaxSize, Title: "Message size up to 1 MiB",
		Reference:  "A message (body plus attributes) may be up to 1,048,576 bytes; a larger one fails with InvalidParameterValue.",
		Limits:     []LimitKey{intLimit("max_bytes", "largest message accepted (SQS: 1048576); larger sends fail with InvalidParameterValue, a MaximumMessageSize above it with InvalidAttributeValue")},
		Native:     "a 1 MiB message round-trips byte for byte; one byte more fails with InvalidParameterValue",
		Degraded:   "messages above max_bytes fail with InvalidParameterValue though SQS would accept them",
		RejectCode: SQSInvalidParameterValue},
	{ID: MessageAttrs, Title: "Message attributes",
		Reference:  "Up to 10 typed message attributes (String, Number, Binary, with custom suffixes) travel with a message, checked by MD5OfMessageAttributes.",
		Limits:     []LimitKey{intLimit("max_count", "attributes per message (SQS: 10); more fail with InvalidParameterValue")},
		Native:     "attributes of every type round-trip exactly, selected by MessageAttributeNames, and the MD5s match the SDK's computation",
		RejectCode: SQSInvalidParameterValue},
	{ID: MessageSystem, Title: "Message system attributes",
		Reference:  "Received messages carry SentTimestamp, ApproximateReceiveCount, ApproximateFirstReceiveTimestamp, SenderId, and AWSTraceHeader when sent.",
		Native:     "each requested system attribute is present with the expected value",
		Degraded:   "attributes the note lists are missing or approximate",
		RejectCode: SQSInvalidAttributeName},
	{ID: RedeliveryOrder, Title: "Returned messages before newer ones",
		Reference:  "Standard queues order best-effort: a message whose visibility timeout ended is usually received before messages sent after it.",
		Native:     "a message released after its receive is received again before a message sent after it",
		Degraded:   "messages are received in the order they became visible: a returned message waits behind messages sent after it",
		RejectCode: SQSUnsupportedOperation},
	{ID: FairQueues, Title: "Fair queues: quiet message groups before a noisy one",
		Reference: "On a standard queue MessageGroupId names a tenant. A tenant is noisy when it holds over 10% and at " +
			"least 30 of the in-flight messages, or takes over 10% of the recent processing time; receives deliver the " +
			"other tenants' messages first, then the noisy ones', the one with the fewest in flight first. A tenant that " +
			"sent nothing for 5 minutes, or whose backlog is drained, is quiet again.",
		Native: "a quiet group's visible message comes before a noisy group's backlog (noisy by in-flight or processing-time " +
			"share), noisy groups are served the fewest in flight first, and a group quiet for 5 minutes is served in send order",
		Degraded:   "MessageGroupId is accepted and returned on standard queues, but delivery ignores it: a flooding group delays the others",
		RejectCode: SQSUnsupportedOperation},
	{ID: InFlightLimit, Title: "In-flight message limit",
		Reference: "A queue holds at most about 120,000 in-flight messages. At the limit a short-poll receive on a standard " +
			"queue fails with OverLimit; a long poll, and any receive on a FIFO queue, returns no message and no error.",
		Native: "the gateway counts the queue's in-flight messages at the backend (limits.max_in_flight, default 120000): " +
			"receives return no more than the limit in all, then answer as SQS does until a message is deleted or released",
		Degraded:   "the backend's count covers only the messages one gateway instance holds: each instance enforces the limit on its own",
		RejectCode: SQSUnsupportedOperation},
	{ID: LongPolling, Title: "Long polling",
		Reference: "ReceiveMessage with WaitTimeSeconds up to 20 returns as soon as a message is available, else empty when the wait ends.",
		Limits: []LimitKey{enumLimit("mode", "informational: how waiting receives learn of new messages", "native", "polled"),
			intLimit("max_overrun_ms", "informational: worst-case delay between a message becoming visible and a waiting receive returning it")},
		Native:     "a waiting receive returns a message sent during the wait, and an empty wait ends when its time passes",
		Degraded:   "a waiting receive may return the message up to max_overrun_ms late",
		RejectCode: SQSInvalidParameterValue},
	{ID: CountsApprox, Title: "Approximate message counts",
		Reference:  "ApproximateNumberOfMessages, ...NotVisible and ...Delayed report the queue's visible, in-flight and delayed messages.",
		Limits:     []LimitKey{enumLimit("accuracy", "informational: how the counts relate to the queue's state", "exact", "approximate", "unavailable")},
		Native:     "after sends, a receive and a delayed send, the three counts match the queue's state",
		Degraded:   "counts may lag or differ from the queue's state; unavailable counts read 0",
		RejectCode: SQSInvalidAttributeName},

	// Settable queue attributes.
	attr(AttrVisibilityTimeout, "VisibilityTimeout: 0 to 43200 seconds, default 30.",
		"received messages stay hidden for the set timeout", ""),
	attr(AttrDelaySeconds, "DelaySeconds: 0 to 900 seconds, default 0.",
		"new messages are delayed by the set value", ""),
	attr(AttrRetention, "MessageRetentionPeriod: 60 to 1209600 seconds, default 345600.",
		"the set period governs retention", ""),
	attr(AttrMaxMessageSize, "MaximumMessageSize: 1024 to 1048576 bytes, default 1048576.",
		"sends above the set size fail with InvalidParameterValue", ""),
	attr(AttrReceiveWait, "ReceiveMessageWaitTimeSeconds: 0 to 20, default 0; the default long-poll wait.",
		"a receive without WaitTimeSeconds waits for the set time", ""),
	attr(AttrRedrivePolicy, "RedrivePolicy: JSON with deadLetterTargetArn and maxReceiveCount (1 to 1000).",
		"the policy is returned as set and redrive follows it", ""),
	attr(AttrRedriveAllow, "RedriveAllowPolicy: JSON with redrivePermission allowAll, denyAll or byQueue and up to 10 sourceQueueArns.",
		"the policy is returned as set, and the gateway (not the driver) enforces it", ""),
	attr(AttrPolicy, "Policy: an IAM resource policy document for the queue.",
		"the document is returned as set, and the gateway (not the driver, on every backend) enforces it for other "+
			"accounts: account and AWS service principals, sqs actions, queue resources, IAM condition operators "+
			"over the keys a request to the gateway has (docs/security.md)", "the document is stored and returned but not enforced"),
	attr(AttrContentDedup, "ContentBasedDeduplication: true or false, FIFO queues only.",
		"setting it on a standard queue fails with InvalidAttributeName", ""),
	attr(AttrDedupScope, "DeduplicationScope: messageGroup or queue, FIFO queues only.",
		"the set scope governs deduplication", ""),
	attr(AttrThroughputLimit, "FifoThroughputLimit: perQueue or perMessageGroupId, FIFO queues only.",
		"the value is returned as set", "the value is stored and returned; throughput is the backend's own"),
	attr(AttrKMS, "KmsMasterKeyId: the KMS key used for server-side encryption.",
		"the value is returned as set", "the value is stored and returned; encryption at rest is the backend's own"),
	attr(AttrKMSReuse, "KmsDataKeyReusePeriodSeconds: 60 to 86400 seconds, default 300.",
		"the value is returned as set", "the value is stored and returned without effect"),
	attr(AttrSSE, "SqsManagedSseEnabled: true or false; server-side encryption with SQS-owned keys.",
		"the value is returned as set", "the value is stored and returned; encryption at rest is the backend's own"),
}

var byID = func() map[ID]int {
	m := make(map[ID]int, len(catalog))
	for i, e := range catalog {
		m[e.ID] = i
	}
	return m
}()

// Lookup returns the catalog entry of id.
func Lookup(id ID) (Entry, bool) {
	i, ok := byID[id]
	if !ok {
		return Entry{}, false
	}
	return cloneEntry(catalog[i]), true
}

// All returns every catalog entry, in catalog order (grouped by area). The slice is a
// copy; callers may modify it.
func All() []Entry {
	out := make([]Entry, len(catalog))
	for i, e := range catalog {
		out[i] = cloneEntry(e)
	}
	return out
}

func cloneEntry(e Entry) Entry {
	e.Limits = slices.Clone(e.Limits)
	for i := range e.Limits {
		e.Limits[i].Values = slices.Clone(e.Limits[i].Values)
	}
	return e
}

// ValidLevel reports whether l is one of the four levels.
func ValidLevel(l Level) bool {
	switch l {
	case Native, Emulated, Degraded, Unsupported:
		return true
	}
	return false
}

// Validate checks a driver's declarations against the catalog: every catalog ID
// declared exactly once, no unknown ID, a valid level, and limits that use the
// capability's keys with well-formed values. It reports every problem at once.
func Validate(decls []Declaration) error {
	var errs []error
	seen := make(map[ID]bool, len(decls))
	for _, d := range decls {
		e, ok := Lookup(d.ID)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("capability %q is not in the catalog", d.ID))
			continue
		case seen[d.ID]:
			errs = append(errs, fmt.Errorf("capability %s is declared more than once", d.ID))
		}
		seen[d.ID] = true
		if !ValidLevel(d.Level) {
			errs = append(errs, fmt.Errorf("capability %s: level %q is not native, emulated, degraded or unsupported", d.ID, d.Level))
		}
		for _, key := range sortedKeys(d.Limits) {
			if err := checkLimit(e, key, d.Limits[key]); err != nil {
				errs = append(errs, fmt.Errorf("capability %s: %w", d.ID, err))
			}
		}
	}
	for _, e := range catalog {
		if !seen[e.ID] {
			errs = append(errs, fmt.Errorf("capability %s is not declared", e.ID))
		}
	}
	return errors.Join(errs...)
}

func checkLimit(e Entry, key, value string) error {
	k, ok := e.Limit(key)
	if !ok {
		return fmt.Errorf("limit %q is not one of this capability's keys %v", key, limitKeys(e))
	}
	switch k.Kind {
	case LimitInt:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("limit %s=%q is not an integer", key, value)
		}
	case LimitEnum:
		if !slices.Contains(k.Values, value) {
			return fmt.Errorf("limit %s=%q is not one of %v", key, value, k.Values)
		}
	}
	return nil
}

func limitKeys(e Entry) []string {
	keys := make([]string, len(e.Limits))
	for i, k := range e.Limits {
		keys[i] = k.Key
	}
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
