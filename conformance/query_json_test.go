package conformance

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestQueryAcceptingJSON sends Query requests that accept application/json, as API
// Gateway's AWS integrations do. SQS answers them in its legacy JSON shape; the expected
// key sets and their order below are those of responses recorded from SQS by its users
// (SendMessage, ReceiveMessage, ListQueues); errors stay XML.
func TestQueryAcceptingJSON(t *testing.T) {
	t.Parallel()
	takeCPUSlot(t)
	h := newHarness(t, sqliteBackend())
	qurl := h.Queue()

	do := func(target string, v url.Values) (int, http.Header, string) {
		t.Helper()
		v.Set("Version", "2012-11-05")
		req, _ := http.NewRequestWithContext(h.Ctx, http.MethodPost, target, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		signRequest(t, req, testAccessKey, testSecretKey, time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", v.Get("Action"), err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	// keys returns the member names of the object at path, in the order they appear.
	keys := func(body string, path ...string) []string {
		t.Helper()
		if !json.Valid([]byte(body)) {
			t.Fatalf("not JSON:\n%s", body)
		}
		raw := json.RawMessage(body)
		for _, p := range path {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("at %s: %v\n%s", p, err, body)
			}
			raw = m[p]
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		var out []string
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("%v is not an object in\n%s", path, body)
		}
		for dec.More() {
			tok, _ := dec.Token()
			out = append(out, tok.(string))
			var skip json.RawMessage
			_ = dec.Decode(&skip)
		}
		return out
	}
	want := func(what string, got []string, names ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Fatalf("%s: members %v, want %v", what, got, names)
		}
	}
	uuidRE := regexp.MustCompile(`^"[0-9a-f-]{36}"$`)

	// An empty receive: "messages": null.
	code, hdr, body := do(qurl, url.Values{"Action": {"ReceiveMessage"}})
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") ||
		!strings.Contains(body, `"ReceiveMessageResult":{"messages":null}`) {
		t.Fatalf("empty ReceiveMessage accepting JSON: %d %q\n%s", code, hdr.Get("Content-Type"), body)
	}
	want("ReceiveMessageResponse", keys(body, "ReceiveMessageResponse"), "ReceiveMessageResult", "ResponseMetadata")

	code, _, body = do(qurl, url.Values{"Action": {"SendMessage"}, "MessageBody": {`<a & "b">`}})
	if code != 200 {
		t.Fatalf("SendMessage accepting JSON: %d\n%s", code, body)
	}
	want("SendMessageResponse", keys(body, "SendMessageResponse"), "ResponseMetadata", "SendMessageResult")
	want("SendMessageResult", keys(body, "SendMessageResponse", "SendMessageResult"),
		"MD5OfMessageAttributes", "MD5OfMessageBody", "MD5OfMessageSystemAttributes", "MessageId", "SequenceNumber")
	var sent struct {
		SendMessageResponse struct {
			ResponseMetadata  struct{ RequestId json.RawMessage }
			SendMessageResult struct {
				MD5OfMessageAttributes, MD5OfMessageSystemAttributes, SequenceNumber *string
				MD5OfMessageBody, MessageId                                          string
			}
		}
	}
	_ = json.Unmarshal([]byte(body), &sent)
	res := sent.SendMessageResponse.SendMessageResult
	sum := md5.Sum([]byte(`<a & "b">`))
	if res.MD5OfMessageBody != hex.EncodeToString(sum[:]) || res.MessageId == "" || res.MD5OfMessageAttributes != nil ||
		res.SequenceNumber != nil || !uuidRE.Match(sent.SendMessageResponse.ResponseMetadata.RequestId) {
		t.Fatalf("SendMessage result %+v\n%s", sent, body)
	}

	_, _, _ = do(qurl, url.Values{"Action": {"SendMessage"}, "MessageBody": {"with attrs"},
		"MessageAttribute.1.Name": {"colour"}, "MessageAttribute.1.Value.DataType": {"String"},
		"MessageAttribute.1.Value.StringValue": {"blue"}})
	code, _, body = do(qurl, url.Values{"Action": {"ReceiveMessage"}, "MaxNumberOfMessages": {"10"},
		"AttributeName.1": {"All"}, "MessageAttributeName.1": {"All"}})
	var got struct {
		ReceiveMessageResponse struct {
			ReceiveMessageResult struct {
				Messages []struct {
					Attributes        map[string]string
					Body              string
					MD5OfBody         string
					MessageAttributes map[string]struct{ DataType, StringValue string }
					ReceiptHandle     string
				} `json:"messages"`
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || len(got.ReceiveMessageResponse.ReceiveMessageResult.Messages) != 2 {
		t.Fatalf("ReceiveMessage accepting JSON: %d %v\n%s", code, err, body)
	}
	msgs := got.ReceiveMessageResponse.ReceiveMessageResult.Messages
	var raw struct {
		ReceiveMessageResponse struct {
			ReceiveMessageResult struct {
				Messages []json.RawMessage `json:"messages"`
			}
		}
	}
	_ = json.Unmarshal([]byte(body), &raw)
	want("a received message", keys(string(raw.ReceiveMessageResponse.ReceiveMessageResult.Messages[0])),
		"Attributes", "Body", "MD5OfBody", "MD5OfMessageAttributes", "MessageAttributes", "MessageId", "ReceiptHandle")
	if msgs[0].Body != `<a & "b">` || msgs[0].MD5OfBody != hex.EncodeToString(sum[:]) || msgs[0].Attributes["SentTimestamp"] == "" ||
		msgs[1].MessageAttributes["colour"].StringValue != "blue" || msgs[1].MessageAttributes["colour"].DataType != "String" {
		t.Fatalf("received messages %+v\n%s", msgs, body)
	}

	code, _, body = do(h.URL+"/", url.Values{"Action": {"ListQueues"}, "QueueNamePrefix": {qurl[strings.LastIndex(qurl, "/")+1:]}})
	if code != 200 {
		t.Fatalf("ListQueues accepting JSON: %d\n%s", code, body)
	}
	want("ListQueuesResult", keys(body, "ListQueuesResponse", "ListQueuesResult"), "NextExclusiveStartQueueName", "NextToken", "queueUrls")
	if !strings.Contains(body, `"queueUrls":["`+qurl+`"]`) {
		t.Fatalf("ListQueues accepting JSON does not list %s\n%s", qurl, body)
	}

	// A result-less action has ResponseMetadata only.
	code, _, body = do(qurl, url.Values{"Action": {"DeleteMessage"}, "ReceiptHandle": {msgs[0].ReceiptHandle}})
	if code != 200 {
		t.Fatalf("DeleteMessage accepting JSON: %d\n%s", code, body)
	}
	want("DeleteMessageResponse", keys(body, "DeleteMessageResponse"), "ResponseMetadata")

	// Batch results: the lists in lower camel case.
	code, _, body = do(qurl, url.Values{"Action": {"DeleteMessageBatch"},
		"DeleteMessageBatchRequestEntry.1.Id": {"a"}, "DeleteMessageBatchRequestEntry.1.ReceiptHandle": {msgs[1].ReceiptHandle},
		"DeleteMessageBatchRequestEntry.2.Id": {"b"}, "DeleteMessageBatchRequestEntry.2.ReceiptHandle": {"not-a-handle"}})
	if code != 200 || !strings.Contains(body, `"successful":[{"Id":"a"}]`) || !strings.Contains(body, `"failed":[{"Code":"ReceiptHandleIsInvalid","Id":"b",`) {
		t.Fatalf("DeleteMessageBatch accepting JSON: %d\n%s", code, body)
	}

	// Errors stay XML.
	code, _, body = do(h.URL+"/", url.Values{"Action": {"GetQueueUrl"}, "QueueName": {h.Name("missing")}})
	var qerr struct{ Error struct{ Code string } }
	if err := xml.Unmarshal([]byte(body), &qerr); code != 400 || err != nil || qerr.Error.Code != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Fatalf("an error accepting JSON: %d %v\n%s", code, err, body)
	}
}
