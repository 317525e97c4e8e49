package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReferenceBackend names the conformance row that runs against AWS SQS itself, and its
// report: docs/compat/aws-sqs.json.
const ReferenceBackend = "aws-sqs"

// AWSConfirmation is what a reference run against AWS SQS says of a backend report's
// expectations: the cases that passed there are confirmed; the rest stand on the SQS API
// reference and the SDKs' service models alone.
type AWSConfirmation struct {
	// Date and Commit identify the reference run.
	Date   string `json:"date"`
	Commit string `json:"commit"`
	// Confirmed counts this report's cases that also passed against AWS SQS.
	Confirmed int `json:"confirmed"`
}

// passedCases returns the names of rep's passed cases without the
// TestConformance/<backend>/ prefix, the key that matches a case across backends.
func passedCases(rep BackendReport) map[string]bool {
	passed := map[string]bool{}
	for _, c := range rep.Capabilities {
		for _, cs := range c.Cases {
			if cs.Status == Pass {
				passed[caseKey(cs.Test)] = true
			}
		}
	}
	return passed
}

// caseKey drops the suite and backend segments of a full case name.
func caseKey(test string) string {
	parts := strings.SplitN(test, "/", 3)
	return parts[len(parts)-1]
}

// confirm marks the cases of rep that passed in the reference run ref (nil: none is
// recorded). The marks are derived from ref, so they are recomputed, never merged.
func confirm(rep *BackendReport, ref *BackendReport) {
	rep.AWSConfirmation = nil
	var passed map[string]bool
	if ref != nil {
		passed = passedCases(*ref)
		rep.AWSConfirmation = &AWSConfirmation{Date: ref.Date, Commit: ref.Commit}
	}
	confirmed := map[string]bool{}
	for i := range rep.Capabilities {
		for j := range rep.Capabilities[i].Cases {
			cs := &rep.Capabilities[i].Cases[j]
			cs.AWSConfirmed = ""
			if passed[caseKey(cs.Test)] {
				cs.AWSConfirmed = ref.Date
				confirmed[cs.Test] = true
			}
		}
	}
	if rep.AWSConfirmation != nil {
		rep.AWSConfirmation.Confirmed = len(confirmed)
	}
}

// readReference reads dir/aws-sqs.json; nil when there is none.
func readReference(dir string) (*BackendReport, error) {
	b, err := os.ReadFile(filepath.Join(dir, ReferenceBackend+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rep BackendReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("report: reference report: %w", err)
	}
	if rep.Format != FormatReport || !rep.Run.Reference {
		return nil, nil // not a reference run: it confirms nothing
	}
	return &rep, nil
}

// referenceOf picks the reference run among reps, else reads it from dir.
func referenceOf(reps []BackendReport, dir string) (*BackendReport, error) {
	for i := range reps {
		if reps[i].Run.Reference {
			return &reps[i], nil
		}
	}
	return readReference(dir)
}

// splitReference separates the reference run's report from the others.
func splitReference(reps []BackendReport) (others []BackendReport, ref *BackendReport) {
	for i := range reps {
		if reps[i].Run.Reference {
			ref = &reps[i]
		} else {
			others = append(others, reps[i])
		}
	}
	return others, ref
}

// confirmationSentence is a backend report's header line on its AWS confirmation.
func confirmationSentence(rep BackendReport) string {
	c := rep.AWSConfirmation
	if c == nil {
		return "Expectations confirmed against AWS SQS: none: no run against AWS SQS is recorded."
	}
	return fmt.Sprintf("Expectations confirmed against AWS SQS: %d of this report's %d cases, on %s, commit %s.",
		c.Confirmed, rep.Totals.Cases, orUnknown(c.Date), shortCommit(c.Commit))
}

// referenceLine is the matrix's line on the reference run, or why there is none.
func referenceLine(ref *BackendReport) string {
	if ref == nil {
		return noReferenceText
	}
	return fmt.Sprintf("Reference run against AWS SQS: [%s](%s.md), %s, commit %s: %d of %d cases passed.",
		ref.Backend, ref.Backend, orUnknown(ref.Date), shortCommit(ref.Commit), ref.Totals.Pass, ref.Totals.Cases)
}

// noReferenceText says that the suite's expectations are unconfirmed, and how to confirm them.
const noReferenceText = "No run against AWS SQS is recorded: the suite's expectations come from the SQS API " +
	"reference and the SDKs' service models, unconfirmed against the service. To record one: " +
	"`anysqs verify --endpoint aws --report DIR` with AWS credentials, then copy DIR/aws-sqs.json " +
	"into docs/compat and run `make report` (see docs/development.md)."
