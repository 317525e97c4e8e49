// Package spanner is the Google Cloud Spanner driver of anysqs, registered as "spanner".
//
// # Semantics
//
// Queues are rows of Queues; every message, FIFO group, deduplication record and receive
// attempt of a queue is interleaved in its row and deleted with it. A standard message is
// keyed by its random MessageId, so sends spread over the key space; a FIFO message by its
// group and its sequence number in the group, so independent groups spread and one group
// stays in order. Time-ordered indexes lead with a hash shard of the message id.
//
// A receive reads candidates in a strong read-only transaction, which holds no locks, and
// then claims a random choice of them in a read-write transaction that reads each again
// and claims only those still visible: concurrent receivers rarely want the same row, and
// none hands out a message another claimed. FIFO claims re-read the group's row and the
// group's first messages in the claim's transaction, and take them from the head while
// they are visible: a head that came back is served while later messages of its group
// are still in flight, as in SQS. A message received
// maxReceiveCount times moves to its dead-letter queue in the claim's transaction.
//
// A FIFO send reads the deduplication records and the groups' counters and writes the
// messages, records and counters in one transaction, so a send retried after a commit of
// unknown outcome finds its record and stores no second message. When the client reports
// such an outcome, the driver reads the records (standard queues: the message rows) and
// answers success if the commit happened, else KindUnavailable.
//
// Deadlines are computed from each request's Now (gateway clock). Receipt handles name a
// row and a token stored in it, sealed with a MAC under a key kept in the Meta table, and
// work through every gateway on the database; a handle the driver did not issue is
// invalid. Waiting receives poll, at most poll_interval apart (drivers.ActivityPoll).
// Message move tasks are kept in the database.
//
// # Limits
//
// Counts and the next-visible time read a queue's messages; FIFO claims read a group's
// leading messages, and choose groups among the first 1000 visible index entries. A purge
// hides the queue's messages in its transaction and deletes them afterwards with
// partitioned DML; a FIFO purge also resets the queue's group rows in its transaction,
// within Spanner's mutation limit per commit. Against an emulator each driver runs one
// transaction at a time (serialize_read_write auto), as the emulator allows one per
// session; transactions of several drivers abort one another and are retried, which
// Metrics counts. Awaiting and watching activity return KindUnsupported.
//
// # Configuration
//
//	backend:
//	  name: spanner
//	  options:
//	    project: my-project          # required
//	    instance: my-instance        # required
//	    database: anysqs             # required; created on an emulator when missing
//	    credentials_file: ""         # service account key; default: Application Default Credentials
//	    poll_interval: 1s            # longest gap between re-checks of a waiting receive
//	    serialize_read_write: auto   # auto (only against an emulator), always, never
//
// SPANNER_EMULATOR_HOST, when set, points the client at an emulator; the driver then
// creates a missing instance and database. The schema is created everywhere, idempotently;
// gateways opening a new database together take turns, since Spanner runs one schema change
// at a time, and one waits up to 5 minutes for the others' changes.
package spanner
