// Package queueattr validates SQS queue names and queue attributes and renders them for
// GetQueueAttributes.
//
// The gateway parses the wire request into a name and a map of attribute strings; this
// package turns that map into drivers.QueueAttributes (ForCreate for CreateQueue, Apply
// for SetQueueAttributes), decides whether a repeated CreateQueue is idempotent
// (Matches, FirstMismatch) and renders the stored queue back into strings (Render).
//
// Every error is a *sqserr.Error carrying the code and message SQS uses:
//
//   - a name SQS does not know, a read-only attribute, or a FIFO-only attribute on a
//     standard queue: InvalidAttributeName ("Unknown Attribute X.");
//   - a value out of range or malformed: InvalidAttributeValue ("Invalid value for the
//     parameter X.");
//   - a malformed RedrivePolicy or RedriveAllowPolicy, or a FIFO name mismatch:
//     InvalidParameterValue, with the reason SQS gives.
//
// Checks that need other queues (the dead-letter target exists; the target's
// RedriveAllowPolicy admits the source) are the gateway's, since this package sees one
// queue only.
package queueattr
