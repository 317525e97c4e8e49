package gateway

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// ClientLimits bound what the holder of one access key may ask of a gateway, so that one
// client cannot starve the others. Without credentials configured, all clients share one
// set of limits. Zero values mean no limit.
type ClientLimits struct {
	// RequestsPerSecond is the sustained request rate of one key; a request beyond it
	// fails with RequestThrottled, which the SDKs retry with backoff.
	RequestsPerSecond float64
	// Burst is how many requests a key may send at once above the rate; 0 means
	// RequestsPerSecond rounded up.
	Burst int
	// MaxLongPolls is how many receives of one key may wait at once; one more fails with
	// OverLimit.
	MaxLongPolls int
}

// clientLimiter keeps the state of ClientLimits per access key.
type clientLimiter struct {
	limits ClientLimits
	now    func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	polls   map[string]int
}

func newClientLimiter(l ClientLimits, now func() time.Time) *clientLimiter {
	if l.RequestsPerSecond <= 0 && l.MaxLongPolls <= 0 {
		return nil
	}
	if l.Burst <= 0 {
		l.Burst = max(1, int(l.RequestsPerSecond+0.999))
	}
	return &clientLimiter{limits: l, now: now, buckets: map[string]*rate.Limiter{}, polls: map[string]int{}}
}

// admit takes one request of key from its bucket. A nil limiter admits everything.
func (c *clientLimiter) admit(key string) error {
	if c == nil || c.limits.RequestsPerSecond <= 0 {
		return nil
	}
	c.mu.Lock()
	b := c.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(c.limits.RequestsPerSecond), c.limits.Burst)
		c.buckets[key] = b
	}
	c.mu.Unlock()
	if !b.AllowN(c.now(), 1) {
		return sqserr.New(sqserr.RequestThrottled, "Rate exceeded: access key %s may send %g requests per second (burst %d).",
			keyName(key), c.limits.RequestsPerSecond, c.limits.Burst)
	}
	return nil
}

// startLongPoll counts one waiting receive of key; call the returned func when it ends.
func (c *clientLimiter) startLongPoll(key string) (done func(), err error) {
	if c == nil || c.limits.MaxLongPolls <= 0 {
		return func() {}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.polls[key] >= c.limits.MaxLongPolls {
		return nil, sqserr.New(sqserr.OverLimit, "Access key %s has %d receives waiting already, the most this gateway allows; use fewer concurrent long polls.",
			keyName(key), c.limits.MaxLongPolls)
	}
	c.polls[key]++
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.polls[key]--; c.polls[key] <= 0 {
			delete(c.polls, key)
		}
	}), nil
}

func keyName(key string) string {
	if key == "" {
		return "(none: the gateway does not authenticate)"
	}
	return key
}

// accessKeyOf returns the access key id a verified request was signed with, from its
// Authorization header or presigned query; "" for an unauthenticated gateway.
func accessKeyOf(r *http.Request) string {
	var cred string
	if auth := r.Header.Get("Authorization"); auth != "" {
		if _, rest, ok := strings.Cut(auth, "Credential="); ok {
			cred, _, _ = strings.Cut(rest, ",")
		}
	} else {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	key, _, _ := strings.Cut(cred, "/")
	return key
}
