package gateway

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/anysqs/anysqs/gateway/wire"
)

// requestShapes are the shapes call.decode fills, one per action's input.
var requestShapes = []func() any{
	func() any { return new(queueURLInput) },
	func() any { return new(createQueueInput) },
	func() any { return new(getQueueURLInput) },
	func() any { return new(listQueuesInput) },
	func() any { return new(listDLQSourcesInput) },
	func() any { return new(getQueueAttributesInput) },
	func() any { return new(setQueueAttributesInput) },
	func() any { return new(tagQueueInput) },
	func() any { return new(untagQueueInput) },
	func() any { return new(sendMessageInput) },
	func() any { return new(sendMessageBatchInput) },
	func() any { return new(receiveMessageInput) },
	func() any { return new(deleteMessageInput) },
	func() any { return new(deleteMessageBatchInput) },
	func() any { return new(changeVisibilityInput) },
	func() any { return new(changeVisibilityBatchInput) },
	func() any { return new(startMoveTaskInput) },
	func() any { return new(listMoveTasksInput) },
	func() any { return new(cancelMoveTaskInput) },
}

// stdEncode is encodeJSON as it was with the standard library.
func stdEncode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := stdjson.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// errorClass is what decodeError tells the client of err, less the member's path (see
// samePath) and with a number's text reduced to "number", which the two packages quote
// differently.
func errorClass(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		kind, _, _ := strings.Cut(jsonKind(te.Value), " ")
		return "type error: expected " + expectedKind(te.Type) + ", got " + kind
	}
	return decodeError("Action", err).Error()
}

// samePath reports whether two type errors blame the same member. encoding/json's path
// names the Go field, embedded structs included, without list indices or map keys
// (sendFields.DelaySeconds, Entries.Id, Attributes); ours is the JSON path as sent, in
// the client's letter case (DelaySeconds, Entries.0.Id, Attributes.k). So the standard
// library's members, less the embedded struct, must appear in order in ours.
func samePath(std, ours error) bool {
	var a, b *json.UnmarshalTypeError
	if !errors.As(std, &a) || !errors.As(ours, &b) {
		return true
	}
	want := strings.Split(strings.ToLower(a.Field), ".")
	got := strings.Split(strings.ToLower(b.Field), ".")
	i := 0
	for _, g := range got {
		for i < len(want) && want[i] == "sendfields" {
			i++
		}
		if i < len(want) && want[i] == g {
			i++
		}
	}
	return i == len(want)
}

// FuzzJSONMatchesStdlib holds the gateway's JSON package to encoding/json: every request
// body decodes to the same value or fails the same way, and every response renders to
// the same bytes, so the faster package changes nothing a client can see.
func FuzzJSONMatchesStdlib(f *testing.F) {
	seeds := []string{
		`{"QueueUrl":"http://h/000000000000/q","MessageBody":"x","DelaySeconds":5,"MessageAttributes":{"a":{"DataType":"Number","StringValue":"1"},"b":{"DataType":"Binary","BinaryValue":"AAEC"}}}`,
		`{"QueueUrl":"q","Entries":[{"Id":"1","MessageBody":"x","MessageGroupId":"g","MessageDeduplicationId":"d"},{"Id":"2","MessageBody":"\u00e9\ud83d\ude00<&>"}]}`,
		`{"QueueUrl":"q","MaxNumberOfMessages":10,"WaitTimeSeconds":20,"VisibilityTimeout":0,"AttributeNames":["All"],"MessageSystemAttributeNames":["SentTimestamp"],"MessageAttributeNames":["a.*"],"ReceiveRequestAttemptId":"r"}`,
		`{"QueueUrl":"q","Entries":[{"Id":"a","ReceiptHandle":"h"}]}`,
		`{"QueueName":"n","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn\",\"maxReceiveCount\":1}"},"tags":{"k":"v"}}`,
		`{"queueurl":"lower case","MESSAGEBODY":"upper"}`,
		`{"QueueUrl":"a","QueueUrl":"duplicate"}`,
		`{"MessageBody":"bad utf-8 \xff\xfe here"}`,
		`{"MessageBody":"lone surrogate \ud800 and nul \u0000"}`,
		`{"DelaySeconds":"5"}`,
		`{"DelaySeconds":5.5}`,
		`{"DelaySeconds":99999999999}`,
		`{"DelaySeconds":-0}`,
		`{"DelaySeconds":1e2}`,
		`{"Entries":{"Id":"1"}}`,
		`{"Entries":[{"Id":1}]}`,
		`{"MessageAttributes":{"a":{"BinaryValue":"not base64!"}}}`,
		`{"MessageAttributes":{"a":null},"Attributes":null,"MaxResults":null}`,
		`{"QueueUrl":"q"} trailing`,
		`[1,2]`,
		`"string"`,
		`null`,
		`{"QueueUrl":"q",}`,
		`{"QueueUrl":"q"`,
		`  {"QueueUrl" : "q" }  `,
		`{"Unknown":{"deep":[1,{"x":true}]},"QueueUrl":"q"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, shape uint8, body string) {
		mk := requestShapes[int(shape)%len(requestShapes)]
		want, got := mk(), mk()
		wantErr := stdjson.Unmarshal([]byte(body), want)
		gotErr := json.Unmarshal([]byte(body), got)
		switch {
		case (wantErr == nil) != (gotErr == nil):
			t.Fatalf("%T from %q: encoding/json says %v, ours %v", want, body, wantErr, gotErr)
		case wantErr != nil && errorClass(wantErr) != errorClass(gotErr):
			t.Fatalf("%T from %q: encoding/json says %q (%v), ours %q (%v)", want, body, errorClass(wantErr), wantErr,
				errorClass(gotErr), gotErr)
		case wantErr != nil && !samePath(wantErr, gotErr):
			t.Fatalf("%T from %q: encoding/json blames %q, ours %q", want, body, wantErr, gotErr)
		case wantErr == nil && !reflect.DeepEqual(want, got):
			t.Fatalf("%T from %q: encoding/json decodes %+v, ours %+v", want, body, want, got)
		}

		// Responses carry message bodies, attribute values and ids as the client sent them.
		sv := body
		outs := []any{
			receiveMessageOutput{Messages: []messageOutput{{MessageId: body, ReceiptHandle: "h", MD5OfBody: "m", Body: body,
				Attributes:        map[string]string{"SenderId": body, body: "v"},
				MessageAttributes: map[string]messageAttributeValue{body: {DataType: "String", StringValue: &sv}, "b": {DataType: "Binary", BinaryValue: []byte(body)}}}}},
			sendMessageBatchOutput{Failed: []batchErrorEntry{{Id: body, Code: "c", Message: body, SenderFault: true}}},
			listQueuesOutput{QueueUrls: []string{body}, NextToken: body},
		}
		for _, o := range outs {
			wantB, wantE := stdEncode(o)
			gotB, gotE := wire.EncodeJSON(o)
			if (wantE == nil) != (gotE == nil) || (wantE == nil && !bytes.Equal(wantB, gotB)) {
				t.Fatalf("%T with %q: encoding/json renders %q (%v), ours %q (%v)", o, body, wantB, wantE, gotB, gotE)
			}
		}
	})
}

// TestDecodeErrorMessages pins what a client reads for a body of the wrong shape: the
// member by its JSON path, the types as JSON names them, never a Go name.
func TestDecodeErrorMessages(t *testing.T) {
	cases := []struct {
		in   any
		body string
		want string
	}{
		{new(sendMessageBatchInput), `{"Entries":[{"Id":"a"},{"Id":1}]}`,
			"InvalidParameterValue: Value for parameter Entries.1.Id is invalid. Reason: expected string, got JSON number."},
		{new(sendMessageInput), `{"DelaySeconds":"5"}`,
			"InvalidParameterValue: Value for parameter DelaySeconds is invalid. Reason: expected integer, got JSON string."},
		{new(sendMessageInput), `{"DelaySeconds":99999999999}`,
			"InvalidParameterValue: Value for parameter DelaySeconds is invalid. Reason: expected integer, got JSON number 99999999999."},
		{new(sendMessageInput), `{"MessageAttributes":{"a":{"BinaryValue":7}}}`,
			"InvalidParameterValue: Value for parameter MessageAttributes.a.BinaryValue is invalid. Reason: expected base64-encoded string, got JSON number."},
		{new(createQueueInput), `{"Attributes":["x"]}`,
			"InvalidParameterValue: Value for parameter Attributes is invalid. Reason: expected map, got JSON array."},
		{new(sendMessageInput), `[1]`,
			"InvalidParameterValue: The request body of SendMessage must be a JSON object, not array."},
		{new(sendMessageInput), `{"QueueUrl":`,
			"InvalidParameterValue: The request body of SendMessage is not valid JSON."},
	}
	for _, c := range cases {
		err := (&call{action: "SendMessage", body: []byte(c.body)}).decode(c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\n want %s", c.body, err, c.want)
		}
	}
}
