package gateway

import (
	"bytes"
	"testing"
)

func TestAcceptsJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                  false,
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"text/xml":                          false,
		"*/*":                               false,
		"text/xml, application/json":        false,
		"application/json, text/xml;q=0.9":  true,
		"garbage;;, application/json":       true,
		"application/x-amz-json-1.0":        false,
		"application/xml, application/json": false,
	} {
		if got := acceptsJSON(accept); got != want {
			t.Errorf("acceptsJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}

func TestRenderQueryJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		out  any
		want string
	}{
		{"DeleteQueue", emptyOutput{}, `{"DeleteQueueResponse":{"ResponseMetadata":{"RequestId":"r"}}}`},
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
		renderQueryJSON(&b, "r", c.name, c.out)
		if b.String() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, b.String(), c.want)
		}
	}
}
