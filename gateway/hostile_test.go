package gateway_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestHostileRequests: requests no SDK sends (invalid UTF-8, forbidden characters,
// thousands of attributes, deep nesting, repeated members and parameters, numbers no
// field holds, oversized bodies) are each answered with a 4xx in both protocols, and none
// of them stores a message or a queue.
func TestHostileRequests(t *testing.T) {
	e := newEnv(t)
	e.mustJSON("CreateQueue", `{"QueueName":"h"}`)
	q := `"QueueUrl":"/000000000000/h"`
	attrs := make([]string, 10000)
	for i := range attrs {
		attrs[i] = fmt.Sprintf(`"a%d":{"DataType":"String","StringValue":"v"}`, i)
	}
	jsonCases := map[string]struct{ action, body string }{
		"invalid UTF-8 in the body":         {"SendMessage", `{` + q + `,"MessageBody":"a` + "\xff\xfe" + `b"}`},
		"NUL in the body":                   {"SendMessage", `{` + q + `,"MessageBody":"a\u0000b"}`},
		"lone surrogate":                    {"SendMessage", `{` + q + `,"MessageBody":"a\ud800b"}`},
		"10,000 attributes":                 {"SendMessage", `{` + q + `,"MessageBody":"x","MessageAttributes":{` + strings.Join(attrs, ",") + `}}`},
		"an array nested 100,000 deep":      {"SendMessage", `{` + q + `,"MessageBody":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`},
		"an object nested 100,000 deep":     {"SendMessage", `{` + q + `,"MessageBody":"x","MessageAttributes":` + strings.Repeat(`{"a":`, 100000) + `1` + strings.Repeat("}", 100000) + `}`},
		"a repeated member":                 {"SendMessage", `{` + q + `,"MessageBody":"a","MessageBody":"b"}`},
		"a member repeated in another case": {"SendMessage", `{` + q + `,"MessageBody":"a","messagebody":"b"}`},
		"a member repeated with an escape":  {"SendMessage", `{` + q + `,"MessageBody":"a","\u004dessageBody":"b"}`},
		"a repeated attribute name":         {"SendMessage", `{` + q + `,"MessageBody":"a","MessageAttributes":{"k":{"DataType":"String","StringValue":"1"},"k":{"DataType":"String","StringValue":"2"}}}`},
		"a number no int32 holds":           {"SendMessage", `{` + q + `,"MessageBody":"a","DelaySeconds":99999999999999999999}`},
		"an exponent":                       {"SendMessage", `{` + q + `,"MessageBody":"a","DelaySeconds":1e400}`},
		"a fraction":                        {"SendMessage", `{` + q + `,"MessageBody":"a","DelaySeconds":1.5}`},
		"a body over 9 MiB":                 {"SendMessage", `{` + q + `,"MessageBody":"` + strings.Repeat("x", 9<<20) + `"}`},
		"a queue from a repeated name":      {"CreateQueue", `{"QueueName":"x","QueueName":"y"}`},
		"a queue name of invalid UTF-8":     {"CreateQueue", `{"QueueName":"` + "\xc3\x28" + `"}`},
	}
	for name, c := range jsonCases {
		if st, _, b := e.jsonCall(c.action, c.body); st < 400 || st >= 500 {
			t.Errorf("JSON %s: %d %.300s, want a 4xx", name, st, b)
		}
	}
	h := "/000000000000/h"
	queryCases := map[string]url.Values{
		"a repeated parameter":       {"Action": {"SendMessage"}, "QueueUrl": {h}, "MessageBody": {"a", "b"}},
		"invalid UTF-8":              {"Action": {"SendMessage"}, "QueueUrl": {h}, "MessageBody": {"a\xffb"}},
		"invalid UTF-8 in a name":    {"Action": {"SendMessage"}, "QueueUrl": {h}, "MessageBody": {"a"}, "MessageAttribute.1.Name": {"\xff"}},
		"a number no int32 holds":    {"Action": {"ReceiveMessage"}, "QueueUrl": {h}, "MaxNumberOfMessages": {"99999999999999999999"}},
		"a name 5,000 parts deep":    {"Action": {"SendMessage"}, "QueueUrl": {h}, "MessageBody": {"x"}, strings.Repeat("a.", 5000) + "b": {"1"}},
		"10,000 attributes":          hugeQueryAttributes(h, 10000),
		"a repeated queue name":      {"Action": {"CreateQueue"}, "QueueName": {"x", "y"}},
		"a repeated tag key":         {"Action": {"TagQueue"}, "QueueUrl": {h}, "Tag.1.Key": {"k"}, "Tag.1.Value": {"1"}, "Tag.2.Key": {"k"}, "Tag.2.Value": {"2"}},
		"a repeated attribute name":  {"Action": {"SendMessage"}, "QueueUrl": {h}, "MessageBody": {"x"}, "MessageAttribute.1.Name": {"a"}, "MessageAttribute.1.Value.DataType": {"String"}, "MessageAttribute.1.Value.StringValue": {"1"}, "MessageAttribute.2.Name": {"a"}, "MessageAttribute.2.Value.DataType": {"String"}, "MessageAttribute.2.Value.StringValue": {"2"}},
		"an attribute without value": {"Action": {"SendMessage"}, "QueueUrl": {h}, "MessageBody": {"x"}, "MessageAttribute.1.Name": {"a"}},
	}
	for name, form := range queryCases {
		if st, _, b := e.queryCall("/", form); st < 400 || st >= 500 {
			t.Errorf("Query %s: %d %.300s, want a 4xx", name, st, b)
		}
	}
	if _, _, b := e.jsonCall("GetQueueAttributes", `{`+q+`,"AttributeNames":["All"]}`); !strings.Contains(b, `"ApproximateNumberOfMessages":"0"`) ||
		!strings.Contains(b, `"ApproximateNumberOfMessagesDelayed":"0"`) {
		t.Errorf("hostile requests stored messages: %s", b)
	}
	if _, _, b := e.jsonCall("ListQueues", `{}`); strings.Count(b, "/000000000000/") != 1 {
		t.Errorf("hostile requests created queues: %s", b)
	}
}

func hugeQueryAttributes(queueURL string, n int) url.Values {
	v := url.Values{"Action": {"SendMessage"}, "QueueUrl": {queueURL}, "MessageBody": {"x"}}
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("MessageAttribute.%d.", i)
		v.Set(p+"Name", fmt.Sprintf("a%d", i))
		v.Set(p+"Value.DataType", "String")
		v.Set(p+"Value.StringValue", "v")
	}
	return v
}
