package conformance

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestWireForms sends requests in the forms older SDKs use and that no current client
// here produces: Query requests as GET query strings and to the queue URL itself, and the
// error shapes of both protocols as SDKs parse them.
func TestWireForms(t *testing.T) {
	t.Parallel()
	takeCPUSlot(t)
	h := newHarness(t, sqliteBackend())
	qurl := h.Queue()

	do := func(req *http.Request) (int, http.Header, string) {
		t.Helper()
		signRequest(t, req, testAccessKey, testSecretKey, time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	form := func(target string, v url.Values) *http.Request {
		req, _ := http.NewRequestWithContext(h.Ctx, http.MethodPost, target, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req
	}

	// GET with the parameters in the query string, addressed to the queue URL.
	get, _ := http.NewRequestWithContext(h.Ctx, http.MethodGet, qurl+"?"+url.Values{
		"Action": {"SendMessage"}, "Version": {"2012-11-05"}, "MessageBody": {"via GET"}}.Encode(), nil)
	code, _, body := do(get)
	var sent struct {
		Result struct{ MessageId, MD5OfMessageBody string } `xml:"SendMessageResult"`
		Meta   struct{ RequestId string }                   `xml:"ResponseMetadata"`
	}
	if err := xml.Unmarshal([]byte(body), &sent); code != 200 || err != nil {
		t.Fatalf("GET SendMessage: %d %v\n%s", code, err, body)
	}
	sum := md5.Sum([]byte("via GET"))
	if sent.Result.MessageId == "" || sent.Result.MD5OfMessageBody != hex.EncodeToString(sum[:]) || sent.Meta.RequestId == "" {
		t.Fatalf("GET SendMessage response %+v\n%s", sent, body)
	}
	if !strings.Contains(body, `xmlns="http://queue.amazonaws.com/doc/2012-11-05/"`) {
		t.Fatalf("Query response outside the 2012-11-05 namespace:\n%s", body)
	}

	// POST to the queue URL, no QueueUrl parameter.
	code, _, body = do(form(qurl, url.Values{"Action": {"ReceiveMessage"}, "Version": {"2012-11-05"}}))
	if code != 200 || !strings.Contains(body, "<Body>via GET</Body>") {
		t.Fatalf("POST ReceiveMessage to the queue URL: %d\n%s", code, body)
	}

	// Query error shape.
	code, _, body = do(form(h.URL+"/", url.Values{"Action": {"GetQueueUrl"}, "Version": {"2012-11-05"}, "QueueName": {h.Name("missing")}}))
	var qerr struct {
		Error     struct{ Type, Code, Message string }
		RequestId string
	}
	if err := xml.Unmarshal([]byte(body), &qerr); err != nil || code != 400 ||
		qerr.Error.Code != "AWS.SimpleQueueService.NonExistentQueue" || qerr.Error.Type != "Sender" || qerr.RequestId == "" {
		t.Fatalf("Query GetQueueUrl of a missing queue: %d %v %+v\n%s", code, err, qerr, body)
	}

	// JSON error shape, with the header query-compatible SDKs read.
	req, _ := http.NewRequestWithContext(h.Ctx, http.MethodPost, h.URL+"/", strings.NewReader(`{"QueueName":"`+h.Name("missing")+`"}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.GetQueueUrl")
	code, hdr, body := do(req)
	if code != 400 || !strings.Contains(body, `"__type":"com.amazonaws.sqs#QueueDoesNotExist"`) ||
		hdr.Get("x-amzn-query-error") != "AWS.SimpleQueueService.NonExistentQueue;Sender" {
		t.Fatalf("JSON GetQueueUrl of a missing queue: %d %q\n%s", code, hdr.Get("x-amzn-query-error"), body)
	}

	// An empty receive is a self-closed result.
	code, _, body = do(form(qurl, url.Values{"Action": {"ReceiveMessage"}, "Version": {"2012-11-05"}}))
	if code != 200 || !strings.Contains(body, "<ReceiveMessageResult/>") {
		t.Fatalf("empty Query ReceiveMessage: %d, want <ReceiveMessageResult/>\n%s", code, body)
	}

	// At a queue URL: no Action is 404 <UnknownOperationException/>, XML even when JSON is
	// accepted; an action that addresses no queue is InvalidAction.
	noAction := form(qurl, url.Values{"Version": {"2012-11-05"}})
	noAction.Header.Set("Accept", "application/json")
	if code, _, body = do(noAction); code != 404 || strings.TrimSpace(body) != "<UnknownOperationException/>" {
		t.Fatalf("Query request to a queue URL without Action: %d\n%s", code, body)
	}
	for _, action := range []string{"CreateQueue", "ListQueues"} {
		code, _, body = do(form(qurl, url.Values{"Action": {action}, "Version": {"2012-11-05"}, "QueueName": {h.Name("atqueue")}}))
		if err := xml.Unmarshal([]byte(body), &qerr); err != nil || code != 400 || qerr.Error.Code != "InvalidAction" ||
			qerr.Error.Message != "The action "+action+" is not valid for this endpoint." {
			t.Fatalf("Query %s to a queue URL: %d %+v\n%s", action, code, qerr, body)
		}
	}

	// A missing queue over Query, in SQS's Query wording.
	code, _, body = do(form(h.URL+"/"+testAccount+"/"+h.Name("gone"), url.Values{"Action": {"SendMessage"}, "Version": {"2012-11-05"}, "MessageBody": {"x"}}))
	if err := xml.Unmarshal([]byte(body), &qerr); err != nil || code != 400 ||
		qerr.Error.Message != "The specified queue does not exist for this wsdl version." {
		t.Fatalf("Query SendMessage to a missing queue: %d %+v\n%s", code, qerr, body)
	}

	// An unknown action is a client error, not a 5xx.
	code, _, body = do(form(h.URL+"/", url.Values{"Action": {"NoSuchAction"}, "Version": {"2012-11-05"}}))
	if code != 400 || !strings.Contains(body, "InvalidAction") {
		t.Fatalf("unknown Query action: %d\n%s", code, body)
	}
}
