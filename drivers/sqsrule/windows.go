package sqsrule

import "time"

// DedupExpiry returns when a deduplication id first sent at sent stops deduplicating.
func DedupExpiry(sent time.Time) time.Time { return sent.Add(DedupWindow) }

// AttemptExpiry returns when a receive attempt made at at stops being replayed.
func AttemptExpiry(at time.Time) time.Time { return at.Add(ReceiveAttemptWindow) }

// DedupHolds says whether a deduplication record that expires at expires (DedupExpiry
// of its send) still deduplicates a send at now on a queue last purged at purged (the
// zero time: never). SQS forgets deduplication ids at a purge, so a record from a send
// at or before the purge no longer counts.
func DedupHolds(expires, now, purged time.Time) bool {
	return expires.After(now) && expires.Add(-DedupWindow).After(purged)
}
