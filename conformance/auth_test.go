package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

// signRequest signs req with aws-sdk-go-v2's SigV4 signer, as an SDK would.
func signRequest(t *testing.T, req *http.Request, key, secret string, at time.Time) {
	t.Helper()
	var body []byte
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(rc)
	}
	sum := sha256.Sum256(body)
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret},
		req, hex.EncodeToString(sum[:]), "sqs", testRegion, at)
	if err != nil {
		t.Fatal(err)
	}
}

// TestAuthentication: with credentials configured (as in every case of the suite, where
// each SDK's requests pass verification), a request that is unsigned, signed by an
// unknown key or with the wrong secret, too old, or altered after signing is refused with
// the error SQS gives, in both protocols, and changes nothing.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	takeCPUSlot(t)
	h := newHarness(t, sqliteBackend())
	qurl := h.Queue()
	send := func(body string) *http.Request {
		v := url.Values{"Action": {"SendMessage"}, "Version": {"2012-11-05"}, "QueueUrl": {qurl}, "MessageBody": {body}}
		req, _ := http.NewRequestWithContext(h.Ctx, http.MethodPost, h.URL+"/", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req
	}
	do := func(req *http.Request) (int, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tampered := send("original")
	signRequest(t, tampered, testAccessKey, testSecretKey, time.Now())
	v := url.Values{"Action": {"SendMessage"}, "Version": {"2012-11-05"}, "QueueUrl": {qurl}, "MessageBody": {"altered"}}
	tampered.Body, tampered.ContentLength = io.NopCloser(strings.NewReader(v.Encode())), int64(len(v.Encode()))

	for _, c := range []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
	}{
		{"unsigned", func() *http.Request { return send("x") }, 403, "MissingAuthenticationToken"},
		{"unknown key", func() *http.Request {
			r := send("x")
			signRequest(t, r, "AKIDUNKNOWN", testSecretKey, time.Now())
			return r
		}, 403, "InvalidClientTokenId"},
		{"wrong secret", func() *http.Request {
			r := send("x")
			signRequest(t, r, testAccessKey, "not-the-secret", time.Now())
			return r
		}, 403, "SignatureDoesNotMatch"},
		{"signed 20 minutes ago", func() *http.Request {
			r := send("x")
			signRequest(t, r, testAccessKey, testSecretKey, time.Now().Add(-20*time.Minute))
			return r
		}, 400, "RequestExpired"},
		{"body altered after signing", func() *http.Request { return tampered }, 403, "SignatureDoesNotMatch"},
	} {
		status, body := do(c.req())
		if status != c.status || !strings.Contains(body, "<Code>"+c.code+"</Code>") || !strings.Contains(body, "<Type>Sender</Type>") {
			t.Errorf("%s: %d\n%s\nwant %d %s", c.name, status, body, c.status, c.code)
		}
	}
	if n := h.Attr(qurl, "ApproximateNumberOfMessages"); n != "0" {
		t.Fatalf("refused requests sent %s messages", n)
	}

	// Through aws-sdk-go-v2 over JSON: the SDK sees the same codes.
	for key, want := range map[[2]string]string{
		{testAccessKey, "not-the-secret"}: "SignatureDoesNotMatch",
		{"AKIDUNKNOWN", testSecretKey}:    "InvalidClientTokenId",
	} {
		c := sqs.New(h.newClient(protocolJSON).Options(), func(o *sqs.Options) {
			o.Credentials = credentials.NewStaticCredentialsProvider(key[0], key[1], "")
		})
		_, err := c.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qurl), MessageBody: aws.String("x")})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != want {
			t.Errorf("SDK with key %s: %v, want %s", key[0], err, want)
		}
	}
	c := sqs.New(h.newClient(protocolJSON).Options(), func(o *sqs.Options) { o.Credentials = aws.AnonymousCredentials{} })
	_, err := c.ListQueues(h.Ctx, &sqs.ListQueuesInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "MissingAuthenticationToken" {
		t.Errorf("SDK without credentials: %v, want MissingAuthenticationToken", err)
	}
}

// TestPresignedURLs: query-string SigV4 as aws-sdk-go-v2's presigner produces it works
// for the Query protocol (GET to the queue URL) and JSON (POST); a presigned URL that is
// expired, older than the 15 minutes SQS honours, or altered is refused, and changes
// nothing.
func TestPresignedURLs(t *testing.T) {
	t.Parallel()
	takeCPUSlot(t)
	h := newHarness(t, sqliteBackend())
	qurl := h.Queue()
	creds := aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey}
	presign := func(method, target string, body string, hdr http.Header, expires int, at time.Time) *http.Request {
		t.Helper()
		u, _ := url.Parse(target)
		q := u.Query()
		q.Set("X-Amz-Expires", strconv.Itoa(expires))
		u.RawQuery = q.Encode()
		req, _ := http.NewRequestWithContext(h.Ctx, method, u.String(), strings.NewReader(body))
		maps.Copy(req.Header, hdr)
		sum := sha256.Sum256([]byte(body))
		signed, signedHdr, err := v4.NewSigner().PresignHTTP(h.Ctx, creds, req, hex.EncodeToString(sum[:]), "sqs", testRegion, at)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := http.NewRequestWithContext(h.Ctx, method, signed, strings.NewReader(body))
		maps.Copy(out.Header, signedHdr)
		maps.Copy(out.Header, hdr)
		return out
	}
	do := func(req *http.Request) (int, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	sendURL := func(body string) string {
		return qurl + "?" + url.Values{"Action": {"SendMessage"}, "Version": {"2012-11-05"}, "MessageBody": {body}}.Encode()
	}

	if status, body := do(presign(http.MethodGet, sendURL("presigned GET"), "", nil, 300, time.Now())); status != 200 || !strings.Contains(body, "<MessageId>") {
		t.Fatalf("presigned Query GET: %d\n%s", status, body)
	}
	jsonHdr := http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Target": {"AmazonSQS.SendMessage"}}
	jsonBody := `{"QueueUrl":"` + qurl + `","MessageBody":"presigned POST"}`
	if status, body := do(presign(http.MethodPost, h.URL+"/", jsonBody, jsonHdr, 300, time.Now())); status != 200 || !strings.Contains(body, `"MessageId"`) {
		t.Fatalf("presigned JSON POST: %d\n%s", status, body)
	}
	if n := h.Attr(qurl, "ApproximateNumberOfMessages"); n != "2" {
		t.Fatalf("after two presigned sends the queue holds %s messages, want 2", n)
	}

	tampered := presign(http.MethodGet, sendURL("original"), "", nil, 300, time.Now())
	tq := tampered.URL.Query()
	tq.Set("MessageBody", "altered")
	tampered.URL.RawQuery = tq.Encode()
	for _, c := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"expired (60 s, signed 2 minutes ago)", presign(http.MethodGet, sendURL("x"), "", nil, 60, time.Now().Add(-2*time.Minute)), 400, "RequestExpired"},
		{"an hour's URL signed 16 minutes ago", presign(http.MethodGet, sendURL("x"), "", nil, 3600, time.Now().Add(-16*time.Minute)), 400, "RequestExpired"},
		{"signed 20 minutes in the future", presign(http.MethodGet, sendURL("x"), "", nil, 300, time.Now().Add(20*time.Minute)), 400, "RequestExpired"},
		{"parameter altered after signing", tampered, 403, "SignatureDoesNotMatch"},
		{"signed with the wrong secret", func() *http.Request {
			c := creds
			creds.SecretAccessKey = "not-the-secret"
			defer func() { creds = c }()
			return presign(http.MethodGet, sendURL("x"), "", nil, 300, time.Now())
		}(), 403, "SignatureDoesNotMatch"},
	} {
		status, body := do(c.req)
		if status != c.status || !strings.Contains(body, "<Code>"+c.code+"</Code>") {
			t.Errorf("%s: %d\n%s\nwant %d %s", c.name, status, body, c.status, c.code)
		}
	}
	if n := h.Attr(qurl, "ApproximateNumberOfMessages"); n != "2" {
		t.Fatalf("refused presigned requests changed the queue: %s messages, want 2", n)
	}
}
