package conformance

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/anysqs/anysqs/capabilities"
)

// Send, receive and delete; bodies, MD5s, message and system attributes, sizes.
func messageCases() []tc {
	std := []capabilities.ID{capabilities.QueueStandard}
	attrs := []capabilities.ID{capabilities.MessageAttrs}
	sys := []capabilities.ID{capabilities.MessageSystem}
	size := []capabilities.ID{capabilities.MessageMaxSize}
	return []tc{
		{Caps: std, Name: "empty-group-id-on-standard-rejected", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageGroupId: aws.String("")})
			h.WantErr(err, "SendMessage MessageGroupId=\"\" to a standard queue", "InvalidParameterValue")
			h.ReceiveNone(url, "after the rejected send")
		}},
		{Caps: sys, Name: "trace-header-becomes-aws-trace-header", Run: func(h *H) {
			url := h.Queue()
			trace := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("traced")},
				sqs.WithAPIOptions(smithyhttp.AddHeaderValue("X-Amzn-Trace-Id", trace)))
			h.Must(err, "SendMessage with an X-Amzn-Trace-Id header")
			if got := h.SysAttr(h.ReceiveOne(url, 0), "AWSTraceHeader"); got != trace {
				h.T.Fatalf("AWSTraceHeader = %q, want the request's X-Amzn-Trace-Id %q", got, trace)
			}
		}},
		{Caps: std, Name: "send-receive-delete", Run: func(h *H) {
			url := h.Queue()
			sent := h.Send(url, "hello")
			m := h.ReceiveOne(url, 0)
			if aws.ToString(m.Body) != "hello" || aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) {
				h.T.Fatalf("received %q id %s, want hello id %s", aws.ToString(m.Body), aws.ToString(m.MessageId), aws.ToString(sent.MessageId))
			}
			if aws.ToString(m.ReceiptHandle) == "" {
				h.T.Fatalf("no receipt handle")
			}
			h.Delete(url, m)
			h.Advance(31 * time.Second)
			h.ReceiveNone(url, "after delete and visibility expiry")
		}},
		{Caps: std, Name: "md5-of-body", Run: func(h *H) {
			url := h.Queue()
			body := "The quick brown fox \u00e9\u4e16\U0001F600"
			sent := h.Send(url, body)
			sum := md5.Sum([]byte(body))
			want := hex.EncodeToString(sum[:])
			if aws.ToString(sent.MD5OfMessageBody) != want {
				h.T.Fatalf("send MD5OfMessageBody = %s, want %s", aws.ToString(sent.MD5OfMessageBody), want)
			}
			m := h.ReceiveOne(url, 0)
			if aws.ToString(m.MD5OfBody) != want || aws.ToString(m.Body) != body {
				h.T.Fatalf("receive MD5OfBody = %s body %q, want %s %q", aws.ToString(m.MD5OfBody), aws.ToString(m.Body), want, body)
			}
		}},
		{Caps: std, Name: "allowed-body-characters", Run: func(h *H) {
			url := h.Queue()
			body := "tab\there\nnewline\rcr \u0020\ud7ff\ue000\ufffd\U00010000\U0010FFFF"
			h.Send(url, body)
			if got := aws.ToString(h.ReceiveOne(url, 0).Body); got != body {
				h.T.Fatalf("body round trip: got %q, want %q", got, body)
			}
		}},
		{Caps: std, Name: "invalid-body-characters", Run: func(h *H) {
			url := h.Queue()
			for _, body := range []string{"nul\x00", "bell\x07", "unit-sep\x1f"} {
				_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)})
				h.WantErr(err, fmt.Sprintf("SendMessage body %q", body), "InvalidMessageContents")
			}
			h.ReceiveNone(url, "after rejected sends")
		}},
		{Caps: std, Name: "empty-body-rejected", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("")})
			h.WantErr(err, "SendMessage with empty body", "MissingParameter", "InvalidParameterValue")
		}},
		{Caps: std, Name: "receive-max-number-range", Run: func(h *H) {
			url := h.Queue()
			for _, n := range []int32{11, -1} {
				_, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: n})
				h.WantErr(err, fmt.Sprintf("ReceiveMessage MaxNumberOfMessages=%d", n), "InvalidParameterValue")
			}
		}},
		{Caps: std, Name: "receive-up-to-ten", Run: func(h *H) {
			url := h.Queue()
			for i := 0; i < 15; i++ {
				h.Send(url, bodyN(i))
			}
			seen := map[string]bool{}
			for round := 0; round < 15 && len(seen) < 15; round++ {
				ms := h.Receive(url, 10, 0)
				if len(ms) > 10 {
					h.T.Fatalf("received %d > 10 messages", len(ms))
				}
				for _, m := range ms {
					if seen[aws.ToString(m.Body)] {
						h.T.Fatalf("%s received twice within its visibility timeout", aws.ToString(m.Body))
					}
					seen[aws.ToString(m.Body)] = true
				}
			}
			if len(seen) != 15 {
				h.T.Fatalf("received %d distinct messages, want 15", len(seen))
			}
		}},
		{Caps: std, Name: "receive-empty-queue", Run: func(h *H) {
			h.ReceiveNone(h.Queue(), "empty queue")
		}},
		{Caps: attrs, Name: "every-attribute-type-round-trip", Run: func(h *H) {
			url := h.Queue()
			in := map[string]types.MessageAttributeValue{
				"s":         {DataType: aws.String("String"), StringValue: aws.String("text \u00e9")},
				"n":         {DataType: aws.String("Number"), StringValue: aws.String("-12.5e3")},
				"b":         {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 0xff}},
				"s.custom":  {DataType: aws.String("String.json"), StringValue: aws.String(`{"a":1}`)},
				"n-custom":  {DataType: aws.String("Number.int"), StringValue: aws.String("42")},
				"b_custom":  {DataType: aws.String("Binary.gif"), BinaryValue: []byte("GIF89a")},
				"Long.Name": {DataType: aws.String("String"), StringValue: aws.String(strings.Repeat("v", 300))},
			}
			// The SDK checks MD5OfMessageAttributes on both the send and the receive.
			out, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("attrs"), MessageAttributes: in})
			h.Must(err, "SendMessage with attributes")
			if aws.ToString(out.MD5OfMessageAttributes) == "" {
				h.T.Fatalf("no MD5OfMessageAttributes on send")
			}
			m := h.ReceiveOne(url, 0)
			if aws.ToString(m.MD5OfMessageAttributes) != aws.ToString(out.MD5OfMessageAttributes) {
				h.T.Fatalf("receive MD5OfMessageAttributes %s != send %s", aws.ToString(m.MD5OfMessageAttributes), aws.ToString(out.MD5OfMessageAttributes))
			}
			if len(m.MessageAttributes) != len(in) {
				h.T.Fatalf("received %d attributes, want %d", len(m.MessageAttributes), len(in))
			}
			for k, v := range in {
				g := m.MessageAttributes[k]
				if aws.ToString(g.DataType) != aws.ToString(v.DataType) || aws.ToString(g.StringValue) != aws.ToString(v.StringValue) || !bytes.Equal(g.BinaryValue, v.BinaryValue) {
					h.T.Fatalf("attribute %s = %+v, want %+v", k, g, v)
				}
			}
		}},
		{Caps: attrs, Name: "attribute-selection-by-name", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("sel"),
				MessageAttributes: map[string]types.MessageAttributeValue{
					"keep.a": {DataType: aws.String("String"), StringValue: aws.String("1")},
					"keep.b": {DataType: aws.String("String"), StringValue: aws.String("2")},
					"drop":   {DataType: aws.String("String"), StringValue: aws.String("3")}}})
			h.Must(err, "SendMessage")
			out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MessageAttributeNames: []string{"keep.*"}})
			h.Must(err, "ReceiveMessage keep.*")
			if len(out.Messages) != 1 || len(out.Messages[0].MessageAttributes) != 2 || out.Messages[0].MessageAttributes["drop"].DataType != nil {
				h.T.Fatalf("ReceiveMessage(MessageAttributeNames=keep.*) returned %+v, want keep.a and keep.b only", out.Messages)
			}
		}},
		{Caps: attrs, Name: "attribute-selection-wildcards", Run: func(h *H) {
			url := h.Queue()
			for range 5 {
				_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("sel"),
					MessageAttributes: map[string]types.MessageAttributeValue{
						"Hello":   {DataType: aws.String("String"), StringValue: aws.String("1")},
						"Help.Me": {DataType: aws.String("String"), StringValue: aws.String("2")},
						"Other":   {DataType: aws.String("String"), StringValue: aws.String("3")}}})
				h.Must(err, "SendMessage")
			}
			// One message per selection, each received once. SQS: "All", ".*" and "*" return every attribute; "Hel.*" is the prefix "Hel".
			for _, tt := range []struct {
				names []string
				want  []string
			}{
				{[]string{"*"}, []string{"Hello", "Help.Me", "Other"}},
				{[]string{".*"}, []string{"Hello", "Help.Me", "Other"}},
				{[]string{"All"}, []string{"Hello", "Help.Me", "Other"}},
				{[]string{"Hel.*"}, []string{"Hello", "Help.Me"}},
				{[]string{"Help.*", "Other"}, []string{"Help.Me", "Other"}},
			} {
				out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
					MessageAttributeNames: tt.names})
				h.Must(err, "ReceiveMessage")
				if len(out.Messages) != 1 {
					h.T.Fatalf("ReceiveMessage(MessageAttributeNames=%v) returned %d messages, want 1", tt.names, len(out.Messages))
				}
				var got []string
				for k := range out.Messages[0].MessageAttributes {
					got = append(got, k)
				}
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					h.T.Errorf("ReceiveMessage(MessageAttributeNames=%v) returned attributes %v, want %v", tt.names, got, tt.want)
				}
			}
		}},
		{Caps: attrs, Name: "attribute-names-case-sensitive", Run: func(h *H) {
			// SQS: names are case-sensitive and unique among a message's attributes, so "k"
			// and "K" are two attributes.
			url := h.Queue()
			in := map[string]types.MessageAttributeValue{
				"k": {DataType: aws.String("String"), StringValue: aws.String("lower")},
				"K": {DataType: aws.String("String"), StringValue: aws.String("upper")}}
			out, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageAttributes: in})
			h.Must(err, "SendMessage with attributes k and K")
			m := h.ReceiveOne(url, 0)
			if len(m.MessageAttributes) != 2 || aws.ToString(m.MessageAttributes["k"].StringValue) != "lower" || aws.ToString(m.MessageAttributes["K"].StringValue) != "upper" ||
				aws.ToString(m.MD5OfMessageAttributes) != aws.ToString(out.MD5OfMessageAttributes) {
				h.T.Fatalf("received attributes %+v (MD5 %s), want k=lower and K=upper (MD5 %s)", m.MessageAttributes,
					aws.ToString(m.MD5OfMessageAttributes), aws.ToString(out.MD5OfMessageAttributes))
			}
		}},
		{Caps: attrs, Name: "non-ascii-attribute-names", Run: func(h *H) {
			url := h.Queue()
			in := map[string]types.MessageAttributeValue{"attr.1øßä": {DataType: aws.String("String"), StringValue: aws.String("v")}}
			out, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageAttributes: in})
			h.Must(err, "SendMessage with attribute attr.1øßä")
			m := h.ReceiveOne(url, 0)
			if aws.ToString(m.MessageAttributes["attr.1øßä"].StringValue) != "v" || aws.ToString(m.MD5OfMessageAttributes) != aws.ToString(out.MD5OfMessageAttributes) {
				h.T.Fatalf("received attributes %+v (MD5 %s), want attr.1øßä=v (MD5 %s)", m.MessageAttributes,
					aws.ToString(m.MD5OfMessageAttributes), aws.ToString(out.MD5OfMessageAttributes))
			}
		}},
		{Caps: attrs, Name: "no-attributes-unless-asked", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"),
				MessageAttributes: map[string]types.MessageAttributeValue{"a": {DataType: aws.String("String"), StringValue: aws.String("1")}}})
			h.Must(err, "SendMessage")
			out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
			h.Must(err, "ReceiveMessage")
			if len(out.Messages) != 1 || len(out.Messages[0].MessageAttributes) != 0 {
				h.T.Fatalf("ReceiveMessage without MessageAttributeNames returned attributes: %+v", out.Messages)
			}
		}},
		{Caps: attrs, Name: "too-many-attributes", Run: func(h *H) {
			url := h.Queue()
			in := map[string]types.MessageAttributeValue{}
			for i := 0; i < 11; i++ {
				in[fmt.Sprintf("a%d", i)] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("v")}
			}
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageAttributes: in})
			h.WantErr(err, "SendMessage with 11 attributes", "InvalidParameterValue")
		}},
		{Caps: attrs, Name: "invalid-attribute-names-and-values", Run: func(h *H) {
			url := h.Queue()
			bad := []map[string]types.MessageAttributeValue{
				{"AWS.reserved": {DataType: aws.String("String"), StringValue: aws.String("v")}},
				{"amazon.reserved": {DataType: aws.String("String"), StringValue: aws.String("v")}},
				{".leading": {DataType: aws.String("String"), StringValue: aws.String("v")}},
				{"double..dot": {DataType: aws.String("String"), StringValue: aws.String("v")}},
				{"sp ace": {DataType: aws.String("String"), StringValue: aws.String("v")}},
				{"num": {DataType: aws.String("Number"), StringValue: aws.String("twelve")}},
				{"typ": {DataType: aws.String("Text"), StringValue: aws.String("v")}},
				{"nov": {DataType: aws.String("String")}},
			}
			for _, in := range bad {
				_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageAttributes: in})
				for k := range in {
					h.WantErr(err, "SendMessage with attribute "+k, "InvalidParameterValue", "InvalidParameterCombination", "MissingParameter")
				}
			}
			h.ReceiveNone(url, "after rejected sends")
		}},
		{Caps: sys, Name: "system-attributes-on-receive", Run: func(h *H) {
			url := h.Queue()
			h.Advance(time.Hour) // SentTimestamp must follow the gateway's clock
			sentAt := h.Now()
			h.Send(url, "sys")
			h.Advance(5 * time.Second)
			m := h.ReceiveOne(url, 10)
			h.wantMillisNear(h.SysAttr(m, "SentTimestamp"), "SentTimestamp", sentAt)
			h.wantMillisNear(h.SysAttr(m, "ApproximateFirstReceiveTimestamp"), "ApproximateFirstReceiveTimestamp", sentAt.Add(5*time.Second))
			if h.ReceiveCount(m) != 1 {
				h.T.Fatalf("ApproximateReceiveCount = %d, want 1", h.ReceiveCount(m))
			}
			if h.SysAttr(m, "SenderId") == "" {
				h.T.Fatalf("empty SenderId")
			}
			h.Advance(11 * time.Second)
			m2 := h.ReceiveOne(url, 10)
			if h.ReceiveCount(m2) != 2 {
				h.T.Fatalf("second ApproximateReceiveCount = %d, want 2", h.ReceiveCount(m2))
			}
			if h.SysAttr(m2, "ApproximateFirstReceiveTimestamp") != h.SysAttr(m, "ApproximateFirstReceiveTimestamp") {
				h.T.Fatalf("ApproximateFirstReceiveTimestamp changed on second receive")
			}
		}},
		{Caps: sys, Name: "selected-system-attributes-only", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "x")
			out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})
			h.Must(err, "ReceiveMessage")
			if len(out.Messages) != 1 || len(out.Messages[0].Attributes) != 1 || out.Messages[0].Attributes["SentTimestamp"] == "" {
				h.T.Fatalf("asked for SentTimestamp only, got %+v", out.Messages)
			}
		}},
		{Caps: sys, Name: "aws-trace-header", Run: func(h *H) {
			url := h.Queue()
			trace := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
			// The SDK checks MD5OfMessageSystemAttributes.
			out, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("traced"),
				MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
					"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(trace)}}})
			h.Must(err, "SendMessage with AWSTraceHeader")
			if aws.ToString(out.MD5OfMessageSystemAttributes) == "" {
				h.T.Fatalf("no MD5OfMessageSystemAttributes")
			}
			if got := h.SysAttr(h.ReceiveOne(url, 0), "AWSTraceHeader"); got != trace {
				h.T.Fatalf("AWSTraceHeader = %q, want %q", got, trace)
			}
		}},
		{Caps: size, Name: "body-over-queue-maximum", Run: func(h *H) {
			url := h.Queue("MaximumMessageSize", "1024")
			h.Send(url, strings.Repeat("a", 1024))
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(strings.Repeat("a", 1025))})
			h.WantErr(err, "SendMessage of 1025 bytes to a 1024-byte queue", "InvalidParameterValue")
		}},
		{Caps: size, Name: "attributes-count-toward-size", Run: func(h *H) {
			url := h.Queue("MaximumMessageSize", "1024")
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(strings.Repeat("a", 1000)),
				MessageAttributes: map[string]types.MessageAttributeValue{"big": {DataType: aws.String("String"), StringValue: aws.String(strings.Repeat("v", 100))}}})
			h.WantErr(err, "SendMessage body+attributes over MaximumMessageSize", "InvalidParameterValue")
		}},
		{Caps: size, Name: "one-mebibyte-message", Run: func(h *H) {
			url := h.Queue("MaximumMessageSize", "1048576")
			body := strings.Repeat("0123456789abcdef", 1048576/16)
			h.Send(url, body)
			m := h.ReceiveOne(url, 0)
			if aws.ToString(m.Body) != body {
				h.T.Fatalf("1 MiB body came back with %d bytes", len(aws.ToString(m.Body)))
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			// The largest message the backend declares round-trips; one byte more fails.
			n := h.maxMessageBytes()
			url := h.Queue("MaximumMessageSize", strconv.Itoa(n))
			body := strings.Repeat("x", n)
			h.Send(url, body)
			if m := h.ReceiveOne(url, 0); aws.ToString(m.Body) != body {
				h.T.Fatalf("a %d-byte body came back with %d bytes", n, len(aws.ToString(m.Body)))
			}
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body + "x")})
			h.WantErr(err, fmt.Sprintf("SendMessage of %d bytes, beyond the declared max_bytes", n+1), "InvalidParameterValue")
		}},
		{Caps: []capabilities.ID{capabilities.ReceiptStale}, Name: "invalid-receipt-handle", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String("not-a-handle")})
			h.WantErr(err, "DeleteMessage with a garbage handle", "ReceiptHandleIsInvalid")
		}},
		{Caps: []capabilities.ID{capabilities.ReceiptStale}, Name: "delete-twice-succeeds", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "x")
			m := h.ReceiveOne(url, 0)
			h.Delete(url, m)
			h.Delete(url, m) // SQS: deleting an already deleted message succeeds
		}},
		{Caps: []capabilities.ID{capabilities.ReceiptStale}, Name: "stale-handle-after-redelivery", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "x")
			old := h.ReceiveOne(url, 5)
			h.Advance(6 * time.Second)
			cur := h.ReceiveOne(url, 30)
			if aws.ToString(cur.ReceiptHandle) == aws.ToString(old.ReceiptHandle) {
				h.T.Fatalf("second receive reused the receipt handle")
			}
			h.Delete(url, old) // succeeds (standard queue); must not delete the redelivered message
			_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: cur.ReceiptHandle})
			h.Must(err, "DeleteMessage with the current handle")
			h.Advance(31 * time.Second)
			h.ReceiveNone(url, "after deleting with the current handle")
		}},
		{Caps: []capabilities.ID{capabilities.ReceiptStale}, Name: "handle-of-other-queue", Run: func(h *H) {
			a, b := h.Queue(), h.Queue()
			h.Send(a, "x")
			m := h.ReceiveOne(a, 0)
			_, err := h.SQS.DeleteMessage(h.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(b), ReceiptHandle: m.ReceiptHandle})
			if err != nil {
				h.WantErr(err, "DeleteMessage with another queue's handle", "ReceiptHandleIsInvalid")
			}
			h.Delete(a, m) // whatever b said, a's message is untouched and still deletable
			h.Advance(31 * time.Second)
			h.ReceiveNone(a, "after delete")
		}},
	}
}

// wantMillisNear checks an epoch-milliseconds attribute is within 1 s of want.
func (h *H) wantMillisNear(s, name string, want time.Time) {
	h.T.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		h.T.Fatalf("%s = %q: not epoch milliseconds", name, s)
	}
	if d := time.UnixMilli(n).Sub(want); d < -time.Second || d > time.Second {
		h.T.Fatalf("%s = %s (%v), want about %v (the gateway's clock)", name, s, time.UnixMilli(n).UTC(), want.UTC())
	}
}
