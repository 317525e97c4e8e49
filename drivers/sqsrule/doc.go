// Package sqsrule holds the rules Amazon SQS defines that every driver applies the same
// way, so that each is written once: the limits of visibility, delay, long-poll wait,
// message size, retention and batch size, the deduplication window, the FIFO sequence
// number format, the receipt handle seal (a MAC over what a handle names) and the
// decision table for a delete or a visibility change by receipt handle.
//
// A driver keeps what is its own: what a handle names (its payload), where the MAC key
// is kept, and how it finds the state of the message a handle names. It asks this
// package what SQS does in that state. The gateway validates requests against the same
// limits, so a limit changes here or nowhere.
//
// Like drivers, this package imports only the standard library, capabilities and
// drivers: plugins outside this module can use it.
package sqsrule
