package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/report"
)

// TestEveryCapabilityHasACase: the report shows a capability without cases as "no
// evidence", a failure; this says which one before a report run does.
//
// It also fails where a rejection probe is required: for each capability that a
// backend's committed report (docs/compat/*.json, which make test keeps equal to a
// fresh run) declares Unsupported, every case naming it must have its own unsupported
// assertion or the capability a probe in unsupportedProbes, or runCase fails that
// case on that backend. A capability that no backend declares Unsupported but lacks a
// probe is only logged: a new backend declaring it so would need one first.
func TestEveryCapabilityHasACase(t *testing.T) {
	covered := map[capabilities.ID]int{}
	for _, c := range allCases() {
		for _, id := range c.Caps {
			if _, ok := capabilities.Lookup(id); !ok {
				t.Errorf("case %s names %s, which is not in the catalog", c.Name, id)
			}
			covered[id]++
		}
	}
	probes := unsupportedProbes()
	unsupportedBy := backendsDeclaringUnsupported(t)
	for _, e := range capabilities.All() {
		if covered[e.ID] == 0 {
			t.Errorf("no conformance case exercises %s", e.ID)
		}
		if probes[e.ID] != nil {
			continue
		}
		// The cases runCase would hand to the missing probe.
		var needing []string
		for _, c := range allCases() {
			if c.Unsupported == nil && slices.Contains(c.Caps, e.ID) {
				needing = append(needing, c.Name)
			}
		}
		if len(needing) == 0 {
			continue
		}
		if backends := unsupportedBy[e.ID]; len(backends) > 0 {
			t.Errorf("the reports of %s declare %s unsupported; cases %s need a rejection probe for it, and the suite has none",
				strings.Join(backends, ", "), e.ID, strings.Join(needing, ", "))
			continue
		}
		t.Logf("no rejection probe for %s: no backend declares it unsupported; one that did would fail %d cases",
			e.ID, len(needing))
	}
}

// backendsDeclaringUnsupported reads the committed compatibility reports and returns,
// per capability, the backends whose report declares it Unsupported.
func backendsDeclaringUnsupported(t *testing.T) map[capabilities.ID][]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "docs", "compat", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[capabilities.ID][]string{}
	reports := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var rep report.BackendReport
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if rep.Format != report.FormatReport {
			continue
		}
		reports++
		for _, c := range rep.Capabilities {
			if c.Level == string(capabilities.Unsupported) {
				out[capabilities.ID(c.ID)] = append(out[capabilities.ID(c.ID)], rep.Backend)
			}
		}
	}
	if reports == 0 {
		t.Fatalf("no compatibility report in ../docs/compat to read declarations from")
	}
	for _, backends := range out {
		sort.Strings(backends)
	}
	return out
}
