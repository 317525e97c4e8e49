package queueattr

import (
	"reflect"
	"slices"
	"strconv"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Readable lists, in the order SQS documents them, every attribute GetQueueAttributes
// can return; "All" expands to these. A queue returns only those that apply to it.
var Readable = []string{
	QueueArn,
	ApproximateNumberOfMessages,
	ApproximateNumberOfMessagesNotVisible,
	ApproximateNumberOfMessagesDelayed,
	CreatedTimestamp,
	LastModifiedTimestamp,
	VisibilityTimeout,
	MaximumMessageSize,
	MessageRetentionPeriod,
	DelaySeconds,
	ReceiveMessageWaitTimeSeconds,
	Policy,
	RedrivePolicy,
	RedriveAllowPolicy,
	KmsMasterKeyID,
	KmsDataKeyReusePeriodSeconds,
	SqsManagedSseEnabled,
	FifoQueue,
	ContentBasedDeduplication,
	DeduplicationScope,
	FifoThroughputLimit,
}

// Matches reports whether every attribute in requested equals the existing queue's
// value, which makes a repeated CreateQueue succeed.
func Matches(existing drivers.QueueAttributes, requested map[string]string, arn ARNParser) bool {
	return FirstMismatch(existing, requested, arn) == ""
}

// FirstMismatch returns the first requested attribute, in name order, whose value
// differs from the existing queue's (or that the queue cannot have), and "" when all
// match. The gateway names it in the QueueAlreadyExists message: "A queue already exists
// with the same name and a different value for attribute X".
func FirstMismatch(existing drivers.QueueAttributes, requested map[string]string, arn ARNParser) string {
	for _, n := range sortedKeys(requested) {
		if !matchesOne(existing, n, requested[n], arn) {
			return n
		}
	}
	return ""
}

// Mismatches returns every requested attribute, in name order, whose value differs from
// the existing queue's (or that the queue cannot have): what a SetQueueAttributes must
// change to bring the queue into line with requested.
func Mismatches(existing drivers.QueueAttributes, requested map[string]string, arn ARNParser) []string {
	var out []string
	for _, n := range sortedKeys(requested) {
		if !matchesOne(existing, n, requested[n], arn) {
			out = append(out, n)
		}
	}
	return out
}

// Settable reports whether CreateQueue takes the attribute name.
func Settable(name string) bool {
	_, ok := settable[name]
	return ok || name == FifoQueue
}

// Parse turns the settable attributes among the strings GetQueueAttributes returned for
// the queue name back into the queue's attribute set, ignoring the read-only ones.
func Parse(name string, current map[string]string, arn ARNParser) (drivers.QueueAttributes, error) {
	in := make(map[string]string, len(current))
	for n, v := range current {
		if Settable(n) {
			in[n] = v
		}
	}
	if IsFIFOName(name) {
		in[FifoQueue] = "true"
	} else {
		delete(in, FifoQueue)
	}
	return ForCreate(name, in, arn)
}

func matchesOne(existing drivers.QueueAttributes, name, v string, arn ARNParser) bool {
	if checkName(name, existing.FifoQueue) != nil {
		return false
	}
	if name == FifoQueue {
		b, err := parseBool(name, v)
		return err == nil && b == existing.FifoQueue
	}
	want := existing
	if settable[name](&want, v, arn) != nil {
		return false
	}
	switch name {
	case Policy:
		return jsonEqual(want.Policy, existing.Policy)
	case RedriveAllowPolicy:
		return jsonEqual(want.RedriveAllowPolicy, existing.RedriveAllowPolicy)
	}
	return reflect.DeepEqual(want, existing)
}

// NeedsStats reports whether rendering names needs the queue's message counts, so the
// gateway asks the driver for them only then.
func NeedsStats(names []string) bool {
	for _, n := range names {
		switch n {
		case All, ApproximateNumberOfMessages, ApproximateNumberOfMessagesDelayed,
			ApproximateNumberOfMessagesNotVisible:
			return true
		}
	}
	return false
}

// Render returns GetQueueAttributes' answer for names: "All" expands to every attribute
// the queue has; an unknown name fails with InvalidAttributeName; attributes the queue
// does not have (FIFO attributes of a standard queue, an unset Policy) are left out, as
// SQS leaves them out. stats may be nil when NeedsStats(names) is false. arnOf gives a
// queue's ARN from its name.
func Render(q drivers.Queue, stats *drivers.QueueStats, names []string,
	arnOf func(queueName string) string) (map[string]string, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		if n == All {
			for _, r := range Readable {
				want[r] = true
			}
			continue
		}
		if !isReadable(n) {
			return nil, unknownAttribute(n)
		}
		want[n] = true
	}
	if stats == nil && NeedsStats(names) {
		return nil, sqserr.New(sqserr.InternalError, "queue statistics are needed to render %v", names)
	}
	out := make(map[string]string, len(want))
	for n := range want {
		if v, ok := renderOne(q, stats, n, arnOf); ok {
			out[n] = v
		}
	}
	return out, nil
}

// Extension attributes anysqs returns only when named (never for All): a standard fair
// queue's message groups by state, on backends that serve fair queues natively.
const (
	AnysqsNoisyGroups = "AnysqsApproximateNumberOfNoisyGroups"
	AnysqsQuietGroups = "AnysqsApproximateNumberOfQuietGroups"
)

// NeedsGroups reports whether names ask for the fair-queue group counts.
func NeedsGroups(names []string) bool {
	return slices.Contains(names, AnysqsNoisyGroups) || slices.Contains(names, AnysqsQuietGroups)
}

// RenderGroups adds the group counts of stats to out, for the names that ask for them.
func RenderGroups(out map[string]string, stats drivers.QueueStats, names []string) {
	if slices.Contains(names, AnysqsNoisyGroups) {
		out[AnysqsNoisyGroups] = strconv.FormatInt(stats.NoisyGroups, 10)
	}
	if slices.Contains(names, AnysqsQuietGroups) {
		out[AnysqsQuietGroups] = strconv.FormatInt(stats.QuietGroups, 10)
	}
}

func isReadable(n string) bool {
	if n == AnysqsNoisyGroups || n == AnysqsQuietGroups {
		return true // rendered by RenderGroups, where the backend has them
	}
	for _, r := range Readable {
		if r == n {
			return true
		}
	}
	return false
}

func renderOne(q drivers.Queue, stats *drivers.QueueStats, n string, arnOf func(string) string) (string, bool) {
	a := q.Attributes
	i32 := func(v int32) (string, bool) { return strconv.FormatInt(int64(v), 10), true }
	switch n {
	case QueueArn:
		return arnOf(q.Name), true
	case ApproximateNumberOfMessages:
		return strconv.FormatInt(stats.Visible, 10), true
	case ApproximateNumberOfMessagesNotVisible:
		return strconv.FormatInt(stats.NotVisible, 10), true
	case ApproximateNumberOfMessagesDelayed:
		return strconv.FormatInt(stats.Delayed, 10), true
	case CreatedTimestamp:
		return strconv.FormatInt(q.CreatedAt.Unix(), 10), true
	case LastModifiedTimestamp:
		return strconv.FormatInt(q.LastModified.Unix(), 10), true
	case VisibilityTimeout:
		return i32(a.VisibilityTimeout)
	case MaximumMessageSize:
		return i32(a.MaximumMessageSize)
	case MessageRetentionPeriod:
		return i32(a.MessageRetentionPeriod)
	case DelaySeconds:
		return i32(a.DelaySeconds)
	case ReceiveMessageWaitTimeSeconds:
		return i32(a.ReceiveMessageWaitTimeSeconds)
	case Policy:
		return a.Policy, a.Policy != ""
	case RedrivePolicy:
		if a.RedrivePolicy == nil {
			return "", false
		}
		return renderRedrivePolicy(a.RedrivePolicy, arnOf), true
	case RedriveAllowPolicy:
		return a.RedriveAllowPolicy, a.RedriveAllowPolicy != ""
	case KmsMasterKeyID:
		return a.KmsMasterKeyID, a.KmsMasterKeyID != ""
	case KmsDataKeyReusePeriodSeconds:
		// SQS shows the reuse period with a KMS key, or when it was changed from the default.
		period := a.KmsDataKeyReusePeriodSeconds
		if period == 0 {
			period = DefaultKmsDataKeyReusePeriod // stored by a gateway that left it unset
		}
		if a.KmsMasterKeyID == "" && period == DefaultKmsDataKeyReusePeriod {
			return "", false
		}
		return i32(period)
	case SqsManagedSseEnabled:
		return strconv.FormatBool(a.SqsManagedSseEnabled), true
	case FifoQueue:
		return "true", a.FifoQueue
	case ContentBasedDeduplication:
		return strconv.FormatBool(a.ContentBasedDeduplication), a.FifoQueue
	case DeduplicationScope:
		return a.DeduplicationScope, a.FifoQueue
	case FifoThroughputLimit:
		return a.FifoThroughputLimit, a.FifoQueue
	}
	return "", false
}
