package sqsrule

import "github.com/anysqs/anysqs/drivers"

// RedriveTarget returns the dead-letter queue that queue's RedrivePolicy p sends messages
// to and the maxReceiveCount at which they go, or ok false when queue redrives nowhere:
// no policy, a policy without a queue or a positive count, or a policy that names queue
// itself. Whether the named queue still exists is the driver's to find out; when it does
// not, messages are delivered as usual.
//
// SQS accepts a queue as its own dead-letter queue and does not document what happens
// at maxReceiveCount. Here such a queue redrives nowhere, as without a policy:
// its messages stay and keep being delivered, their receive count growing. Moving a
// message to the queue it is in would only reset or lose its delivery state.
func RedriveTarget(queue string, p *drivers.RedrivePolicy) (dlq string, maxReceiveCount int32, ok bool) {
	if p == nil || p.DeadLetterQueue == "" || p.MaxReceiveCount <= 0 || p.DeadLetterQueue == queue {
		return "", 0, false
	}
	return p.DeadLetterQueue, p.MaxReceiveCount, true
}

// RedriveDue says whether a visible message already received receiveCount times moves
// to its queue's dead-letter queue (see RedriveTarget) instead of being delivered: at the
// receive after its maxReceiveCount-th, so that it is delivered maxReceiveCount times.
func RedriveDue(receiveCount int64, maxReceiveCount int32) bool {
	return receiveCount >= int64(maxReceiveCount)
}

// DLQEnqueueTime is the enqueue time, which retention counts from, of a message enqueued
// at enqueued and redriven to a dead-letter queue at moved. As in SQS, a standard
// dead-letter queue keeps the original enqueue time (a message that spent a day in its
// source leaves a 4-day DLQ after 3 more), and a FIFO one restarts it at the move. T is
// whatever the driver stores a time as.
func DLQEnqueueTime[T any](fifo bool, enqueued, moved T) T {
	if fifo {
		return moved
	}
	return enqueued
}
