package sqsrule

import (
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// HandleState is what a receipt handle finds when the driver looks up the message it
// names. The driver decides the state from its storage; Delete and ChangeVisibility say
// what SQS does in it, as drivers.Driver documents for DeleteMessages and
// ChangeVisibility.
type HandleState int

const (
	HandleForeign  HandleState = iota // not issued by this driver for this queue
	HandleGone                        // issued, but the message is gone (deleted, moved or purged)
	HandleStale                       // issued, but the message was received again since
	HandleExpired                     // current, but the visibility timeout has passed
	HandleInFlight                    // current and in flight
)

// Delete decides a delete by a handle in state: remove the message, or not, and the
// entry's error (nil: the entry succeeds). On a standard queue the current handle
// deletes, in flight or not, and any other handle succeeds without effect; on a FIFO
// queue only the current handle of a message in flight deletes, and any other fails.
func Delete(state HandleState, fifo bool) (remove bool, err *drivers.Error) {
	switch {
	case state == HandleForeign:
		return false, InvalidHandle("not issued for this queue")
	case state == HandleInFlight, state == HandleExpired && !fifo:
		return true, nil
	case fifo:
		return false, StaleHandle("the receipt handle has expired: the message was deleted, received again or its visibility timeout passed")
	}
	return false, nil
}

// ChangeVisibility decides a visibility change to timeout seconds by a handle in state,
// which would make the message visible at deadline: apply it, or fail the entry with
// err. A standard queue takes any handle of a message that still exists; a FIFO queue
// only the current handle of a message in flight. receivedAt is the message's latest
// receive (zero when the driver does not know it); the change may not keep the message
// invisible past MaxVisibilityTimeout after it.
func ChangeVisibility(state HandleState, fifo bool, timeout int32, deadline, receivedAt time.Time) (apply bool, err *drivers.Error) {
	switch {
	case state == HandleForeign:
		return false, InvalidHandle("not issued for this queue")
	case state == HandleGone:
		return false, StaleHandle("the message does not exist")
	case fifo && state != HandleInFlight:
		return false, StaleHandle("the receipt handle has expired: the message was received again or its visibility timeout passed")
	}
	if err := VisibilityCap(timeout, deadline, receivedAt); err != nil {
		return false, err
	}
	return true, nil
}

// VisibilityCap fails a visibility change to timeout seconds whose deadline is more than
// MaxVisibilityTimeout after the message's latest receive at receivedAt (zero: not
// known, no cap). A driver whose broker decides which handles apply uses it alone.
func VisibilityCap(timeout int32, deadline, receivedAt time.Time) *drivers.Error {
	if receivedAt.IsZero() || !deadline.After(receivedAt.Add(MaxVisibilityTimeout*time.Second)) {
		return nil
	}
	return drivers.Errorf(drivers.KindInvalidArgument,
		"visibility timeout %d s would keep the message invisible past 12 hours from its receive at %s",
		timeout, receivedAt.Format(time.RFC3339))
}
