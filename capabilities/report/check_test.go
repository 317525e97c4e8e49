package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeReport(t *testing.T, dir string, r BackendReport) {
	t.Helper()
	r.Format = FormatReport
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, r.Backend+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheckIgnoresRunMetadataAndFindsChanges(t *testing.T) {
	base := BackendReport{Backend: "memdb", Date: "d1", Commit: "c1", ServiceVersion: "1",
		Totals: Totals{Cases: 2, Pass: 2},
		Capabilities: []CapabilityResult{
			{ID: "queue.purge", Level: "native", Verdict: Verified, Cases: []CaseResult{{Test: "T/memdb/queue.purge/a", Status: Pass}}},
			{ID: "queue.tags", Level: "native", Verdict: Verified, Cases: []CaseResult{{Test: "T/memdb/queue.tags/b", Status: Pass}}},
		}}
	committed, fresh := t.TempDir(), t.TempDir()
	writeReport(t, committed, base)

	same := base
	same.Date, same.Commit, same.ServiceVersion = "d2", "c2", "2"
	writeReport(t, fresh, same)
	if diffs, err := Check(committed, fresh, nil); err != nil || len(diffs) != 0 {
		t.Fatalf("metadata-only change must not count: %v %v", diffs, err)
	}

	changed := base
	changed.Capabilities = []CapabilityResult{
		{ID: "queue.purge", Level: "native", Verdict: Failed, Cases: []CaseResult{{Test: "T/memdb/queue.purge/a", Status: Fail}}},
		{ID: "queue.tags", Level: "degraded", Verdict: Verified, Cases: []CaseResult{{Test: "T/memdb/queue.tags/c", Status: Pass}}},
	}
	writeReport(t, fresh, changed)
	diffs, err := Check(committed, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(diffs, "\n")
	for _, want := range []string{"queue.purge: committed native/verified, fresh run native/failed",
		"case T/memdb/queue.purge/a was pass, now fail", "queue.tags: committed native/verified, fresh run degraded/verified",
		"new case T/memdb/queue.tags/c", "case T/memdb/queue.tags/b is gone"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in:\n%s", want, joined)
		}
	}
}

func TestCheckFailsCommittedBackendsNotRun(t *testing.T) {
	committed, fresh := t.TempDir(), t.TempDir()
	writeReport(t, committed, BackendReport{Backend: "absent", Totals: Totals{Cases: 3, Pass: 3}})
	writeReport(t, committed, BackendReport{Backend: "gone", Totals: Totals{Cases: 1, Pass: 1}})
	writeReport(t, fresh, BackendReport{Backend: "absent", Totals: Totals{Cases: 3, NotRun: 3}})
	writeReport(t, fresh, BackendReport{Backend: "newone", Totals: Totals{Cases: 1, Pass: 1}})
	diffs, err := Check(committed, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(diffs, "\n")
	for _, want := range []string{"absent: committed report, but the backend did not run",
		"gone: committed report, but the backend did not run", "newone: no committed report"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in:\n%s", want, joined)
		}
	}
	if len(diffs) != 3 {
		t.Errorf("got %d differences, want 3:\n%s", len(diffs), joined)
	}

	// Regenerating only some backends leaves the others' committed reports alone.
	diffs, err = Check(committed, fresh, []string{"newone"})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || !strings.Contains(diffs[0], "newone: no committed report") {
		t.Fatalf("with --backends newone: got %v", diffs)
	}
}

// TestCheckReferenceRun: the committed reference run cannot run in CI and is not
// required to; the AWS confirmations it gave a backend's report are derived, not results.
func TestCheckReferenceRun(t *testing.T) {
	committed, fresh := t.TempDir(), t.TempDir()
	writeReport(t, committed, BackendReport{Backend: ReferenceBackend, Run: RunConditions{Reference: true},
		Totals: Totals{Cases: 1, Pass: 1}})
	confirmed := BackendReport{Backend: "memdb", Totals: Totals{Cases: 1, Pass: 1},
		AWSConfirmation: &AWSConfirmation{Date: "d0", Commit: "c0", Confirmed: 1},
		Capabilities: []CapabilityResult{{ID: "queue.purge", Level: "native", Verdict: Verified,
			Cases: []CaseResult{{Test: "T/memdb/queue.purge/a", Status: Pass, AWSConfirmed: "d0"}}}}}
	writeReport(t, committed, confirmed)
	unconfirmed := confirmed
	unconfirmed.AWSConfirmation = nil
	unconfirmed.Capabilities = []CapabilityResult{{ID: "queue.purge", Level: "native", Verdict: Verified,
		Cases: []CaseResult{{Test: "T/memdb/queue.purge/a", Status: Pass}}}}
	writeReport(t, fresh, unconfirmed)
	if diffs, err := Check(committed, fresh, nil); err != nil || len(diffs) != 0 {
		t.Fatalf("want no differences, got %v %v", diffs, err)
	}
}

// TestReasonKeepsTheTestsOwnLines: a served case's failure prints the gateway's log tail
// after the test's own line; the reason and the progress line keep what failed.
func TestReasonKeepsTheTestsOwnLines(t *testing.T) {
	lines := []string{"=== RUN   TestConformance/x-served/a/b", "    redrive_cases_test.go:171: after a restart ListMessageMoveTasks = [], want the task"}
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("        time=2026-12-03T12:45:09Z level=INFO msg=\"log line %d\"", i))
	}
	c := CaseResult{Test: "TestConformance/x-served/a/b", Status: Fail, Reason: reason(Fail, lines)}
	if len(c.Reason) != 1 || !strings.Contains(c.Reason[0], "redrive_cases_test.go:171") {
		t.Fatalf("reason %q, want the test's own line", c.Reason)
	}
	if !strings.Contains(c.String(), "want the task") {
		t.Fatalf("progress line %q lacks the failure", c.String())
	}
}
