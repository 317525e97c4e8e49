package queueattr

import (
	"sort"
	"strconv"
	"strings"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Queue attribute names as they appear on the wire.
const (
	All                                   = "All"
	ApproximateNumberOfMessages           = "ApproximateNumberOfMessages"
	ApproximateNumberOfMessagesDelayed    = "ApproximateNumberOfMessagesDelayed"
	ApproximateNumberOfMessagesNotVisible = "ApproximateNumberOfMessagesNotVisible"
	ContentBasedDeduplication             = "ContentBasedDeduplication"
	CreatedTimestamp                      = "CreatedTimestamp"
	DeduplicationScope                    = "DeduplicationScope"
	DelaySeconds                          = "DelaySeconds"
	FifoQueue                             = "FifoQueue"
	FifoThroughputLimit                   = "FifoThroughputLimit"
	KmsDataKeyReusePeriodSeconds          = "KmsDataKeyReusePeriodSeconds"
	KmsMasterKeyID                        = "KmsMasterKeyId"
	LastModifiedTimestamp                 = "LastModifiedTimestamp"
	MaximumMessageSize                    = "MaximumMessageSize"
	MessageRetentionPeriod                = "MessageRetentionPeriod"
	Policy                                = "Policy"
	QueueArn                              = "QueueArn"
	ReceiveMessageWaitTimeSeconds         = "ReceiveMessageWaitTimeSeconds"
	RedriveAllowPolicy                    = "RedriveAllowPolicy"
	RedrivePolicy                         = "RedrivePolicy"
	SqsManagedSseEnabled                  = "SqsManagedSseEnabled"
	VisibilityTimeout                     = "VisibilityTimeout"
)

// Limits of queue names and of the attributes only queues have, as the SQS API
// reference gives them. The limits messages share with queues (visibility, delay,
// retention, size, wait) are sqsrule's.
const (
	MaxNameLength = 80
	FIFOSuffix    = ".fifo"

	MinKmsDataKeyReusePeriod        = 60
	MaxKmsDataKeyReusePeriod        = 86400
	DefaultKmsDataKeyReusePeriod    = 300
	MinMaxReceiveCount              = 1
	MaxRedriveAllowSourceQueueArns  = 10
	DeduplicationScopeQueue         = "queue"
	DeduplicationScopeMessageGroup  = "messageGroup"
	FifoThroughputPerQueue          = "perQueue"
	FifoThroughputPerMessageGroupID = "perMessageGroupId"
)

// ARNParser turns a queue ARN into the queue's name; ok is false when arn is not the ARN
// of a queue this gateway serves. The gateway supplies it because it owns the account
// and region that ARNs carry.
type ARNParser func(arn string) (queueName string, ok bool)

// ValidateName checks a queue name: 1 to 80 characters of letters, digits, hyphens and
// underscores, where a FIFO queue's name ends in ".fifo" (counted in the 80). Whether
// the suffix agrees with the FifoQueue attribute is checked by ForCreate.
func ValidateName(name string) error {
	base := strings.TrimSuffix(name, FIFOSuffix)
	if len(name) > MaxNameLength || base == "" || !isNameChars(base) {
		if base != name {
			return fifoNameError()
		}
		return sqserr.New(sqserr.InvalidParameterValue,
			"Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	return nil
}

// IsFIFOName reports whether name has the FIFO suffix.
func IsFIFOName(name string) bool { return strings.HasSuffix(name, FIFOSuffix) }

func fifoNameError() error {
	return sqserr.New(sqserr.InvalidParameterValue,
		"The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
}

func isNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Defaults returns the attributes of a queue created without any.
func Defaults(fifo bool) drivers.QueueAttributes {
	a := drivers.QueueAttributes{
		DelaySeconds:                  0,
		MaximumMessageSize:            sqsrule.MaxMessageSize,
		MessageRetentionPeriod:        sqsrule.DefaultMessageRetentionPeriod,
		ReceiveMessageWaitTimeSeconds: 0,
		VisibilityTimeout:             sqsrule.DefaultVisibilityTimeout,
		KmsDataKeyReusePeriodSeconds:  DefaultKmsDataKeyReusePeriod,
		SqsManagedSseEnabled:          true,
		FifoQueue:                     fifo,
	}
	if fifo {
		a.DeduplicationScope = DeduplicationScopeQueue
		a.FifoThroughputLimit = FifoThroughputPerQueue
	}
	return a
}

// ForCreate validates CreateQueue's name and attributes and returns the queue's full
// attribute set: the defaults overridden by in.
func ForCreate(name string, in map[string]string, arn ARNParser) (drivers.QueueAttributes, error) {
	if err := ValidateName(name); err != nil {
		return drivers.QueueAttributes{}, err
	}
	fifo := IsFIFOName(name)
	if v, ok := in[FifoQueue]; ok {
		b, err := parseBool(FifoQueue, v)
		if err != nil {
			return drivers.QueueAttributes{}, err
		}
		if !b {
			// SQS knows FifoQueue only as "true"; on a standard queue it is no attribute.
			return drivers.QueueAttributes{}, unknownAttribute(FifoQueue)
		}
		if !fifo {
			return drivers.QueueAttributes{}, fifoNameError()
		}
	} else if fifo {
		// Without FifoQueue=true the queue is standard, and "." is not a name character.
		return drivers.QueueAttributes{}, sqserr.New(sqserr.InvalidParameterValue,
			"Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	a := Defaults(fifo)
	if err := set(&a, in, arn); err != nil {
		return drivers.QueueAttributes{}, err
	}
	return a, nil
}

// Apply validates SetQueueAttributes' attributes and merges them into cur. An empty
// Policy, RedrivePolicy, RedriveAllowPolicy or KmsMasterKeyId removes that attribute.
func Apply(cur drivers.QueueAttributes, in map[string]string, arn ARNParser) (drivers.QueueAttributes, error) {
	a := cur
	if v, ok := in[FifoQueue]; ok {
		if !cur.FifoQueue {
			return cur, unknownAttribute(FifoQueue)
		}
		b, err := parseBool(FifoQueue, v)
		if err != nil {
			return cur, err
		}
		if !b {
			return cur, sqserr.New(sqserr.InvalidAttributeValue,
				"Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
		}
	}
	if err := set(&a, in, arn); err != nil {
		return cur, err
	}
	return a, nil
}

// set applies every attribute of in except FifoQueue (the callers handle it, since its
// rules differ between create and set), names first, then values, then the rules that
// tie attributes together.
func set(a *drivers.QueueAttributes, in map[string]string, arn ARNParser) error {
	names := sortedKeys(in)
	for _, n := range names {
		if err := checkName(n, a.FifoQueue); err != nil {
			return err
		}
	}
	for _, n := range names {
		if n == FifoQueue {
			continue
		}
		if err := settable[n](a, in[n], arn); err != nil {
			return err
		}
	}
	return checkCombination(a, in)
}

func checkName(n string, fifo bool) error {
	if _, ok := settable[n]; !ok && n != FifoQueue {
		return unknownAttribute(n)
	}
	if fifo {
		return nil
	}
	switch n {
	case FifoQueue, ContentBasedDeduplication:
		return unknownAttribute(n)
	case DeduplicationScope, FifoThroughputLimit:
		return sqserr.New(sqserr.InvalidAttributeName,
			"You can specify the %s only when FifoQueue is set to true.", n)
	}
	return nil
}

// checkCombination enforces the rules between attributes: one kind of server-side
// encryption at a time, and per-group throughput only with per-group deduplication.
func checkCombination(a *drivers.QueueAttributes, in map[string]string) error {
	_, setKey := in[KmsMasterKeyID]
	_, setSSE := in[SqsManagedSseEnabled]
	if a.KmsMasterKeyID != "" && a.SqsManagedSseEnabled {
		switch {
		case setKey && setSSE:
			return sqserr.New(sqserr.InvalidAttributeName,
				"You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.")
		case setKey:
			// Choosing a KMS key switches the queue from SSE-SQS to SSE-KMS.
			a.SqsManagedSseEnabled = false
		case setSSE:
			// Enabling SSE-SQS switches the queue away from its KMS key.
			a.KmsMasterKeyID = ""
		}
	}
	if a.FifoQueue && a.FifoThroughputLimit == FifoThroughputPerMessageGroupID &&
		a.DeduplicationScope != DeduplicationScopeMessageGroup {
		return sqserr.New(sqserr.InvalidAttributeValue,
			"Invalid value for the parameter FifoThroughputLimit. Reason: The perMessageGroupId value is allowed only when the value for DeduplicationScope is messageGroup.")
	}
	return nil
}

// setter parses one attribute value into a.
type setter func(a *drivers.QueueAttributes, v string, arn ARNParser) error

var settable = map[string]setter{
	DelaySeconds:                  intSetter(DelaySeconds, 0, sqsrule.MaxDelaySeconds, func(a *drivers.QueueAttributes) *int32 { return &a.DelaySeconds }),
	MaximumMessageSize:            intSetter(MaximumMessageSize, sqsrule.MinMaximumMessageSize, sqsrule.MaxMessageSize, func(a *drivers.QueueAttributes) *int32 { return &a.MaximumMessageSize }),
	MessageRetentionPeriod:        intSetter(MessageRetentionPeriod, sqsrule.MinMessageRetentionPeriod, sqsrule.MaxMessageRetentionPeriod, func(a *drivers.QueueAttributes) *int32 { return &a.MessageRetentionPeriod }),
	ReceiveMessageWaitTimeSeconds: intSetter(ReceiveMessageWaitTimeSeconds, 0, sqsrule.MaxWaitTimeSeconds, func(a *drivers.QueueAttributes) *int32 { return &a.ReceiveMessageWaitTimeSeconds }),
	VisibilityTimeout:             intSetter(VisibilityTimeout, 0, sqsrule.MaxVisibilityTimeout, func(a *drivers.QueueAttributes) *int32 { return &a.VisibilityTimeout }),
	KmsDataKeyReusePeriodSeconds:  intSetter(KmsDataKeyReusePeriodSeconds, MinKmsDataKeyReusePeriod, MaxKmsDataKeyReusePeriod, func(a *drivers.QueueAttributes) *int32 { return &a.KmsDataKeyReusePeriodSeconds }),
	ContentBasedDeduplication:     boolSetter(ContentBasedDeduplication, func(a *drivers.QueueAttributes) *bool { return &a.ContentBasedDeduplication }),
	SqsManagedSseEnabled:          boolSetter(SqsManagedSseEnabled, func(a *drivers.QueueAttributes) *bool { return &a.SqsManagedSseEnabled }),
	DeduplicationScope: enumSetter(DeduplicationScope, []string{DeduplicationScopeQueue, DeduplicationScopeMessageGroup},
		func(a *drivers.QueueAttributes) *string { return &a.DeduplicationScope }),
	FifoThroughputLimit: enumSetter(FifoThroughputLimit, []string{FifoThroughputPerQueue, FifoThroughputPerMessageGroupID},
		func(a *drivers.QueueAttributes) *string { return &a.FifoThroughputLimit }),
	KmsMasterKeyID: func(a *drivers.QueueAttributes, v string, _ ARNParser) error {
		if len(v) > maxKmsKeyIDLength {
			return invalidValue(KmsMasterKeyID)
		}
		a.KmsMasterKeyID = v
		return nil
	},
	Policy: func(a *drivers.QueueAttributes, v string, _ ARNParser) error {
		if v != "" && !isJSONObject(v) {
			return invalidValue(Policy)
		}
		a.Policy = v
		return nil
	},
	RedrivePolicy: func(a *drivers.QueueAttributes, v string, arn ARNParser) error {
		p, err := parseRedrivePolicy(v, a.FifoQueue, arn)
		if err != nil {
			return err
		}
		a.RedrivePolicy = p
		return nil
	},
	RedriveAllowPolicy: func(a *drivers.QueueAttributes, v string, arn ARNParser) error {
		if err := checkRedriveAllowPolicy(v, arn); err != nil {
			return err
		}
		a.RedriveAllowPolicy = v
		return nil
	},
}

// maxKmsKeyIDLength is KMS's limit on a key id, alias or ARN.
const maxKmsKeyIDLength = 2048

func intSetter(name string, lo, hi int64, field func(*drivers.QueueAttributes) *int32) setter {
	return func(a *drivers.QueueAttributes, v string, _ ARNParser) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < lo || n > hi {
			return invalidValue(name)
		}
		*field(a) = int32(n)
		return nil
	}
}

func boolSetter(name string, field func(*drivers.QueueAttributes) *bool) setter {
	return func(a *drivers.QueueAttributes, v string, _ ARNParser) error {
		b, err := parseBool(name, v)
		if err != nil {
			return err
		}
		*field(a) = b
		return nil
	}
}

func enumSetter(name string, allowed []string, field func(*drivers.QueueAttributes) *string) setter {
	return func(a *drivers.QueueAttributes, v string, _ ARNParser) error {
		for _, s := range allowed {
			if v == s {
				*field(a) = v
				return nil
			}
		}
		return invalidValue(name)
	}
}

// parseBool accepts "true" and "false" in any letter case, as SQS does.
func parseBool(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalidValue(name)
}

func invalidValue(name string) error {
	return sqserr.New(sqserr.InvalidAttributeValue, "Invalid value for the parameter %s.", name)
}

func unknownAttribute(name string) error {
	return sqserr.New(sqserr.InvalidAttributeName, "Unknown Attribute %s.", name)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
