// Package conformance is the black-box conformance suite of anysqs.
//
// The suite lives in this package's tests. For every backend in one table
// (harness_test.go) it starts a real gateway on a loopback port over that backend's
// driver, with a fake clock started at the current time, and drives it with real SQS
// clients: aws-sdk-go-v2 over AWS JSON 1.0 for every case (TestConformance), the same
// client over the Query protocol for every case on the embedded backend
// (TestConformanceQuery), and Debian's AWS CLI 2.9 and boto3 (1.26 over Query, current
// over JSON) for the core flows.
//
// Subtests are named TestConformance/<backend>/<capabilityID>/<case>, so the compatibility
// report can be built from `go test -json` alone. Each case declares the capability IDs it
// exercises, and its expectation follows the level the backend declares for them: Native
// and Emulated mean the SQS behaviour, Degraded the documented fallback, Unsupported the
// explicit SQS error with no side effect. A skip means only that the backend's service is
// not reachable here (under CI=true that is a failure instead).
//
// Backends declaring a capability Unsupported are held to the catalog's rejection:
// TestUnsupportedRejected runs each rejection probe against the embedded backend with that
// one capability declared Unsupported. TestReportCatchesFalseDeclaration runs the suite
// against a hidden row whose driver ignores ChangeMessageVisibility while declaring it,
// and checks the compatibility report fails.
//
// Time-dependent cases (visibility, delay, retention, dedup windows, purge cooldown) move
// the gateway's fake clock instead of sleeping, so minutes of queue time take
// milliseconds on every backend: drivers never read the wall clock for queue semantics.
//
// Environment:
//
//	ANYSQS_TEST_POSTGRES_DSN   PostgreSQL server for the postgres backend (default
//	                           postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable);
//	                           each case runs in a schema of its own, dropped afterwards.
//	ANYSQS_CONFORMANCE_BACKENDS  comma-separated rows of the backend table to run (default:
//	                           every row that is not hidden).
//	ANYSQS_CONFORMANCE_OUT     directory for the <backend>.declarations.json files the
//	                           report reads (default: anysqs-conformance under the system
//	                           temp dir, logged).
//	CI=true                    a missing service or client fails instead of skipping.
package conformance
