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

func TestAttemptReplay(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	exp := sqsrule.AttemptExpiry(at)
	for _, c := range []struct {
		now  time.Time
		live bool
	}{
		{at, true},
		{exp.Add(-1), true},
		{exp, false},
		{exp.Add(time.Hour), false},
	} {
		if got := sqsrule.AttemptLive(exp, c.now); got != c.live {
			t.Errorf("AttemptLive(%v, %v) = %v, want %v", exp, c.now, got, c.live)
		}
	}

	now := at.Add(time.Minute)
	for _, c := range []struct {
		name                string
		exists, sameReceive bool
		visibleAt           time.Time
		held                bool
	}{
		{"in flight under the handle", true, true, now.Add(time.Second), true},
		{"visibility ended at now", true, true, now, false},
		{"visibility ended before now", true, true, now.Add(-time.Second), false},
		{"received again since", true, false, now.Add(time.Second), false},
		{"deleted, moved or purged", false, true, now.Add(time.Second), false},
	} {
		if got := sqsrule.AttemptHeld(c.exists, c.sameReceive, c.visibleAt, now); got != c.held {
			t.Errorf("%s: AttemptHeld = %v, want %v", c.name, got, c.held)
		}
	}
}
