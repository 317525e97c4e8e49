package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
)

// driverCommand runs `anysqs driver serve <name>`: one of the built-in drivers as an
// out-of-process driver plugin, for a gateway configured with
// backend: {name: plugin, options: {path: <this binary>, args: [driver, serve, <name>]}}.
// Only a gateway starts it; run by hand it says so and exits.
func driverCommand(_ context.Context, args []string, stderr io.Writer) error {
	names := slices.DeleteFunc(drivers.Names(), func(n string) bool { return n == "plugin" })
	usage := fmt.Sprintf("usage: anysqs driver serve <%s>", strings.Join(names, "|"))
	if len(args) != 2 || args[0] != "serve" {
		fmt.Fprintln(stderr, usage)
		return errors.New("driver: want serve and a driver name")
	}
	name := args[1]
	if !slices.Contains(names, name) {
		return fmt.Errorf("driver serve: unknown driver %q (built in: %s)", name, strings.Join(names, ", "))
	}
	plugin.Serve(func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		return drivers.Open(ctx, name, raw)
	})
	return nil
}
