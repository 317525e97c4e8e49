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

// AttemptLive says whether a receive-attempt record that expires at expires
// (AttemptExpiry of its receive) may still be replayed at now.
func AttemptLive(expires, now time.Time) bool { return expires.After(now) }

// AttemptHeld says whether a message that an earlier receive with the same
// ReceiveRequestAttemptId claimed is still in flight under the handle that receive
// returned: the message exists (not deleted, moved or purged), sameReceive (no receive
// since gave it another handle) and its visibility deadline visibleAt is after now. A
// repeated attempt replays only when its record is live and every message it claimed is
// held; otherwise it is a new receive.
func AttemptHeld(exists, sameReceive bool, visibleAt, now time.Time) bool {
	return exists && sameReceive && visibleAt.After(now)
}
