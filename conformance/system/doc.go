// Package system holds black-box system tests of anysqs: real gateway processes (the
// anysqs binary, from internal/servetest) on real storage, driven by aws-sdk-go-v2. They
// show what the drivers' in-process tests cannot: several gateways sharing one database,
// a gateway killed with SIGKILL under load, a PostgreSQL restart under load, and a
// switch of backends under load.
//
// TestKillGatewayUnderLoad runs on every backend of internal/testbed whose storage
// gateways share, one subtest each: each gateway is served from the backend's shipped
// configuration, pointed at this machine's test service by testbed.Env on storage of
// its own. TestSwitchoverUnderLoad serves gateways the same way: it moves
// producers and consumers from a PostgreSQL gateway to a Spanner and to a SQLite one as
// docs/migration.md says, anysqs migrate moving the rest. The other tests run on
// PostgreSQL, each on its own database, anysqs_sys_<random>, dropped afterwards; the
// restart test never touches that server: it initdb's a throwaway cluster from the
// installed PostgreSQL binaries on a free port.
//
// The services are those scripts/test-env.sh starts and exports, found through
// internal/testenv; a test whose service is missing skips, except under CI=true where
// that fails.
//
// Each test puts a few seconds of load through the gateways. ANYSQS_SOAK=N multiplies
// the message counts by 5N for a longer run (make soak sets N=2).
package system
