package gateway

import (
	"bytes"
	"testing"

	"github.com/anysqs/anysqs/gateway/wire"
)

// TestRenderQueryJSON renders the gateway's own output types through the Query
// protocol's legacy JSON form.
func TestRenderQueryJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		out  any
		want string
	}{
		{"DeleteQueue", wire.Empty{}, `{"DeleteQueueResponse":{"ResponseMetadata":{"RequestId":"r"}}}`},
		{"GetQueueUrl", queueURLOutput{QueueUrl: "http://h/1/q"},
			`{"GetQueueUrlResponse":{"GetQueueUrlResult":{"QueueUrl":"http://h/1/q"},"ResponseMetadata":{"RequestId":"r"}}}`},
		{"GetQueueAttributes", attributesOutput{Attributes: map[string]string{"b": "2", "a": "1"}},
			`{"GetQueueAttributesResponse":{"GetQueueAttributesResult":{"Attributes":{"a":"1","b":"2"}},"ResponseMetadata":{"RequestId":"r"}}}`},
		{"SendMessage", &sendMessageOutput{MD5OfMessageBody: "m", MessageId: "i"},
			`{"SendMessageResponse":{"ResponseMetadata":{"RequestId":"r"},"SendMessageResult":{"MD5OfMessageAttributes":null,"MD5OfMessageBody":"m","MD5OfMessageSystemAttributes":null,"MessageId":"i","SequenceNumber":null}}}`},
		{"ReceiveMessage", receiveMessageOutput{Messages: []messageOutput{{MessageId: "i", Body: "<&>",
			MessageAttributes: map[string]messageAttributeValue{"ø": {DataType: "Binary", BinaryValue: []byte{1}}}}}},
			`{"ReceiveMessageResponse":{"ReceiveMessageResult":{"messages":[{"Attributes":null,"Body":"<&>","MD5OfBody":"","MD5OfMessageAttributes":null,` +
				`"MessageAttributes":{"ø":{"BinaryValue":"AQ==","DataType":"Binary","StringValue":null,"binaryListValues":null,"stringListValues":null}},"MessageId":"i","ReceiptHandle":""}]},` +
				`"ResponseMetadata":{"RequestId":"r"}}}`},
	} {
		var b bytes.Buffer
		wire.RenderQueryJSON(&b, "r", c.name, c.out)
		if b.String() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, b.String(), c.want)
		}
	}
}
