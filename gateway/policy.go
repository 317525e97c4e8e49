package gateway

import (
	"net/http"
	"sort"
	"strings"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Capability policy. The backend's declarations (Describe, read once in New) and
// Config.Policy decide, for each request that needs a capability, whether it proceeds,
// proceeds with the backend's documented fallback (reported in the X-Anysqs-Degraded
// response header), or fails with the capability's SQS error before anything changes.

// need decides capability id for this request on queue. A rejection is returned as the
// SQS error to send; a degradation is recorded for the response headers and proceeds.
func (c *call) need(queue string, id capabilities.ID) error {
	if c.srv == nil {
		return nil
	}
	if c.trace == nil {
		c.trace = c.srv.on(queue).policy.Trace(queue)
	}
	d := c.trace.Decide(id)
	if d.Reject {
		return sqserr.New(sqserr.Code(d.Code), "%s", d.Message)
	}
	return nil
}

// needAttributes decides the capability of each queue attribute named in attrs, and the
// queue behaviours some attribute values turn on (a dead-letter queue, group-scoped
// deduplication), which a backend may declare apart from the attribute itself.
func (c *call) needAttributes(queue string, attrs map[string]string) error {
	for _, name := range sortedNames(attrs) {
		if asksNoEncryption(name, attrs[name]) {
			continue // turning encryption off claims nothing a backend could fail to do
		}
		if id, ok := capabilities.AttributeID(name); ok {
			if err := c.need(queue, id); err != nil {
				return err
			}
		}
	}
	if attrs["RedrivePolicy"] != "" {
		if err := c.need(queue, capabilities.RedriveDLQ); err != nil {
			return err
		}
	}
	if attrs["DeduplicationScope"] == "messageGroup" {
		return c.need(queue, capabilities.FIFODedupScopeGroup)
	}
	return nil
}

func asksNoEncryption(name, value string) bool {
	return name == "SqsManagedSseEnabled" && strings.EqualFold(value, "false") || name == "KmsMasterKeyId" && value == ""
}

// policyHeaders writes the degrade and explain headers of c's decisions, and logs the
// first degraded use of each capability per queue.
func (s *Server) policyHeaders(w http.ResponseWriter, r *http.Request, c *call) {
	explain := capabilities.ExplainRequested(r.Header.Get(capabilities.HeaderExplain))
	if c == nil || c.trace == nil {
		if explain {
			w.Header().Set(capabilities.HeaderBackend, s.fallback.policy.Backend())
			w.Header().Set(capabilities.HeaderExplain, "no capability decisions")
		}
		return
	}
	for _, h := range c.trace.Headers(explain) {
		w.Header().Set(h.Name, h.Value)
	}
	for _, id := range c.trace.FirstDegraded() {
		s.log.Warn("capability degraded", "capability", string(id), "backend", c.trace.Backend(), "action", c.action)
	}
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
