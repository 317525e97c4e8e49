package report_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/report"
)

// wantFailure checks that the report failed for the reason want, in the error, the
// summary and the backend's Markdown.
func wantFailure(t *testing.T, sum report.Summary, err error, out, backend, want string) {
	t.Helper()
	if !errors.Is(err, report.ErrFailed) {
		t.Fatalf("Generate error = %v, want ErrFailed", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	found := false
	for _, b := range sum.Backends {
		for _, f := range b.Failures {
			found = found || (b.Backend == backend && strings.Contains(f, want))
		}
	}
	if !found {
		t.Errorf("summary %+v lacks failure %q", sum, want)
	}
	if md, rerr := os.ReadFile(filepath.Join(out, backend+".md")); rerr == nil && !strings.Contains(string(md), "**Result: FAIL.**") {
		t.Errorf("%s.md does not show FAIL", backend)
	}
}

// TestDeclaredButNotDelivered: a driver claims FIFO ordering, and the case that checks it
// fails. The report must fail and show the cell red.
func TestDeclaredButNotDelivered(t *testing.T) {
	decls := declare(nil)
	var in goTestJSON
	in.everyCase("liar", decls, capabilities.FIFOOrdering)
	in.testCase("liar", "fifo.ordering", "three_groups", "fail", "group g1: got m2 before m1")
	in.finish("liar", "fail")
	sum, out, err := generate(t, "liar", decls, &in, report.Options{})
	wantFailure(t, sum, err, out, "liar", "fifo.ordering declared native, but cases failed: three_groups")
	md := read(t, filepath.Join(out, "liar.md"))
	if !strings.Contains(md, "| [fifo.ordering](#cap-fifo.ordering) | native | ❌ failed |") ||
		!strings.Contains(md, "> case_test.go:42: group g1: got m2 before m1") {
		t.Errorf("liar.md does not show the failed case with its reason:\n%s", md)
	}
	if html := read(t, filepath.Join(out, "index.html")); !strings.Contains(html, `<td class="failed"><a href="#liar--fifo.ordering" title="liar fifo.ordering: native, failed`) ||
		!strings.Contains(html, `native: CONTRADICTED by a case`) {
		t.Error("index.html does not colour the contradicted cell red")
	}
}

// TestUnsupportedButNotRejected: a driver declares purge Unsupported, but the case that
// asserts the rejection fails because the purge went through.
func TestUnsupportedButNotRejected(t *testing.T) {
	decls := declare(map[capabilities.ID]capabilities.Level{capabilities.QueuePurge: capabilities.Unsupported})
	var in goTestJSON
	in.everyCase("lax", decls, capabilities.QueuePurge)
	in.testCase("lax", "queue.purge", "rejected_unchanged", "fail", "PurgeQueue succeeded; want UnsupportedOperation")
	in.finish("lax", "fail")
	sum, out, err := generate(t, "lax", decls, &in, report.Options{})
	wantFailure(t, sum, err, out, "lax", "queue.purge declared unsupported, but cases failed: rejected_unchanged")
}

func TestNoEvidence(t *testing.T) {
	decls := declare(nil)
	build := func() *goTestJSON {
		var in goTestJSON
		in.everyCase("thin", decls, capabilities.QueueTags)
		in.finish("thin", "pass")
		return &in
	}
	sum, out, err := generate(t, "thin", decls, build(), report.Options{})
	wantFailure(t, sum, err, out, "thin", "queue.tags declared native, but no case exercises it")

	sum, out, err = generate(t, "thin", decls, build(), report.Options{AllowNoEvidence: true})
	if err != nil || len(sum.Backends[0].Failures) != 0 {
		t.Fatalf("AllowNoEvidence: err = %v, summary = %+v", err, sum)
	}
	if md := read(t, filepath.Join(out, "thin.md")); !strings.Contains(md, "| [queue.tags](#cap-queue.tags) | native | ⚠️ no evidence | none |") {
		t.Error("thin.md does not show queue.tags as no evidence")
	}
}

// TestUnfinishedCase: a case that started but never ended (the binary panicked) fails.
func TestUnfinishedCase(t *testing.T) {
	decls := declare(nil)
	var in goTestJSON
	in.everyCase("crashy", decls)
	in.event("run", "TestConformance/crashy/queue.purge/twice", "")
	in.event("output", "TestConformance/crashy/queue.purge/twice", "panic: nil map\n")
	sum, out, err := generate(t, "crashy", decls, &in, report.Options{})
	wantFailure(t, sum, err, out, "crashy", "queue.purge declared native, but cases failed: twice")
	if !strings.Contains(read(t, filepath.Join(out, "crashy.md")), "> panic: nil map") {
		t.Error("the panic is not shown as the reason")
	}
}

func TestUnknownCapabilityInCaseName(t *testing.T) {
	decls := declare(nil)
	var in goTestJSON
	in.everyCase("typo", decls)
	in.testCase("typo", "fifo.orderin", "three_groups", "pass")
	in.finish("typo", "pass")
	sum, out, err := generate(t, "typo", decls, &in, report.Options{})
	wantFailure(t, sum, err, out, "typo", `names capability "fifo.orderin", which is not in the catalog`)
}

func TestCasesWithoutDeclarations(t *testing.T) {
	var in goTestJSON
	in.testCase("ghost", "fifo.ordering", "three_groups", "pass")
	sum, _, err := generate(t, "ghost", nil, &in, report.Options{})
	wantFailure(t, sum, err, "", "ghost", "no declarations file")
}

func TestInvalidDeclarations(t *testing.T) {
	decls := declare(nil)[1:] // queue.standard undeclared
	var in goTestJSON
	in.everyCase("partial", decls)
	in.finish("partial", "pass")
	sum, out, err := generate(t, "partial", decls, &in, report.Options{})
	wantFailure(t, sum, err, out, "partial", "queue.standard is not declared")
}

// TestBackendNotRun: a backend whose service is unavailable skips as a whole; that is
// "not run", not a failure.
func TestBackendNotRun(t *testing.T) {
	var in goTestJSON
	in.event("run", "TestConformance/postgres", "")
	in.event("output", "TestConformance/postgres", "    conformance_test.go:20: ANYSQS_POSTGRES_URL not set\n")
	in.event("skip", "TestConformance/postgres", "")
	sum, _, err := generate(t, "postgres", nil, &in, report.Options{})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(sum.Backends) != 1 || !sum.Backends[0].NotRun {
		t.Fatalf("summary = %+v, want postgres not run", sum)
	}
}

// TestPackageFailureOutsideCases: a build failure (or any non-conformance failure) with
// no failing case must not yield a green report.
func TestPackageFailureOutsideCases(t *testing.T) {
	decls := declare(nil)
	var in goTestJSON
	in.everyCase("memdb", decls)
	in.event("pass", "TestConformance/memdb", "")
	in.event("fail", "", "")
	sum, out, err := generate(t, "memdb", decls, &in, report.Options{})
	wantFailure(t, sum, err, out, "memdb", "package github.com/anysqs/anysqs/conformance failed outside the conformance cases")
}

// TestMatrixKeepsOtherBackends: reporting one backend keeps the others in the matrix.
func TestMatrixKeepsOtherBackends(t *testing.T) {
	declDir, out := t.TempDir(), t.TempDir()
	for _, backend := range []string{"sqlite", "postgres"} {
		decls := declare(map[capabilities.ID]capabilities.Level{capabilities.DelayMessage: capabilities.Degraded})
		if err := report.WriteDeclarations(declDir, report.NewDeclarations(backend, "1", "svc", decls, runDate, "abc")); err != nil {
			t.Fatal(err)
		}
		var in goTestJSON
		in.everyCase(backend, decls)
		in.finish(backend, "pass")
		if _, err := report.Generate(report.Options{TestJSON: &in, DeclarationsDir: declDir, OutDir: out}); err != nil {
			t.Fatal(err)
		}
	}
	readme := read(t, filepath.Join(out, "README.md"))
	if !strings.Contains(readme, "| Capability | [postgres](postgres.md) | [sqlite](sqlite.md) |") {
		t.Errorf("README.md lacks both backends:\n%s", readme)
	}
	if !strings.Contains(readme, "| delay.message | [degraded: fallback confirmed](postgres.md#cap-delay.message)") {
		t.Error("README.md cells do not link their evidence")
	}
}

func TestDeclarationsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	decls := declare(map[capabilities.ID]capabilities.Level{capabilities.QueueTags: capabilities.Unsupported})
	want := report.NewDeclarations("sqlite", "0.1.0", "SQLite 3.50", decls, runDate, "abc")
	if err := report.WriteDeclarations(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := report.ReadDeclarations(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := got["sqlite"]
	if d.Date != "2026-11-29T20:00:00Z" || d.ServiceVersion != "SQLite 3.50" || len(d.Capabilities) != len(decls) ||
		d.Capabilities[len(decls)-1].ID != string(decls[len(decls)-1].ID) {
		t.Fatalf("round trip = %+v", d)
	}
	for _, bad := range []string{"", "../x", ".hidden", `a\b`} {
		if err := report.WriteDeclarations(dir, report.Declarations{Backend: bad}); err == nil {
			t.Errorf("backend name %q accepted", bad)
		}
	}
}

func TestGenerateRequiresOptions(t *testing.T) {
	if _, err := report.Generate(report.Options{}); err == nil || errors.Is(err, report.ErrFailed) {
		t.Fatalf("Generate without options = %v", err)
	}
}

func TestEmptyRunFails(t *testing.T) {
	var in goTestJSON
	in.event("output", "", "# github.com/anysqs/anysqs/conformance\n")
	in.event("build-fail", "", "")
	_, _, err := generate(t, "memdb", declare(nil), &in, report.Options{})
	if !errors.Is(err, report.ErrFailed) || !strings.Contains(err.Error(), "no TestConformance/<backend> results") {
		t.Fatalf("Generate on a failed build = %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	c := report.CaseResult{Test: "TestConformance/x/queue.purge/twice", Status: report.Fail, Reason: []string{"a", "boom"}}
	if got, want := c.String(), "fail    TestConformance/x/queue.purge/twice: boom"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}
