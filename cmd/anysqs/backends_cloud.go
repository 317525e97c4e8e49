//go:build !anysqs_lite

package main

// The cloud backends. A build with -tags anysqs_lite leaves them out (backends_lite.go):
// their SDKs are most of a cold build's compile time.
import (
	_ "github.com/anysqs/anysqs/drivers/cosmos"     // registers "cosmos"
	_ "github.com/anysqs/anysqs/drivers/firestore"  // registers "firestore"
	_ "github.com/anysqs/anysqs/drivers/servicebus" // registers "servicebus"
	_ "github.com/anysqs/anysqs/drivers/spanner"    // registers "spanner"
)

// liteBuild reports whether this binary leaves the cloud backends out.
const liteBuild = false
