package sqsrule

import (
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// PurgeInterval is the shortest time SQS allows between two purges of one queue.
const PurgeInterval = 60 * time.Second

// CheckPurge says whether queue, last purged at last (the zero time: never), may be
// purged at now. It returns nil, or a KindPurgeInProgress error naming the queue and its
// last purge, which a driver returns as it is, changing nothing.
func CheckPurge(queue string, last, now time.Time) error {
	if last.IsZero() || !now.Before(last.Add(PurgeInterval)) {
		return nil
	}
	return drivers.Errorf(drivers.KindPurgeInProgress, "queue %s was purged at %s; only one purge per %v is allowed",
		queue, last.UTC().Format(time.RFC3339), PurgeInterval)
}

// CheckNameReuse says whether a queue named queue, deleted at deleted (the zero time:
// never, or long enough ago to be forgotten), may be created at now, which SQS allows
// drivers.QueueNameReuseDelay after the deletion. It returns nil, or a
// KindDeletedRecently error naming the queue. A zero now checks nothing: there is no time
// to measure the delay from.
func CheckNameReuse(queue string, deleted, now time.Time) error {
	if deleted.IsZero() || now.IsZero() || !now.Before(deleted.Add(drivers.QueueNameReuseDelay)) {
		return nil
	}
	return drivers.Errorf(drivers.KindDeletedRecently, "queue %s was deleted at %s, less than %v ago: its name can be used again after that",
		queue, deleted.UTC().Format(time.RFC3339), drivers.QueueNameReuseDelay)
}
