package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Status is the outcome of one conformance case.
type Status string

const (
	// Pass: the case saw what the declared level promises.
	Pass Status = "pass"
	// Fail: it did not, or it never finished.
	Fail Status = "fail"
	// NotRun: the case was skipped because the backend's service is not available.
	NotRun Status = "not-run"
	// NeedsGatewayClock: on a backend whose service keeps queue time, the case needs
	// more queue time (a 12 h visibility, 4 days of retention) than a run can wait for in
	// real time. It says nothing for or against the declaration.
	NeedsGatewayClock Status = "needs-gateway-clock"
)

// ServedClock is the clock of a run against a served binary: the process keeps queue
// time by its own real clock, whatever its driver declares.
const ServedClock = "served process (real time)"

// NeedsGatewayClockPrefix starts the skip message of a NeedsGatewayClock case; any
// other skip is NotRun.
const NeedsGatewayClockPrefix = "needs a gateway clock: "

// skipStatus tells the two kinds of skip apart by the message of t.Skip, which go test
// prints as "file_test.go:NN: message".
func skipStatus(lines []string) Status {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, ".go:"); i >= 0 {
			if j := strings.Index(l[i:], ": "); j >= 0 {
				l = l[i+j+2:]
			}
		}
		if strings.HasPrefix(l, NeedsGatewayClockPrefix) {
			return NeedsGatewayClock
		}
	}
	return NotRun
}

// suiteTest is the top-level test of the conformance suite.
const suiteTest = "TestConformance"

// maxReasonLines bounds the output kept per failed or skipped case.
const maxReasonLines = 8

// CaseResult is one finished conformance case, read from go test -json.
type CaseResult struct {
	Test         string   `json:"test"` // full name, TestConformance/<backend>/<capability>/<case>
	Backend      string   `json:"-"`
	Capabilities []string `json:"-"`
	Case         string   `json:"case"`
	Status       Status   `json:"status"`
	// Reason is the tail of the case's output when it failed or was skipped.
	Reason []string `json:"reason,omitempty"`
	// AWSConfirmed is the date of the reference run in which the same case passed
	// against AWS SQS; empty when it did not, or no reference run is recorded.
	AWSConfirmed string `json:"aws_confirmed,omitempty"`
}

// run is what the reader learned from one go test -json stream.
type run struct {
	cases    []CaseResult
	backends map[string]backendRun // from TestConformance/<backend>
	problems []string              // unfinished cases
	// failedPackages failed as a whole; a problem of its own only when no case explains it.
	failedPackages []string
}

// backendRun is the outcome of TestConformance/<backend> itself.
type backendRun struct {
	Status Status
	Reason []string
}

// testEvent is one line of go test -json (cmd/test2json).
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// splitName splits a conformance test name; ok is false for other tests. depth is the
// number of segments after TestConformance.
func splitName(name string) (parts []string, ok bool) {
	parts = strings.Split(name, "/")
	if parts[0] != suiteTest || len(parts) < 2 {
		return nil, false
	}
	return parts[1:], true
}

// readTestJSON reads a go test -json stream. progress, if set, is called for every case
// as it finishes, so a long run shows its progress.
func readTestJSON(r io.Reader, progress func(CaseResult)) (*run, error) {
	res := &run{backends: map[string]backendRun{}}
	output := map[string][]string{} // test → output lines, for reasons
	started := map[string]string{}  // conformance case test → package, until it finishes
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var ev testEvent
			// Lines that are not events (go command chatter) are ignored.
			if line[0] == '{' && json.Unmarshal(line, &ev) == nil {
				res.handle(ev, output, started, progress)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("report: reading go test -json: %w", err)
		}
	}
	// A case that never finished was cut short by a panic, a timeout or an interrupted run.
	for _, name := range sortedKeys(started) {
		c := newCase(name)
		c.Status, c.Reason = Fail, append(tail(output[name]), "(the case never finished: panic, timeout or interrupted run)")
		res.cases = append(res.cases, c)
		res.problems = append(res.problems, fmt.Sprintf("%s never finished", name))
		if progress != nil {
			progress(c)
		}
	}
	sort.Slice(res.cases, func(i, j int) bool { return res.cases[i].Test < res.cases[j].Test })
	return res, nil
}

func (res *run) handle(ev testEvent, output map[string][]string, started map[string]string, progress func(CaseResult)) {
	if ev.Test == "" {
		switch ev.Action {
		case "fail", "build-fail":
			res.failedPackages = append(res.failedPackages, ev.Package)
		}
		return
	}
	parts, ok := splitName(ev.Test)
	if !ok {
		return
	}
	// Output and results of deeper subtests roll up into their case.
	caseTest := ev.Test
	if len(parts) > 3 {
		caseTest = strings.Join(append([]string{suiteTest}, parts[:3]...), "/")
	}
	status, final := statusOf(ev.Action)
	switch {
	case ev.Action == "output":
		output[caseTest] = append(output[caseTest], strings.TrimRight(ev.Output, "\n"))
	case ev.Action == "run" && len(parts) == 3:
		started[ev.Test] = ev.Package
	case final && len(parts) == 1:
		res.backends[parts[0]] = backendRun{Status: status, Reason: reason(status, output[ev.Test])}
	case final && len(parts) == 3:
		delete(started, ev.Test)
		c := newCase(ev.Test)
		if status == NotRun {
			status = skipStatus(output[ev.Test])
		}
		c.Status, c.Reason = status, reason(status, output[ev.Test])
		res.cases = append(res.cases, c)
		delete(output, ev.Test)
		if progress != nil {
			progress(c)
		}
	}
}

func statusOf(action string) (Status, bool) {
	switch action {
	case "pass":
		return Pass, true
	case "fail":
		return Fail, true
	case "skip":
		return NotRun, true
	}
	return "", false
}

// newCase parses a full case name: TestConformance/<backend>/<cap>[+<cap>...]/<case>.
func newCase(test string) CaseResult {
	parts, _ := splitName(test)
	c := CaseResult{Test: test}
	if len(parts) == 3 {
		c.Backend, c.Case = parts[0], parts[2]
		c.Capabilities = strings.Split(parts[1], "+")
	}
	return c
}

// reason keeps the informative tail of a failed or skipped test's output.
func reason(s Status, lines []string) []string {
	if s == Pass {
		return nil
	}
	return tail(lines)
}

func tail(lines []string) []string {
	var kept []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		// The framing lines repeat what the status already says.
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) > maxReasonLines {
		// The test's own lines say why; a served gateway's log tail, printed after them,
		// would push them out.
		var own []string
		for _, t := range kept {
			if strings.Contains(t, "_test.go:") {
				own = append(own, t)
			}
		}
		if len(own) > maxReasonLines {
			own = own[len(own)-maxReasonLines:]
		}
		if len(own) > 0 {
			return own
		}
		kept = kept[len(kept)-maxReasonLines:]
	}
	return kept
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String is the progress line of a finished case, e.g. "pass  TestConformance/sqlite/fifo.ordering/three_groups".
func (c CaseResult) String() string {
	s := fmt.Sprintf("%-7s %s", c.Status, c.Test)
	if c.Status != Pass && len(c.Reason) > 0 {
		why := c.Reason[len(c.Reason)-1]
		for _, r := range c.Reason {
			if strings.Contains(r, "_test.go:") {
				why = r // the first line of the test's own: what failed
				break
			}
		}
		s += ": " + why
	}
	return s
}
