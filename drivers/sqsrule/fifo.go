package sqsrule

import (
	"cmp"
	"slices"
)

// RunStep is what a FIFO receive does with the next message of a message group, walking
// the group's messages in sequence order from its head (its first message).
type RunStep uint8

const (
	// RunPass passes over a message whose retention has run out: it is never delivered,
	// and the messages after it may be.
	RunPass RunStep = iota
	// RunTake delivers the message, or moves it to the dead-letter queue when
	// RedriveDue says so (a move does not count toward the run's limit).
	RunTake
	// RunEnd ends the group's run before the message: no message of a group is delivered
	// before an earlier one that is not receivable.
	RunEnd
)

// RunNext returns the step for the next message of a group's run: expired says its
// retention has run out; receivable that it is visible and comes before the group's
// first message in flight; taken how many messages the run has delivered so far, of at
// most limit.
//
// A group whose head is in flight therefore gives nothing, and one whose head became
// visible again gives it while later messages are still in flight, as the Driver
// contract asks.
func RunNext(expired, receivable bool, taken, limit int) RunStep {
	switch {
	case expired:
		return RunPass
	case !receivable || taken >= limit:
		return RunEnd
	default:
		return RunTake
	}
}

// RunMessage is what FIFORuns reads of a message.
type RunMessage struct {
	Group string
	Seq   int64
	// VisibleAt is when the message became (or becomes) visible, in any unit that orders.
	VisibleAt int64
	// Receivable: visible now, and before its group's first message in flight.
	Receivable bool
	Expired    bool
}

// FIFORuns cuts msgs, a queue's messages in sequence order, into the runs of their
// groups as RunNext walks them (at most limit messages each), and orders the runs by
// the moment each run's head became visible, then by its sequence number: among groups,
// the one that has waited longest goes first.
func FIFORuns[M any](msgs []M, limit int, read func(M) RunMessage) [][]M {
	type run struct {
		msgs  []M
		head  RunMessage
		ended bool
	}
	index := map[string]*run{}
	var runs []*run
	for _, m := range msgs {
		rm := read(m)
		r := index[rm.Group]
		if r == nil {
			r = &run{}
			index[rm.Group] = r
		}
		if r.ended {
			continue
		}
		switch RunNext(rm.Expired, rm.Receivable, len(r.msgs), limit) {
		case RunEnd:
			r.ended = true
		case RunTake:
			if len(r.msgs) == 0 {
				r.head = rm
				runs = append(runs, r)
			}
			r.msgs = append(r.msgs, m)
		}
	}
	slices.SortStableFunc(runs, func(a, b *run) int {
		if c := cmp.Compare(a.head.VisibleAt, b.head.VisibleAt); c != 0 {
			return c
		}
		return cmp.Compare(a.head.Seq, b.head.Seq)
	})
	out := make([][]M, len(runs))
	for i, r := range runs {
		out[i] = r.msgs
	}
	return out
}
