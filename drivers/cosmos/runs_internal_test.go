package cosmos

import (
	"fmt"
	"testing"
)

// TestFIFORuns checks the contract's FIFO rule on fifoRuns alone: a group's run starts
// at its head and stops before its first invisible message or its first message in
// flight, and runs go in order of their head's visibility.
func TestFIFORuns(t *testing.T) {
	const now = 100
	m := func(group string, seq, vis int64) msgDoc { return msgDoc{Group: group, Seq: seq, Vis: vis} }
	msgs := []msgDoc{
		m("a", 1, 90),   // a's head, released at 90
		m("b", 2, 10),   // b's head, visible since its send at 10
		m("a", 3, 130),  // a: in flight
		m("b", 4, 10),   //
		m("a", 5, 10),   // behind a's message in flight
		m("c", 6, 150),  // c: delayed head
		m("c", 7, 10),   //
		m("d", 8, 20),   // d: visible, but its head was claimed since (in flight below)
		m("b", 9, 10),   // beyond want
		m("e", 10, 10),  //
		m("e", 11, 200), // e: delayed
		m("e", 12, 10),  //
	}
	runs := fifoRuns(msgs, map[string]int64{"a": 3, "d": 8}, now, 2)
	got := fmt.Sprint(seqs(runs))
	if want := "[[2 4] [10] [1]]"; got != want {
		t.Fatalf("runs %s, want %s (b since 10, e since 10, a since 90)", got, want)
	}
}

func seqs(runs [][]msgDoc) [][]int64 {
	var out [][]int64
	for _, r := range runs {
		var s []int64
		for _, m := range r {
			s = append(s, m.Seq)
		}
		out = append(out, s)
	}
	return out
}
