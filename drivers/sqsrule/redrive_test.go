package sqsrule_test

import (
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func TestRedriveTarget(t *testing.T) {
	for _, c := range []struct {
		name    string
		policy  *drivers.RedrivePolicy
		dlq     string
		max     int32
		targets bool
	}{
		{"no policy", nil, "", 0, false},
		{"a dead-letter queue", &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 3}, "dlq", 3, true},
		{"maxReceiveCount 1", &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}, "dlq", 1, true},
		{"no queue named", &drivers.RedrivePolicy{MaxReceiveCount: 3}, "", 0, false},
		{"no count", &drivers.RedrivePolicy{DeadLetterQueue: "dlq"}, "", 0, false},
		{"a negative count", &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: -1}, "", 0, false},
		{"the queue itself", &drivers.RedrivePolicy{DeadLetterQueue: "q", MaxReceiveCount: 3}, "", 0, false},
		{"a name differing in case", &drivers.RedrivePolicy{DeadLetterQueue: "Q", MaxReceiveCount: 3}, "Q", 3, true},
	} {
		dlq, max, ok := sqsrule.RedriveTarget("q", c.policy)
		if dlq != c.dlq || max != c.max || ok != c.targets {
			t.Errorf("%s: RedriveTarget = %q, %d, %v; want %q, %d, %v", c.name, dlq, max, ok, c.dlq, c.max, c.targets)
		}
	}
}

func TestRedriveDue(t *testing.T) {
	for _, c := range []struct {
		received int64
		max      int32
		due      bool
	}{
		{0, 1, false},
		{1, 1, true},
		{1, 2, false},
		{2, 2, true},
		{5, 2, true}, // a count raised past the maximum, as after the policy was lowered
		{999, 1000, false},
		{1000, 1000, true},
	} {
		if got := sqsrule.RedriveDue(c.received, c.max); got != c.due {
			t.Errorf("RedriveDue(%d, %d) = %v, want %v", c.received, c.max, got, c.due)
		}
	}
}

func TestDLQEnqueueTime(t *testing.T) {
	sent := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	moved := sent.Add(24 * time.Hour)
	for _, c := range []struct {
		name string
		fifo bool
		want time.Time
	}{
		{"standard keeps the original enqueue time", false, sent},
		{"FIFO restarts at the move", true, moved},
	} {
		if got := sqsrule.DLQEnqueueTime(c.fifo, sent, moved); !got.Equal(c.want) {
			t.Errorf("%s: DLQEnqueueTime = %v, want %v", c.name, got, c.want)
		}
	}
	// Drivers that store times as integers get the same rule in their unit.
	if got := sqsrule.DLQEnqueueTime(false, sent.UnixMilli(), moved.UnixMilli()); got != sent.UnixMilli() {
		t.Errorf("standard, in milliseconds: %d, want %d", got, sent.UnixMilli())
	}
	if got := sqsrule.DLQEnqueueTime(true, sent.UnixNano(), moved.UnixNano()); got != moved.UnixNano() {
		t.Errorf("FIFO, in nanoseconds: %d, want %d", got, moved.UnixNano())
	}
}
