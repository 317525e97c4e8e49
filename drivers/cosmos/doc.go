// Package cosmos is the anysqs driver for Azure Cosmos DB (NoSQL API), on the azcosmos
// SDK. It registers as "cosmos".
//
// # Semantics
//
// One container holds everything, partitioned on /pk. The catalog partition holds one
// record per queue (attributes, tags, purge generation; a tombstone after deletion, so
// that the 60-second name-reuse delay holds for every gateway) and the receipt-handle
// key. Each incarnation of a queue is a logical partition of its own: its messages, and
// for FIFO queues the sequence head, the deduplication markers and the receive
// attempts. Everything one SQS operation must change atomically lives in that one
// partition, whatever the deduplication scope: DeduplicationScope messageGroup keys the
// markers by group and keeps the queue in one partition, so queue-wide deduplication is
// never weakened by partitioning.
//
// Queue time runs on the gateway's clock: visibility deadlines, delays, enqueue times
// and marker expiries are stored and compared with each request's Now.
//
// A receive queries visible messages in the queue's partition and claims each with a
// replace conditioned on the ETag it read, setting a fresh claim token, the deadline and
// the receive count: of two receivers, only one replace succeeds, and the other moves
// on. A receipt handle names the message and the claim token, MAC-signed with the key;
// deletes and visibility changes are conditioned on the message's ETag, deletes also on
// the token, so a stale handle never deletes a newer claim (a standard queue's visibility
// change applies with any handle of a message that still exists, as in SQS). FIFO
// receives read the oldest messages in sequence order and claim each group's receivable
// prefix (from its head up to its first invisible message) in order, groups in order of
// their head's visibility, stopping at the first lost claim; groups whose head is in
// flight are left out of the read.
//
// A FIFO send is one transactional batch: a replace of the queue's head item
// conditioned on its ETag (the next sequence number), the deduplication marker, and the
// message. The head serialises the queue's FIFO writes, so the marker read before the
// batch is still the current one when the batch commits; a batch that loses the head
// applied nothing and is retried, up to a bound. Each entry of a request is a batch of
// its own: once one fails, the later entries of its group in the request fail with it,
// unwritten, so a group's messages are stored in the order sent, as SQS enqueues a batch.
//
// A purge starts a new generation in the queue record; older messages are never
// delivered again and Sweep deletes them. Deduplication markers written at or before the
// purge's time no longer count, as in SQS; a send racing the purge may still see one.
// Retention is decided from the stored enqueue time; Sweep deletes expired messages,
// markers and receive attempts, and the items of deleted incarnations. Items carry a
// Cosmos TTL (15 days for messages, a day for markers) that reclaims what a sweep
// never reaches, when the container has TTL enabled.
//
// Dead-lettering and message moves cross partitions, where Cosmos has no transaction:
// the copy is created under the message's own id first, then the source deleted
// conditionally. A message is never lost; it may reach the destination twice, every copy
// with the same MessageId (moves keep the MessageId). These are declared at-least-once.
//
// A 429 (request rate too large) is retried after the wait Cosmos asks for, while the
// request's timeout allows; then the call fails with KindThrottled, which the gateway
// answers with a retryable SQS throttling error carrying the wait. Nothing else is
// retried: a write whose outcome is unknown fails with KindUnavailable. The request
// units Cosmos charges are added up per driver operation in the driver's metrics.
//
// # Limits
//
// A queue is one logical partition: at most 20 GB of messages and records, and the
// partition's throughput (about 10,000 RU/s). A message is one item, and an item holds
// 2 MB: the driver declares 1 MiB messages, and stores a body (then its attributes)
// base64-encoded when JSON escaping would make the item larger than 1.5 MiB. A FIFO queue's
// writes are serialised on its head item, and a FIFO receive reads the 500 oldest
// messages of the groups without a message in flight, so deep FIFO backlogs cost RU on
// every receive. Waiting receives poll
// (Cosmos has no notification), at most poll_interval apart. Every call reads its
// queue's record in the one catalog partition, whose throughput bounds the calls per
// second of all queues of a container together. Move tasks are kept in the gateway's
// memory.
//
// # Configuration
//
//	backend:
//	  name: cosmos
//	  options:
//	    endpoint: https://<account>.documents.azure.com:443/
//	    key: <account key>           # else $ANYSQS_COSMOS_KEY, else Entra ID (azidentity)
//	    database: anysqs             # default anysqs
//	    container: queues            # default queues; partition key /pk
//	    create_container: false      # create database and container when missing
//	    throughput: 0                # manual RU/s of a container the driver creates
//	    request_timeout: 10s         # one Cosmos request, 429 retries included
//	    poll_interval: 1s            # longest gap between re-checks of a waiting receive
//	    query_reads: false           # emulators that answer 500 for a missing item
//	    batch_partition_keys: false  # emulators that read a batch's partition key per operation
//	    insecure_skip_verify: false  # local emulators with self-signed certificates only
package cosmos
