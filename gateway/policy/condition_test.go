package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// condRequest is the context the table below evaluates in: account 000000000002 over
// plain HTTP from 192.0.2.10 at 2026-12-03T12:00:00Z.
func condRequest() RequestContext {
	return NewRequestContext(RequestFacts{RemoteAddr: "192.0.2.10:50000", UserAgent: "aws-sdk-go-v2/1.0"},
		"000000000002", "us-east-1", time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
}

// TestConditionSemantics holds the evaluator to IAM's documented semantics (IAM User
// Guide, "IAM JSON policy elements: Condition operators" and "Condition"): one case per
// rule, as a Condition block and whether it holds.
func TestConditionSemantics(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, block string
		want        bool
	}{
		// String operators: values case-sensitive unless IgnoreCase; keys never.
		{"StringEquals", `{"StringEquals":{"aws:PrincipalAccount":"000000000002"}}`, true},
		{"StringEquals other", `{"StringEquals":{"aws:PrincipalAccount":"000000000003"}}`, false},
		{"key names ignore case", `{"StringEquals":{"AWS:principalACCOUNT":"000000000002"}}`, true},
		{"values are case-sensitive", `{"StringEquals":{"aws:PrincipalType":"account"}}`, false},
		{"StringEqualsIgnoreCase", `{"StringEqualsIgnoreCase":{"aws:PrincipalType":"ACCOUNT"}}`, true},
		{"StringNotEqualsIgnoreCase", `{"StringNotEqualsIgnoreCase":{"aws:PrincipalType":"ACCOUNT"}}`, false},
		{"StringNotEquals", `{"StringNotEquals":{"aws:PrincipalAccount":"000000000003"}}`, true},
		{"values are OR", `{"StringEquals":{"aws:PrincipalAccount":["000000000003","000000000002"]}}`, true},
		{"negated values are NOR", `{"StringNotEquals":{"aws:PrincipalAccount":["000000000003","000000000002"]}}`, false},
		{"StringLike *", `{"StringLike":{"aws:UserAgent":"aws-sdk-go-v2/*"}}`, true},
		{"StringLike ?", `{"StringLike":{"aws:UserAgent":"aws-sdk-go-v?/1.?"}}`, true},
		{"StringLike anchored", `{"StringLike":{"aws:UserAgent":"sdk*"}}`, false},
		{"StringLike case", `{"StringLike":{"aws:UserAgent":"AWS-*"}}`, false},
		{"StringNotLike", `{"StringNotLike":{"aws:UserAgent":"boto*"}}`, true},
		{"operator names ignore case", `{"stringequals":{"aws:PrincipalAccount":"000000000002"}}`, true},

		// Keys and operators are AND.
		{"two keys, both hold", `{"StringEquals":{"aws:PrincipalAccount":"000000000002","aws:RequestedRegion":"us-east-1"}}`, true},
		{"two keys, one fails", `{"StringEquals":{"aws:PrincipalAccount":"000000000002","aws:RequestedRegion":"eu-west-1"}}`, false},
		{"two operators, one fails", `{"StringEquals":{"aws:PrincipalAccount":"000000000002"},"Bool":{"aws:SecureTransport":"true"}}`, false},
		{"empty block", `{}`, true},

		// An absent key: false, true when negated, IfExists or ForAllValues.
		{"absent key", `{"ArnLike":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}`, false},
		{"absent key, negated", `{"ArnNotLike":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}`, true},
		{"absent key, StringNotEquals", `{"StringNotEquals":{"aws:SourceAccount":"000000000002"}}`, true},
		{"absent key, NotIpAddress", `{"NotIpAddress":{"aws:VpcSourceIp":"10.0.0.0/8"}}`, true},
		{"absent key, IfExists", `{"ArnLikeIfExists":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}`, true},
		{"absent key, negated IfExists", `{"StringNotEqualsIfExists":{"aws:SourceVpce":"vpce-1"}}`, true},
		{"absent key, ForAllValues", `{"ForAllValues:StringEquals":{"aws:TagKeys":"team"}}`, true},
		{"absent key, ForAnyValue", `{"ForAnyValue:StringEquals":{"aws:TagKeys":"team"}}`, false},
		{"absent key, ForAnyValue negated", `{"ForAnyValue:StringNotEquals":{"aws:TagKeys":"team"}}`, false},
		{"aws:username is absent (keys act as root)", `{"StringLike":{"aws:username":"*"}}`, false},
		{"aws:SourceAccount is absent on a direct call", `{"StringEquals":{"aws:SourceAccount":"000000000002"}}`, false},
		{"present key, IfExists", `{"StringEqualsIfExists":{"aws:PrincipalAccount":"000000000003"}}`, false},

		// Set qualifiers on a single-valued key test its one value.
		{"ForAnyValue present", `{"ForAnyValue:StringEquals":{"aws:PrincipalAccount":["000000000002","x"]}}`, true},
		{"ForAllValues present", `{"ForAllValues:StringEquals":{"aws:PrincipalAccount":"x"}}`, false},
		{"ForAllValues negated", `{"ForAllValues:StringNotLike":{"aws:PrincipalAccount":"1*"}}`, true},

		// Null tests presence.
		{"Null true on absent", `{"Null":{"aws:SourceArn":"true"}}`, true},
		{"Null false on absent", `{"Null":{"aws:SourceArn":false}}`, false},
		{"Null false on present", `{"Null":{"aws:SourceIp":"false"}}`, true},
		{"Null true on present", `{"Null":{"aws:SourceIp":"true"}}`, false},

		// ARNs: six parts, each with its own wildcards; ArnEquals reads them too.
		{"ArnLike principal", `{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:root"}}`, true},
		{"ArnEquals principal", `{"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::000000000002:root"}}`, true},
		{"ArnEquals wildcards", `{"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::00000000000?:*"}}`, true},
		{"ArnLike other region", `{"ArnLike":{"aws:PrincipalArn":"arn:aws:*:us-east-1:*:*"}}`, false},
		{"ArnNotEquals", `{"ArnNotEquals":{"aws:PrincipalArn":"arn:aws:iam::000000000003:root"}}`, true},
		{"ArnLike on a value that is no ARN", `{"ArnLike":{"aws:PrincipalAccount":"arn:*:*:*:*:*"}}`, false},

		// Numbers and dates.
		{"NumericLessThan epoch", `{"NumericLessThan":{"aws:EpochTime":"1796299201"}}`, true},
		{"NumericGreaterThanEquals epoch", `{"NumericGreaterThanEquals":{"aws:EpochTime":1796299200}}`, true},
		{"NumericGreaterThan epoch", `{"NumericGreaterThan":{"aws:EpochTime":1796299200}}`, false},
		{"NumericEquals decimal", `{"NumericEquals":{"aws:EpochTime":"1796299200.0"}}`, true},
		{"NumericNotEquals", `{"NumericNotEquals":{"aws:EpochTime":"5"}}`, true},
		{"NumericLessThanEquals", `{"NumericLessThanEquals":{"aws:EpochTime":"1796299199"}}`, false},
		{"Numeric on a string key", `{"NumericEquals":{"aws:PrincipalType":"1"}}`, false},
		{"DateLessThan", `{"DateLessThan":{"aws:CurrentTime":"2026-12-03T12:00:01Z"}}`, true},
		{"DateGreaterThan", `{"DateGreaterThan":{"aws:CurrentTime":"2026-12-03T12:00:00Z"}}`, false},
		{"DateGreaterThanEquals", `{"DateGreaterThanEquals":{"aws:CurrentTime":"2026-12-03"}}`, true},
		{"DateLessThanEquals zone", `{"DateLessThanEquals":{"aws:CurrentTime":"2026-12-03T13:00:00+01:00"}}`, true},
		{"DateEquals epoch", `{"DateEquals":{"aws:CurrentTime":"1796299200"}}`, true},
		{"DateEquals on EpochTime", `{"DateEquals":{"aws:EpochTime":"2026-12-03T12:00:00Z"}}`, true},
		{"DateNotEquals", `{"DateNotEquals":{"aws:CurrentTime":"2026-12-03T12:00:00.000Z"}}`, false},
		{"the two times", `{"DateGreaterThan":{"aws:CurrentTime":"2026-01-01T00:00:00Z"},"DateLessThan":{"aws:CurrentTime":"2027-01-01T00:00:00Z"}}`, true},

		// Bool, IP addresses, binary.
		{"Bool SecureTransport", `{"Bool":{"aws:SecureTransport":"false"}}`, true},
		{"Bool SecureTransport JSON", `{"Bool":{"aws:SecureTransport":true}}`, false},
		{"Bool ignores case", `{"Bool":{"aws:PrincipalIsAWSService":"FALSE"}}`, true},
		{"IpAddress CIDR", `{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}`, true},
		{"IpAddress one address", `{"IpAddress":{"aws:SourceIp":"192.0.2.10"}}`, true},
		{"IpAddress outside", `{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","192.0.2.11/32"]}}`, false},
		{"IpAddress IPv6 range, IPv4 caller", `{"IpAddress":{"aws:SourceIp":"2001:db8::/32"}}`, false},
		{"NotIpAddress", `{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, true},
		{"NotIpAddress inside", `{"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}}`, false},
		{"BinaryEquals", `{"BinaryEquals":{"aws:PrincipalType":"QWNjb3VudA=="}}`, true},
	}
	rc := condRequest()
	// A * in one part of an ARN never reaches into the next.
	if !arnMatch("arn:aws:sns:*:1:t", "arn:aws:sns:us-east-1:1:t") || arnMatch("arn:aws:sns:*:1:t", "arn:aws:sns:us:east:1:t") {
		t.Errorf("arnMatch does not match part by part")
	}
	for _, c := range cases {
		conds, err := parseCondition(json.RawMessage(c.block), true)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := conditionsHold(conds, rc); got != c.want {
			t.Errorf("%s: %s holds = %v, want %v", c.name, c.block, got, c.want)
		}
	}
}

// TestConditionRequestContext: the keys the gateway puts in a request's context and
// where each comes from; X-Forwarded-For is not read, IPv6 and IPv4-mapped peers are
// addresses of their own kind.
func TestConditionRequestContext(t *testing.T) {
	t.Parallel()
	rc := NewRequestContext(RequestFacts{RemoteAddr: "[::ffff:127.0.0.1]:1234", Secure: true},
		"000000000002", "eu-west-1", time.Date(2026, 12, 3, 12, 0, 0, 700e6, time.UTC))
	want := map[string]string{
		"aws:currenttime": "2026-12-03T12:00:00Z", "aws:epochtime": "1796299200",
		"aws:principalaccount": "000000000002", "aws:principalarn": "arn:aws:iam::000000000002:root",
		"aws:principalisawsservice": "false", "aws:principaltype": "Account", "aws:requestedregion": "eu-west-1",
		"aws:securetransport": "true", "aws:sourceip": "127.0.0.1", "aws:userid": "000000000002", "aws:viaawsservice": "false",
	}
	for k, v := range want {
		if rc[k] != v {
			t.Errorf("%s = %q, want %q", k, rc[k], v)
		}
	}
	var documented []string
	for _, k := range requestKeys {
		documented = append(documented, strings.ToLower(k))
	}
	for k := range rc {
		if !slices.Contains(documented, k) {
			t.Errorf("the context has %s, which requestKeys does not list", k)
		}
	}
	if rc := NewRequestContext(RequestFacts{RemoteAddr: "[2001:db8::1%eth0]:443"}, "000000000002", "us-east-1", time.Now()); rc["aws:sourceip"] != "2001:db8::1" {
		t.Errorf("IPv6 peer: aws:SourceIp = %q", rc["aws:sourceip"])
	}
	if rc := NewRequestContext(RequestFacts{RemoteAddr: "@"}, "000000000002", "us-east-1", time.Now()); rc["aws:sourceip"] != "" {
		t.Errorf("a peer that is no address: aws:SourceIp = %q, want absent", rc["aws:sourceip"])
	}
	for _, k := range []string{"aws:useragent", "aws:referer", "aws:sourcearn", "aws:sourceaccount", "aws:username"} {
		if _, ok := rc[k]; ok {
			t.Errorf("%s present in a request that has none", k)
		}
	}
}

// TestConditionRefusals: what cannot be evaluated is refused with a reason naming it.
func TestConditionRefusals(t *testing.T) {
	t.Parallel()
	for block, want := range map[string]string{
		`{"StringEqualz":{"aws:SourceIp":"x"}}`:                  "the condition operator StringEqualz is not an IAM condition operator, so the condition cannot be evaluated",
		`{"ForSomeValues:StringEquals":{"aws:SourceIp":"x"}}`:    "the condition operator ForSomeValues:StringEquals is not an IAM condition operator",
		`{"NullIfExists":{"aws:SourceIp":"true"}}`:               "the condition operator NullIfExists cannot be evaluated: Null takes neither IfExists nor a ForAllValues or ForAnyValue qualifier",
		`{"IpAddress":{"aws:SourceIp":"10.0.0.300/8"}}`:          `condition IpAddress aws:SourceIp: the value "10.0.0.300/8" cannot be evaluated: it is not an IPv4 or IPv6 address or CIDR range`,
		`{"NumericLessThan":{"aws:EpochTime":"soon"}}`:           `condition NumericLessThan aws:EpochTime: the value "soon" cannot be evaluated: it is not a number`,
		`{"NumericLessThan":{"aws:EpochTime":"NaN"}}`:            `the value "NaN" cannot be evaluated: it is not a number`,
		`{"DateLessThan":{"aws:CurrentTime":"next week"}}`:       `the value "next week" cannot be evaluated: it is neither an ISO 8601 date and time nor epoch seconds`,
		`{"Bool":{"aws:SecureTransport":"yes"}}`:                 `the value "yes" cannot be evaluated: it is neither true nor false`,
		`{"Null":{"aws:SourceArn":"maybe"}}`:                     `the value "maybe" cannot be evaluated: it is neither true nor false`,
		`{"ArnLike":{"aws:SourceArn":"sns:*"}}`:                  `the value "sns:*" cannot be evaluated: it is not an ARN (arn:partition:service:region:account:resource) and holds wildcards`,
		`{"BinaryEquals":{"aws:UserAgent":"%%"}}`:                `the value "%%" cannot be evaluated: it is not base64`,
		`{"StringEquals":{"aws:SourceIp":[]}}`:                   "condition StringEquals aws:SourceIp: the list of values is empty",
		`{"StringEquals":{"aws:SourceIp":{"a":1}}}`:              "a value must be a string, a number or a boolean",
		`{"StringEquals":{"aws:SourceIp":null}}`:                 "a value must be a string, a number or a boolean",
		`{"StringEquals":{}}`:                                    "the condition operator StringEquals names no condition key",
		`{"StringEquals":"x"}`:                                   "Condition operator StringEquals is not a JSON object",
		`["StringEquals"]`:                                       "Condition is not a JSON object",
		`{"StringEquals":{"a":"1"},"StringEquals":{"b":"2"}}`:    "Condition names StringEquals twice",
		`{"StringLike":{"aws:PrincipalArn":"${aws:username}*"}}`: `holds a policy variable (${...}), which this gateway does not evaluate`,
	} {
		_, err := parseCondition(json.RawMessage(block), true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", block, err, want)
		}
	}
	// Before Version 2012-10-17, ${ is text.
	if _, err := parseCondition(json.RawMessage(`{"StringLike":{"aws:UserAgent":"${x}"}}`), false); err != nil {
		t.Errorf("${ under Version 2008-10-17: %v", err)
	}
}

// TestPolicyConditionsEvaluated: a statement applies only where its conditions hold, for
// Allow and Deny alike, and a policy with an unknown operator is refused whole.
func TestPolicyConditionsEvaluated(t *testing.T) {
	t.Parallel()
	const sns = `"Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:sns:us-east-1:000000000001:orders-*"}}`
	doc := func(stmts ...string) string {
		return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
	}
	allowAll := `{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*"}`
	rc := condRequest()
	for _, c := range []struct {
		name, doc string
		want      bool
	}{
		{"SNS grant, direct call", doc(`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sqs:SendMessage","Resource":"*",` + sns + `}`), false},
		{"SNS-only Deny, direct call", doc(allowAll, `{"Effect":"Deny","Principal":"*","Action":"sqs:SendMessage","Resource":"*","Condition":{"ArnNotLike":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}}`), false},
		{"SNS-only Deny, another action", doc(allowAll, `{"Effect":"Deny","Principal":"*","Action":"sqs:SendMessage","Resource":"*","Condition":{"ArnNotLike":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}}`), true},
		{"Allow from the caller's network", doc(`{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}}`), true},
		{"Allow from another network", doc(`{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}`), false},
		{"Deny without TLS", doc(allowAll, `{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}`), false},
		{"Deny of another account", doc(allowAll, `{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"StringNotEquals":{"aws:PrincipalAccount":"000000000002"}}}`), true},
	} {
		if err := CheckQueuePolicy(c.doc); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		action := "SendMessage"
		if strings.Contains(c.name, "another action") {
			action = "ReceiveMessage"
		}
		if got := AllowedByPolicy(c.doc, "000000000002", action, polARN, rc); got != c.want {
			t.Errorf("%s: allowed = %v, want %v", c.name, got, c.want)
		}
	}
	err := CheckQueuePolicy(doc(allowAll, `{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"StringEqualz":{"aws:SourceIp":"x"}}}`))
	if err == nil || err.Error() != "InvalidAttributeValue: Invalid value for the parameter Policy. Reason: statement 2: the condition operator StringEqualz is not an IAM condition operator, so the condition cannot be evaluated" {
		t.Errorf("an unknown operator: %v", err)
	}
}

func TestWildcardMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"*", "a/b:c", true}, {"", "", true}, {"", "a", false},
		{"a*c", "abbbc", true}, {"a*c", "abbbd", false}, {"a*b*c", "aXbYbZc", true},
		{"?", "é", true}, {"??", "é", false}, {"a?c", "a/c", true},
		{"[a]", "a", false}, {"[a]", "[a]", true}, {`a\*`, `a\bc`, true},
		{"*.fifo", "orders.fifo", true}, {"*a", "bab", false}, {"**", "x", true},
	} {
		if got := wildcardMatch(c.pattern, c.s); got != c.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}
