// Package conformance is the black-box conformance suite of anysqs.
//
// The cases and their harness are this package, which the binary links: Run runs them
// outside go test (`anysqs verify`, internal/verify) against a configured backend or an
// SQS endpoint, writing the run as go test -json events for capabilities/report. Cases
// are capabilities/expect's Case type, which the driver-level suite (drivers/drivertest)
// shares, with its level dispatch and its queue-time budget.
//
// Under go test, for every row of one backend table
// (backends_test.go, from internal/testbed: name, driver opener, service script, target,
// parallelism, a per-case hang guard)
// it starts a real gateway on a loopback port over that backend's driver and drives it
// with real SQS clients: aws-sdk-go-v2 over AWS JSON 1.0 for every case
// (TestConformance), the same client over the Query protocol for every case on the
// embedded backend (TestConformanceQuery), and Debian's AWS CLI 2.9 and boto3 (1.26 over
// Query, current over JSON) for the core flows. Rows run concurrently; a case that runs
// past its row's hang guard has its requests cancelled, however long it waited to start.
//
// Subtests are named TestConformance/<backend>/<capabilityID>/<case>, so the compatibility
// report can be built from `go test -json` alone. Each case declares the capability IDs it
// exercises, and its expectation follows the level the backend declares for them: Native
// and Emulated mean the SQS behaviour, Degraded the documented fallback, Unsupported the
// explicit SQS error with no side effect.
//
// Time: when the driver's Description declares a gateway clock, the gateway runs on a
// fake clock started at the current time, and cases move it (H.Advance), so minutes of
// queue time take milliseconds. When it declares a service clock, the gateway runs on
// the real clock and H.Advance sleeps, up to realClockBudget (45 s) of waiting per case;
// cases run in parallel, so the waits overlap. A case needing more queue time skips with
// "needs a gateway clock: ...", a status of its own in the report. Negative timing checks
// ("not visible before the timeout") count only while the deadline has not passed
// (H.Before, H.ReceiveNoneBefore).
//
// Every other skip means that the backend's service is not reachable here ("service not
// available here: ..."); under CI=true that is a failure instead.
//
// Backends declaring a capability Unsupported are held to the catalog's rejection:
// TestUnsupportedRejected runs each rejection probe against the embedded backend with that
// one capability declared Unsupported, and TestEveryCapabilityHasACase fails when a
// capability that a committed report declares Unsupported has cases left without a
// probe. TestReportCatchesFalseDeclaration runs the suite against a hidden row whose
// driver ignores ChangeMessageVisibility while declaring it, and checks the
// compatibility report fails.
//
// Adding a backend: its row in internal/testbed's All gives it an in-process row, a
// served row and, when it says so, a plugin row here (docs/development.md); run
// `anysqs report --backends <name>` and commit docs/compat/<name>.*.
//
// Environment:
//
//	(services)                 what scripts/test-env.sh exports, read by internal/testenv:
//	                           ANYSQS_TEST_POSTGRES_DSN, the emulators' hosts and so on.
//	ANYSQS_CONFORMANCE_BACKENDS  comma-separated rows of the backend table to run (default:
//	                           every row that is not hidden).
//	ANYSQS_CONFORMANCE_OUT     directory for the <backend>.declarations.json files the
//	                           report reads (default: anysqs-conformance under the system
//	                           temp dir, logged).
//	ANYSQS_CONFORMANCE_ENDPOINT  an SQS endpoint for the endpoint row, judged black box
//	                           against the catalog's native behaviour on a real clock; the
//	                           client takes AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//	                           AWS_SESSION_TOKEN and AWS_REGION as any SQS client does, and
//	                           ANYSQS_CONFORMANCE_ACCOUNT (default 123456789012) is the
//	                           account in its queue URLs. Restart cases do not run there.
//	                           When its host ends in .amazonaws.com the row is aws-sqs, the
//	                           reference run: its passed cases confirm the expectations of
//	                           every backend's report.
//	ANYSQS_CONFORMANCE_REFERENCE  "aws" names the endpoint row aws-sqs, a reference run,
//	                           whatever its host: to try the flow on a local gateway. Never
//	                           commit such a report.
//	CI=true                    a missing service or client fails instead of skipping.
//
// Beyond -parallel, which TestMain raises to 64 unless given, cases of gateway-clock
// backends run at most GOMAXPROCS at a time, as before real-clock rows existed.
package conformance
