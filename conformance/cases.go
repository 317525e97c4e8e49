package conformance

import (
	"fmt"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/expect"
)

// T is what a case needs of its test (capabilities/expect).
type T = expect.T

// tc is one conformance case: the case type both suites share, over this suite's harness.
type tc = expect.Case[*H]

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

// dispatch runs c on h as the backend's declarations say (expect.Case.Dispatch): an
// Unsupported capability without the case's own assertion is held to its generic
// rejection probe.
func dispatch(h *H, c tc) {
	h.restarts = &c.Restarts
	c.Dispatch(h.T, h, func(id capabilities.ID) (capabilities.Declaration, bool) {
		h.Level(id) // a backend declares every catalog ID: a missing one fails the case
		return h.declaration(id)
	}, func(d capabilities.Declaration) {
		probe, ok := unsupportedProbes()[d.ID]
		if !ok {
			h.T.Fatalf("%s declares %s unsupported, and this suite has no probe for its rejection yet", h.backend, d.ID)
		}
		probe(h)
	})
}

// checkCaseNames makes sure subtest names are unique and every case has capabilities.
func checkCaseNames(cases []tc) error {
	seen := map[string]bool{}
	for _, c := range cases {
		if len(c.Caps) == 0 || c.Run == nil {
			return fmt.Errorf("case %q: needs capabilities and a run function", c.Name)
		}
		if seen[c.Path()] {
			return fmt.Errorf("duplicate case %s", c.Path())
		}
		seen[c.Path()] = true
	}
	return nil
}
