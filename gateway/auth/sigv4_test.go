package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// TestVerifierEdges: requests signed by aws-sdk-go-v2's signer pass; the ways a signature
// can be incomplete or not match are told apart with SQS's codes.
func TestVerifierEdges(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	v := NewVerifier(map[string]string{"AKID": "secret"})
	v.now = func() time.Time { return now }
	const body = `{"QueueName":"q"}`
	signed := func(target string, at time.Time, edit func(*http.Request)) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-amz-json-1.0")
		r.Header.Set("X-Amz-Target", "AmazonSQS.GetQueueUrl")
		r.Header.Set("X-Custom", "  two   spaces  ")
		sum := sha256.Sum256([]byte(body))
		if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"},
			r, hex.EncodeToString(sum[:]), "sqs", "eu-central-1", at); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(r)
		}
		return r
	}
	code := func(err error) sqserr.Code {
		var e *sqserr.Error
		if err == nil {
			return ""
		}
		if !errors.As(err, &e) {
			t.Fatalf("not an SQS error: %v", err)
		}
		return e.Code
	}
	for _, c := range []struct {
		name string
		req  *http.Request
		body string
		want sqserr.Code
	}{
		{"signed", signed("http://gw:9324/", now, nil), body, ""},
		{"path and query", signed("http://gw:9324/000000000000/q%20x?b=2&a=1&a=0&e=%2F%20", now, nil), body, ""},
		{"14 minutes fast", signed("http://gw/", now.Add(14*time.Minute), nil), body, ""},
		{"16 minutes fast", signed("http://gw/", now.Add(16*time.Minute), nil), body, sqserr.RequestExpired},
		{"other body", signed("http://gw/", now, nil), `{"QueueName":"r"}`, sqserr.SignatureDoesNotMatch},
		{"other host", signed("http://gw/", now, func(r *http.Request) { r.Host = "evil" }), body, sqserr.SignatureDoesNotMatch},
		{"signed header changed", signed("http://gw/", now, func(r *http.Request) { r.Header.Set("X-Amz-Target", "AmazonSQS.DeleteQueue") }), body, sqserr.SignatureDoesNotMatch},
		{"payload hash header lies", signed("http://gw/", now, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64)) }), body, sqserr.SignatureDoesNotMatch},
		{"not sigv4", signed("http://gw/", now, func(r *http.Request) { r.Header.Set("Authorization", "AWS AKID:abc") }), body, sqserr.IncompleteSignature},
		{"no signature field", signed("http://gw/", now, func(r *http.Request) {
			a := r.Header.Get("Authorization")
			r.Header.Set("Authorization", a[:strings.Index(a, ", Signature=")])
		}), body, sqserr.IncompleteSignature},
		{"host not signed", signed("http://gw/", now, func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SignedHeaders=", "SignedHeaders=x-amz-date;", 1))
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "host;", "", 1))
		}), body, sqserr.IncompleteSignature},
		{"other service", signed("http://gw/", now, func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/sqs/", "/sns/", 1))
		}), body, sqserr.SignatureDoesNotMatch},
		{"no date", signed("http://gw/", now, func(r *http.Request) { r.Header.Del("X-Amz-Date") }), body, sqserr.IncompleteSignature},
		{"presigned", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "http://gw/?Action=ListQueues&X-Amz-Signature=abc", nil)
			return r
		}(), "", sqserr.IncompleteSignature},
		{"unsigned", func() *http.Request { r, _ := http.NewRequest(http.MethodPost, "http://gw/", nil); return r }(), "", sqserr.MissingAuthenticationToken},
	} {
		if got := code(v.Verify(c.req, []byte(c.body))); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if (*Verifier)(nil).Verify(&http.Request{Header: http.Header{}}, nil) != nil || NewVerifier(nil) != nil {
		t.Fatal("without credentials every request must pass")
	}
}

// TestPresignedExpiry: a presigned URL works until X-Amz-Expires (at most 15 minutes)
// after its date and is refused when replayed later; malformed presigning parameters are
// IncompleteSignature.
func TestPresignedExpiry(t *testing.T) {
	signedAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := signedAt
	v := NewVerifier(map[string]string{"AKID": "secret"})
	v.now = func() time.Time { return now }
	emptySum := sha256.Sum256(nil)
	presign := func(expires string, extra string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "http://gw/000000000000/q?Action=ReceiveMessage&X-Amz-Expires="+expires+extra, nil)
		u, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"},
			r, hex.EncodeToString(emptySum[:]), "sqs", "us-east-1", signedAt)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := http.NewRequest(http.MethodGet, u, nil)
		return out
	}
	check := func(what string, r *http.Request, want sqserr.Code) {
		t.Helper()
		var e *sqserr.Error
		err := v.Verify(r, nil)
		if got := sqserr.Code(""); err != nil && errors.As(err, &e) {
			got = e.Code
			if got != want {
				t.Errorf("%s: %v, want %q", what, err, want)
			}
		} else if err != nil || want != "" {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	url := presign("60", "")
	now = signedAt.Add(59 * time.Second)
	check("used within its 60 s", url, "")
	now = signedAt.Add(61 * time.Second)
	check("replayed after its 60 s", url, sqserr.RequestExpired)
	long := presign("3600", "")
	now = signedAt.Add(14 * time.Minute)
	check("an hour's URL after 14 minutes", long, "")
	now = signedAt.Add(16 * time.Minute)
	check("an hour's URL after 16 minutes", long, sqserr.RequestExpired)
	now = signedAt
	check("X-Amz-Expires=0", presign("0", ""), sqserr.IncompleteSignature)
	check("X-Amz-Expires over a week", presign("604801", ""), sqserr.IncompleteSignature)
	check("session token", presign("60", "&X-Amz-Security-Token=tok"), sqserr.InvalidClientTokenID)
	dup := presign("60", "")
	dup.URL.RawQuery += "&X-Amz-Signature=00"
	check("two signatures", dup, sqserr.IncompleteSignature)
}

// FuzzVerify: whatever the Authorization header, date and path (and presigning
// parameters in its query), verification answers
// with an SQS error or accepts, and never panics.
func FuzzVerify(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
		"20261130T120000Z", "/000000000000/q?a=b&c", "host;x-amz-date")
	f.Add("AWS4-HMAC-SHA256 Credential=////, SignedHeaders=;;, Signature=zz", "2026", "/%zz", "")
	f.Add("AWS4-HMAC-SHA256 ,,,=", "", "/", "HOST")
	// An empty Authorization header sends a target with X-Amz-* parameters down the
	// presigned path.
	f.Add("", "", "/000000000000/q?Action=ReceiveMessage&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20261130%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20261130T120000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00", "")
	f.Add("", "", "/?X-Amz-Credential=////&X-Amz-Expires=-1&X-Amz-Signature=", "")
	v := NewVerifier(map[string]string{"AKID": "secret"})
	v.now = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	f.Fuzz(func(t *testing.T, auth, date, target, extra string) {
		r, err := http.NewRequest(http.MethodPost, "http://gw"+target, strings.NewReader("{}"))
		if err != nil {
			return
		}
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Amz-Date", date)
		r.Header.Set("X-Extra", extra)
		if err := v.Verify(r, []byte("{}")); err != nil {
			var e *sqserr.Error
			if !errors.As(err, &e) {
				t.Fatalf("not an SQS error: %v", err)
			}
		}
	})
}
