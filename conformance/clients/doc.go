// Package clients runs real SQS client libraries, as applications use them, against the
// anysqs binary served from a shipped configuration: nothing here is an SDK call written
// for the test, the libraries drive the gateway their own way and the test judges what
// they did and what the queues hold afterwards through the SQS API (aws-sdk-go-v2).
//
// TestClients builds bin/anysqs once, then per backend serves configs/<backend>.yaml as a
// subprocess (a copy of the file in a scratch directory, so SQLite's relative data_dir
// lands there; the listen address comes from ANYSQS_LISTEN, the emulators from
// SPANNER_EMULATOR_HOST / FIRESTORE_EMULATOR_HOST) and runs:
//
//   - sqs-consumer and sqs-producer on the AWS SDK for JavaScript v3 (JSON protocol),
//     from js/ (versions pinned in js/package-lock.json): a standard queue (25 messages
//     with a message attribute, each handled once and deleted), a FIFO queue (three
//     groups, order kept within each, duplicate deduplication IDs answered with the first
//     message ID and not delivered) and a failing handler whose messages reach the DLQ of
//     a redrive policy after maxReceiveCount receives while the others are deleted;
//
// celery/anysqs_tasks.py is a Celery app on kombu's SQS transport for the same harness; no
// test drives it yet.
//
// Backends: sqlite, postgres (the server of configs/postgres.yaml, 127.0.0.1:5432),
// spanner and firestore (their emulators). Queue names carry a random prefix and the
// queues are deleted afterwards, since the shipped configs share one database per server.
//
// The tests carry the build tag "clients" and are not part of `go test ./...` yet: the
// project's scripts do not install the clients. To run them, `npm ci` js/ into DIR/x (DIR/
// holding a copy of js/package-lock.json), then
// ANYSQS_TEST_CLIENTS_NODE_MODULES=DIR/node_modules go test -tags clients ./conformance/clients/.
// A missing client or service skips as "not available", except under CI=true, where it fails.
package clients
