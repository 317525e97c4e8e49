package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/internal/cli"
)

// TestDriverServeArguments: `anysqs driver serve` takes exactly one built-in driver;
// the plugin backend itself is not one.
func TestDriverServeArguments(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"driver"}, "usage: anysqs driver serve <"},
		{[]string{"driver", "serve"}, "usage: anysqs driver serve <"},
		{[]string{"driver", "run", "sqlite"}, "usage: anysqs driver serve <"},
		{[]string{"driver", "serve", "nosuch"}, `unknown driver "nosuch" (built in: `},
		{[]string{"driver", "serve", "plugin"}, `unknown driver "plugin"`},
	} {
		err := run(context.Background(), tt.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) != 2 {
			t.Errorf("%v: got %v (exit %d), want %q and exit 2", tt.args, err, cli.ExitCode(err), tt.want)
		}
	}
}
