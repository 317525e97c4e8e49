package expect_test

import (
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/expect"
)

// TestDispatch: the declared levels pick what a case asserts, the strictest first.
func TestDispatch(t *testing.T) {
	a, b := capabilities.ID("a.one"), capabilities.ID("b.two")
	for _, tt := range []struct {
		name       string
		levels     map[capabilities.ID]capabilities.Level
		ownUnsup   bool
		ownDegrade bool
		want       string
	}{
		{"native", map[capabilities.ID]capabilities.Level{a: capabilities.Native, b: capabilities.Emulated}, true, true, "run"},
		{"undeclared", nil, true, true, "run"},
		{"degraded, own fallback", map[capabilities.ID]capabilities.Level{a: capabilities.Native, b: capabilities.Degraded}, true, true, "degraded b.two"},
		{"degraded, no fallback", map[capabilities.ID]capabilities.Level{b: capabilities.Degraded}, true, false, "run"},
		{"unsupported beats degraded", map[capabilities.ID]capabilities.Level{a: capabilities.Degraded, b: capabilities.Unsupported}, true, true, "unsupported b.two"},
		{"unsupported, suite's probe", map[capabilities.ID]capabilities.Level{a: capabilities.Unsupported}, false, true, "otherwise a.one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			c := expect.Case[string]{Caps: []capabilities.ID{a, b}, Name: "x", Run: func(string) { got = "run" }}
			if tt.ownUnsup {
				c.Unsupported = func(_ string, d capabilities.Declaration) { got = "unsupported " + string(d.ID) }
			}
			if tt.ownDegrade {
				c.Degraded = func(_ string, d capabilities.Declaration) { got = "degraded " + string(d.ID) }
			}
			c.Dispatch(t, "h", func(id capabilities.ID) (capabilities.Declaration, bool) {
				l, ok := tt.levels[id]
				return capabilities.Declaration{ID: id, Level: l}, ok
			}, func(d capabilities.Declaration) { got = "otherwise " + string(d.ID) })
			if got != tt.want {
				t.Errorf("dispatched to %q, want %q", got, tt.want)
			}
		})
	}
	if p := (expect.Case[string]{Caps: []capabilities.ID{a, b}, Name: "x"}).Path(); p != "a.one+b.two/x" {
		t.Errorf("Path() = %q", p)
	}
}
