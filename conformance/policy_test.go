package conformance

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/anysqs/anysqs/capabilities"
)

// TestStrictPolicyRejectsDegraded: under `policy: strict` a capability the embedded
// backend only degrades is refused exactly as an unsupported one: the catalog's SQS error,
// a message naming it, and no change.
func TestStrictPolicyRejectsDegraded(t *testing.T) {
	probes := unsupportedProbes()
	h0 := newHarness(t, sqliteBackend())
	ran := 0
	for _, d := range h0.Desc.Capabilities {
		if d.Level != capabilities.Degraded {
			continue
		}
		probe, ok := probes[d.ID]
		if !ok {
			t.Errorf("sqlite declares %s degraded and the suite has no rejection probe for it", d.ID)
			continue
		}
		ran++
		t.Run(string(d.ID), func(t *testing.T) {
			t.Parallel()
			takeCPUSlot(t)
			probe(newHarnessWith(t, sqliteBackend(), harnessOptions{policy: capabilities.Config{Mode: string(capabilities.Strict)}}))
		})
	}
	if ran == 0 {
		t.Logf("sqlite declares nothing degraded; nothing to check")
	}
}

// TestDegradePolicyOverride: a per-capability strict override rejects that capability
// only, while others keep degrading.
func TestDegradePolicyOverride(t *testing.T) {
	h0 := newHarness(t, sqliteBackend())
	var degraded []capabilities.ID
	for _, d := range h0.Desc.Capabilities {
		if d.Level == capabilities.Degraded && strings.HasPrefix(string(d.ID), "attribute.") {
			degraded = append(degraded, d.ID)
		}
	}
	if len(degraded) < 2 {
		t.Logf("needs two degraded attributes, sqlite declares %v: nothing to check", degraded)
		return
	}
	strict, lax := degraded[0], degraded[1]
	h := newHarnessWith(t, sqliteBackend(), harnessOptions{policy: capabilities.Config{
		Overrides: map[string]string{string(strict): string(capabilities.Strict)}}})
	unsupportedProbes()[strict](h)
	h.attrRoundTrip(strings.TrimPrefix(string(lax), "attribute."), sampleAttr(h, strings.TrimPrefix(string(lax), "attribute.")), lax, true)
}

// TestExplainMode: a request carrying X-Anysqs-Explain gets told which backend served it.
func TestExplainMode(t *testing.T) {
	h := newHarness(t, sqliteBackend())
	_, err := h.SQS.ListQueues(h.Ctx, &sqs.ListQueuesInput{}, sqs.WithAPIOptions(smithyhttp.AddHeaderValue(capabilities.HeaderExplain, "1")))
	h.Must(err, "ListQueues with explain")
	if got := h.LastHeader(capabilities.HeaderBackend); got != h.Desc.Name {
		t.Fatalf("%s = %q, want %q", capabilities.HeaderBackend, got, h.Desc.Name)
	}
	if h.LastHeader(capabilities.HeaderExplain) == "" {
		t.Fatalf("no %s response header", capabilities.HeaderExplain)
	}
	_, err = h.SQS.ListQueues(h.Ctx, &sqs.ListQueuesInput{})
	h.Must(err, "ListQueues")
	if got := h.LastHeader(capabilities.HeaderBackend); got != "" {
		t.Fatalf("%s = %q without explain mode, want none", capabilities.HeaderBackend, got)
	}
}
