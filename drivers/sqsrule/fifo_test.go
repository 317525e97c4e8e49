package sqsrule_test

import (
	"fmt"
	"testing"

	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func TestRunNext(t *testing.T) {
	for _, c := range []struct {
		expired, receivable bool
		taken, limit        int
		want                sqsrule.RunStep
	}{
		{false, true, 0, 10, sqsrule.RunTake},
		{false, true, 9, 10, sqsrule.RunTake},
		{false, true, 10, 10, sqsrule.RunEnd},
		{false, false, 0, 10, sqsrule.RunEnd},
		{true, false, 0, 10, sqsrule.RunPass},
		{true, true, 10, 10, sqsrule.RunPass},
	} {
		if got := sqsrule.RunNext(c.expired, c.receivable, c.taken, c.limit); got != c.want {
			t.Errorf("RunNext(expired %v, receivable %v, %d of %d) = %d, want %d", c.expired, c.receivable, c.taken, c.limit, got, c.want)
		}
	}
}

// TestFIFORuns: a group's run starts at its head and stops before its first message that
// is not receivable, passes over expired ones, holds at most limit, and runs go in the
// order their heads became visible.
func TestFIFORuns(t *testing.T) {
	type msg struct {
		group          string
		seq, vis       int64
		inFlight, gone bool
	}
	const now = 100
	msgs := []msg{
		{group: "a", seq: 1, vis: 90},                 // a's head, released at 90
		{group: "b", seq: 2, vis: 10},                 // b's head, visible since its send at 10
		{group: "a", seq: 3, vis: 130},                // a: in flight
		{group: "b", seq: 4, vis: 10},                 //
		{group: "a", seq: 5, vis: 10},                 // behind a's message in flight
		{group: "c", seq: 6, vis: 150},                // c: delayed head
		{group: "c", seq: 7, vis: 10},                 //
		{group: "d", seq: 8, vis: 20, inFlight: true}, // d: claimed since it was read
		{group: "b", seq: 9, vis: 10},                 // beyond the limit
		{group: "e", seq: 10, vis: 10, gone: true},    // e: expired head, passed over
		{group: "e", seq: 11, vis: 15},                //
		{group: "e", seq: 12, vis: 200},               // e: delayed
		{group: "e", seq: 13, vis: 10},                //
	}
	runs := sqsrule.FIFORuns(msgs, 2, func(m msg) sqsrule.RunMessage {
		return sqsrule.RunMessage{Group: m.group, Seq: m.seq, VisibleAt: m.vis,
			Receivable: m.vis <= now && !m.inFlight, Expired: m.gone}
	})
	var got [][]int64
	for _, r := range runs {
		var seqs []int64
		for _, m := range r {
			seqs = append(seqs, m.seq)
		}
		got = append(got, seqs)
	}
	if want := "[[2 4] [11] [1]]"; fmt.Sprint(got) != want {
		t.Fatalf("runs %v, want %s", got, want)
	}
}
