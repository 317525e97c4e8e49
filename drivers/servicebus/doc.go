// Package servicebus is the Azure Service Bus backend: SQS queues are Service Bus queue
// entities, and Service Bus, a broker, owns delivery state, locks and their clock.
//
// The driver talks to the namespace through Namespace, an interface it owns: azure.go
// adapts it to the azservicebus SDK and its admin package, and Model is an in-memory
// model of a namespace for tests and demonstrations (the `model` option).
//
// # Semantics
//
// Queues. A standard queue is a queue entity; a .fifo queue is a session-enabled entity
// with duplicate detection over a 5-minute window. The entity is named entity_prefix plus
// the queue name. MessageRetentionPeriod is the entity's default time-to-live; a
// RedrivePolicy is MaxDeliveryCount = maxReceiveCount with ForwardDeadLetteredMessagesTo
// the dead-letter queue's entity (no policy, or one naming the queue itself: the largest
// count, so nothing is dead-lettered). Everything else Service Bus has no property for (the other attributes,
// the tags, the policy document, the exact queue name, creation and modification
// times) is JSON in the entity's user metadata: it lives with the entity, needs no other
// store, and goes when the entity goes. Entities without that metadata are not listed.
//
// Messages. The body is the Service Bus body; the SQS MessageId, SentTimestamp, SenderId,
// deduplication id and message attributes are application properties (binary attribute
// values as binary properties). On a FIFO queue the session id is the MessageGroupId and
// the Service Bus MessageID is the deduplication id (for DeduplicationScope messageGroup,
// a hash of group and id), so the entity's duplicate detection drops repeats. A delayed
// message is scheduled for its enqueue time.
//
// Receiving. A standard receive takes up to MaxNumberOfMessages from a peek-lock
// receiver; a FIFO receive accepts sessions, waiting for the first up to the request's
// wait and taking the others only if available at once, and takes from each session what
// is still wanted, in order. A session stays locked, so its group stays blocked, until
// every message taken from it is deleted or released; then it is closed. The driver
// holds each lock for the visibility timeout: it abandons the message when the timeout
// ends, on this process's clock, and renews message or session locks at half their
// remaining time while the timeout outlasts them. ChangeMessageVisibility moves that
// deadline, or abandons at once for 0. Delivery counts are Service Bus's: the driver
// never receives more than asked, and abandons a message (writing its first-receive time
// and delivery count onto it) before it gives up its lock. The receive waits in the
// broker (Description.BlockingReceive), which hands it messages sent through any gateway.
//
// Receipt handles name locks this instance holds (drivers.ReceiptInstance). They carry
// the instance's random id and an HMAC under a per-instance key over queue and serial
// number; any other handle, another instance's included, fails with
// KindInvalidReceiptHandle. A handle whose visibility ended, or that a later receive
// superseded, fails ChangeMessageVisibility with KindStaleReceiptHandle on any queue (the
// lock is gone and cannot be taken back; SQS applies the change on standard queues:
// receipt.stale is declared degraded); deleting with it succeeds without effect on a
// standard queue and fails on a FIFO queue. On Close the driver abandons each lock that
// would outlast its message's visibility deadline and leaves the others to run out;
// closing the connection releases its sessions.
//
// Queue time runs on the service's clock (drivers.ClockService): lock expiry, scheduled
// enqueue and time-to-live are the namespace's, visibility deadlines this process's wall
// clock. Neither can be moved by a test.
//
// # Limits
//
//   - A duplicate FIFO send is dropped by Service Bus without a word: the driver reports it
//     as a duplicate, with the original MessageId, only when it sent the original itself
//     (same gateway instance, within 5 minutes); otherwise the send returns a fresh
//     MessageId. Sends never return a SequenceNumber (Service Bus assigns it on storing);
//     received FIFO messages carry Service Bus's sequence number, 20 digits.
//   - Receipt handles do not survive a gateway restart and do not work through another
//     gateway instance. ReceiveRequestAttemptId is rejected.
//   - Once a handle's visibility timeout has ended, deleting with it does not delete.
//   - A message reaches its dead-letter queue when its last lock ends, not at the next
//     receive. Its SQS receive count there is the source's count plus the dead-letter
//     queue's deliveries.
//   - Time-to-live is fixed when a message is enqueued: a changed retention period applies
//     to messages sent afterwards.
//   - Counts come from the entity's runtime properties (Manage rights) and may lag;
//     Service Bus counts locked messages as active, so messages another instance holds are
//     counted visible. PurgeQueue receives and completes what it can reach and cancels
//     scheduled messages; messages another instance holds survive it. The 60-second purge
//     rule and the 60-second name-reuse delay after DeleteQueue are kept per instance.
//   - Entity names are case-insensitive: two queue names differing only in case cannot
//     both exist. Tags, policy and the other kept attributes share 1024 characters of
//     user metadata.
//   - Visibility timeouts up to max_visibility_seconds (default 43200) are held, longer
//     ones rejected, never shortened. Messages up to max_message_bytes (default 253952, for
//     the Standard tier's 256 KiB with properties).
//   - On a real namespace a receive of no wait listens for one second, and a FIFO receive
//     on an empty queue may overrun its wait by one session-accept window.
//   - Two gateways tagging or setting attributes of one queue at once may lose one change.
//
// # Configuration
//
// Options, the backend section of the gateway's configuration (configs/servicebus.yaml):
//
//	connection_string           namespace connection string with Manage rights
//	namespace                   name.servicebus.windows.net, signed in with Entra ID
//	                            (azidentity's DefaultAzureCredential)
//	managed_identity_client_id  a user-assigned managed identity for namespace
//	model                       an in-memory model namespace of this process, for tests
//	                            and demonstrations only: nothing survives the process
//	entity_prefix               put before every queue name to make its entity name
//	lock_duration_seconds       lock duration of created entities, 5..300 (default 60)
//	max_visibility_seconds      longest visibility timeout held (default 43200)
//	max_message_bytes           largest message accepted (default 253952)
//
// Exactly one of connection_string, namespace and model; none reads
// $AZURE_SERVICEBUS_CONNECTION_STRING. The credential needs Manage rights (a SAS policy
// with Manage, or the Azure Service Bus Data Owner role): the driver creates and reads
// entities and their runtime counts.
package servicebus
