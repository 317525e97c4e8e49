// Package expect is the case engine that anysqs's two conformance suites share: the
// wire-level suite (package conformance, which `anysqs verify` links into the binary)
// and the driver-level one (drivers/drivertest).
//
// A Case names the capabilities it exercises, and what it asserts follows the levels
// the backend declares for them (Dispatch):
//   - Unsupported: the case's own assertion of the rejection, else the suite's
//     (the wire suite's generic probe; the driver suite skips, since the gateway rejects
//     such requests before a driver sees them);
//   - Degraded: the case's assertion of the documented fallback; without one, the SQS
//     behaviour, and a failure says that it may be the declared fallback;
//   - Native and Emulated, or no declaration (cases about the driver itself): the SQS
//     behaviour.
//
// Queue time: on a gateway clock a case moves time at will. On a real clock (a service
// that keeps queue time, a served gateway, `anysqs verify`) it waits, at most Budget
// per case unless the run allows more; a case needing more is skipped with
// report.NeedsGatewayClockPrefix, a status of its own in the report, never a pass.
package expect

import (
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/report"
)

// Budget is the real time a case may wait for queue time to pass on a real clock.
// Cases run side by side, so their waits overlap.
const Budget = 45 * time.Second

// T is what a case needs of its test: *testing.T under go test, and the runner's own
// record under anysqs verify. FailNow, Fatal and Skip end the case's goroutine.
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

// Case is one case of either suite over its harness H.
type Case[H any] struct {
	// Caps are the capabilities the case exercises; joined by "+" they start its path,
	// and the report counts the case as evidence for each.
	Caps []capabilities.ID
	Name string
	// Run asserts the SQS behaviour (Native or Emulated).
	Run func(h H)
	// Degraded, if set, asserts the documented fallback when one of Caps is Degraded.
	Degraded func(h H, d capabilities.Declaration)
	// Unsupported, if set, asserts the explicit rejection, and the absence of side
	// effects, when one of Caps is Unsupported.
	Unsupported func(h H, d capabilities.Declaration)
	// Restarts: the case restarts its gateway or driver, so it cannot share one with
	// other cases.
	Restarts bool
	// MaxInFlight, if set, is the gateway's in-flight limit per queue for a wire-level
	// case (the driver suite has no gateway).
	MaxInFlight int64
}

// Path is the case's name below its backend: <capabilities joined by "+">/<name>.
func (c Case[H]) Path() string {
	s := make([]string, len(c.Caps))
	for i, id := range c.Caps {
		s[i] = string(id)
	}
	return strings.Join(s, "+") + "/" + c.Name
}

// Dispatch runs c on h as the backend's declarations say. declared looks a capability's
// declaration up; otherwise handles an Unsupported capability for which the case has no
// assertion of its own.
func (c Case[H]) Dispatch(t T, h H, declared func(capabilities.ID) (capabilities.Declaration, bool),
	otherwise func(capabilities.Declaration)) {
	t.Helper()
	var decls []capabilities.Declaration
	for _, id := range c.Caps {
		if d, ok := declared(id); ok {
			decls = append(decls, d)
		}
	}
	for _, d := range decls {
		if d.Level != capabilities.Unsupported {
			continue
		}
		if c.Unsupported != nil {
			c.Unsupported(h, d)
		} else {
			otherwise(d)
		}
		return
	}
	for _, d := range decls {
		if d.Level != capabilities.Degraded {
			continue
		}
		if c.Degraded != nil {
			c.Degraded(h, d)
			return
		}
		t.Logf("%s is declared degraded (%q); this case has no fallback assertion, so it asserts the SQS behaviour", d.ID, d.Note)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the failure above may be the declared fallback for %s: %s", d.ID, d.Note)
			}
		})
	}
	c.Run(h)
}

// NeedsGatewayClock skips the case: it needs need more of queue time, after waited,
// beyond the budget a case may wait on a real clock.
func NeedsGatewayClock(t T, need, waited, budget time.Duration) {
	t.Helper()
	t.Skipf("%s%v more of queue time after %v, beyond the %v a case may wait on a real clock",
		report.NeedsGatewayClockPrefix, need, waited, budget)
}
