// Package gateway is the SQS wire gateway: one http.Handler that speaks both SQS
// protocols (AWS JSON 1.0 and Query) and runs every SQS action against a drivers.Driver.
//
// # Request flow
//
//  1. Protocol. A request with an X-Amz-Target header ("AmazonSQS.<Action>") is AWS JSON
//     1.0; anything else is the Query protocol (form parameters in a POST body or a GET
//     query string, sent to "/" or to a queue URL, whose path then names the queue). A
//     Query request whose Accept header prefers application/json (API Gateway's AWS
//     integrations send one) is still Query; only its result is rendered otherwise (4).
//  2. Normalisation. Both protocols become one representation, the AWS JSON 1.0 request
//     body: JSON is taken as it is, Query parameters are rebuilt into the same JSON by
//     query.go (flattened "Attribute.N.Name" lists and maps become JSON maps and arrays,
//     numeric members become numbers). Each action therefore decodes and validates once,
//     into the input structs of types.go.
//  3. Action. Validation of queue attributes comes from gateway/queueattr, of messages
//     (body, attributes, ids, sizes, MD5s) from gateway/message; the action applies the
//     rules that span queues or need the queue's type (FIFO group and deduplication ids,
//     per-message delay, dead-letter targets) and calls the driver with times read from
//     Config.Clock.
//  4. Rendering. The output struct is written as JSON, or as the Query XML document
//     <Action>Response/<Action>Result in the 2012-11-05 namespace (xml.go), or, for a
//     Query request that accepts JSON, in SQS's legacy JSON shape of that document
//     (queryjson.go), whose errors stay XML. Errors are
//     *sqserr.Error values; gateway/sqserr's table gives the JSON __type, the Query code,
//     the HTTP status and the fault, sent as the JSON body plus the x-amzn-query-error
//     header that query-compatible SDKs read, or as a Query <ErrorResponse>.
//
// # Capability policy
//
// New reads the driver's capability declarations once and builds a capabilities.Policy
// with Config.Policy (start-up fails if they cannot work together). Each action asks the
// policy about the capabilities its request needs (FIFO queues, tags, purge, per-message
// delay, long polling, move tasks, each queue attribute set, ...) before changing
// anything: unsupported ones, and degraded ones under a strict policy, fail with the
// capability's SQS error; degraded ones proceed and are named in the X-Anysqs-Degraded
// response header (X-Anysqs-Explain: 1 on a request lists every decision).
//
// A declaration's limits below SQS's own (visibility.max's max_seconds, message.max-size's
// max_bytes, ...) are checked the same way, before the driver is called (limits.go): a
// value beyond one fails with InvalidParameterValue, or InvalidAttributeValue for a queue
// attribute, naming the backend's limit; only a timeout or delay whose capability is
// degraded, under the degrade policy, is clamped to the limit, with the header. Limits
// the gateway cannot check are marked informational in the catalog.
//
// A queue holds at most Config.MaxInFlight in-flight messages (SQS's 120,000): the gateway
// counts them at the backend (QueueStats) when a receive may come near the limit, and at
// it answers as SQS does, OverLimit for a short poll on a standard queue and no message
// otherwise (inflight.go).
//
// # Several backends
//
// A gateway serves one driver (Config.Driver) or several (Config.Backends), each queue on
// the backend of the first Config.Routes glob its name matches, else on the default
// route's (routes.go). Everything above holds per queue, with its own backend's
// declarations, limits and in-flight count; ListQueues merges the backends in name order.
// A queue and its dead-letter queue, and a move task's source and destination, must be
// on one backend: the gateway refuses a pair across backends with InvalidParameterValue
// rather than move messages between them. A queue stored on a backend its name does not
// route to is not served; New logs each it finds.
//
// # Long polling
//
// ReceiveMessage with a wait (WaitTimeSeconds, or the queue's
// ReceiveMessageWaitTimeSeconds) registers a waiter on the queue before each receive
// attempt. Sends, visibility releases and move tasks through this gateway wake the
// waiters of their queue; timers on the gateway clock wake them at the driver's
// NextVisibleAt and at the deadline. Writes through other gateway instances reach them
// as the driver's Description.Activity says: ActivityNotify and ActivityWatch drivers
// report them through AwaitActivity (an ActivityWatch driver only for queues the gateway
// first names in WatchActivity, after which it receives once more; a watch lasts a minute
// past the deadline of the poll that took it, so later polls reuse it), ActivityPoll drivers
// are re-checked on a backoff bounded by Description.PollInterval, and ActivityLocal
// storage serves this gateway alone. A BlockingReceive driver is given the time left to
// wait in its own receive. Apart from ActivityPoll's re-checks there is no polling loop,
// so a fake clock drives long polls in tests.
//
// # Background work
//
// New starts a retention sweep (each driver's Sweep every Config.SweepInterval of clock
// time) and, for each ActivityNotify and ActivityWatch driver, the AwaitActivity relay;
// Close stops them and any running move tasks.
//
// # Message move tasks
//
// StartMessageMoveTask runs in the gateway, calling driver.MoveMessages once per second
// of clock time, at most MaxNumberOfMessagesPerSecond messages each. Where task state
// lives depends on the driver's Description.MoveTaskStore. When it is set, the driver
// keeps tasks in its backend: every gateway instance sharing the storage lists and
// cancels every task, one instance runs each while it holds the task's lease, another
// adopts a task whose lease lapsed, and tasks survive restarts. Each step's count and
// lease are written in the move's own transaction (drivers.MoveTaskStep), so
// ApproximateNumberOfMessagesMoved is exactly what left the source, across a killed
// gateway, a lost reply or two instances adopting at once; Close lets a step under way
// finish (up to 10 s) and hands the task on. Otherwise tasks are kept in this gateway's
// memory: a restarted gateway forgets its tasks (moved messages stay moved), and an
// instance lists and cancels only the tasks it started.
//
// # Authentication
//
// With Config.Credentials set, every request must carry a valid AWS Signature Version 4
// by one of the configured keys, verified as SQS does: in the Authorization header, or in
// the query string of a presigned URL, valid until its X-Amz-Expires and for at most 15
// minutes after its date. Session tokens are not supported. Without credentials requests
// are not authenticated.
//
// # Accounts and queue policies
//
// Each access key belongs to an account (Config.Accounts; otherwise Config.AccountID, which
// unauthenticated requests also use). Queues live in their creator's account: URLs and ARNs
// carry its id, and the default account's queues are stored under their names while other
// accounts' are stored as "<account>..<name>" (accounts.go). Another account may act on a
// queue only as the queue's Policy allows (queuepolicy.go, its conditions in
// policycondition.go), which AddPermission and RemovePermission edit as SQS does;
// otherwise it gets AccessDenied.
package gateway
