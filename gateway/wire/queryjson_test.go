package wire

import (
	"testing"
)

func TestAcceptsJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                  false,
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"text/xml":                          false,
		"*/*":                               false,
		"text/xml, application/json":        false,
		"application/json, text/xml;q=0.9":  true,
		"garbage;;, application/json":       true,
		"application/x-amz-json-1.0":        false,
		"application/xml, application/json": false,
	} {
		if got := AcceptsJSON(accept); got != want {
			t.Errorf("AcceptsJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}
