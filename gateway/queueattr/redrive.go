package queueattr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Keys of the RedrivePolicy and RedriveAllowPolicy JSON documents.
const (
	keyDeadLetterTargetArn = "deadLetterTargetArn"
	keyMaxReceiveCount     = "maxReceiveCount"
	keyRedrivePermission   = "redrivePermission"
	keySourceQueueArns     = "sourceQueueArns"
)

// RedriveAllowPolicy redrivePermission values.
const (
	RedrivePermissionAllowAll = "allowAll"
	RedrivePermissionDenyAll  = "denyAll"
	RedrivePermissionByQueue  = "byQueue"
)

// parseRedrivePolicy parses a RedrivePolicy document; "" removes the policy. SQS accepts
// maxReceiveCount as a JSON number or as a string holding one (CloudFormation and
// Terraform send strings).
func parseRedrivePolicy(v string, fifo bool, arn ARNParser) (*drivers.RedrivePolicy, error) {
	if v == "" {
		return nil, nil
	}
	bad := func(reason string, args ...any) error {
		return sqserr.New(sqserr.InvalidParameterValue,
			"Value %s for parameter RedrivePolicy is invalid. Reason: %s", v, fmt.Sprintf(reason, args...))
	}
	doc, ok := decodeObject(v)
	if !ok {
		return nil, bad("Redrive policy is not a valid JSON map.")
	}
	for k := range doc {
		if k != keyDeadLetterTargetArn && k != keyMaxReceiveCount {
			return nil, bad("Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount].")
		}
	}
	rawARN, ok := doc[keyDeadLetterTargetArn]
	if !ok {
		return nil, bad("Redrive policy does not contain mandatory attribute: %s.", keyDeadLetterTargetArn)
	}
	rawCount, ok := doc[keyMaxReceiveCount]
	if !ok {
		return nil, bad("Redrive policy does not contain mandatory attribute: %s.", keyMaxReceiveCount)
	}
	count, ok := jsonInt(rawCount)
	if !ok || count < MinMaxReceiveCount || count > sqsrule.MaxMaxReceiveCount {
		return nil, bad("Invalid value for maxReceiveCount: %s, valid values are from 1 to 1000 both inclusive.",
			bytes.Trim(rawCount, `"`))
	}
	var target string
	if json.Unmarshal(rawARN, &target) != nil || target == "" {
		return nil, bad("Invalid value for deadLetterTargetArn.")
	}
	name, ok := arn(target)
	if !ok {
		return nil, bad("Dead letter target does not exist.")
	}
	if IsFIFOName(name) != fifo {
		// SQS ends this one sentence with two periods.
		return nil, bad("Dead-letter queue must be same type of queue as the source..")
	}
	return &drivers.RedrivePolicy{DeadLetterQueue: name, MaxReceiveCount: int32(count)}, nil
}

// jsonInt reads an integer given as a JSON number or a JSON string.
func jsonInt(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// checkRedriveAllowPolicy validates a RedriveAllowPolicy document; "" removes the policy.
func checkRedriveAllowPolicy(v string, arn ARNParser) error {
	if v == "" {
		return nil
	}
	bad := func(reason string) error {
		return sqserr.New(sqserr.InvalidParameterValue,
			"Value %s for parameter RedriveAllowPolicy is invalid. Reason: %s", v, reason)
	}
	doc, ok := decodeObject(v)
	if !ok {
		return bad("Amazon SQS can't create the redrive allow policy, as it's in an unsupported format.")
	}
	for k := range doc {
		if k != keyRedrivePermission && k != keySourceQueueArns {
			return bad("Only following attributes are supported: [redrivePermission, sourceQueueArns].")
		}
	}
	var perm string
	if raw, ok := doc[keyRedrivePermission]; !ok || json.Unmarshal(raw, &perm) != nil {
		return bad("Redrive allow policy does not contain mandatory attribute: redrivePermission.")
	}
	rawARNs, hasARNs := doc[keySourceQueueArns]
	switch perm {
	case RedrivePermissionAllowAll, RedrivePermissionDenyAll:
		if hasARNs {
			return bad("You can specify sourceQueueArns only when redrivePermission is set to byQueue.")
		}
		return nil
	case RedrivePermissionByQueue:
	default:
		return bad("Invalid value for redrivePermission: " + perm + ", valid values are allowAll, denyAll and byQueue.")
	}
	var arns []string
	if !hasARNs || json.Unmarshal(rawARNs, &arns) != nil || len(arns) == 0 {
		return bad("You must specify sourceQueueArns when redrivePermission is set to byQueue.")
	}
	if len(arns) > MaxRedriveAllowSourceQueueArns {
		return bad("You can specify up to 10 source queue ARNs. To allow more than 10 source queues, set redrivePermission to allowAll.")
	}
	for _, a := range arns {
		if _, ok := arn(a); !ok {
			return bad("Invalid value for sourceQueueArns: " + a + ".")
		}
	}
	return nil
}

// RedriveAllowPolicyAdmits reports whether a dead-letter queue whose RedriveAllowPolicy
// is policy (as stored) accepts sourceARN as a source queue. The gateway calls it when a
// queue names that dead-letter queue in its RedrivePolicy.
func RedriveAllowPolicyAdmits(policy, sourceARN string) bool {
	if policy == "" {
		return true
	}
	var doc struct {
		RedrivePermission string   `json:"redrivePermission"`
		SourceQueueArns   []string `json:"sourceQueueArns"`
	}
	if json.Unmarshal([]byte(policy), &doc) != nil {
		return false
	}
	switch doc.RedrivePermission {
	case RedrivePermissionAllowAll:
		return true
	case RedrivePermissionByQueue:
		for _, a := range doc.SourceQueueArns {
			if a == sourceARN {
				return true
			}
		}
	}
	return false
}

// renderRedrivePolicy writes a policy the way SQS returns it: the ARN first, the count
// as a JSON number, no spaces.
func renderRedrivePolicy(p *drivers.RedrivePolicy, arnOf func(string) string) string {
	target, _ := json.Marshal(arnOf(p.DeadLetterQueue))
	return `{"deadLetterTargetArn":` + string(target) + `,"maxReceiveCount":` +
		strconv.FormatInt(int64(p.MaxReceiveCount), 10) + `}`
}

// decodeObject decodes a JSON object, keeping its values raw; ok is false for anything
// else, including trailing data.
func decodeObject(s string) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func isJSONObject(s string) bool {
	_, ok := decodeObject(s)
	return ok
}

// jsonEqual compares two JSON documents by value, so that CreateQueue's idempotence does
// not depend on the client's spacing or key order.
func jsonEqual(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
