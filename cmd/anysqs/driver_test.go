package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestDriverServeArguments: `anysqs driver serve` takes exactly one built-in driver;
// the plugin backend itself is not one.
func TestDriverServeArguments(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"driver"}, "want serve and a driver name"},
		{[]string{"driver", "serve"}, "want serve and a driver name"},
		{[]string{"driver", "run", "sqlite"}, "want serve and a driver name"},
		{[]string{"driver", "serve", "nosuch"}, `unknown driver "nosuch" (built in: `},
		{[]string{"driver", "serve", "plugin"}, `unknown driver "plugin"`},
	} {
		err := run(context.Background(), tt.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.args, err, tt.want)
		}
	}
}
