// Package sqsrule holds the rules Amazon SQS defines that every driver applies the same
// way, so that each is written once:
//   - limits: visibility, delay, long-poll wait, message size, retention, batch size
//     (limits.go);
//   - queues: one purge per PurgeInterval, and name reuse after DeleteQueue (queues.go);
//   - redrive: the dead-letter queue a receive moves a message to and when, and what the
//     message keeps there: its enqueue time and deduplication id (redrive.go);
//   - FIFO: the runs of a message group a receive may take, the sequence number format
//     (fifo.go, limits.go);
//   - windows: deduplication and receive-attempt expiry, a purge forgetting
//     deduplication ids, and when a repeated receive attempt replays (windows.go);
//   - receipt handles: the seal (a MAC over what a handle names) and the decision table
//     for a delete or a visibility change by handle (handles.go, receipt.go).
//
// A driver whose backend runs these rules in its own query language (PostgreSQL's claim
// statement, SQLite's) states them there with a comment naming the function here.
//
// A driver keeps what is its own: what a handle names (its payload), where the MAC key
// is kept, and how it finds the state of the message a handle names. It asks this
// package what SQS does in that state. The gateway validates requests against the same
// limits, so a limit changes here or nowhere.
//
// Like drivers, this package imports only the standard library, capabilities and
// drivers: plugins outside this module can use it.
package sqsrule
