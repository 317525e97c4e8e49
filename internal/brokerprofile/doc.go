// Package brokerprofile is a test profile, not a backend: it proves that the driver
// contract and its suite (drivers/drivertest) handle what a message broker such as Azure
// Service Bus declares. It is never registered with drivers.Register and never shipped.
//
// Open wraps the SQLite driver so that it behaves, and declares, as a broker would:
//
//   - queue time runs on the service's clock (drivers.ClockService): every request's Now
//     is replaced by the wrapper's own wall clock;
//   - receipt handles are locks held by one instance (drivers.ReceiptInstance): a handle
//     carries the instance's random id, and any other instance, including the same data
//     directory opened again, rejects it with KindInvalidReceiptHandle;
//   - a lock lasts at most LockSeconds: longer visibility timeouts are rejected;
//   - message moves copy then delete, with no transaction across queues, so a move is
//     at-least-once (every copy keeps the MessageID);
//   - ReceiveRequestAttemptId replay is unsupported and counts are declared approximate;
//   - one process serves the storage (drivers.ActivityLocal) and move tasks stay in the
//     gateway's memory (no MoveTaskStore).
//
// Every non-native declaration's note says what differs from SQS.
package brokerprofile
