// Package conformance is the black-box conformance suite of anysqs.
//
// The suite lives in this package's tests. For every backend in one table
// (harness_test.go) it starts a real gateway on a loopback port over that backend's
// driver, with a fake clock started at the current time, and drives it with real SQS
// clients: aws-sdk-go-v2 over AWS JSON 1.0 for every case, and the AWS CLI and boto3 over
// the Query protocol for the core flows.
//
// Subtests are named TestConformance/<backend>/<capabilityID>/<case>, so the compatibility
// report can be built from `go test -json` alone. Each case declares the capability IDs it
// exercises, and its expectation follows the level the backend declares for them: Native
// and Emulated mean the SQS behaviour, Degraded the documented fallback, Unsupported the
// explicit SQS error with no side effect. A skip means only that the backend's service is
// not reachable here (under CI=true that is a failure instead).
//
// Time-dependent cases (visibility, delay, retention, dedup windows, purge cooldown) move
// the gateway's fake clock instead of sleeping, so minutes of queue time take
// milliseconds on every backend: drivers never read the wall clock for queue semantics.
//
// Environment:
//
//	ANYSQS_TEST_POSTGRES_DSN   PostgreSQL server for the postgres backend (default
//	                           postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable);
//	                           each case runs in a database of its own, dropped afterwards.
//	ANYSQS_CONFORMANCE_OUT     directory for <backend>.json run records (default: a
//	                           directory under the system temp dir, logged).
//	CI=true                    a missing service or client fails instead of skipping.
package conformance
