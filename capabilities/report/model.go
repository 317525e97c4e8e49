package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/anysqs/anysqs/capabilities"
)

// FormatReport identifies the format of docs/compat/<backend>.json.
const FormatReport = "anysqs-compat/1"

// Verdict is what a capability's cases say about its declaration.
type Verdict string

const (
	// Verified: some case passed, none failed.
	Verified Verdict = "verified"
	// Failed: a case failed; the declaration is not true of the backend.
	Failed Verdict = "failed"
	// NoEvidence: no case exercises the capability.
	NoEvidence Verdict = "no-evidence"
	// NotRunVerdict: every case was skipped (service unavailable).
	NotRunVerdict Verdict = "not-run"
	// NeedsGatewayClockVerdict: no case passed or failed, and some needed more queue time
	// than a real clock allows; the declaration stands unchecked on this backend.
	NeedsGatewayClockVerdict Verdict = "needs-gateway-clock"
)

// BackendReport is the machine-readable report of one backend: docs/compat/<backend>.json.
type BackendReport struct {
	Format         string        `json:"format"`
	Backend        string        `json:"backend"`
	DriverVersion  string        `json:"driver_version"`
	ServiceVersion string        `json:"service_version"`
	Date           string        `json:"date"`
	Commit         string        `json:"commit"`
	Run            RunConditions `json:"run"`
	// AWSConfirmation, on a backend's report, says which of its cases the reference run
	// against AWS SQS confirmed; nil when none is recorded, and on the reference itself.
	// Derived from aws-sqs.json, so Check ignores it.
	AWSConfirmation *AWSConfirmation   `json:"aws_confirmation,omitempty"`
	Totals          Totals             `json:"totals"`
	Capabilities    []CapabilityResult `json:"capabilities"`
	// Operations are the driver's operational properties as declared; nil when none are.
	Operations *capabilities.Operations `json:"operations,omitempty"`
	// Problems are reasons the report fails other than capability verdicts.
	Problems []string `json:"problems,omitempty"`
}

// RunConditions say what the verdicts were obtained against and on whose clock.
type RunConditions struct {
	// Target is the service or emulator the cases ran against: "SQLite 3.45.1 embedded".
	Target string `json:"target"`
	// Clock is "gateway" (cases moved a fake clock), "service" (they waited in real time) or
	// ServedClock (a served process kept time by its own real clock).
	Clock string `json:"clock"`
	// ReceiptScope is "storage" or "instance": where the backend's receipt handles hold.
	ReceiptScope string `json:"receipt_scope"`
	// RealClockBudget, on a service clock, is the real time one case could wait.
	RealClockBudget string `json:"real_clock_budget,omitempty"`
	// TestOnly marks a test row (a test profile, or a backend run another way): reported
	// and checked, but kept out of the backend matrix.
	TestOnly bool `json:"test_only,omitempty"`
	// Reference marks a run against AWS SQS itself: its passed cases confirm the
	// expectations of every backend's report, it is kept out of the backend matrix, and
	// Check does not require it to run (CI cannot reach AWS).
	Reference bool `json:"reference,omitempty"`
	// Served names the test row whose report judges the same cases against the anysqs
	// binary served from this backend's shipped configuration.
	Served string `json:"served,omitempty"`
}

// Totals counts cases by status and capabilities by verdict.
type Totals struct {
	Cases             int `json:"cases"`
	Pass              int `json:"pass"`
	Fail              int `json:"fail"`
	NotRun            int `json:"not_run"`
	NeedsGatewayClock int `json:"needs_gateway_clock,omitempty"`
	Verified          int `json:"verified"`
	Failed            int `json:"failed"`
	NoEvidence        int `json:"no_evidence"`
	Unverified        int `json:"unverified"` // not run
	// ClockBound capabilities have only cases that needed a gateway clock.
	ClockBound int `json:"clock_bound,omitempty"`
}

// CapabilityResult is one capability of one backend: declaration, expectation, evidence.
type CapabilityResult struct {
	ID        string            `json:"id"`
	Title     string            `json:"title"`
	Reference string            `json:"reference"`
	Level     string            `json:"level"`
	Limits    map[string]string `json:"limits,omitempty"`
	Note      string            `json:"note,omitempty"`
	Expect    string            `json:"expect"`
	Verdict   Verdict           `json:"verdict"`
	Cases     []CaseResult      `json:"cases"`
}

// Failing reports whether the verdict makes the report fail; noEvidenceOK relaxes
// NoEvidence to a warning.
func (c CapabilityResult) Failing(noEvidenceOK bool) bool {
	return c.Verdict == Failed || (c.Verdict == NoEvidence && !noEvidenceOK)
}

// count returns how many of the capability's cases have status s.
func (c CapabilityResult) count(s Status) int {
	n := 0
	for _, cs := range c.Cases {
		if cs.Status == s {
			n++
		}
	}
	return n
}

// evaluate merges one backend's declarations with its cases.
func evaluate(d Declarations, cases []CaseResult) BackendReport {
	rep := BackendReport{
		Format: FormatReport, Backend: d.Backend, DriverVersion: d.DriverVersion,
		ServiceVersion: d.ServiceVersion, Date: d.Date, Commit: d.Commit,
		Run: RunConditions{Target: d.Target, Clock: d.Clock, ReceiptScope: d.ReceiptScope,
			RealClockBudget: d.RealClockBudget, TestOnly: d.TestOnly,
			Reference: d.Reference, Served: d.Served},
		Operations: d.Operations,
	}
	if err := capabilities.Validate(d.declarations()); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			rep.Problems = append(rep.Problems, "declarations: "+line)
		}
	}
	declared := map[string]DeclaredCapability{}
	for _, c := range d.Capabilities {
		declared[c.ID] = c
	}
	byCap := map[string][]CaseResult{}
	for _, c := range cases {
		for _, id := range c.Capabilities {
			if _, ok := capabilities.Lookup(capabilities.ID(id)); !ok {
				rep.Problems = append(rep.Problems, fmt.Sprintf("case %s names capability %q, which is not in the catalog", c.Test, id))
				continue
			}
			byCap[id] = append(byCap[id], c)
		}
		rep.Totals.Cases++
		switch c.Status {
		case Pass:
			rep.Totals.Pass++
		case Fail:
			rep.Totals.Fail++
		case NotRun:
			rep.Totals.NotRun++
		case NeedsGatewayClock:
			rep.Totals.NeedsGatewayClock++
		}
	}
	for _, e := range capabilities.All() {
		dc, ok := declared[string(e.ID)]
		if !ok {
			continue // reported by Validate
		}
		cr := CapabilityResult{
			ID: dc.ID, Title: e.Title, Reference: e.Reference, Level: dc.Level, Limits: dc.Limits,
			Note: dc.Note, Expect: e.Expect(capabilities.Level(dc.Level)), Cases: byCap[dc.ID],
		}
		if cr.Cases == nil {
			cr.Cases = []CaseResult{}
		}
		sort.Slice(cr.Cases, func(i, j int) bool { return cr.Cases[i].Test < cr.Cases[j].Test })
		cr.Verdict = verdict(cr)
		switch cr.Verdict {
		case Verified:
			rep.Totals.Verified++
		case Failed:
			rep.Totals.Failed++
		case NoEvidence:
			rep.Totals.NoEvidence++
		case NotRunVerdict:
			rep.Totals.Unverified++
		case NeedsGatewayClockVerdict:
			rep.Totals.ClockBound++
		}
		rep.Capabilities = append(rep.Capabilities, cr)
	}
	return rep
}

func verdict(c CapabilityResult) Verdict {
	switch {
	case len(c.Cases) == 0:
		return NoEvidence
	case c.count(Fail) > 0:
		return Failed
	case c.count(Pass) > 0:
		return Verified
	case c.count(NeedsGatewayClock) > 0:
		return NeedsGatewayClockVerdict
	}
	return NotRunVerdict
}

// failures lists why rep fails, one line each; empty means it passes.
func (rep BackendReport) failures(noEvidenceOK bool) []string {
	out := append([]string(nil), rep.Problems...)
	for _, c := range rep.Capabilities {
		if !c.Failing(noEvidenceOK) {
			continue
		}
		switch c.Verdict {
		case Failed:
			var failed []string
			for _, cs := range c.Cases {
				if cs.Status == Fail {
					failed = append(failed, cs.Case)
				}
			}
			out = append(out, fmt.Sprintf("%s declared %s, but cases failed: %s", c.ID, c.Level, strings.Join(failed, ", ")))
		case NoEvidence:
			out = append(out, fmt.Sprintf("%s declared %s, but no case exercises it", c.ID, c.Level))
		}
	}
	return out
}
