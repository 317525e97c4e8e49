package sqsrule_test

import (
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func TestDedupHolds(t *testing.T) {
	sent := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	exp := sqsrule.DedupExpiry(sent)
	if !exp.Equal(sent.Add(5 * time.Minute)) {
		t.Fatalf("DedupExpiry = %v, want 5 minutes after the send", exp)
	}
	if got := sqsrule.AttemptExpiry(sent); !got.Equal(sent.Add(5 * time.Minute)) {
		t.Fatalf("AttemptExpiry = %v, want 5 minutes after the attempt", got)
	}
	for _, c := range []struct {
		name        string
		now, purged time.Time
		holds       bool
	}{
		{"at the send, never purged", sent, time.Time{}, true},
		{"a nanosecond before expiry", exp.Add(-1), time.Time{}, true},
		{"at expiry", exp, time.Time{}, false},
		{"after expiry", exp.Add(time.Minute), time.Time{}, false},
		{"purged before the send", sent.Add(time.Minute), sent.Add(-time.Second), true},
		{"purged at the send", sent.Add(time.Minute), sent, false},
		{"purged after the send", sent.Add(time.Minute), sent.Add(time.Second), false},
	} {
		if got := sqsrule.DedupHolds(exp, c.now, c.purged); got != c.holds {
			t.Errorf("%s: DedupHolds = %v, want %v", c.name, got, c.holds)
		}
	}
}
