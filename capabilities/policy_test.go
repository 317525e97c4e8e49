package capabilities_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
)

// reduced declares everything Native except a degraded per-message delay and an
// unsupported purge.
func reduced() []capabilities.Declaration {
	ds := allNative()
	for i := range ds {
		switch ds[i].ID {
		case capabilities.DelayMessage:
			ds[i].Level, ds[i].Note = capabilities.Degraded, "queue delay applies"
		case capabilities.QueuePurge:
			ds[i].Level = capabilities.Unsupported
		}
	}
	return ds
}

func mustPolicy(t *testing.T, cfg capabilities.Config) *capabilities.Policy {
	t.Helper()
	p, err := capabilities.NewPolicy("testdb", reduced(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckStartup(t *testing.T) {
	tests := []struct {
		name string
		cfg  capabilities.Config
		want string // empty: no error
	}{
		{"defaults", capabilities.Config{}, ""},
		{"strict without requirements", capabilities.Config{Mode: "strict"}, ""},
		{"bad mode", capabilities.Config{Mode: "lenient"}, `policy mode "lenient"`},
		{"override of unknown ID", capabilities.Config{Overrides: map[string]string{"delay.mesage": "strict"}},
			`unknown capability "delay.mesage"`},
		{"override with bad mode", capabilities.Config{Overrides: map[string]string{"delay.message": "off"}},
			`mode "off"`},
		{"require unknown ID", capabilities.Config{Require: []string{"fifo.magic"}}, `unknown capability "fifo.magic"`},
		{"require unsupported", capabilities.Config{Require: []string{"queue.purge"}},
			"requires queue.purge but backend testdb does not support it"},
		{"require degraded, strict globally", capabilities.Config{Mode: "strict", Require: []string{"delay.message"}},
			"requires delay.message in strict mode but backend testdb only degrades it"},
		{"require degraded, strict override", capabilities.Config{
			Overrides: map[string]string{"delay.message": "strict"}, Require: []string{"delay.message"}},
			"only degrades it"},
		{"require degraded, degrade override", capabilities.Config{Mode: "strict",
			Overrides: map[string]string{"delay.message": "degrade"}, Require: []string{"delay.message"}}, ""},
		{"require native", capabilities.Config{Mode: "strict", Require: []string{"fifo.ordering"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := capabilities.CheckStartup("testdb", reduced(), tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := capabilities.NewPolicy("testdb", reduced()[1:], capabilities.Config{}); err == nil {
		t.Fatal("NewPolicy accepted incomplete declarations")
	}
}

func TestDecide(t *testing.T) {
	degrade := mustPolicy(t, capabilities.Config{})
	strict := mustPolicy(t, capabilities.Config{Mode: "strict"})
	overridden := mustPolicy(t, capabilities.Config{Mode: "strict", Overrides: map[string]string{"delay.message": "degrade"}})
	tests := []struct {
		name    string
		p       *capabilities.Policy
		id      capabilities.ID
		outcome string
		code    string
	}{
		{"native", degrade, capabilities.FIFOOrdering, "allow", ""},
		{"native under strict", strict, capabilities.FIFOOrdering, "allow", ""},
		{"degraded", degrade, capabilities.DelayMessage, "degrade", ""},
		{"degraded under strict", strict, capabilities.DelayMessage, "reject", "InvalidParameterValue"},
		{"degraded, override to degrade", overridden, capabilities.DelayMessage, "degrade", ""},
		{"unsupported", degrade, capabilities.QueuePurge, "reject", "UnsupportedOperation"},
		{"not in catalog", degrade, "queue.magic", "reject", "InternalError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.p.Decide(tt.id)
			got := "allow"
			if d.Degrade {
				got = "degrade"
			}
			if d.Reject {
				got = "reject"
			}
			if got != tt.outcome || d.Code != tt.code || d.Allow() != (tt.outcome == "allow") {
				t.Fatalf("Decide(%s) = %+v, want %s %s", tt.id, d, tt.outcome, tt.code)
			}
			if d.Degrade && d.Header != string(tt.id) {
				t.Errorf("header value %q, want %q", d.Header, tt.id)
			}
			if d.Reject && (!strings.Contains(d.Message, "testdb") || !strings.Contains(d.Message, string(tt.id))) {
				t.Errorf("message %q does not name backend and capability", d.Message)
			}
		})
	}
	if d := strict.Decide(capabilities.DelayMessage); !strings.Contains(d.Message, "queue delay applies") {
		t.Errorf("strict rejection message %q lacks the declaration's note", d.Message)
	}
}

func TestTraceHeadersAndCounts(t *testing.T) {
	p := mustPolicy(t, capabilities.Config{})
	tr := p.Trace("orders")
	tr.Decide(capabilities.FIFOOrdering)
	tr.Decide(capabilities.DelayMessage)
	tr.Decide(capabilities.DelayMessage) // twice in one request: counted once
	if got := tr.FirstDegraded(); len(got) != 1 || got[0] != capabilities.DelayMessage {
		t.Fatalf("FirstDegraded = %v", got)
	}
	want := []capabilities.Header{{Name: capabilities.HeaderDegraded, Value: "delay.message"}}
	if got := tr.Headers(false); !equalHeaders(got, want) {
		t.Fatalf("Headers(false) = %v, want %v", got, want)
	}
	want = []capabilities.Header{
		{Name: capabilities.HeaderBackend, Value: "testdb"},
		{Name: capabilities.HeaderDegraded, Value: "delay.message"},
		{Name: capabilities.HeaderExplain, Value: "fifo.ordering=native:allow; delay.message=degraded:degrade"},
	}
	if got := tr.Headers(true); !equalHeaders(got, want) {
		t.Fatalf("Headers(true) = %v, want %v", got, want)
	}

	second := p.Trace("orders")
	second.Decide(capabilities.DelayMessage)
	if got := second.FirstDegraded(); len(got) != 0 {
		t.Fatalf("second degraded use on the same queue reported as first: %v", got)
	}
	other := p.Trace("billing")
	other.Decide(capabilities.DelayMessage)
	if got := other.FirstDegraded(); len(got) != 1 {
		t.Fatalf("first degraded use on another queue not reported: %v", got)
	}
	counts := p.DegradedCounts()
	if counts["orders"][capabilities.DelayMessage] != 2 || counts["billing"][capabilities.DelayMessage] != 1 {
		t.Fatalf("counts = %v", counts)
	}
	if empty := p.Trace("").Headers(true); len(empty) != 2 || empty[1].Value != "no capability decisions" {
		t.Fatalf("explain without decisions = %v", empty)
	}
}

func TestConcurrentCounting(t *testing.T) {
	p := mustPolicy(t, capabilities.Config{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := p.Trace("q")
			tr.Decide(capabilities.DelayMessage)
			mu.Lock()
			firsts += len(tr.FirstDegraded())
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firsts != 1 || p.DegradedCounts()["q"][capabilities.DelayMessage] != 50 {
		t.Fatalf("firsts = %d, counts = %v", firsts, p.DegradedCounts())
	}
}

func TestAttributeIDAndExplainRequested(t *testing.T) {
	if id, ok := capabilities.AttributeID("RedrivePolicy"); !ok || id != capabilities.AttrRedrivePolicy {
		t.Fatalf("AttributeID(RedrivePolicy) = %s, %v", id, ok)
	}
	if _, ok := capabilities.AttributeID("QueueArn"); ok {
		t.Fatal("read-only attribute QueueArn mapped to a capability")
	}
	for v, want := range map[string]bool{"1": true, "True": true, " yes ": true, "": false, "0": false, "no": false} {
		if capabilities.ExplainRequested(v) != want {
			t.Errorf("ExplainRequested(%q) != %v", v, want)
		}
	}
}

func equalHeaders(a, b []capabilities.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
