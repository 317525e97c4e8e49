// Package firestore is the Google Cloud Firestore backend of anysqs, registered as
// "firestore", on cloud.google.com/go/firestore. Several gateways may share one
// database. docs/backends/firestore.md has the data model, indexes and costs.
//
// # Semantics
//
// A queue is one document; each message is one document in its queue's messages
// collection. Every call that changes state is one read-write transaction, which also
// reads the queue document: a call on a queue that does not exist fails with
// KindNotFound, and sends land wholly before or after a purge or a deletion. Success is
// returned after Firestore committed the transaction.
//
// A receive queries candidates outside any transaction (visible, unexpired messages, or
// for FIFO queues message groups whose ready time has come), then claims them in a
// transaction that reads each chosen document again and writes its visibility deadline,
// receive count and a new claim generation; a candidate another receiver claimed first
// is skipped and the receive looks again. The receipt handle carries the generation, so
// a handle of an earlier delivery cannot delete a newer one (a standard queue's visibility
// change applies with it, as in SQS). Messages whose
// receive count reached the queue's maxReceiveCount move to the dead-letter queue inside
// the claim's transaction. Receivers of one instance skip each other's candidates before
// Firestore sees them.
//
// FIFO: a group document holds the group's last sequence number, its last claim and a
// ready time never later than the moment the group may next deliver. A send increments
// the sequence number and writes the deduplication record in its own transaction, so a
// duplicate echoes the original MessageId and SequenceNumber. A claim takes groups in
// ready order, reads the group document, then the group's messages in sequence order
// from its head up to the first that is not visible, so a head that came back is
// served while later messages of its group are still in flight
// (queried before the transaction and read again in it: a query inside a transaction
// would lock more than the documents it returns).
//
// Times are gateway-clock times taken from each request's Now (drivers.ClockGateway).
// Expired messages are never delivered or counted; Sweep deletes them, expired
// deduplication and receive-attempt records, and the storage of deleted or purged
// queues, in bounded batches. A purge gives the queue fresh message storage in one
// transaction. Counts are three aggregation (COUNT) queries. Long polls are polled
// (drivers.ActivityPoll): the gateway re-checks a waiting receive at least every
// poll_interval_ms, which is the worst-case delay for a message sent through another
// gateway. Message move tasks are documents shared by every gateway.
//
// Transactions that Firestore aborts for contention run again after a jittered pause,
// within the call's deadline and contention_retry_ms; then the call fails with
// KindAborted, which clients retry. Metrics counts commits, aborts, retries and calls
// that ran out of retries.
//
// # Limits
//
// A Firestore document holds at most 1 MiB including field names and its path, so a
// message whose document would pass 1,000,000 bytes keeps its body and attributes in
// chunk documents of 700,000 bytes, written, moved and deleted in the message's own
// transactions: messages up to SQS's 1 MiB cost one or two more reads and writes.
// Messages are spread over the queue's index shards (option shards), and the driver's
// composite indexes lead with the shard, so the index entries of a busy queue's
// time-ordered fields are written to several ranges rather than one. A FIFO group's
// document is written by every send, claim and delete of the group: Firestore sustains
// about one write per second per document, more in bursts, so throughput comes from
// many groups, as in SQS. The composite indexes of Indexes must exist on a real
// database; Open runs each indexed query once and names a missing index. The emulator
// enforces no index and resolves lock conflicts only by a timeout of about a second.
//
// KmsMasterKeyId, KmsDataKeyReusePeriodSeconds, Policy and FifoThroughputLimit are
// stored and returned without effect (declared Degraded). SqsManagedSseEnabled is
// native: Firestore encrypts all data at rest, so new queues report true.
//
// # Configuration
//
//	backend:
//	  name: firestore
//	  options:
//	    project: my-project          # default: from the environment (GOOGLE_CLOUD_PROJECT, credentials)
//	    database: "(default)"        # Firestore database id
//	    collection_prefix: anysqs    # root collections are <prefix>_queues, <prefix>_store, ...
//	    shards: 4                    # index shards of new queues (1-30)
//	    poll_interval_ms: 1000       # long-poll re-check interval: worst-case cross-gateway delay
//	    contention_retry_ms: 10000   # retry aborted transactions this long at most
//	    check_indexes: true          # run each indexed query at start-up
//	    credentials_file: ""         # service account key; default: Application Default Credentials
//	    emulator_host: ""            # host:port of the emulator (or FIRESTORE_EMULATOR_HOST)
package firestore
