// Package sqlite is the embedded default backend of anysqs: queues and messages live in
// one SQLite database (modernc.org/sqlite, pure Go, no cgo) under a data directory.
//
// # Semantics
//
// Every write method runs in one BEGIN IMMEDIATE transaction and returns only after
// COMMIT, with the database in WAL mode and synchronous=FULL, so a success survives a
// crash of the process and of the machine. A receive claims messages, moves messages
// past their queue's maxReceiveCount to the dead-letter queue (a message whose receive
// count already equals maxReceiveCount is moved on the next receive attempt instead of
// being delivered, as SQS does) and records the ReceiveRequestAttemptId, all in the same
// transaction.
//
// Receipt handles encode the queue, the message row and a random token drawn for that
// receive and stored with the message, signed with an HMAC whose key is kept in the
// database: handles survive restarts, a handle from an earlier receive is recognised as
// stale, and a forged or foreign handle is rejected without a lookup.
//
// FIFO queues deliver each message group in sequence order; no message of a group is
// delivered while another of the group is in flight, and one receive may return several
// messages of one group. Deduplication records (scope queue or messageGroup) and
// receive attempts are kept for five minutes and removed by Sweep. Sequence numbers are
// per-queue counters rendered as 20 decimal digits.
//
// All times come from the request's Now; the driver never reads the wall clock for
// queue semantics. Messages past their retention period are never delivered or counted,
// and Sweep deletes them. AwaitActivity returns at once with Supported false: one
// process owns the database, so the gateway sees every write.
//
// # Limits
//
// One process per data directory: SQLite allows other processes to open the file, but
// they would not wake this gateway's long polls. Writes are serialised through a single
// connection (SQLite has one writer at a time anyway); reads such as GetQueue, ListQueues
// and QueueStats use a small pool of their own. QueueStats and FIFO group checks scan
// the queue's rows, so very deep queues (millions of messages, or FIFO groups of many
// thousands) make receives and counts slower. KMS and SSE attributes are stored but the
// file is not encrypted.
//
// # Configuration
//
//	backend: sqlite
//	options:
//	  data_dir: /var/lib/anysqs   # required; holds anysqs.db and its WAL; ":memory:" for tests
//	  busy_timeout_ms: 5000       # wait for another process's write lock before failing (default 5000)
package sqlite
