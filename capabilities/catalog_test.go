package capabilities_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
)

// idsInSource reads the ID constants from ids.go, so that a new ID without a catalog
// entry (or the reverse) fails here rather than in a driver's declarations.
func idsInSource(t *testing.T) map[capabilities.ID]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "ids.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[capabilities.ID]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			ids[capabilities.ID(s)] = true
		}
		return true
	})
	return ids
}

func TestCatalogMatchesIDs(t *testing.T) {
	src := idsInSource(t)
	if len(src) == 0 {
		t.Fatal("no IDs parsed from ids.go")
	}
	seen := map[capabilities.ID]bool{}
	for _, e := range capabilities.All() {
		if seen[e.ID] {
			t.Errorf("%s: duplicate catalog entry", e.ID)
		}
		seen[e.ID] = true
		if !src[e.ID] {
			t.Errorf("%s: catalog entry without a constant in ids.go", e.ID)
		}
		if e.Title == "" || e.Reference == "" || e.Native == "" {
			t.Errorf("%s: title, reference and native expectation are required", e.ID)
		}
		for _, l := range []capabilities.Level{capabilities.Native, capabilities.Emulated, capabilities.Degraded, capabilities.Unsupported} {
			if e.Expect(l) == "" {
				t.Errorf("%s: no expectation for %s", e.ID, l)
			}
		}
		for _, k := range e.Limits {
			if k.Doc == "" || (k.Kind == capabilities.LimitEnum) != (len(k.Values) > 0) {
				t.Errorf("%s: limit %s badly described", e.ID, k.Key)
			}
		}
	}
	for id := range src {
		if !seen[id] {
			t.Errorf("%s: constant in ids.go without a catalog entry", id)
		}
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	e, ok := capabilities.Lookup(capabilities.LongPolling)
	if !ok || len(e.Limits) == 0 {
		t.Fatal("long polling entry missing or without limits")
	}
	e.Limits[0].Values[0] = "changed"
	again, _ := capabilities.Lookup(capabilities.LongPolling)
	if again.Limits[0].Values[0] == "changed" {
		t.Fatal("Lookup exposes the catalog's own slices")
	}
	if _, ok := capabilities.Lookup("no.such"); ok {
		t.Fatal("Lookup found an unknown ID")
	}
}

// allNative declares every catalog capability Native.
func allNative() []capabilities.Declaration {
	var ds []capabilities.Declaration
	for _, e := range capabilities.All() {
		ds = append(ds, capabilities.Declaration{ID: e.ID, Level: capabilities.Native})
	}
	return ds
}

func TestValidate(t *testing.T) {
	if err := capabilities.Validate(allNative()); err != nil {
		t.Fatalf("complete declarations rejected: %v", err)
	}
	tests := []struct {
		name   string
		change func([]capabilities.Declaration) []capabilities.Declaration
		want   string
	}{
		{"missing", func(ds []capabilities.Declaration) []capabilities.Declaration { return ds[1:] },
			"queue.standard is not declared"},
		{"duplicate", func(ds []capabilities.Declaration) []capabilities.Declaration { return append(ds, ds[0]) },
			"declared more than once"},
		{"unknown", func(ds []capabilities.Declaration) []capabilities.Declaration {
			return append(ds, capabilities.Declaration{ID: "queue.magic", Level: capabilities.Native})
		}, `"queue.magic" is not in the catalog`},
		{"bad level", func(ds []capabilities.Declaration) []capabilities.Declaration {
			ds[0].Level = "partial"
			return ds
		}, `level "partial"`},
		{"unknown limit key", func(ds []capabilities.Declaration) []capabilities.Declaration {
			return setLimits(ds, capabilities.VisibilityMax, map[string]string{"max": "10"})
		}, `limit "max" is not one of this capability's keys [max_seconds]`},
		{"non-integer limit", func(ds []capabilities.Declaration) []capabilities.Declaration {
			return setLimits(ds, capabilities.VisibilityMax, map[string]string{"max_seconds": "12h"})
		}, `max_seconds="12h" is not an integer`},
		{"bad enum limit", func(ds []capabilities.Declaration) []capabilities.Declaration {
			return setLimits(ds, capabilities.LongPolling, map[string]string{"mode": "push"})
		}, `mode="push" is not one of [native polled]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := capabilities.Validate(tt.change(allNative()))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	ok := setLimits(allNative(), capabilities.LongPolling, map[string]string{"mode": "polled", "max_overrun_ms": "250"})
	if err := capabilities.Validate(ok); err != nil {
		t.Fatalf("valid limits rejected: %v", err)
	}
}

func setLimits(ds []capabilities.Declaration, id capabilities.ID, limits map[string]string) []capabilities.Declaration {
	for i := range ds {
		if ds[i].ID == id {
			ds[i].Limits = limits
		}
	}
	return ds
}
