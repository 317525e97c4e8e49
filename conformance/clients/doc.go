// Package clients runs real SQS client libraries, as applications use them, against the
// anysqs binary served from a shipped configuration: the libraries drive the gateway
// their own way, and the test judges what they report and what the queues hold afterwards
// through the SQS API (aws-sdk-go-v2).
//
// TestClients serves the shipped configuration of every backend of internal/testbed,
// and plugin.yaml (the binary as its own SQLite plugin), each file as shipped, pointed
// at this machine's test service on fresh storage by the environment
// (ANYSQS_BACKEND_OPTIONS, ANYSQS_LISTEN). Backends run in parallel. On each it runs:
//
//   - sqs-consumer and sqs-producer on the AWS SDK for JavaScript v3 (JSON protocol),
//     js/scenario.cjs, versions pinned in js/package-lock.json: a standard queue (25
//     messages with a message attribute, each handled once and deleted), a FIFO queue
//     (three groups, order kept within each, duplicate deduplication IDs answered with
//     the first message ID and not delivered) and a failing handler whose messages reach
//     the DLQ of a redrive policy after maxReceiveCount receives, with their receive
//     count, message ID and source ARN, while the others are deleted;
//   - Celery 5.2 on kombu's SQS transport (Query protocol: boto3 to publish, kombu's
//     pycurl client to receive), celery/anysqs_tasks.py: a producer sends add tasks, a
//     task that retries through the broker and one that fails for good; a worker runs
//     them, each run reporting on a second queue that the test reads.
//
// The clients come from scripts/test-env.sh: `npm ci` of js/ into a cache directory named
// by ANYSQS_TEST_CLIENTS_JS, Debian's python3-celery, python3-kombu, python3-pycurl and
// python3-boto3 for the interpreter named by ANYSQS_TEST_CELERY_PYTHON. A missing client
// or service skips as "not available", except under CI=true, where it fails.
package clients
