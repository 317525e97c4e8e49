package conformance_test

import (
	"testing"

	"github.com/anysqs/anysqs/capabilities"
)

// TestEveryCapabilityHasACase: the report shows a capability without cases as "no
// evidence", a failure; this says which one before a report run does. Every catalog ID
// also needs a rejection probe, so that a backend may declare it Unsupported.
func TestEveryCapabilityHasACase(t *testing.T) {
	covered := map[capabilities.ID]int{}
	for _, c := range allCases() {
		for _, id := range c.caps {
			if _, ok := capabilities.Lookup(id); !ok {
				t.Errorf("case %s names %s, which is not in the catalog", c.name, id)
			}
			covered[id]++
		}
	}
	probes := unsupportedProbes()
	for _, e := range capabilities.All() {
		if covered[e.ID] == 0 {
			t.Errorf("no conformance case exercises %s", e.ID)
		}
		if probes[e.ID] == nil {
			t.Logf("no rejection probe for %s: a backend declaring it Unsupported fails its cases", e.ID)
		}
	}
}
