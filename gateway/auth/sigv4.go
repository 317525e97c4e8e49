package auth

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

const (
	sigv4Algorithm = "AWS4-HMAC-SHA256"
	amzDateFormat  = "20060102T150405Z"
	// maxClockSkew is how far a request's date may be from the gateway's wall clock.
	maxClockSkew = 15 * time.Minute
	// maxPresignExpires is SigV4's longest X-Amz-Expires, a week.
	maxPresignExpires = 7 * 24 * 60 * 60
	unsignedPayload   = "UNSIGNED-PAYLOAD"
)

// Verifier checks AWS Signature Version 4 signatures against the configured secrets.
type Verifier struct {
	secrets map[string]string // access key ID → secret access key
	now     func() time.Time  // the wall clock: signatures age in real time, not queue time

	mu   sync.Mutex
	keys map[string][]byte // access key/date/region → derived signing key
}

// NewVerifier returns a Verifier of secrets (access key ID → secret access key), or nil,
// which accepts every request, when there are none.
func NewVerifier(secrets map[string]string) *Verifier {
	if len(secrets) == 0 {
		return nil
	}
	return &Verifier{secrets: secrets, now: time.Now, keys: map[string][]byte{}}
}

// Verify checks r's signature over body. A nil Verifier accepts everything.
func (v *Verifier) Verify(r *http.Request, body []byte) error {
	if v == nil {
		return nil
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if q := r.URL.Query(); q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential") {
			return v.verifyPresigned(r, q, body)
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
	sc, err := v.credentialScope(scope)
	if err != nil {
		return err
	}

	amzDate := r.Header.Get("X-Amz-Date")
	var at time.Time
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
	if err := sc.checkDay(amzDate); err != nil {
		return err
	}

	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if claimed := r.Header.Get("X-Amz-Content-Sha256"); claimed != "" && claimed != payload {
		return sqserr.New(sqserr.SignatureDoesNotMatch, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	return v.checkSignature(r, sc, amzDate, signedHeaders, signature, r.URL.RawQuery, payload)
}

// scope is a request's credential scope, with the secret of its key.
type scope struct {
	keyID, day, region, service, term string
	secret                            string
}

// credentialScope checks the parts key/day/region/service/aws4_request of a Credential.
func (v *Verifier) credentialScope(parts []string) (scope, error) {
	sc := scope{keyID: parts[0], day: parts[1], region: parts[2], service: parts[3], term: parts[4]}
	if sc.service != "sqs" || sc.term != "aws4_request" {
		return sc, sqserr.New(sqserr.SignatureDoesNotMatch, "Credential should be scoped to service 'sqs' and terminated by 'aws4_request', not '%s/%s'.", sc.service, sc.term)
	}
	secret, known := v.secrets[sc.keyID]
	if !known {
		return sc, sqserr.New(sqserr.InvalidClientTokenID, "The security token included in the request is invalid.")
	}
	sc.secret = secret
	return sc, nil
}

func (sc scope) checkDay(amzDate string) error {
	if !strings.HasPrefix(amzDate, sc.day) || len(sc.day) != 8 {
		return sqserr.New(sqserr.SignatureDoesNotMatch, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s'.", sc.day, amzDate[:min(8, len(amzDate))])
	}
	return nil
}

// checkSignature compares signature with the one computed over r, its query rawQuery (the
// presigning parameters but the signature itself) and each of the payload hashes given.
func (v *Verifier) checkSignature(r *http.Request, sc scope, amzDate, signedHeaders, signature, rawQuery string, payloads ...string) error {
	got, err := hex.DecodeString(signature)
	key := v.signingKey(sc.keyID, sc.secret, sc.day, sc.region)
	credScope := sc.day + "/" + sc.region + "/" + sc.service + "/" + sc.term
	for _, payload := range payloads {
		canon, cerr := canonicalRequest(r, rawQuery, signedHeaders, payload)
		if cerr != nil {
			return cerr
		}
		hashed := sha256.Sum256([]byte(canon))
		toSign := sigv4Algorithm + "\n" + amzDate + "\n" + credScope + "\n" + hex.EncodeToString(hashed[:])
		if err == nil && hmac.Equal(got, hmacSHA256(key, toSign)) {
			return nil
		}
	}
	return sqserr.New(sqserr.SignatureDoesNotMatch, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
}

// verifyPresigned checks a request signed in its query string, as SDK presigners sign
// URLs. The signed payload is the body's hash or UNSIGNED-PAYLOAD, as the presigner chose.
func (v *Verifier) verifyPresigned(r *http.Request, q url.Values, body []byte) error {
	for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		if len(q[p]) != 1 || q.Get(p) == "" {
			return sqserr.New(sqserr.IncompleteSignature, "A presigned request needs exactly one non-empty %s query parameter.", p)
		}
	}
	if q.Has("X-Amz-Security-Token") {
		return sqserr.New(sqserr.InvalidClientTokenID, "Session tokens are not supported by this gateway.")
	}
	if alg := q.Get("X-Amz-Algorithm"); alg != sigv4Algorithm {
		return sqserr.New(sqserr.IncompleteSignature, "X-Amz-Algorithm %q is not supported; the gateway accepts %s only.", alg, sigv4Algorithm)
	}
	parts := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(parts) != 5 {
		return sqserr.New(sqserr.IncompleteSignature, "X-Amz-Credential must be key/date/region/service/aws4_request.")
	}
	sc, err := v.credentialScope(parts)
	if err != nil {
		return err
	}
	amzDate := q.Get("X-Amz-Date")
	at, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return sqserr.New(sqserr.IncompleteSignature, "X-Amz-Date %q is not in ISO 8601 basic format (%s).", amzDate, amzDateFormat)
	}
	expires, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || expires < 1 || expires > maxPresignExpires {
		return sqserr.New(sqserr.IncompleteSignature, "X-Amz-Expires %q must be a number of seconds from 1 to %d.", q.Get("X-Amz-Expires"), maxPresignExpires)
	}
	now := v.now()
	until := at.Add(min(time.Duration(expires)*time.Second, maxClockSkew))
	if at.After(now.Add(maxClockSkew)) || now.After(until) {
		return sqserr.New(sqserr.RequestExpired, "Request has expired: signed at %s for %d s, and the gateway's time is %s.",
			amzDate, expires, now.UTC().Format(amzDateFormat))
	}
	if err := sc.checkDay(amzDate); err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	payloads := []string{hex.EncodeToString(sum[:]), unsignedPayload}
	if claimed := q.Get("X-Amz-Content-Sha256"); claimed != "" {
		payloads = []string{claimed}
		if claimed != unsignedPayload && claimed != payloads[0] {
			return sqserr.New(sqserr.SignatureDoesNotMatch, "The provided 'X-Amz-Content-Sha256' parameter does not match what was computed.")
		}
	}
	return v.checkSignature(r, sc, amzDate, q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), withoutSignature(r.URL.RawQuery), payloads...)
}

// withoutSignature is a raw query without its X-Amz-Signature parameter, which the
// signature does not cover.
func withoutSignature(raw string) string {
	kept := make([]string, 0, 8)
	for _, kv := range strings.Split(raw, "&") {
		if !strings.HasPrefix(kv, "X-Amz-Signature=") {
			kept = append(kept, kv)
		}
	}
	return strings.Join(kept, "&")
}

// canonicalRequest is the SigV4 canonical form of r with query rawQuery, over the headers
// the client signed.
func canonicalRequest(r *http.Request, rawQuery, signedHeaders, payload string) (string, error) {
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
	b.WriteString(canonicalQuery(rawQuery))
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
func (v *Verifier) signingKey(keyID, secret, day, region string) []byte {
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
