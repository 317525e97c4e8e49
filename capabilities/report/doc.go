// Package report turns a conformance run into the compatibility report: it reads the
// `go test -json` output of the conformance suite and the declarations each backend
// made, merges them, and writes docs/compat/<backend>.md and .json, the cross-backend
// matrix docs/compat/README.md and a self-contained docs/compat/index.html.
//
// # Inputs
//
// Conformance subtests are named TestConformance/<backend>/<capability>/<case>. The
// capability segment is one catalog ID, or several joined by "+" when a case exercises
// more than one (e.g. fifo.ordering+fifo.group-batch); the case counts as evidence for
// each. Deeper subtests roll up into their case. A skipped case means "the backend's
// service is not available here" and is shown as not run.
//
// The suite writes, for every backend it runs, a declarations file with
// WriteDeclarations: the driver's Describe output plus the service version, the date
// and the commit of the run (format FormatDeclarations).
//
// # Verdicts
//
// Each declared capability gets one verdict from its cases, whatever its level (an
// Unsupported capability's cases assert the rejection, a Degraded one's the fallback):
//
//   - verified: at least one case passed and none failed;
//   - failed: some case failed, so the declaration is false (red);
//   - no evidence: no case exercises the capability. This is a failure for every level:
//     a declaration nobody checked is a claim, not a fact. Options.AllowNoEvidence turns
//     it into a warning while the suite is being written;
//   - not run: every case was skipped because the backend's service was unavailable.
//     Not a failure, but the summary counts it.
//
// A case that started but never finished (panic, timeout) counts as failed; a failed
// package, a case naming an unknown capability, or cases without declarations make the
// report fail too. Generate writes every file even when the report fails, so the red
// cells can be read.
//
// # The reference run against AWS SQS
//
// The suite's expectations come from the SQS API reference and the SDKs' service models.
// A run of the suite against AWS SQS itself, the aws-sqs row (Declarations.Reference),
// checks them: a case that passed there is confirmed, and every backend report marks its
// own run of that case (CaseResult.AWSConfirmed) and counts them in its header. The
// confirmations are derived from docs/compat/aws-sqs.json, so Generate refreshes them in
// every report it finds and Check ignores them. The reference report has no matrix column;
// its failures do not fail Generate, and Check does not require it to run.
package report
