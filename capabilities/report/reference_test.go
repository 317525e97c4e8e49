package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities/report"
)

const refCommit = "0123456789abcdef0123456789abcdef01234567"

// writeDecls writes the declarations of backend, every capability native; reference
// marks the run against AWS SQS.
func writeDecls(t *testing.T, dir, backend string, reference bool) {
	t.Helper()
	d := report.NewDeclarations(backend, "0.1.0", "memdb 1.2.3", declare(nil), runDate, refCommit)
	d.Target, d.Clock, d.ReceiptScope, d.Reference = "memdb 1.2.3 in-process", "gateway", "storage", reference
	if reference {
		d.Target, d.Clock, d.ServiceVersion = "AWS SQS sqs.eu-west-1.amazonaws.com", "service", ""
	}
	if err := report.WriteDeclarations(dir, d); err != nil {
		t.Fatal(err)
	}
}

// backendCases: one basic case per capability, and three more that all pass.
func backendCases(in *goTestJSON, backend string) {
	in.everyCase(backend, declare(nil))
	in.testCase(backend, "queue.purge", "purge-empties", "pass")
	in.testCase(backend, "queue.tags", "tag-untag", "pass")
	in.testCase(backend, "fifo.ordering+fifo.group-batch", "ten_in_one_group", "pass")
}

// referenceCases: the same cases on AWS SQS, where one fails and one is skipped, so
// only the basic cases and the FIFO one are confirmed.
func referenceCases(in *goTestJSON) {
	in.everyCase(report.ReferenceBackend, declare(nil))
	in.testCase(report.ReferenceBackend, "queue.purge", "purge-empties", "fail", "PurgeQueueInProgress")
	in.testCase(report.ReferenceBackend, "queue.tags", "tag-untag", "skip", "service not available here: no credentials")
	in.testCase(report.ReferenceBackend, "fifo.ordering+fifo.group-batch", "ten_in_one_group", "pass")
}

func generateIn(t *testing.T, declDir, out string, in *goTestJSON) report.Summary {
	t.Helper()
	sum, err := report.Generate(report.Options{TestJSON: in, DeclarationsDir: declDir, OutDir: out})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return sum
}

func readReport(t *testing.T, path string) report.BackendReport {
	t.Helper()
	var rep report.BackendReport
	if err := json.Unmarshal([]byte(read(t, path)), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// wantConfirmed checks that exactly the cases of memdb named in want (without the
// TestConformance/memdb/ prefix) carry the reference run's date.
func wantConfirmed(t *testing.T, out string, want map[string]bool) {
	t.Helper()
	rep := readReport(t, filepath.Join(out, "memdb.json"))
	confirmed := map[string]bool{}
	for _, c := range rep.Capabilities {
		for _, cs := range c.Cases {
			key := strings.TrimPrefix(cs.Test, "TestConformance/memdb/")
			if got := cs.AWSConfirmed != ""; got != want[key] {
				t.Errorf("%s: aws_confirmed = %q, want confirmed %v", key, cs.AWSConfirmed, want[key])
			}
			if cs.AWSConfirmed != "" {
				confirmed[key] = true
			}
		}
	}
	if len(want) == 0 {
		if rep.AWSConfirmation != nil {
			t.Errorf("aws_confirmation = %+v without a reference run", rep.AWSConfirmation)
		}
		return
	}
	if c := rep.AWSConfirmation; c == nil || c.Confirmed != len(confirmed) || c.Date != runDate.Format(time.RFC3339) {
		t.Errorf("aws_confirmation = %+v, want %d cases on the reference run's date", c, len(confirmed))
	}
}

// confirmedByReference lists what referenceCases confirms of backendCases.
func confirmedByReference() map[string]bool {
	want := map[string]bool{"fifo.ordering+fifo.group-batch/ten_in_one_group": true}
	for _, d := range declare(nil) {
		want[string(d.ID)+"/basic"] = true
	}
	return want
}

func TestReferenceRunConfirmsPassedCases(t *testing.T) {
	declDir, out := t.TempDir(), t.TempDir()
	writeDecls(t, declDir, "memdb", false)
	writeDecls(t, declDir, report.ReferenceBackend, true)
	var in goTestJSON
	backendCases(&in, "memdb")
	referenceCases(&in)
	in.finish("memdb", "fail")
	sum := generateIn(t, declDir, out, &in) // the reference's failed case fails nothing

	var refSum report.BackendSummary
	for _, b := range sum.Backends {
		if b.Backend == report.ReferenceBackend {
			refSum = b
		}
	}
	if !refSum.Reference || len(refSum.Failures) == 0 {
		t.Errorf("reference summary = %+v, want Reference with the failed case listed", refSum)
	}
	want := confirmedByReference()
	wantConfirmed(t, out, want)
	cases := len(declare(nil)) + 3
	md := read(t, filepath.Join(out, "memdb.md"))
	for _, s := range []string{
		"Expectations confirmed against AWS SQS: " + strconv.Itoa(len(want)) + " of this report's " + strconv.Itoa(cases) +
			" cases, on 2026-11-29T20:00:00Z, commit 0123456789ab.",
		"- pass `TestConformance/memdb/fifo.ordering+fifo.group-batch/ten_in_one_group` (confirmed against AWS SQS on 2026-11-29)",
		"- pass `TestConformance/memdb/queue.tags/tag-untag`\n",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("memdb.md lacks %q", s)
		}
	}
	if ref := read(t, filepath.Join(out, "aws-sqs.md")); !strings.Contains(ref, "**Reference run against AWS SQS:**") ||
		strings.Contains(ref, "Expectations confirmed") {
		t.Errorf("aws-sqs.md does not present itself as the reference run")
	}

	readme := read(t, filepath.Join(out, "README.md"))
	line := "Reference run against AWS SQS: [aws-sqs](aws-sqs.md), 2026-11-29T20:00:00Z, commit 0123456789ab: " +
		strconv.Itoa(cases-2) + " of " + strconv.Itoa(cases) + " cases passed."
	if !strings.Contains(readme, line) || strings.Contains(readme, "No run against AWS SQS") {
		t.Errorf("README.md lacks the line %q", line)
	}
	if !strings.Contains(readme, "| Capability | [memdb](memdb.md) |\n") {
		t.Errorf("the reference run is a column of the matrix:\n%s", readme)
	}
	html := read(t, filepath.Join(out, "index.html"))
	if strings.Contains(html, `<th><a href="#aws-sqs">`) || !strings.Contains(html, "<h2>Reference run against AWS SQS</h2>") {
		t.Error("index.html: the reference run must have a section and no column")
	}
}

// TestReferenceFromEarlierRun: the reference run and a backend's run happen apart, in
// either order, and the backend's report follows the reference recorded in the out dir.
func TestReferenceFromEarlierRun(t *testing.T) {
	declDir, out := t.TempDir(), t.TempDir()
	writeDecls(t, declDir, "memdb", false)
	backendOnly := func() {
		var in goTestJSON
		backendCases(&in, "memdb")
		in.finish("memdb", "pass")
		generateIn(t, declDir, out, &in)
	}
	backendOnly()
	wantConfirmed(t, out, nil)
	md := read(t, filepath.Join(out, "memdb.md"))
	if !strings.Contains(md, "Expectations confirmed against AWS SQS: none: no run against AWS SQS is recorded.") ||
		strings.Contains(md, "(confirmed against AWS SQS") {
		t.Errorf("memdb.md without a reference run:\n%s", md)
	}
	if readme := read(t, filepath.Join(out, "README.md")); !strings.Contains(readme, "No run against AWS SQS is recorded: "+
		"the suite's expectations come from the SQS API reference and the SDKs' service models, unconfirmed against the service.") {
		t.Error("README.md does not say that no run against AWS SQS is recorded")
	}

	refDecls := t.TempDir()
	writeDecls(t, refDecls, report.ReferenceBackend, true)
	var in goTestJSON
	referenceCases(&in)
	in.finish(report.ReferenceBackend, "fail")
	if _, err := report.Generate(report.Options{TestJSON: &in, DeclarationsDir: refDecls, OutDir: out}); err != nil {
		t.Fatalf("Generate reference: %v", err)
	}
	wantConfirmed(t, out, confirmedByReference()) // memdb's report, updated in place

	backendOnly() // reads aws-sqs.json from the out dir
	wantConfirmed(t, out, confirmedByReference())

	if err := os.Remove(filepath.Join(out, "aws-sqs.json")); err != nil {
		t.Fatal(err)
	}
	backendOnly()
	wantConfirmed(t, out, nil)
}
