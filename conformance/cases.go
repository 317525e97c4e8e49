package conformance

import (
	"fmt"
	"strings"

	"github.com/anysqs/anysqs/capabilities"
)

// T is what a case needs of its test: *testing.T under go test, and the runner's own
// case record under anysqs verify. Fatal, FailNow and Skip end the case's goroutine.
type T interface {
	Helper()
	Name() string
	Log(args ...any)
	Logf(format string, args ...any)
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Failed() bool
	Skip(args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
}

// tc is one conformance case.
type tc struct {
	// caps are the capability IDs the case exercises; joined by "+" they name the subtest.
	caps []capabilities.ID
	name string
	// run asserts the SQS behaviour (Native or Emulated).
	run func(h *H)
	// degraded, if set, asserts the documented fallback when one of caps is Degraded.
	degraded func(h *H, d capabilities.Declaration)
	// unsupported, if set, asserts the explicit error and absence of side effects when one
	// of caps is Unsupported; otherwise the capability's generic probe does.
	unsupported func(h *H, id capabilities.ID)
	// maxInFlight, if set, is the gateway's in-flight limit per queue for the case.
	maxInFlight int64
	// restarts: the case restarts the gateway (H.Restart), so it cannot share one.
	restarts bool
}

// allCases gathers the cases of every area.
func allCases() []tc {
	var all []tc
	for _, area := range [][]tc{
		queueCases(), attributeCases(), messageCases(), batchCases(), visibilityCases(),
		delayCases(), redriveCases(), retentionCases(), longPollCases(), fifoCases(),
		purgeTagCases(), concurrencyCases(), restartCases(), receiptCases(), fairCases(), peekCases(),
		inFlightCases(),
	} {
		all = append(all, area...)
	}
	return all
}

// dispatch runs the case as the levels the backend declares for its capabilities say:
// an Unsupported one is held to its rejection, a Degraded one to the case's fallback
// assertion (or, without one, to the SQS behaviour, with a note on failure), and
// otherwise the SQS behaviour.
func (c tc) dispatch(h *H) {
	t := h.T
	h.restarts = &c.restarts
	levels := map[capabilities.ID]capabilities.Level{}
	for _, id := range c.caps {
		levels[id] = h.Level(id)
	}
	for _, id := range c.caps {
		if levels[id] != capabilities.Unsupported {
			continue
		}
		if c.unsupported != nil {
			c.unsupported(h, id)
			return
		}
		probe, ok := unsupportedProbes()[id]
		if !ok {
			t.Fatalf("%s declares %s unsupported, and this suite has no probe for its rejection yet", h.backend, id)
		}
		probe(h)
		return
	}
	for _, id := range c.caps {
		if levels[id] != capabilities.Degraded {
			continue
		}
		d, _ := h.declaration(id)
		if c.degraded != nil {
			c.degraded(h, d)
			return
		}
		t.Logf("%s declares %s degraded (%q); this case has no fallback assertion, so it asserts the SQS behaviour", h.backend, id, d.Note)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the failure above may be %s's documented fallback for %s: %s", h.backend, id, d.Note)
			}
		})
	}
	c.run(h)
}

// checkCaseNames makes sure subtest names are unique and every case has capabilities.
func checkCaseNames(cases []tc) error {
	seen := map[string]bool{}
	for _, c := range cases {
		if len(c.caps) == 0 || c.run == nil {
			return fmt.Errorf("case %q: needs capabilities and a run function", c.name)
		}
		k := c.path()
		if seen[k] {
			return fmt.Errorf("duplicate case %s", k)
		}
		seen[k] = true
	}
	return nil
}

// path is the case's name below its backend: <capabilityIDs>/<case>.
func (c tc) path() string { return capSegment(c.caps) + "/" + c.name }

// capSegment is the capability part of a subtest name: the case's IDs joined by "+",
// each of which the report counts the case as evidence for.
func capSegment(ids []capabilities.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, "+")
}
