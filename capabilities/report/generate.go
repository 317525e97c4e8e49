package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrFailed is wrapped by Generate's error when the report itself fails: a declaration
// contradicted by its cases, a capability without evidence, or a broken run.
var ErrFailed = errors.New("compatibility report fails")

// Options configure Generate.
type Options struct {
	// TestJSON is the go test -json output of the conformance suite. It may be a live
	// pipe: Progress is called as cases finish.
	TestJSON io.Reader
	// DeclarationsDir holds the <backend>.declarations.json files the suite wrote.
	DeclarationsDir string
	// OutDir receives <backend>.md, <backend>.json, README.md and index.html (usually
	// docs/compat). Reports of backends not in this run are kept and appear in the matrix.
	OutDir string
	// AllowNoEvidence makes a capability without cases a warning instead of a failure,
	// while the suite is still being written.
	AllowNoEvidence bool
	// Progress, if set, is called once per finished case.
	Progress func(CaseResult)
}

// Summary is what Generate reports back, one entry per backend of this run.
type Summary struct {
	Backends []BackendSummary
	// Files are the paths written.
	Files []string
}

// BackendSummary is one backend's outcome.
type BackendSummary struct {
	Backend string
	Totals  Totals
	// NotRun: the backend's service was unavailable and the whole backend was skipped.
	NotRun bool
	// Failures are the reasons this backend's report fails; empty means it passes.
	Failures []string
	// Reference: the run against AWS SQS. Its failures say where the suite's expectations
	// are unconfirmed, not that anysqs is wrong, so they do not fail Generate.
	Reference bool
}

// Generate reads a conformance run, writes the compatibility report into OutDir, and
// returns a summary. Its error wraps ErrFailed when the report fails; the files are
// written all the same so the failure can be read.
func Generate(opts Options) (Summary, error) {
	if opts.TestJSON == nil || opts.DeclarationsDir == "" || opts.OutDir == "" {
		return Summary{}, errors.New("report: TestJSON, DeclarationsDir and OutDir are required")
	}
	run, err := readTestJSON(opts.TestJSON, opts.Progress)
	if err != nil {
		return Summary{}, err
	}
	decls, err := ReadDeclarations(opts.DeclarationsDir)
	if err != nil {
		return Summary{}, err
	}
	sum, reps := merge(run, decls, opts.AllowNoEvidence)
	if len(sum.Backends) == 0 {
		return sum, fmt.Errorf("%w: the input has no TestConformance/<backend> results (failed packages: %v)",
			ErrFailed, run.failedPackages)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return sum, err
	}
	ref, err := referenceOf(reps, opts.OutDir)
	if err != nil {
		return sum, err
	}
	ran := map[string]bool{}
	for i := range reps {
		ran[reps[i].Backend] = true
		if !reps[i].Run.Reference {
			confirm(&reps[i], ref)
		}
		files, err := writeBackend(opts.OutDir, reps[i], opts.AllowNoEvidence)
		sum.Files = append(sum.Files, files...)
		if err != nil {
			return sum, err
		}
	}
	files, err := reconfirm(opts.OutDir, ref, ran, opts.AllowNoEvidence)
	sum.Files = append(sum.Files, files...)
	if err != nil {
		return sum, err
	}
	files, err = writeMatrix(opts.OutDir, opts.AllowNoEvidence)
	sum.Files = append(sum.Files, files...)
	if err != nil {
		return sum, err
	}
	var failed []string
	for _, b := range sum.Backends {
		if b.Reference {
			continue
		}
		for _, f := range b.Failures {
			failed = append(failed, b.Backend+": "+f)
		}
	}
	if len(failed) > 0 {
		return sum, fmt.Errorf("%w:\n  %s", ErrFailed, strings.Join(failed, "\n  "))
	}
	return sum, nil
}

// merge evaluates every backend that appears in the run.
func merge(run *run, decls map[string]Declarations, noEvidenceOK bool) (Summary, []BackendReport) {
	byBackend := map[string][]CaseResult{}
	for _, c := range run.cases {
		byBackend[c.Backend] = append(byBackend[c.Backend], c)
	}
	names := map[string]bool{}
	for n := range byBackend {
		names[n] = true
	}
	// Declarations of backends absent from this run are stale leftovers: ignored.
	for n := range run.backends {
		names[n] = true
	}
	var sum Summary
	var reps []BackendReport
	failedCase := false
	for _, c := range run.cases {
		failedCase = failedCase || c.Status == Fail
	}
	for _, name := range sortedKeys(names) {
		cases := byBackend[name]
		d, ok := decls[name]
		if !ok {
			bs := BackendSummary{Backend: name}
			// A row whose cases all skipped passes as a test (go test reports a parent of
			// skipped subtests as passed), so its own status says nothing.
			if !anyRan(cases) {
				bs.NotRun = true // service unavailable: nothing to declare, nothing checked
			} else {
				bs.Failures = []string{"the run has cases but no declarations file; the suite must call report.WriteDeclarations"}
			}
			sum.Backends = append(sum.Backends, bs)
			continue
		}
		rep := evaluate(d, cases)
		rep.Problems = append(rep.Problems, problemsOf(run, name)...)
		if !failedCase {
			for _, p := range run.failedPackages {
				rep.Problems = append(rep.Problems, fmt.Sprintf("package %s failed outside the conformance cases", p))
			}
		}
		sum.Backends = append(sum.Backends, BackendSummary{Backend: name, Totals: rep.Totals,
			Failures: rep.failures(noEvidenceOK), Reference: rep.Run.Reference})
		reps = append(reps, rep)
	}
	return sum, reps
}

func anyRan(cases []CaseResult) bool {
	for _, c := range cases {
		if c.Status != NotRun {
			return true
		}
	}
	return false
}

// problemsOf returns the run's problems about backend's cases.
func problemsOf(run *run, backend string) []string {
	var out []string
	prefix := suiteTest + "/" + backend + "/"
	for _, p := range run.problems {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

func writeBackend(dir string, rep BackendReport, noEvidenceOK bool) ([]string, error) {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	jsonPath := filepath.Join(dir, rep.Backend+".json")
	mdPath := filepath.Join(dir, rep.Backend+".md")
	if err := writeFileAtomic(jsonPath, append(js, '\n')); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(mdPath, backendMarkdown(rep, noEvidenceOK)); err != nil {
		return []string{jsonPath}, err
	}
	return []string{jsonPath, mdPath}, nil
}

// reconfirm brings the AWS confirmations of the reports in dir that this run did not
// regenerate up to date with ref, so that recording a reference run (or removing one)
// updates every backend's report; a report whose confirmations stand is not rewritten.
func reconfirm(dir string, ref *BackendReport, ran map[string]bool, noEvidenceOK bool) ([]string, error) {
	reps, err := readReports(dir)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, rep := range reps {
		if ran[rep.Backend] || rep.Run.Reference {
			continue
		}
		before, _ := json.Marshal(rep)
		confirm(&rep, ref)
		if after, _ := json.Marshal(rep); string(after) == string(before) {
			continue
		}
		files, err := writeBackend(dir, rep, noEvidenceOK)
		written = append(written, files...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeMatrix rebuilds README.md and index.html from every backend report in dir, so
// that reporting one backend keeps the others' columns.
func writeMatrix(dir string, noEvidenceOK bool) ([]string, error) {
	reps, err := readReports(dir)
	if err != nil {
		return nil, err
	}
	readme, index := filepath.Join(dir, "README.md"), filepath.Join(dir, "index.html")
	if err := writeFileAtomic(readme, matrixMarkdown(reps, noEvidenceOK)); err != nil {
		return nil, err
	}
	page, err := pageHTML(reps, noEvidenceOK)
	if err != nil {
		return []string{readme}, err
	}
	return []string{readme, index}, writeFileAtomic(index, page)
}

// readReports reads every <backend>.json report in dir; other JSON files are skipped.
func readReports(dir string) ([]BackendReport, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var reps []BackendReport
	for _, p := range paths {
		if strings.HasSuffix(p, declarationsSuffix) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var rep BackendReport
		if json.Unmarshal(b, &rep) != nil || rep.Format != FormatReport {
			continue
		}
		reps = append(reps, rep)
	}
	sortReports(reps)
	return reps, nil
}
