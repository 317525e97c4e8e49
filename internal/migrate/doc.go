// Package migrate moves queues and their messages from one storage backend to another
// through the Driver contract, for `anysqs migrate`.
//
// # Semantics
//
// Queues are created at the destination with their attributes, tags and policy, dead-letter
// queues before the queues that name them; queue ARNs in RedriveAllowPolicy and Policy are
// rewritten to the destination's account and region. What the destination declares it
// cannot keep of what a source queue uses is listed (Report.Gaps) before anything is
// written.
//
// Copy mode reads the source with BrowseMessages and sends copies; move mode receives
// visible messages, sends them with the same MessageID and deletes them at the source
// only once the destination acknowledged them. Both keep a journal (Options.StatePath)
// of what the destination acknowledged, so a run killed at any point resumes without
// losing a message and without sending one again, except in one window: killed after
// the destination's acknowledgement and before the journal recorded it. On resume such
// messages are looked for at the destination; those not found are sent again and
// counted in Report.MayDuplicate, unless the destination's FIFO deduplication is sure
// to drop a repeat (within its five-minute window).
//
// # Limits
//
// Not carried: receive counts, first-receive and sent timestamps, sequence numbers (the
// destination numbers FIFO messages afresh, in the same order per group), the
// dead-letter source of messages in a DLQ, and receipt handles (in-flight messages are
// copied or waited for, never moved).
package migrate
