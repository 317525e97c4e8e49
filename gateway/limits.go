package gateway

import (
	"fmt"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Backend limits. A driver may declare a capability with a limit below SQS's own (a lock
// held at most 5 minutes, messages of at most 64 KiB). The gateway checks requests against
// those limits before it calls the driver, so that a value the backend cannot honour is
// never shortened silently: it is rejected with the SQS error a client expects or, where
// the catalog documents honouring it only up to the limit (visibility.max, delay.message)
// and the policy degrades the capability, clamped with the X-Anysqs-Degraded header.
//
// Limits the gateway has nothing to check against (deduplication windows, long-poll
// overrun, count accuracy, messages of one group per receive) are marked informational
// in the catalog; TestEveryCatalogLimitIsEnforcedOrInformational keeps the two lists
// covering every key.

// limitSpec is one catalog limit the gateway enforces.
type limitSpec struct {
	id  capabilities.ID
	key string
	// sqs is SQS's own bound. A declared value at or beyond it changes nothing: the SQS
	// validation before it already rejects what lies beyond, with SQS's own messages.
	sqs   int64
	lower bool // the smallest value allowed, not the largest
	// does is what the backend does, for messages: "backend B <does> (capability ID)";
	// %d is the declared value.
	does string
}

var (
	limVisibility   = limitSpec{capabilities.VisibilityMax, "max_seconds", sqsrule.MaxVisibilityTimeout, false, "holds messages invisible for at most %d seconds"}
	limQueueDelay   = limitSpec{capabilities.DelayQueue, "max_seconds", sqsrule.MaxDelaySeconds, false, "delays messages for at most %d seconds"}
	limMessageDelay = limitSpec{capabilities.DelayMessage, "max_seconds", sqsrule.MaxDelaySeconds, false, "delays a message for at most %d seconds"}
	limRetentionMin = limitSpec{capabilities.RetentionPeriod, "min_seconds", sqsrule.MinMessageRetentionPeriod, true, "retains messages for at least %d seconds"}
	limRetentionMax = limitSpec{capabilities.RetentionPeriod, "max_seconds", sqsrule.MaxMessageRetentionPeriod, false, "retains messages for at most %d seconds"}
	limMessageSize  = limitSpec{capabilities.MessageMaxSize, "max_bytes", sqsrule.MaxMessageSize, false, "stores messages of at most %d bytes"}
	limAttributes   = limitSpec{capabilities.MessageAttrs, "max_count", sqsrule.MaxMessageAttributes, false, "stores at most %d message attributes per message"}
	limReceiveCount = limitSpec{capabilities.RedriveDLQ, "max_receive_count", sqsrule.MaxMaxReceiveCount, false, "counts at most %d receives of a message"}
	limTags         = limitSpec{capabilities.QueueTags, "max_tags", sqsrule.MaxQueueTags, false, "keeps at most %d tags per queue"}
	limMoveRate     = limitSpec{capabilities.RedriveMoveTasks, "max_messages_per_second", defaultMoveRate, false, "moves at most %d messages per second"}
)

// enforcedLimits are the catalog limits the gateway checks.
var enforcedLimits = []limitSpec{
	limVisibility, limQueueDelay, limMessageDelay, limRetentionMin, limRetentionMax,
	limMessageSize, limAttributes, limReceiveCount, limTags, limMoveRate,
}

// limits holds the declared bounds tighter than SQS's own, read once in New.
type limits struct {
	backend string
	policy  *capabilities.Policy
	bounds  map[limitSpec]int64
}

func newLimits(p *capabilities.Policy) *limits {
	l := &limits{backend: p.Backend(), policy: p, bounds: map[limitSpec]int64{}}
	for _, spec := range enforcedLimits {
		d, _ := p.Declaration(spec.id)
		v, err := strconv.ParseInt(d.Limits[spec.key], 10, 64)
		if err != nil {
			continue // not declared; capabilities.Validate has checked the ones that are
		}
		if spec.lower && v > spec.sqs || !spec.lower && v < spec.sqs {
			l.bounds[spec] = max(v, 0)
		}
	}
	return l
}

// beyond returns spec's declared bound and whether v lies beyond it.
func (l *limits) beyond(spec limitSpec, v int64) (int64, bool) {
	b, ok := l.bounds[spec]
	if !ok {
		return 0, false
	}
	if spec.lower {
		return b, v < b
	}
	return b, v > b
}

// reason says which backend limit a value broke, e.g. "backend NAME holds messages
// invisible for at most 300 seconds (capability visibility.max)".
func (l *limits) reason(spec limitSpec, bound int64) string {
	return fmt.Sprintf("backend %s %s (capability %s)", l.backend, fmt.Sprintf(spec.does, bound), spec.id)
}

// check fails with code when v, the value of param ("parameter X"), lies beyond spec.
func (l *limits) check(spec limitSpec, code sqserr.Code, param string, v int64) error {
	b, over := l.beyond(spec, v)
	if !over {
		return nil
	}
	return sqserr.New(code, "Value %d for %s is invalid. Reason: %s.", v, param, l.reason(spec, b))
}

// clamp is check, with InvalidParameterValue, for a limit whose catalog text says values
// are honoured only up to it: when the policy degrades spec's capability, *v is lowered to
// the bound and the degradation recorded for the response header instead.
func (l *limits) clamp(c *call, queue string, spec limitSpec, param string, v *int32) error {
	b, over := l.beyond(spec, int64(*v))
	if !over {
		return nil
	}
	if l.policy.Decide(spec.id).Degrade {
		*v = int32(b)
		return c.need(queue, spec.id)
	}
	return l.check(spec, sqserr.InvalidParameterValue, param, int64(*v))
}

// checkSend holds one message to the backend: more attributes or bytes than it stores are
// rejected (message.attributes, message.max_size); a per-message *delay beyond
// delay.message is clamped or rejected.
func (l *limits) checkSend(c *call, queue string, attrs, size int, perMessage bool, delay *int32) error {
	if b, over := l.beyond(limAttributes, int64(attrs)); over {
		return sqserr.New(sqserr.InvalidParameterValue, "Number of message attributes [%d] exceeds the allowed maximum [%d]: %s.", attrs, b, l.reason(limAttributes, b))
	}
	if b, over := l.beyond(limMessageSize, int64(size)); over {
		// SQS's wording for a message above MaximumMessageSize, then why.
		return sqserr.New(sqserr.InvalidParameterValue, "One or more parameters are invalid. Reason: Message must be shorter than %d bytes: %s.", b, l.reason(limMessageSize, b))
	}
	if perMessage {
		return l.clamp(c, queue, limMessageDelay, "parameter DelaySeconds", delay)
	}
	return nil
}

// visibility holds the visibility timeout *v of a receive or a visibility change to
// visibility.max; own says whether the request gave it or it is the queue's
// VisibilityTimeout attribute.
func (l *limits) visibility(c *call, queue string, own bool, v *int32) error {
	param := "parameter VisibilityTimeout"
	if !own {
		param = "attribute VisibilityTimeout of queue " + queue
	}
	return l.clamp(c, queue, limVisibility, param, v)
}

// checkAttributes holds the queue attributes a CreateQueue or SetQueueAttributes sets
// (set: the request's; a: the queue's attributes after it) to the backend's limits.
//
// A value beyond a limit is rejected in every mode, because a value clamped when stored
// would read back from GetQueueAttributes differently from what was set. The exception
// is VisibilityTimeout while the policy degrades visibility.max, whose catalog text says
// timeouts are honoured only up to the limit: it is stored and returned as set, this
// response and each receive that uses it carry the header, and visibility clamps it.
func (l *limits) checkAttributes(c *call, queue string, set map[string]string, a drivers.QueueAttributes) error {
	checks := []struct {
		name string
		spec limitSpec
		v    int32
	}{
		{queueattr.DelaySeconds, limQueueDelay, a.DelaySeconds},
		{queueattr.MaximumMessageSize, limMessageSize, a.MaximumMessageSize},
		{queueattr.MessageRetentionPeriod, limRetentionMin, a.MessageRetentionPeriod},
		{queueattr.MessageRetentionPeriod, limRetentionMax, a.MessageRetentionPeriod},
	}
	for _, ch := range checks {
		if _, ok := set[ch.name]; !ok {
			continue
		}
		if err := l.check(ch.spec, sqserr.InvalidAttributeValue, "parameter "+ch.name, int64(ch.v)); err != nil {
			return err
		}
	}
	if _, ok := set[queueattr.VisibilityTimeout]; ok {
		if err := l.attributeVisibility(c, queue, a.VisibilityTimeout); err != nil {
			return err
		}
	}
	if rp := a.RedrivePolicy; rp != nil && set[queueattr.RedrivePolicy] != "" {
		if b, over := l.beyond(limReceiveCount, int64(rp.MaxReceiveCount)); over {
			// Worded as queueattr words the other RedrivePolicy errors.
			return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: %d; %s.",
				set[queueattr.RedrivePolicy], rp.MaxReceiveCount, l.reason(limReceiveCount, b))
		}
	}
	return nil
}

// attributeVisibility holds a VisibilityTimeout attribute v to visibility.max (see
// checkAttributes for why it is not clamped).
func (l *limits) attributeVisibility(c *call, queue string, v int32) error {
	if _, over := l.beyond(limVisibility, int64(v)); over && l.policy.Decide(limVisibility.id).Degrade {
		return c.need(queue, limVisibility.id)
	}
	return l.check(limVisibility, sqserr.InvalidAttributeValue, "parameter VisibilityTimeout", int64(v))
}

// checkTags fails when a queue would hold n tags, more than the backend keeps.
func (l *limits) checkTags(n int) error {
	if b, over := l.beyond(limTags, int64(n)); over {
		return sqserr.New(sqserr.InvalidParameterValue, "Too many tags: %d; %s.", n, l.reason(limTags, b))
	}
	return nil
}

// checkMoveRate fails when a move task asks for more messages per second than the backend moves.
func (l *limits) checkMoveRate(rate *int32) error {
	if rate == nil {
		return nil
	}
	return l.check(limMoveRate, sqserr.InvalidParameterValue, "parameter MaxNumberOfMessagesPerSecond", int64(*rate))
}

// moveRate is the rate of a move task that names none: SQS's, or the backend's if lower.
func (l *limits) moveRate() int {
	if b, ok := l.bounds[limMoveRate]; ok {
		return int(b)
	}
	return defaultMoveRate
}
