package servicebus

import (
	"context"
	"testing"
	"time"
)

// The admin API speaks ISO 8601 durations; these are forms Service Bus returns.
func TestISODurations(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"PT1M": time.Minute, "PT30S": 30 * time.Second, "P14D": 14 * 24 * time.Hour, "PT5M": 5 * time.Minute,
		"P1DT2H3M4.5S": 26*time.Hour + 3*time.Minute + 4500*time.Millisecond, "PT0.5S": 500 * time.Millisecond,
		"P10675199DT2H48M5.4775807S": time.Duration(1<<63 - 1), "": 0, "junk": 0,
	} {
		if got := parseISODuration(s); got != want {
			t.Errorf("parseISODuration(%q) = %v, want %v", s, got, want)
		}
	}
	for _, d := range []time.Duration{5 * time.Second, time.Minute, 1209600 * time.Second, 1500 * time.Millisecond} {
		if got := parseISODuration(isoDuration(d)); got != d {
			t.Errorf("round trip of %v through %q: %v", d, isoDuration(d), got)
		}
	}
	if got := entityName("sb://ns.servicebus.windows.net/dlq"); got != "dlq" {
		t.Errorf("entityName of a URL: %q", got)
	}
}

// A short accept on a real namespace still gets its round trip; a cancelled request
// still stops it.
func TestAtLeast(t *testing.T) {
	parent, cancelParent := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancelParent()
	ctx, cancel := atLeast(parent, time.Hour)
	defer cancel()
	<-parent.Done()
	if ctx.Err() != nil {
		t.Fatalf("the parent's deadline ended the extended context: %v", ctx.Err())
	}
	req, cancelReq := context.WithCancel(context.Background())
	short, cancelShort := context.WithTimeout(req, time.Hour)
	defer cancelShort()
	ctx2, cancel2 := atLeast(short, 2*time.Hour)
	defer cancel2()
	cancelReq()
	<-ctx2.Done()
}
