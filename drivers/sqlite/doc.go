// Package sqlite is the embedded default backend of anysqs: queues and messages live in
// one SQLite database (modernc.org/sqlite, pure Go, no cgo) under a data directory.
//
// # Semantics
//
// Every write method runs in a BEGIN IMMEDIATE transaction and returns only after
// COMMIT, with the database in WAL mode and synchronous=FULL, so a success survives a
// crash of the process and of the machine. Writes that arrive while a transaction runs
// are committed together (group commit, one fsync), each in its own SAVEPOINT when
// there are several, so a failing write leaves the others applied and is itself not
// applied at all. A write
// that has started finishes even if its caller's context ends (SQLite would answer an
// interrupt by rolling back the whole group); one still queued is withdrawn. A receive claims messages, moves messages
// past their queue's maxReceiveCount to the dead-letter queue (a message whose receive
// count already equals maxReceiveCount is moved on the next receive attempt instead of
// being delivered, as SQS does) and records the ReceiveRequestAttemptId, all in the same
// transaction.
//
// Receipt handles encode the queue, the message row and a random token drawn for that
// receive and stored with the message, signed with an HMAC whose key is kept in the
// database: handles survive restarts, a handle from an earlier receive is recognised as
// stale, and a forged or foreign handle is rejected without a lookup. A standard queue
// accepts a stale handle without effect; a FIFO queue rejects a handle whose visibility
// has expired. ChangeVisibility cannot push a message's invisibility past 12 hours from
// the receive that issued the handle.
//
// FIFO queues deliver each message group in sequence order; no message of a group is
// delivered while another of the group is in flight, and one receive may return several
// messages of one group. Deduplication records (scope queue or messageGroup) and
// receive attempts are kept for five minutes and removed by Sweep. Sequence numbers are
// per-queue counters rendered as 20 decimal digits.
//
// As in SQS, a message redriven to a dead-letter queue keeps its id, receive count and,
// in a standard queue, its enqueue time (retention); in a FIFO queue its retention
// restarts and its deduplication id becomes its message id. A message moved by
// MoveMessages is a new message: new MessageID, sent and enqueued at Now.
//
// All times come from the request's Now; the driver never reads the wall clock for
// queue semantics. Messages past their retention period are never delivered or counted,
// and Sweep deletes them. The driver's Activity is ActivityLocal: one process owns the
// database, so the gateway sees every write, and AwaitActivity and WatchActivity fail
// with KindUnsupported.
//
// Message move tasks are kept in the database (move_tasks; the description sets
// MoveTaskStore), so a task running when the gateway stops resumes after it restarts.
//
// The schema is versioned (table meta); Open applies pending migrations in one
// transaction and refuses a database written by a newer driver.
//
// # Limits
//
// One process per data directory, enforced at Open with a lock file (flock, on Unix): a
// second process would not wake this gateway's long polls. Writes go through one connection, queued in the driver
// (SQLite has one writer at a time anyway); on disk, reads (GetQueue, ListQueues,
// QueueStats) use a small pool of their own, while in memory mode they share the writer.
// Sends, receives and deletes take their queue's row from memory: being the only writer,
// the driver drops those rows on every change to a queue and on every rollback.
//
// On disk every write call waits for an fsync of the WAL; concurrent writes share one
// transaction and one fsync (group commit), so batches and concurrency both divide that
// cost. For standard queues a cycle does not depend on queue depth. QueueStats scans the
// queue's index, so its cost grows with the queue's size. A FIFO receive walks message
// groups in order of their earliest message (a table kept by triggers) and reads no
// message queued behind an in-flight or delayed one, so its cost grows with the number
// of blocked groups, not with the backlog (BenchmarkFIFOBacklog, BenchmarkFIFODelayed).
// Figures: docs/backends/sqlite.md and docs/performance.md.
//
// KmsMasterKeyId, KmsDataKeyReusePeriodSeconds, SqsManagedSseEnabled and
// FifoThroughputLimit are stored and returned without effect (declared Degraded): the
// database file is not encrypted. Policy is stored here and enforced by the gateway.
//
// # Configuration
//
//	backend:
//	  name: sqlite
//	  options:
//	    data_dir: /var/lib/anysqs   # required; holds anysqs.db and its WAL; ":memory:" for tests
//	    busy_timeout_ms: 5000       # wait for another process's write lock before failing (default 5000)
package sqlite
