package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
	"github.com/anysqs/anysqs/internal/cli"
)

// driverCommand runs `anysqs driver serve <name>`: one of the built-in drivers as an
// out-of-process driver plugin, for a gateway configured with
// backend: {name: plugin, options: {path: <this binary>, args: [driver, serve, <name>]}}.
// Only a gateway starts it; run by hand it says so and exits.
func driverCommand(_ context.Context, args []string, stdout io.Writer) error {
	names := slices.DeleteFunc(drivers.Names(), func(n string) bool { return n == "plugin" })
	usage := fmt.Sprintf("usage: anysqs driver serve <%s>", strings.Join(names, "|"))
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, usage+"\n\nServe a built-in driver as an out-of-process plugin; a gateway configured with\nbackend: {name: plugin, ...} starts it.")
		return cli.ErrHelpShown
	}
	if len(args) != 2 || args[0] != "serve" {
		return cli.Usagef("%s", usage)
	}
	name := args[1]
	if !slices.Contains(names, name) {
		return cli.Usagef("driver serve: unknown driver %q (built in: %s)", name, strings.Join(names, ", "))
	}
	plugin.Serve(func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		return drivers.Open(ctx, name, raw)
	})
	return nil
}
