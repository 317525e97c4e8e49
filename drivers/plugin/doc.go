// Package plugin runs anysqs drivers out of process, with hashicorp/go-plugin over gRPC:
// a plugin is an executable that serves one driver (Serve), and the gateway's "plugin"
// backend (Open) starts it and calls it for every method of drivers.Driver. A plugin has
// its own dependencies, release cycle and credentials, and its crash is not the
// gateway's.
//
// # Semantics
//
// Every method of the Driver contract, the move task store and the activity methods
// included, is one gRPC call (driver.proto under internal/driverpb). Values cross
// intact: zero times, nil and empty maps, nil and zero pointers, nil and empty binary
// attribute values; an empty slice arrives as nil. A *drivers.Error crosses as the
// gRPC status's detail, with its kind, message, retry hint and the text of its native
// cause; context cancellation and deadlines cross as themselves (errors.Is holds on the
// host, also for a *drivers.Error that wraps one), and the caller's deadline bounds the
// plugin's work too.
//
// Open starts the plugin, hands it options.config, and calls Describe at once: the
// description is checked as an in-tree driver's and is what the gateway builds its
// policy, limits and compatibility report from. The host speaks every protocol version
// it knows (ProtocolVersion; version 1, whose reports carried move counts, is no
// longer spoken) and go-plugin settles on one both sides speak; a
// plugin with none in common is refused with both versions named. The magic cookie
// (Handshake) makes a plugin started by hand say what it is and exit.
//
// Before every start the executable's SHA-256 is compared with options.checksum; a
// binary that differs is not run. The plugin's standard error goes to the gateway's.
// The connection is mutually authenticated TLS over a Unix socket (go-plugin's AutoMTLS):
// only the host that started the plugin can call it.
//
// A plugin process that exits, or does not answer gRPC's health check within
// HealthTimeout (5 s; checked every second), is ended and replaced: calls in flight and
// calls made until the new process is up fail with KindUnavailable (the gateway answers
// ServiceUnavailable, which SDKs retry; the outcome of a write in flight is unknown, as
// the contract allows), Ping fails so readiness reports the outage, and restarts back off
// from 100 ms to 10 s. What the driver acknowledged is as durable as the driver makes it:
// a restart reopens the same storage. A restarted plugin must describe itself as before,
// or it is refused until the gateway restarts. Metrics adds anysqs_plugin_up and
// anysqs_plugin_restarts_total to the plugin driver's own series.
//
// # Limits
//
// A plugin that hangs inside one method while its process still answers the health
// check is not detected: that call waits for its caller's deadline. A receipt handle of
// a driver declaring ReceiptInstance scope is valid only in the process that issued it,
// so a restart invalidates such handles, as a gateway restart would. Each call costs a
// gRPC round trip, serialisation and TLS on both sides (docs/plugins.md, "Cost").
// go-plugin runs plugins on Unix-like systems; Windows is not tested.
//
// # Configuration
//
//	backend:
//	  name: plugin
//	  options:
//	    path: /usr/local/bin/anysqs          # the plugin executable
//	    args: [driver, serve, postgres]      # its arguments
//	    checksum: sha256:5f0c...              # sha256sum of path, required
//	    config:                              # the plugin driver's own options
//	      dsn: postgres://anysqs@db/anysqs
//
// `anysqs driver serve <name>` serves any built-in driver as a plugin; docs/plugins.md
// shows how to write, test and ship a plugin of one's own.
package plugin
