package queueattr_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

const arnPrefix = "arn:aws:sqs:us-east-1:000000000000:"

func parseARN(arn string) (string, bool) {
	name, ok := strings.CutPrefix(arn, arnPrefix)
	return name, ok && name != ""
}

func arnOf(name string) string { return arnPrefix + name }

// code returns the SQS code of err, "" for nil, and fails the test for other errors.
func code(t *testing.T, err error) sqserr.Code {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *sqserr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *sqserr.Error", err)
	}
	return e.Code
}

func TestValidateName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want sqserr.Code
	}{
		{"a", ""},
		{strings.Repeat("a", 80), ""},
		{strings.Repeat("a", 81), sqserr.InvalidParameterValue},
		{"", sqserr.InvalidParameterValue},
		{"Az09-_", ""},
		{"with space", sqserr.InvalidParameterValue},
		{"dot.ted", sqserr.InvalidParameterValue},
		{"ümlaut", sqserr.InvalidParameterValue},
		{"q.fifo", ""},
		{strings.Repeat("a", 75) + ".fifo", ""},
		{strings.Repeat("a", 76) + ".fifo", sqserr.InvalidParameterValue},
		{".fifo", sqserr.InvalidParameterValue},
		{"a.b.fifo", sqserr.InvalidParameterValue},
		{"q.FIFO", sqserr.InvalidParameterValue},
	}
	for _, tt := range tests {
		if got := code(t, queueattr.ValidateName(tt.name)); got != tt.want {
			t.Errorf("ValidateName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	std := queueattr.Defaults(false)
	want := drivers.QueueAttributes{
		MaximumMessageSize: 1048576, MessageRetentionPeriod: 345600, VisibilityTimeout: 30,
		KmsDataKeyReusePeriodSeconds: 300, SqsManagedSseEnabled: true,
	}
	if std != want {
		t.Errorf("Defaults(false) = %+v, want %+v", std, want)
	}
	fifo := queueattr.Defaults(true)
	want.FifoQueue, want.DeduplicationScope, want.FifoThroughputLimit = true, "queue", "perQueue"
	if fifo != want {
		t.Errorf("Defaults(true) = %+v, want %+v", fifo, want)
	}
}

// TestForCreateRanges checks both sides of every numeric limit, on a standard queue.
func TestForCreateRanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr     string
		lo, hi   string // the limits, accepted
		low, hig string // just outside, rejected
	}{
		{"DelaySeconds", "0", "900", "-1", "901"},
		{"MaximumMessageSize", "1024", "1048576", "1023", "1048577"},
		{"MessageRetentionPeriod", "60", "1209600", "59", "1209601"},
		{"ReceiveMessageWaitTimeSeconds", "0", "20", "-1", "21"},
		{"VisibilityTimeout", "0", "43200", "-1", "43201"},
		{"KmsDataKeyReusePeriodSeconds", "60", "86400", "59", "86401"},
	}
	for _, tt := range tests {
		for _, v := range []string{tt.lo, tt.hi} {
			if _, err := queueattr.ForCreate("q", map[string]string{tt.attr: v}, parseARN); err != nil {
				t.Errorf("%s=%s: %v", tt.attr, v, err)
			}
		}
		for _, v := range []string{tt.low, tt.hig, "", "abc", "1.5", "99999999999"} {
			_, err := queueattr.ForCreate("q", map[string]string{tt.attr: v}, parseARN)
			if got := code(t, err); got != sqserr.InvalidAttributeValue {
				t.Errorf("%s=%q: code %q, want InvalidAttributeValue", tt.attr, v, got)
			}
			if err != nil && !strings.Contains(err.Error(), "Invalid value for the parameter "+tt.attr+".") {
				t.Errorf("%s=%q: message %q does not name the parameter", tt.attr, v, err)
			}
		}
	}
}

func TestForCreateValues(t *testing.T) {
	t.Parallel()
	a, err := queueattr.ForCreate("q", map[string]string{
		"DelaySeconds": "5", "MaximumMessageSize": "2048", "MessageRetentionPeriod": "120",
		"ReceiveMessageWaitTimeSeconds": "20", "VisibilityTimeout": "0", "Policy": `{"Version":"2012-10-17"}`,
		"RedrivePolicy":      `{"deadLetterTargetArn":"` + arnOf("dlq") + `","maxReceiveCount":"7"}`,
		"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`,
	}, parseARN)
	if err != nil {
		t.Fatal(err)
	}
	want := queueattr.Defaults(false)
	want.DelaySeconds, want.MaximumMessageSize, want.MessageRetentionPeriod = 5, 2048, 120
	want.ReceiveMessageWaitTimeSeconds, want.VisibilityTimeout = 20, 0
	want.Policy = `{"Version":"2012-10-17"}`
	want.RedriveAllowPolicy = `{"redrivePermission":"denyAll"}`
	if a.RedrivePolicy == nil || *a.RedrivePolicy != (drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 7}) {
		t.Fatalf("RedrivePolicy = %+v", a.RedrivePolicy)
	}
	a.RedrivePolicy = nil
	if a != want {
		t.Errorf("ForCreate = %+v\nwant %+v", a, want)
	}
}

func TestForCreateFIFO(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		attrs map[string]string
		want  sqserr.Code
		msg   string
	}{
		{"q.fifo", map[string]string{"FifoQueue": "true"}, "", ""},
		{"q.fifo", map[string]string{"FifoQueue": "TRUE"}, "", ""},
		{"q.fifo", nil, sqserr.InvalidParameterValue, "Can only include"},
		{"q", map[string]string{"FifoQueue": "true"}, sqserr.InvalidParameterValue, "must end with .fifo suffix"},
		{"q", map[string]string{"FifoQueue": "false"}, sqserr.InvalidAttributeName, "Unknown Attribute FifoQueue."},
		{"q.fifo", map[string]string{"FifoQueue": "false"}, sqserr.InvalidAttributeName, "Unknown Attribute FifoQueue."},
		{"q.fifo", map[string]string{"FifoQueue": "yes"}, sqserr.InvalidAttributeValue, "FifoQueue"},
		{"q", map[string]string{"ContentBasedDeduplication": "false"}, sqserr.InvalidAttributeName, "Unknown Attribute ContentBasedDeduplication."},
		{"q", map[string]string{"DeduplicationScope": "queue"}, sqserr.InvalidAttributeName, "You can specify the DeduplicationScope only when FifoQueue is set to true."},
		{"q", map[string]string{"FifoThroughputLimit": "perQueue"}, sqserr.InvalidAttributeName, "You can specify the FifoThroughputLimit only when FifoQueue is set to true."},
		{"q.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}, "", ""},
		{"q.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "1"}, sqserr.InvalidAttributeValue, "ContentBasedDeduplication"},
		{"q.fifo", map[string]string{"FifoQueue": "true", "DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}, "", ""},
		{"q.fifo", map[string]string{"FifoQueue": "true", "DeduplicationScope": "queue", "FifoThroughputLimit": "perMessageGroupId"}, sqserr.InvalidAttributeValue, "FifoThroughputLimit"},
		{"q.fifo", map[string]string{"FifoQueue": "true", "FifoThroughputLimit": "perMessageGroupId"}, sqserr.InvalidAttributeValue, "FifoThroughputLimit"},
		{"q.fifo", map[string]string{"FifoQueue": "true", "DeduplicationScope": "group"}, sqserr.InvalidAttributeValue, "DeduplicationScope"},
		{"q.fifo", map[string]string{"FifoQueue": "true", "FifoThroughputLimit": "perGroup"}, sqserr.InvalidAttributeValue, "FifoThroughputLimit"},
	}
	for _, tt := range tests {
		_, err := queueattr.ForCreate(tt.name, tt.attrs, parseARN)
		if got := code(t, err); got != tt.want {
			t.Errorf("ForCreate(%q, %v) = %v, want %q", tt.name, tt.attrs, err, tt.want)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ForCreate(%q, %v) message %q, want it to contain %q", tt.name, tt.attrs, err, tt.msg)
		}
	}
	a, err := queueattr.ForCreate("q.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true",
		"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}, parseARN)
	if err != nil {
		t.Fatal(err)
	}
	if !a.FifoQueue || !a.ContentBasedDeduplication || a.DeduplicationScope != "messageGroup" || a.FifoThroughputLimit != "perMessageGroupId" {
		t.Errorf("FIFO attributes not applied: %+v", a)
	}
}

func TestForCreateUnknownAndReadOnly(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"Bogus", "QueueArn", "ApproximateNumberOfMessages", "CreatedTimestamp",
		"LastModifiedTimestamp", "All", "delayseconds"} {
		_, err := queueattr.ForCreate("q", map[string]string{n: "1"}, parseARN)
		if got := code(t, err); got != sqserr.InvalidAttributeName {
			t.Errorf("%s: code %q, want InvalidAttributeName", n, got)
		} else if err.Error() != "InvalidAttributeName: Unknown Attribute "+n+"." {
			t.Errorf("%s: message %q", n, err)
		}
	}
	// Names are checked before values: the unknown name wins over a bad value.
	_, err := queueattr.ForCreate("q", map[string]string{"Bogus": "1", "DelaySeconds": "-1"}, parseARN)
	if got := code(t, err); got != sqserr.InvalidAttributeName {
		t.Errorf("unknown name with bad value: code %q", got)
	}
}

func TestForCreatePolicy(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]sqserr.Code{
		`{}`: "", `{"Statement":[]}`: "", "": "",
		`[]`: sqserr.InvalidAttributeValue, `not json`: sqserr.InvalidAttributeValue,
		`{"a":1} x`: sqserr.InvalidAttributeValue, `null`: sqserr.InvalidAttributeValue,
	} {
		_, err := queueattr.ForCreate("q", map[string]string{"Policy": v}, parseARN)
		if got := code(t, err); got != want {
			t.Errorf("Policy %q: code %q, want %q", v, got, want)
		}
	}
}

func TestForCreateRedrivePolicy(t *testing.T) {
	t.Parallel()
	dlq, dlqFIFO := arnOf("dlq"), arnOf("dlq.fifo")
	tests := []struct {
		queue, policy string
		wantCount     int32
		reason        string // "" means accepted
	}{
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":1}`, 1, ""},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":1000}`, 1000, ""},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":"10"}`, 10, ""},
		{"q", `{"maxReceiveCount":"10","deadLetterTargetArn":"` + dlq + `"}`, 10, ""},
		{"q.fifo", `{"deadLetterTargetArn":"` + dlqFIFO + `","maxReceiveCount":3}`, 3, ""},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":0}`, 0, "Invalid value for maxReceiveCount: 0, valid values are from 1 to 1000 both inclusive."},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":1001}`, 0, "Invalid value for maxReceiveCount: 1001"},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":"x"}`, 0, "Invalid value for maxReceiveCount: x"},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":2.5}`, 0, "Invalid value for maxReceiveCount"},
		{"q", `{"deadLetterTargetArn":"` + dlq + `"}`, 0, "Redrive policy does not contain mandatory attribute: maxReceiveCount."},
		{"q", `{"maxReceiveCount":5}`, 0, "Redrive policy does not contain mandatory attribute: deadLetterTargetArn."},
		{"q", `{}`, 0, "does not contain mandatory attribute"},
		{"q", `{"deadLetterTargetArn":"arn:aws:sns:x","maxReceiveCount":5}`, 0, "Dead letter target does not exist."},
		{"q", `{"deadLetterTargetArn":5,"maxReceiveCount":5}`, 0, "Invalid value for deadLetterTargetArn."},
		{"q", `{"deadLetterTargetArn":"` + dlqFIFO + `","maxReceiveCount":5}`, 0, "Dead-letter queue must be same type of queue as the source."},
		{"q.fifo", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":5}`, 0, "Dead-letter queue must be same type of queue as the source."},
		{"q", `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":5,"x":1}`, 0, "Only following attributes are supported"},
		{"q", `not json`, 0, "not a valid JSON map"},
	}
	for _, tt := range tests {
		in := map[string]string{"RedrivePolicy": tt.policy}
		if queueattr.IsFIFOName(tt.queue) {
			in["FifoQueue"] = "true"
		}
		a, err := queueattr.ForCreate(tt.queue, in, parseARN)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("%s %s: %v", tt.queue, tt.policy, err)
			} else if a.RedrivePolicy == nil || a.RedrivePolicy.MaxReceiveCount != tt.wantCount {
				t.Errorf("%s %s: got %+v", tt.queue, tt.policy, a.RedrivePolicy)
			}
			continue
		}
		if got := code(t, err); got != sqserr.InvalidParameterValue {
			t.Errorf("%s %s: code %q, want InvalidParameterValue", tt.queue, tt.policy, got)
			continue
		}
		prefix := "Value " + tt.policy + " for parameter RedrivePolicy is invalid. Reason: "
		if !strings.Contains(err.Error(), prefix) || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%s %s: message %q, want %q + %q", tt.queue, tt.policy, err, prefix, tt.reason)
		}
	}
}

func TestForCreateRedriveAllowPolicy(t *testing.T) {
	t.Parallel()
	src := func(n int) string {
		arns := make([]string, n)
		for i := range arns {
			arns[i] = `"` + arnOf("src"+string(rune('a'+i))) + `"`
		}
		return `{"redrivePermission":"byQueue","sourceQueueArns":[` + strings.Join(arns, ",") + `]}`
	}
	tests := []struct {
		policy string
		ok     bool
	}{
		{`{"redrivePermission":"allowAll"}`, true},
		{`{"redrivePermission":"denyAll"}`, true},
		{src(1), true},
		{src(10), true},
		{src(11), false},
		{src(0), false},
		{`{"redrivePermission":"byQueue"}`, false},
		{`{"redrivePermission":"allowAll","sourceQueueArns":["` + arnOf("a") + `"]}`, false},
		{`{"redrivePermission":"denyAll","sourceQueueArns":[]}`, false},
		{`{"redrivePermission":"some"}`, false},
		{`{"sourceQueueArns":["` + arnOf("a") + `"]}`, false},
		{`{"redrivePermission":"byQueue","sourceQueueArns":["arn:aws:sns:x"]}`, false},
		{`{"redrivePermission":"byQueue","sourceQueueArns":"` + arnOf("a") + `"}`, false},
		{`{"redrivePermission":"allowAll","other":1}`, false},
		{`[]`, false},
	}
	for _, tt := range tests {
		a, err := queueattr.ForCreate("q", map[string]string{"RedriveAllowPolicy": tt.policy}, parseARN)
		if tt.ok {
			if err != nil || a.RedriveAllowPolicy != tt.policy {
				t.Errorf("%s: %v, stored %q", tt.policy, err, a.RedriveAllowPolicy)
			}
			continue
		}
		if got := code(t, err); got != sqserr.InvalidParameterValue {
			t.Errorf("%s: code %q, want InvalidParameterValue", tt.policy, got)
		} else if !strings.Contains(err.Error(), "for parameter RedriveAllowPolicy is invalid. Reason: ") {
			t.Errorf("%s: message %q", tt.policy, err)
		}
	}
}

func TestRedriveAllowPolicyAdmits(t *testing.T) {
	t.Parallel()
	by := `{"redrivePermission":"byQueue","sourceQueueArns":["` + arnOf("a") + `"]}`
	tests := []struct {
		policy, src string
		want        bool
	}{
		{"", arnOf("a"), true},
		{`{"redrivePermission":"allowAll"}`, arnOf("a"), true},
		{`{"redrivePermission":"denyAll"}`, arnOf("a"), false},
		{by, arnOf("a"), true},
		{by, arnOf("b"), false},
	}
	for _, tt := range tests {
		if got := queueattr.RedriveAllowPolicyAdmits(tt.policy, tt.src); got != tt.want {
			t.Errorf("Admits(%s, %s) = %v", tt.policy, tt.src, got)
		}
	}
}

func TestSSE(t *testing.T) {
	t.Parallel()
	a, err := queueattr.ForCreate("q", map[string]string{"KmsMasterKeyId": "alias/aws/sqs"}, parseARN)
	if err != nil {
		t.Fatal(err)
	}
	if a.KmsMasterKeyID != "alias/aws/sqs" || a.SqsManagedSseEnabled {
		t.Errorf("KMS key must switch off SSE-SQS: %+v", a)
	}
	_, err = queueattr.ForCreate("q", map[string]string{"KmsMasterKeyId": "k", "SqsManagedSseEnabled": "true"}, parseARN)
	if got := code(t, err); got != sqserr.InvalidAttributeName || !strings.Contains(err.Error(), "You can use one type of server-side encryption (SSE) at one time.") {
		t.Errorf("both SSE kinds: %v", err)
	}
	// Setting a key on a queue that has SSE-SQS switches it, as SQS does.
	a, err = queueattr.Apply(queueattr.Defaults(false), map[string]string{"KmsMasterKeyId": "k", "KmsDataKeyReusePeriodSeconds": "6000"}, parseARN)
	if err != nil || a.SqsManagedSseEnabled || a.KmsMasterKeyID != "k" || a.KmsDataKeyReusePeriodSeconds != 6000 {
		t.Errorf("key on an SSE-SQS queue: %v %+v", err, a)
	}
	// Back to the defaults: the key goes, SSE-SQS stays off, and neither KMS attribute renders.
	a, err = queueattr.Apply(a, map[string]string{"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "300"}, parseARN)
	if err != nil || a.SqsManagedSseEnabled || a.KmsMasterKeyID != "" {
		t.Errorf("KMS back to defaults: %v %+v", err, a)
	}
	got, err := queueattr.Render(drivers.Queue{Name: "q", Attributes: a}, nil,
		[]string{"KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled"}, arnOf)
	if err != nil {
		t.Fatal(err)
	}
	assertMap(t, "KMS back to defaults", got, map[string]string{"SqsManagedSseEnabled": "false"})
	a, err = queueattr.ForCreate("q", map[string]string{"KmsMasterKeyId": "k", "SqsManagedSseEnabled": "false"}, parseARN)
	if err != nil || a.SqsManagedSseEnabled || a.KmsMasterKeyID != "k" {
		t.Errorf("KMS with SSE-SQS off: %v %+v", err, a)
	}
	b, err := queueattr.Apply(a, map[string]string{"SqsManagedSseEnabled": "true"}, parseARN)
	if err != nil || !b.SqsManagedSseEnabled || b.KmsMasterKeyID != "" {
		t.Errorf("SSE-SQS on a KMS queue must drop the key: %v %+v", err, b)
	}
	b, err = queueattr.Apply(a, map[string]string{"KmsMasterKeyId": ""}, parseARN)
	if err != nil || b.KmsMasterKeyID != "" || b.SqsManagedSseEnabled {
		t.Errorf("removing the key: %v %+v", err, b)
	}
	_, err = queueattr.ForCreate("q", map[string]string{"KmsMasterKeyId": strings.Repeat("k", 2049)}, parseARN)
	if got := code(t, err); got != sqserr.InvalidAttributeValue {
		t.Errorf("overlong key id: code %q", got)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	std := queueattr.Defaults(false)
	fifo := queueattr.Defaults(true)
	withDLQ, err := queueattr.Apply(std, map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arnOf("dlq") + `","maxReceiveCount":4}`,
		"Policy":        `{}`, "RedriveAllowPolicy": `{"redrivePermission":"allowAll"}`,
		"VisibilityTimeout": "60",
	}, parseARN)
	if err != nil {
		t.Fatal(err)
	}
	if withDLQ.RedrivePolicy == nil || withDLQ.VisibilityTimeout != 60 || withDLQ.Policy != "{}" {
		t.Fatalf("Apply = %+v", withDLQ)
	}
	if std.RedrivePolicy != nil || std.VisibilityTimeout != 30 {
		t.Fatalf("Apply changed its input: %+v", std)
	}
	cleared, err := queueattr.Apply(withDLQ, map[string]string{"RedrivePolicy": "", "Policy": "", "RedriveAllowPolicy": ""}, parseARN)
	if err != nil || cleared.RedrivePolicy != nil || cleared.Policy != "" || cleared.RedriveAllowPolicy != "" || cleared.VisibilityTimeout != 60 {
		t.Errorf("empty values must remove: %v %+v", err, cleared)
	}

	tests := []struct {
		cur  drivers.QueueAttributes
		in   map[string]string
		want sqserr.Code
		msg  string
	}{
		{std, map[string]string{"FifoQueue": "true"}, sqserr.InvalidAttributeName, "Unknown Attribute FifoQueue."},
		{std, map[string]string{"FifoQueue": "false"}, sqserr.InvalidAttributeName, "Unknown Attribute FifoQueue."},
		{fifo, map[string]string{"FifoQueue": "true"}, "", ""},
		{fifo, map[string]string{"FifoQueue": "false"}, sqserr.InvalidAttributeValue, "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."},
		{std, map[string]string{"ContentBasedDeduplication": "true"}, sqserr.InvalidAttributeName, "Unknown Attribute ContentBasedDeduplication."},
		{fifo, map[string]string{"ContentBasedDeduplication": "true"}, "", ""},
		{std, map[string]string{"DelaySeconds": "901"}, sqserr.InvalidAttributeValue, "Invalid value for the parameter DelaySeconds."},
		{std, map[string]string{"QueueArn": "x"}, sqserr.InvalidAttributeName, "Unknown Attribute QueueArn."},
		{fifo, map[string]string{"FifoThroughputLimit": "perMessageGroupId"}, sqserr.InvalidAttributeValue, "FifoThroughputLimit"},
		{fifo, map[string]string{"FifoThroughputLimit": "perMessageGroupId", "DeduplicationScope": "messageGroup"}, "", ""},
		{std, map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arnOf("d.fifo") + `","maxReceiveCount":4}`}, sqserr.InvalidParameterValue, "same type"},
	}
	for _, tt := range tests {
		_, err := queueattr.Apply(tt.cur, tt.in, parseARN)
		if got := code(t, err); got != tt.want {
			t.Errorf("Apply(fifo=%v, %v) = %v, want %q", tt.cur.FifoQueue, tt.in, err, tt.want)
		} else if err != nil && !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Apply(%v) message %q, want %q", tt.in, err, tt.msg)
		}
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	existing, err := queueattr.ForCreate("q", map[string]string{
		"DelaySeconds": "5", "Policy": `{"a": [1, 2], "b": "c"}`,
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arnOf("dlq") + `","maxReceiveCount":4}`,
	}, parseARN)
	if err != nil {
		t.Fatal(err)
	}
	fifo := queueattr.Defaults(true)
	tests := []struct {
		cur      drivers.QueueAttributes
		req      map[string]string
		mismatch string
	}{
		{existing, nil, ""},
		{existing, map[string]string{"DelaySeconds": "5"}, ""},
		{existing, map[string]string{"DelaySeconds": "6"}, "DelaySeconds"},
		{existing, map[string]string{"VisibilityTimeout": "30"}, ""},
		{existing, map[string]string{"VisibilityTimeout": "31", "DelaySeconds": "6"}, "DelaySeconds"},
		{existing, map[string]string{"Policy": `{"b":"c","a":[1,2]}`}, ""},
		{existing, map[string]string{"Policy": `{"b":"c","a":[2,1]}`}, "Policy"},
		{existing, map[string]string{"RedrivePolicy": `{"maxReceiveCount":"4","deadLetterTargetArn":"` + arnOf("dlq") + `"}`}, ""},
		{existing, map[string]string{"RedrivePolicy": `{"maxReceiveCount":"5","deadLetterTargetArn":"` + arnOf("dlq") + `"}`}, "RedrivePolicy"},
		{existing, map[string]string{"SqsManagedSseEnabled": "true"}, ""},
		{existing, map[string]string{"Bogus": "1"}, "Bogus"},
		{existing, map[string]string{"DelaySeconds": "x"}, "DelaySeconds"},
		{existing, map[string]string{"FifoQueue": "true"}, "FifoQueue"},
		{fifo, map[string]string{"FifoQueue": "true"}, ""},
		{fifo, map[string]string{"ContentBasedDeduplication": "false"}, ""},
		{fifo, map[string]string{"ContentBasedDeduplication": "true"}, "ContentBasedDeduplication"},
		{fifo, map[string]string{"DeduplicationScope": "queue"}, ""},
	}
	for _, tt := range tests {
		if got := queueattr.FirstMismatch(tt.cur, tt.req, parseARN); got != tt.mismatch {
			t.Errorf("FirstMismatch(%v) = %q, want %q", tt.req, got, tt.mismatch)
		}
		if got := queueattr.Matches(tt.cur, tt.req, parseARN); got != (tt.mismatch == "") {
			t.Errorf("Matches(%v) = %v", tt.req, got)
		}
	}
}

func TestNeedsStats(t *testing.T) {
	t.Parallel()
	for names, want := range map[string]bool{
		"": false, "All": true, "QueueArn,DelaySeconds": false, "QueueArn,ApproximateNumberOfMessages": true,
		"ApproximateNumberOfMessagesDelayed": true, "ApproximateNumberOfMessagesNotVisible": true,
	} {
		if got := queueattr.NeedsStats(strings.Split(names, ",")); got != want {
			t.Errorf("NeedsStats(%s) = %v", names, got)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	created := time.Unix(1700000000, 500)
	modified := time.Unix(1700000100, 0)
	stats := &drivers.QueueStats{Visible: 3, NotVisible: 2, Delayed: 1}
	std := drivers.Queue{Name: "q", CreatedAt: created, LastModified: modified, Attributes: queueattr.Defaults(false)}
	got, err := queueattr.Render(std, stats, []string{"All"}, arnOf)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"QueueArn": arnOf("q"), "ApproximateNumberOfMessages": "3", "ApproximateNumberOfMessagesNotVisible": "2",
		"ApproximateNumberOfMessagesDelayed": "1", "CreatedTimestamp": "1700000000", "LastModifiedTimestamp": "1700000100",
		"VisibilityTimeout": "30", "MaximumMessageSize": "1048576", "MessageRetentionPeriod": "345600",
		"DelaySeconds": "0", "ReceiveMessageWaitTimeSeconds": "0", "SqsManagedSseEnabled": "true",
	}
	assertMap(t, "standard All", got, want)

	fifo := std
	fifo.Name = "q.fifo"
	fifo.Attributes, err = queueattr.ForCreate("q.fifo", map[string]string{
		"FifoQueue": "true", "KmsMasterKeyId": "alias/aws/sqs", "Policy": `{"x":1}`,
		"RedrivePolicy":      `{"deadLetterTargetArn":"` + arnOf("dlq.fifo") + `","maxReceiveCount":"5"}`,
		"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`,
	}, parseARN)
	if err != nil {
		t.Fatal(err)
	}
	got, err = queueattr.Render(fifo, stats, []string{"All"}, arnOf)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"QueueArn": arnOf("q.fifo"), "FifoQueue": "true", "ContentBasedDeduplication": "false",
		"DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue", "KmsMasterKeyId": "alias/aws/sqs",
		"KmsDataKeyReusePeriodSeconds": "300", "SqsManagedSseEnabled": "false", "Policy": `{"x":1}`,
		"RedrivePolicy":      `{"deadLetterTargetArn":"` + arnOf("dlq.fifo") + `","maxReceiveCount":5}`,
		"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`,
	} {
		want[k] = v
	}
	assertMap(t, "fifo All", got, want)

	// Selected names only; FIFO-only names on a standard queue are left out.
	got, err = queueattr.Render(std, nil, []string{"QueueArn", "FifoQueue", "DeduplicationScope", "Policy", "DelaySeconds"}, arnOf)
	if err != nil {
		t.Fatal(err)
	}
	assertMap(t, "standard selected", got, map[string]string{"QueueArn": arnOf("q"), "DelaySeconds": "0"})

	got, err = queueattr.Render(std, nil, nil, arnOf)
	if err != nil || len(got) != 0 {
		t.Errorf("no names: %v %v", got, err)
	}
	_, err = queueattr.Render(std, stats, []string{"QueueArn", "Bogus"}, arnOf)
	if c := code(t, err); c != sqserr.InvalidAttributeName || !strings.Contains(err.Error(), "Unknown Attribute Bogus.") {
		t.Errorf("unknown name: %v", err)
	}
	_, err = queueattr.Render(std, nil, []string{"ApproximateNumberOfMessages"}, arnOf)
	if code(t, err) != sqserr.InternalError {
		t.Errorf("missing stats: %v", err)
	}

	// A changed reuse period shows even without a key; a zero one reads as the default.
	reuse := std
	reuse.Attributes.KmsDataKeyReusePeriodSeconds = 600
	got, _ = queueattr.Render(reuse, nil, []string{"KmsDataKeyReusePeriodSeconds"}, arnOf)
	assertMap(t, "reuse period", got, map[string]string{"KmsDataKeyReusePeriodSeconds": "600"})
	reuse.Attributes.KmsDataKeyReusePeriodSeconds = 0
	reuse.Attributes.KmsMasterKeyID = "k"
	got, _ = queueattr.Render(reuse, nil, []string{"KmsDataKeyReusePeriodSeconds"}, arnOf)
	assertMap(t, "zero reuse period", got, map[string]string{"KmsDataKeyReusePeriodSeconds": "300"})
}

func assertMap(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s = %q", what, k, v)
		}
	}
}
