package drivers

import (
	"errors"
	"testing"
)

// DecodeOptions speaks of keys and YAML kinds, never of Go types or JSON, and says which
// option is wrong so that the binary can point at its line.
func TestDecodeOptionsErrors(t *testing.T) {
	type tls struct {
		Mode string `json:"mode"`
	}
	type opts struct {
		DataDir  string `json:"data_dir"`
		MaxConns int    `json:"max_conns"`
		TLS      tls    `json:"tls"`
	}
	for _, tc := range []struct {
		raw      map[string]any
		key, msg string
	}{
		{map[string]any{"data_dirr": "x"}, "data_dirr", "unknown key"},
		{map[string]any{"max_conns": "many"}, "max_conns", "want a whole number, got text"},
		{map[string]any{"max_conns": 1.5}, "max_conns", "want a whole number, got the number 1.5"},
		{map[string]any{"data_dir": 5}, "data_dir", "want text, got a number"},
		{map[string]any{"tls": map[string]any{"mode": true}}, "tls.mode", "want text, got true or false"},
		{map[string]any{"tls": "on"}, "tls", "want a mapping, got text"},
	} {
		var o opts
		err := DecodeOptions(tc.raw, &o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Key != tc.key || oe.Msg != tc.msg {
			t.Errorf("%v: got %v, want key %s: %s", tc.raw, err, tc.key, tc.msg)
		}
	}
	var o opts
	if err := DecodeOptions(map[string]any{"data_dir": "d", "max_conns": 3}, &o); err != nil || o.DataDir != "d" || o.MaxConns != 3 {
		t.Fatalf("valid options: %v %+v", err, o)
	}
}
