// Package postgres is the PostgreSQL backend of anysqs, registered as "postgres". It
// gives full SQS Standard and FIFO semantics on PostgreSQL 13 or later (tested on 15),
// and several gateways may share one database.
//
// # Semantics
//
// Everything lives in eight tables of one schema: queues, messages, dedup,
// receive_attempts, fifo_groups, watches (long polls, see below), move_tasks (message
// move tasks, shared by the gateways; movetasks.go) and deleted_queues (names no gateway
// may re-create for 60 seconds). Every call is one transaction, and almost every call is one round
// trip: multi-statement work goes out as one pgx batch, which PostgreSQL runs as one
// implicit transaction committed at its end. Success is returned only after commit
// (synchronous_commit as the server has it, "on" by default).
//
// Receive claims up to 10 messages in one statement: CTEs select visible, unexpired
// messages with FOR UPDATE SKIP LOCKED (standard queues: the MaxMessages visible
// longest, and the MaxMessages returned ones, received before and visible again,
// visible longest, from the partial index messages_returned; the oldest sends of both
// go first, so a returned message comes before newer ones, as in SQS), and in the same
// statement those whose receive
// count already reached the queue's maxReceiveCount move to the dead-letter queue while
// the others get a new receipt token (gen_random_uuid()), their visibility deadline and
// an incremented receive count. Two receivers never claim one message: the row lock
// decides, and the loser skips it. On a standard queue with message groups, claims
// follow SQS's fair-queue rules, from state every gateway shares (see fair.go).
//
// FIFO: every message takes its row id from one sequence, and that id is its
// SequenceNumber. A send first takes a transaction-scoped advisory lock per message
// group (sorted, so batches cannot deadlock), so within a group commit order is
// sequence order and a receiver never sees a later message before an earlier one has
// committed. fifo_groups holds one row per message group with ready_at, never later
// than the first moment the group may be claimable (its head, the first unexpired
// message, visible: a later message in flight does not block it). Every transaction that changes
// a group's messages locks its row (sends before inserting) and moves ready_at earlier
// when it may have unblocked the group. A FIFO claim is two statements in one round
// trip: the first locks, with SKIP LOCKED, the rows of up to MaxMessages+4 groups whose
// ready_at has come, oldest first; the second, on a snapshot taken after those locks,
// reads per group the head and the following visible messages up to the first one still
// hidden, by the (queue_id, group_id, id) index, claims up to MaxMessages group by
// group in ready_at order (a group that came back follows those that waited), and
// writes each locked group's ready_at exactly (the new deadline, or when it
// can next be claimed; the rows of emptied groups are deleted). So claims on different
// groups run in parallel, several messages of one group may come in one call, no group
// is claimed by two at once (TestFIFOConcurrentConsumers fails if the group lock is
// weakened), and a claim's cost depends on the groups it locks, not on the backlog
// (BenchmarkFIFODeepBacklog). A claim that locked only groups with nothing to claim
// (ready_at came early) claims again, at most 4 rounds. Deduplication records live in the dedup table, written in the send's
// statement before the message: a concurrent send of the same id waits on the unique
// key, so exactly one stores the message and the other echoes its MessageId and
// SequenceNumber. DeduplicationScope messageGroup keys the record by group.
// ReceiveRequestAttemptId records the claimed (row, token) pairs in the claim's own
// statement; a repeat within five minutes returns them while all are still in flight
// under those tokens.
//
// Receipt handles encode (queue id, row id, receipt token), sealed with a MAC under a
// key kept in the receipt_key table (created with the schema, read at open), so every
// gateway on the schema checks the handles of the others and a handle for a guessed row
// is refused as invalid. Nothing about them is held in memory, so they work through any
// gateway instance and after restarts. Delete
// matches row and token; a later claim writes a new token, which makes older handles
// stale. ChangeMessageVisibility on a standard queue matches the row alone, as SQS
// applies a change with any handle of a message that still exists. For FIFO queues a
// handle also expires with the visibility timeout, as in SQS.
//
// Retention: receives and counts ignore messages past their queue's retention period at
// once; Sweep deletes them later, in bounded batches, under a try-advisory lock so one
// gateway sweeps at a time; the same pass drops the fifo_groups rows of groups left
// without messages (see sweepGroupsSQL for why that is safe against a concurrent send).
// A standard message keeps its retention clock when redriven to a dead-letter queue; a
// FIFO one restarts it; move tasks make new messages.
//
// Cross-gateway long polling: every driver keeps one dedicated connection in LISTEN on
// the channel "anysqs:<schema>". After a send to a watched queue commits, a notifier
// goroutine NOTIFYs the queue's name, coalescing all sends since its previous NOTIFY into
// one statement. A queue is watched while a long poll on some gateway may wait on it:
// before its first wait the gateway calls WatchActivity, which records the queue in the
// watches table until a minute past the poll's deadline (so back-to-back polls record
// it about once a minute) and then receives once more. The send checks watches in its
// own statement, through watched(), and an advisory lock pair makes the check and the
// watch race-free: the watch waits for sends in progress to commit (their messages are
// then seen by the gateway's extra receive), and a send that starts later waits for the
// watch and sees it. Sends to queues nobody long-polls skip the NOTIFY and the wake-ups
// of every gateway's listener. The listener accumulates names until AwaitActivity takes them, so a notification that
// arrives while no call is waiting is kept, and the gateway registers its waiters before
// receiving, so the window between an empty receive and the wait is covered. Releases
// (visibility set earlier, including 0) and redrives to a dead-letter queue NOTIFY in
// their own transaction. If the listening connection drops, it reconnects with backoff
// and the next AwaitActivity names every queue, since notifications sent meanwhile are
// lost. The one gap left: a gateway killed between a send's commit and its NOTIFY; then
// receives waiting on other gateways get the message when their wait ends (at most
// 20 s) instead of at once. Nothing is lost. The option notify_in_transaction closes
// that gap by sending the NOTIFY inside the send's transaction, at the cost below.
//
// Why NOTIFY after commit rather than inside the send: PostgreSQL serializes the commits
// of notifying transactions on one database-wide lock, WAL flush included.
//
// Merged statements: concurrent standard sends, receives (with the same visibility
// timeout) and deletes on one queue are merged into one statement each, the way
// PostgreSQL merges commits (batcher.go): a call that finds no statement of its kind and
// queue in flight runs at once, alone; calls arriving meanwhile run together when it
// ends, and each returns only after that statement committed. A statement costs about
// as much database CPU with one row as with ten, so under load this divides that cost.
// A merged receive hands its messages out in arrival order, and
// its visibility deadline counts from the latest of the merged calls' times (they differ
// by the time a statement takes). Concurrent FIFO sends on a queue are merged into one
// transaction likewise (each message keeps its call's time, its group lock and its
// sequence number); FIFO claims and deletes run alone.
//
// Errors: anything that is not an answer from the server (refused or broken
// connection), and the server's connection, shutdown, serialization and deadlock errors,
// are drivers.KindUnavailable, so the client retries as with SQS. The pool pings
// connections idle for more than a second before use and health-checks idle ones every
// 5 s, so after a database restart it drops dead connections and recovers by itself
// (TestDatabaseRestart stops and restarts a throwaway cluster under an open driver;
// TestCrashUnderLoad crashes it under 8 senders and finds every acknowledged send
// delivered after recovery).
//
// # Table layout
//
// Shared tables, keyed by queue id, rather than one table per queue:
//
//   - Creating a queue is one INSERT, not a table and its indexes (catalog locks, new
//     relations in the catalog for every queue). SQS applications create queues at run time, and deployments with thousands of queues
//     are common.
//   - Redrive and move tasks are an UPDATE of queue_id in the claim's own statement, not
//     an INSERT into another table plus a DELETE.
//   - Plans and prepared statements are shared by all queues: no per-queue SQL text, no
//     plan cache per table, no dynamic identifiers.
//   - Isolation between queues comes from the indexes, all led by queue_id: a claim reads
//     only its queue's range of (queue_id, visible_at), however full other queues are.
//
// The cost: one queue's dead tuples live beside the others', so vacuum works on one big
// table. The tables therefore carry their own autovacuum settings (threshold-based,
// cost delay 0, frequent analyze) and vacuum_truncate=false: default settings let dead
// index entries pile up at the head of the queue, and relation truncation stalled all
// traffic for seconds. They act only while the server's autovacuum and track_counts are
// on; where they are off, the driver warns at start, and the option vacuum_on_sweep runs
// VACUUM (ANALYZE) on the busy tables (messages, fifo_groups, dedup, receive_attempts,
// watches, queues) at the end of every whole sweep pass this driver performs (every 30
// seconds by default; one gateway sweeps at a time). VACUUM takes no lock that blocks
// sends, receives or deletes; its cost grows with the pages that changed since the last.
//
// # Limits
//
//   - FIFO sends are serialized per message group (an advisory lock until commit), and
//     a send, delete or visibility change waits for a claim that holds its group's row
//     (one claim statement). A FIFO receive's cost grows with the groups it has to look
//     at, not with the messages queued: ready_at may come early (after a delete that
//     leaves other messages of the group in flight, a purge, a move, a redrive or a
//     change of retention period), and each such group costs the next claim one look.
//   - Messages moved into a FIFO queue by redrive or move tasks take a sequence number
//     without the destination group's send lock: a move racing a send to the same group
//     of the destination may order those two differently from their commit order.
//   - Sweep looks at most Limit rows at the head (oldest row ids) of each queue per pass,
//     so expired messages behind younger ones wait for those to go first (they are never
//     delivered meanwhile).
//   - Purge and DeleteQueue delete a queue's messages in one transaction.
//   - Sequence numbers are 64-bit, rendered as 20 digits.
//   - Connections must be session-level: direct, or through a pooler in session mode.
//     Open refuses transaction pooling (its LISTEN would never hear a notification).
//     Behind PgBouncer, listen_dsn should reach PostgreSQL directly: LISTEN state left
//     by a gateway that died can shift the replies of PgBouncer's next client (issue
//     39; a gateway that closes its listener UNLISTENs first).
//   - The driver sets plan_cache_mode=force_generic_plan on its connections: planning
//     the claim statement costs more than running it. Plans depend on statistics: until
//     autovacuum first analyzes the messages table (analyze threshold 1,000 changes,
//     checked every autovacuum_naptime, 1 min by default), a FIFO claim on a large
//     backlog may read and sort the queue's visible messages instead of reading the
//     index in order, a large slowdown on a fresh database. Run ANALYZE on anysqs.messages after bulk loads. Standard claims and
//     the claim's updates are shaped to be immune (index order, TID scans). FIFO claims
//     read messages only by (queue_id, group_id, id) per locked group, so their cost
//     stays bounded by the groups locked whatever the plan.
//
// # Configuration
//
//	backend:
//	  name: postgres
//	  options:
//	    dsn: postgres://postgres@127.0.0.1:5432/anysqs?sslmode=disable
//	    listen_dsn: ""          # default: dsn; the LISTEN connection's own DSN, see "Limits"
//	    create_database: true   # create the DSN's database if missing
//	    schema: anysqs          # default
//	    max_conns: 16           # default; more only adds contention on small machines
//	    tls: {mode: verify-full, ca_file: ..., cert_file: ..., key_file: ...}
//	    password_file: ""       # the password, read again for each new connection (rotated tokens)
//	    notify_in_transaction: false  # default; see "Semantics"
//	    vacuum_on_sweep: false  # true: VACUUM (ANALYZE) the tables after each sweep; see "Table layout"
//
// An empty dsn is taken from $ANYSQS_POSTGRES_DSN, and failing that from the standard
// PG* environment variables. The tls options override the DSN's sslmode, sslrootcert,
// sslcert and sslkey. Opening migrates the schema (versioned, in one transaction under
// an advisory lock, so gateways starting together migrate once) and refuses a schema
// newer than the driver.
//
// Tests find PostgreSQL through $ANYSQS_TEST_POSTGRES_DSN or at 127.0.0.1:5432 and skip
// when there is none, except under CI=true, where they fail. BenchmarkCycle compares the
// driver's send+receive+delete cycle with the same cycle in raw SQL:
//
//	go test ./drivers/postgres -run '^$' -bench Cycle -benchtime 20000x
package postgres
