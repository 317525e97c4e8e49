package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// AWS Signature Version 4 verification, for gateways configured with credentials
// (Config.Credentials). The gateway rebuilds the canonical request from what arrived,
// using the headers the client says it signed, and compares signatures, as SQS does.
// Only header-signed requests (the Authorization header every SDK sends) are accepted;
// query-string (presigned) authentication and session tokens are not supported.

const (
	sigv4Algorithm = "AWS4-HMAC-SHA256"
	amzDateFormat  = "20060102T150405Z"
	// maxClockSkew is how far a request's date may be from the gateway's wall clock.
	maxClockSkew = 15 * time.Minute
)

type verifier struct {
	secrets map[string]string // access key ID → secret access key
	now     func() time.Time  // the wall clock: signatures age in real time, not queue time

	mu   sync.Mutex
	keys map[string][]byte // access key/date/region → derived signing key
}

func newVerifier(secrets map[string]string) *verifier {
	if len(secrets) == 0 {
		return nil
	}
	return &verifier{secrets: secrets, now: time.Now, keys: map[string][]byte{}}
}

// verify checks r's signature over body. A nil verifier accepts everything.
func (v *verifier) verify(r *http.Request, body []byte) error {
	if v == nil {
		return nil
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if r.URL.Query().Has("X-Amz-Signature") {
			return sqserr.New(sqserr.IncompleteSignature, "Query-string (presigned) authentication is not supported; sign requests with the Authorization header.")
		}
		return sqserr.New(sqserr.MissingAuthenticationToken, "Request is missing Authentication Token.")
	}
	alg, fields, ok := strings.Cut(auth, " ")
	if !ok || alg != sigv4Algorithm {
		return sqserr.New(sqserr.IncompleteSignature, "Unsupported authorization type; the gateway accepts %s signatures only.", sigv4Algorithm)
	}
	var credential, signedHeaders, signature string
	for _, f := range strings.Split(fields, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "Credential":
			credential = val
		case "SignedHeaders":
			signedHeaders = val
		case "Signature":
			signature = val
		}
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 || signedHeaders == "" || signature == "" {
		return sqserr.New(sqserr.IncompleteSignature, "Authorization header requires 'Credential' (key/date/region/service/aws4_request), 'SignedHeaders' and 'Signature'.")
	}
	keyID, day, region, service, term := scope[0], scope[1], scope[2], scope[3], scope[4]
	if service != "sqs" || term != "aws4_request" {
		return sqserr.New(sqserr.SignatureDoesNotMatch, "Credential should be scoped to service 'sqs' and terminated by 'aws4_request', not '%s/%s'.", service, term)
	}
	secret, known := v.secrets[keyID]
	if !known {
		return sqserr.New(sqserr.InvalidClientTokenID, "The security token included in the request is invalid.")
	}

	amzDate := r.Header.Get("X-Amz-Date")
	var at time.Time
	var err error
	if amzDate != "" {
		at, err = time.Parse(amzDateFormat, amzDate)
	} else if d := r.Header.Get("Date"); d != "" {
		at, err = http.ParseTime(d)
		amzDate = at.UTC().Format(amzDateFormat)
	} else {
		return sqserr.New(sqserr.IncompleteSignature, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	if err != nil {
		return sqserr.New(sqserr.IncompleteSignature, "The request's date %q is not in ISO 8601 basic format (%s).", amzDate, amzDateFormat)
	}
	if now := v.now(); at.Before(now.Add(-maxClockSkew)) || at.After(now.Add(maxClockSkew)) {
		return sqserr.New(sqserr.RequestExpired, "Request has expired: its date %s is more than %v from the gateway's time %s.",
			amzDate, maxClockSkew, now.UTC().Format(amzDateFormat))
	}
	if !strings.HasPrefix(amzDate, day) || len(day) != 8 {
		return sqserr.New(sqserr.SignatureDoesNotMatch, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s'.", day, amzDate[:min(8, len(amzDate))])
	}

	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if claimed := r.Header.Get("X-Amz-Content-Sha256"); claimed != "" && claimed != payload {
		return sqserr.New(sqserr.SignatureDoesNotMatch, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}

	canon, err := canonicalRequest(r, signedHeaders, payload)
	if err != nil {
		return err
	}
	credScope := day + "/" + region + "/" + service + "/" + term
	hashed := sha256.Sum256([]byte(canon))
	toSign := sigv4Algorithm + "\n" + amzDate + "\n" + credScope + "\n" + hex.EncodeToString(hashed[:])
	want := hmacSHA256(v.signingKey(keyID, secret, day, region), toSign)
	got, err := hex.DecodeString(signature)
	if err != nil || !hmac.Equal(got, want) {
		return sqserr.New(sqserr.SignatureDoesNotMatch, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return nil
}

// canonicalRequest is the SigV4 canonical form of r, over the headers the client signed.
func canonicalRequest(r *http.Request, signedHeaders, payload string) (string, error) {
	var b strings.Builder
	b.Grow(512)
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	// Services other than S3 encode the (already escaped) path once more.
	b.WriteString(uriEncode(path, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery))
	b.WriteByte('\n')
	names := strings.Split(signedHeaders, ";")
	hasHost := false
	for _, name := range names {
		if name == "" || name != strings.ToLower(name) {
			return "", sqserr.New(sqserr.IncompleteSignature, "SignedHeaders %q must list lowercase header names separated by ';'.", signedHeaders)
		}
		var value string
		switch name {
		case "host":
			hasHost, value = true, r.Host
		case "content-length":
			value = r.Header.Get("Content-Length")
			if value == "" && r.ContentLength >= 0 {
				value = strconv.FormatInt(r.ContentLength, 10)
			}
		default:
			b.WriteString(name)
			b.WriteByte(':')
			for i, v := range r.Header.Values(name) {
				if i > 0 {
					b.WriteByte(',')
				}
				writeTrimmed(&b, v)
			}
			b.WriteByte('\n')
			continue
		}
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(value)
		b.WriteByte('\n')
	}
	if !hasHost {
		return "", sqserr.New(sqserr.IncompleteSignature, "SignedHeaders %q must include host.", signedHeaders)
	}
	b.WriteByte('\n')
	b.WriteString(signedHeaders)
	b.WriteByte('\n')
	b.WriteString(payload)
	return b.String(), nil
}

// writeTrimmed writes v without leading and trailing spaces and with inner runs of spaces
// collapsed to one, as SigV4 canonical header values are.
func writeTrimmed(b *strings.Builder, v string) {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "  ") && !strings.ContainsAny(v, "\t\n") {
		b.WriteString(v)
		return
	}
	for i, f := range strings.Fields(v) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
}

// canonicalQuery sorts the query's parameters by encoded name, then value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type pair struct{ k, v string }
	var ps []pair
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		// Lenient decoding: a malformed escape is signed as it arrived.
		if d, err := url.QueryUnescape(k); err == nil {
			k = d
		}
		if d, err := url.QueryUnescape(v); err == nil {
			v = d
		}
		ps = append(ps, pair{uriEncode(k, true), uriEncode(v, true)})
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].k != ps[j].k {
			return ps[i].k < ps[j].k
		}
		return ps[i].v < ps[j].v
	})
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// uriEncode percent-encodes every byte but the unreserved ones (and '/' unless
// encodeSlash), with upper-case hex, as SigV4 specifies.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~',
			c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// signingKey derives (and caches, per key, day and region) the request signing key.
func (v *verifier) signingKey(keyID, secret, day, region string) []byte {
	id := keyID + "/" + day + "/" + region
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[id]; ok {
		return k
	}
	if len(v.keys) > 1024 { // days and regions come and go; start afresh now and then
		clear(v.keys)
	}
	k := hmacSHA256([]byte("AWS4"+secret), day)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, "sqs")
	k = hmacSHA256(k, "aws4_request")
	v.keys[id] = k
	return k
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}
