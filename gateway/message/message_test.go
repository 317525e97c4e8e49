package message_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/message"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

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

func str(v string) drivers.MessageAttribute {
	return drivers.MessageAttribute{DataType: "String", StringValue: v}
}

func num(v string) drivers.MessageAttribute {
	return drivers.MessageAttribute{DataType: "Number", StringValue: v}
}

func TestValidateBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want sqserr.Code
	}{
		{"", sqserr.MissingParameter},
		{"x", ""},
		{"\t\n\r", ""},
		{" ~\u00e9\ud7ff", ""},
		{"\ue000\ufffd", ""},
		{"\U00010000\U0010ffff", ""},
		{"a\x00", sqserr.InvalidMessageContents},
		{"\x08", sqserr.InvalidMessageContents},
		{"\x1f", sqserr.InvalidMessageContents},
		{"\ufffe", sqserr.InvalidMessageContents},
		{"\uffff", sqserr.InvalidMessageContents},
		{"ok\xffbad", sqserr.InvalidMessageContents},    // not UTF-8
		{"\xed\xa0\x80", sqserr.InvalidMessageContents}, // an encoded surrogate
		{strings.Repeat("a", 1048576), ""},
	}
	for _, tt := range tests {
		if got := code(t, message.ValidateBody(tt.body)); got != tt.want {
			t.Errorf("ValidateBody(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	err := message.ValidateBody("a\x01")
	if err == nil || !strings.Contains(err.Error(), "'#x1'") {
		t.Errorf("message should name the character: %v", err)
	}
}

func TestValidateAttributesNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{strings.Repeat("a", 256), true},
		{strings.Repeat("a", 257), false},
		{"", false},
		{"Az09-_.x", true},
		{"a.b.c", true},
		{"a..b", false},
		{".a", false},
		{"a.", false},
		{"a b", false},
		{"a/b", false},
		{"é", true}, // SQS takes letters of any script
		{"attr.1øßä", true},
		{"a€b", false},
		{"AWS.x", false},
		{"aws.x", false},
		{"Amazon.x", false},
		{"AMAZON.x", false},
		{"AWSx", true},
		{"Amazonx", true},
		{"x.AWS.y", true},
	}
	for _, tt := range tests {
		err := message.ValidateAttributes(map[string]drivers.MessageAttribute{tt.name: str("v")})
		if got := code(t, err); (got == "") != tt.ok || !tt.ok && got != sqserr.InvalidParameterValue {
			t.Errorf("name %q: %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestValidateAttributesNameMessages(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"a^b":   "Message (user) attributes name can only contain upper and lower score characters, digits, periods, hyphens and underscores. ",
		"a€b":   "can only contain upper and lower score characters",
		".a":    "Additionally, they cannot start or end with '.'.",
		"a.":    "Additionally, they cannot start or end with '.'.",
		"Aws.x": "You can't use message attribute names beginning with 'AWS.' or 'Amazon.'.",
		"x..y":  "can not have successive '.' characters.",
	} {
		err := message.ValidateAttributes(map[string]drivers.MessageAttribute{name: str("v")})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("name %q: %v, want %q", name, err, want)
		}
	}
}

func TestValidateAttributesCount(t *testing.T) {
	t.Parallel()
	attrs := map[string]drivers.MessageAttribute{}
	for i := range 10 {
		attrs[string(rune('a'+i))] = str("v")
	}
	if err := message.ValidateAttributes(attrs); err != nil {
		t.Errorf("10 attributes: %v", err)
	}
	attrs["k"] = str("v")
	err := message.ValidateAttributes(attrs)
	if code(t, err) != sqserr.InvalidParameterValue || !strings.Contains(err.Error(), "[11]") {
		t.Errorf("11 attributes: %v", err)
	}
	if err := message.ValidateAttributes(nil); err != nil {
		t.Errorf("no attributes: %v", err)
	}
}

func TestValidateAttributesValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr drivers.MessageAttribute
		ok   bool
	}{
		{str("x"), true},
		{str(""), false},
		{str("a\x00"), false},
		{str("\U0001F600"), true},
		{drivers.MessageAttribute{DataType: "String.custom-label", StringValue: "x"}, true},
		{drivers.MessageAttribute{DataType: "String." + strings.Repeat("c", 249), StringValue: "x"}, true},
		{drivers.MessageAttribute{DataType: "String." + strings.Repeat("c", 250), StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "String.", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "Stringx", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "string", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "Text", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "String.a\x00", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "String", StringValue: "x", BinaryValue: []byte{1}}, false},
		{drivers.MessageAttribute{DataType: "Binary", BinaryValue: []byte{0}}, true},
		{drivers.MessageAttribute{DataType: "Binary.png", BinaryValue: []byte{0xff}}, true},
		{drivers.MessageAttribute{DataType: "Binary"}, false},
		{drivers.MessageAttribute{DataType: "Binary", StringValue: "x"}, false},
		{drivers.MessageAttribute{DataType: "Number.int", StringValue: "5"}, true},
		{drivers.MessageAttribute{DataType: "Number", BinaryValue: []byte{1}}, false},
	}
	for _, tt := range tests {
		err := message.ValidateAttributes(map[string]drivers.MessageAttribute{"a": tt.attr})
		if got := code(t, err); (got == "") != tt.ok || !tt.ok && got != sqserr.InvalidParameterValue {
			t.Errorf("%+v: %v, want ok=%v", tt.attr, err, tt.ok)
		}
	}
	err := message.ValidateAttributes(map[string]drivers.MessageAttribute{"s": str("ok\x01")})
	if err == nil || !strings.Contains(err.Error(), "Invalid binary character '#x1' was found in the message attribute 's' value") {
		t.Errorf("invalid character message: %v", err)
	}
	err = message.ValidateAttributes(map[string]drivers.MessageAttribute{"t": {DataType: "Text", StringValue: "x"}})
	if err == nil || !strings.Contains(err.Error(), "The message attribute 't' has an invalid message attribute type") {
		t.Errorf("invalid type message: %v", err)
	}
	err = message.ValidateAttributes(map[string]drivers.MessageAttribute{"ErrorDetails": str("")})
	if err == nil || err.Error() != "InvalidParameterValue: Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'." {
		t.Errorf("empty string message: %v", err)
	}
}

func TestValidateNumber(t *testing.T) {
	t.Parallel()
	big38 := strings.Repeat("9", 38)
	tests := []struct {
		v  string
		ok bool
	}{
		{"0", true}, {"-0", true}, {"+7", true}, {"-7", true}, {"1.5", true}, {".5", true}, {"5.", true},
		{"1e3", true}, {"1E-3", true}, {"-2.5e+10", true}, {"000123.4500", true},
		{big38, true}, {big38 + "9", false}, {"1" + strings.Repeat("0", 60), true}, // trailing zeros are not precision
		{"0." + big38, true}, {"1." + big38, false},
		{"1e126", true}, {"1.0e126", true}, {"1.1e126", false}, {"9.9e125", true}, {"1e127", false},
		{"1e-128", true}, {"9e-129", false}, {"0.1e-127", true}, {"0.01e-127", false},
		{"0e999999", true}, {"1e9999999", false},
		{"", false}, {"-", false}, {".", false}, {"e5", false}, {"1e", false}, {"1e+", false},
		{"--1", false}, {"+-1", false}, {"1.2.3", false}, {"0x10", false}, {"NaN", false},
		{"Infinity", false}, {" 1", false}, {"1 ", false}, {"1,5", false}, {"1e1.5", false},
	}
	for _, tt := range tests {
		err := message.ValidateAttributes(map[string]drivers.MessageAttribute{"n": num(tt.v)})
		if got := code(t, err); (got == "") != tt.ok || !tt.ok && got != sqserr.InvalidParameterValue {
			t.Errorf("Number %q: %v, want ok=%v", tt.v, err, tt.ok)
		}
	}
}

func TestValidateSystemAttributes(t *testing.T) {
	t.Parallel()
	trace := "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
	tests := []struct {
		attrs map[string]drivers.MessageAttribute
		ok    bool
	}{
		{nil, true},
		{map[string]drivers.MessageAttribute{"AWSTraceHeader": str(trace)}, true},
		{map[string]drivers.MessageAttribute{"AWSTraceHeader": str("")}, false},
		{map[string]drivers.MessageAttribute{"AWSTraceHeader": num("1")}, false},
		{map[string]drivers.MessageAttribute{"AWSTraceHeader": {DataType: "String.x", StringValue: trace}}, false},
		{map[string]drivers.MessageAttribute{"AWSTraceHeader": {DataType: "Binary", BinaryValue: []byte{1}}}, false},
		{map[string]drivers.MessageAttribute{"AWSTraceHeader": str("a\x00")}, false},
		{map[string]drivers.MessageAttribute{"Other": str(trace)}, false},
		{map[string]drivers.MessageAttribute{"awstraceheader": str(trace)}, false},
	}
	for _, tt := range tests {
		err := message.ValidateSystemAttributes(tt.attrs)
		if got := code(t, err); (got == "") != tt.ok || !tt.ok && got != sqserr.InvalidParameterValue {
			t.Errorf("%v: %v, want ok=%v", tt.attrs, err, tt.ok)
		}
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	if got := message.Size("héllo", nil); got != 6 {
		t.Errorf("body only: %d", got)
	}
	attrs := map[string]drivers.MessageAttribute{
		"ab":  str("xyz"),                                        // 2 + 6 + 3
		"bin": {DataType: "Binary.x", BinaryValue: []byte{1, 2}}, // 3 + 8 + 2
	}
	if got := message.Size("body", attrs); got != 4+11+13 {
		t.Errorf("with attributes: %d", got)
	}
	if err := message.CheckSize(1024, 1024); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := message.CheckSize(1025, 1024)
	if code(t, err) != sqserr.InvalidParameterValue ||
		err.Error() != "InvalidParameterValue: One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes." {
		t.Errorf("over the limit: %v", err)
	}
	if err := message.CheckBatchSize(message.BatchSizeLimit); err != nil || message.BatchSizeLimit != 1048576 {
		t.Errorf("batch at the limit: %v", err)
	}
	err = message.CheckBatchSize(1048577)
	if code(t, err) != sqserr.BatchRequestTooLong ||
		!strings.Contains(err.Error(), "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.") {
		t.Errorf("batch over the limit: %v", err)
	}
}

func TestMD5OfBody(t *testing.T) {
	t.Parallel()
	// Well-known MD5 digests.
	for body, want := range map[string]string{
		"": "d41d8cd98f00b204e9800998ecf8427e",
		"The quick brown fox jumps over the lazy dog": "9e107d9d372bb6826bd81d3542a419d6",
		"test": "098f6bcd4621d373cade4e832627b4f6",
	} {
		if got := message.MD5OfBody(body); got != want {
			t.Errorf("MD5OfBody(%q) = %s, want %s", body, got, want)
		}
	}
}

// TestMD5OfAttributesRecorded checks digests that SQS itself returned for these
// attributes.
func TestMD5OfAttributesRecorded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attrs map[string]drivers.MessageAttribute
		want  string
	}{
		{map[string]drivers.MessageAttribute{"MyAttribute": str("foobar")}, "adb59cd4678ea5a855436b949cd07ab6"},
		{map[string]drivers.MessageAttribute{"Foo": str("Bar")}, "ae7155c6026991b6d54b11589678bf9c"},
		{map[string]drivers.MessageAttribute{"Hello": str("There")}, "a311262e065454b75da111d535b8dacd"},
		{map[string]drivers.MessageAttribute{"Hello": str("There"), "General": str("Kenobi")}, "fca026605781cb4126a1e9044df24232"},
		{map[string]drivers.MessageAttribute{"Hello": str("There"), "Help.Me": str("Me")}, "83fee93c1bcd8b9a5a923ffacdc636c7"},
		{map[string]drivers.MessageAttribute{"Hello": str("There"), "General": str("Kenobi"), "Help.Me": str("Me")}, "4c360f3fdafd970e05fae2f149d997f5"},
		{map[string]drivers.MessageAttribute{"attr1": {DataType: "Binary",
			BinaryValue: []byte("traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01")}}, "8cbe4db156db8a94db8b801b7addb984"},
	}
	for _, tt := range tests {
		if got := message.MD5OfAttributes(tt.attrs); got != tt.want {
			t.Errorf("MD5OfAttributes(%v) = %s, want %s", tt.attrs, got, tt.want)
		}
	}
}

// TestMD5OfAttributesVectors checks digests computed by testdata/md5_vectors.py, an
// independent implementation of the documented algorithm.
func TestMD5OfAttributesVectors(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/md5_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Name       string
		Attributes map[string]drivers.MessageAttribute
		MD5        string
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 5 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		if got := message.MD5OfAttributes(v.Attributes); got != v.MD5 {
			t.Errorf("%s: MD5OfAttributes = %q, want %q", v.Name, got, v.MD5)
		}
	}
}

func TestContentDedupID(t *testing.T) {
	t.Parallel()
	if got := message.ContentDedupID("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("ContentDedupID(abc) = %s", got)
	}
}

func TestValidateBatchIDs(t *testing.T) {
	t.Parallel()
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "id" + string(rune('a'+i))
		}
		return out
	}
	tests := []struct {
		ids  []string
		want sqserr.Code
	}{
		{nil, sqserr.EmptyBatchRequest},
		{ids(1), ""},
		{ids(10), ""},
		{ids(11), sqserr.TooManyEntriesInBatchRequest},
		{[]string{strings.Repeat("a", 80)}, ""},
		{[]string{strings.Repeat("a", 81)}, sqserr.InvalidBatchEntryID},
		{[]string{""}, sqserr.InvalidBatchEntryID},
		{[]string{"invalid:id"}, sqserr.InvalidBatchEntryID},
		{[]string{"a.b"}, sqserr.InvalidBatchEntryID},
		{[]string{"Az09-_"}, ""},
		{[]string{"a", "b", "a"}, sqserr.BatchEntryIdsNotDistinct},
		{[]string{"a", "A"}, ""},
		{[]string{"a", "a", "bad id"}, sqserr.InvalidBatchEntryID}, // ids are checked before duplicates
	}
	for _, tt := range tests {
		if got := code(t, message.ValidateBatchIDs(tt.ids)); got != tt.want {
			t.Errorf("ValidateBatchIDs(%q) = %q, want %q", tt.ids, got, tt.want)
		}
	}
	err := message.ValidateBatchIDs(ids(20))
	if err == nil || !strings.Contains(err.Error(), "Maximum number of entries per request are 10. You have sent 20.") {
		t.Errorf("too many: %v", err)
	}
	err = message.ValidateBatchIDsFor("SendMessageBatch", nil)
	if err == nil || !strings.Contains(err.Error(), "SendMessageBatchRequestEntry") {
		t.Errorf("empty, named action: %v", err)
	}
	err = message.ValidateBatchIDs([]string{"x", "x"})
	if err == nil || !strings.Contains(err.Error(), "Id x repeated.") {
		t.Errorf("duplicate: %v", err)
	}
}

func TestValidateFIFOIDs(t *testing.T) {
	t.Parallel()
	punct := "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	tests := []struct {
		id string
		ok bool
	}{
		{"a", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"Az09" + punct, true},
		{"group 123", false},
		{"tab\t", false},
		{"é", false},
		{"a\x7f", false},
	}
	checks := map[string]func(string) error{
		"MessageGroupId":          message.ValidateGroupID,
		"MessageDeduplicationId":  message.ValidateDedupID,
		"ReceiveRequestAttemptId": message.ValidateReceiveAttemptID,
	}
	for param, check := range checks {
		for _, tt := range tests {
			err := check(tt.id)
			if got := code(t, err); (got == "") != tt.ok || !tt.ok && got != sqserr.InvalidParameterValue {
				t.Errorf("%s %q: %v, want ok=%v", param, tt.id, err, tt.ok)
			}
		}
		err := check("group 123")
		want := "Value group 123 for parameter " + param + " is invalid. Reason: " + param +
			" can only include alphanumeric and punctuation characters. 1 to 128 in length."
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s message: %v", param, err)
		}
	}
}
