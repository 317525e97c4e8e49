//go:build anysqs_lite

package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/anysqs/anysqs/drivers"
)

// liteBuild reports whether this binary leaves the cloud backends out.
const liteBuild = true

// A lite build (make run on the embedded or PostgreSQL backend) compiles in SQLite,
// PostgreSQL and plugins only; the cloud backends answer with how to get them.
func init() {
	for _, name := range []string{"cosmos", "firestore", "servicebus", "spanner"} {
		if slices.Contains(drivers.Names(), name) {
			continue // linked in anyway (a test of this package imports it)
		}
		drivers.Register(name, func(context.Context, map[string]any) (drivers.Driver, error) {
			return nil, fmt.Errorf("backend %s is not compiled into this binary: it was built with -tags anysqs_lite "+
				"(make run does so for the sqlite and postgres backends); `make build` builds one with every backend", name)
		})
	}
}
