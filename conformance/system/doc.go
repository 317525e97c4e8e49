// Package system holds black-box system tests of anysqs on PostgreSQL: real gateway
// processes (the anysqs binary, built once in TestMain) on a real database, driven by
// aws-sdk-go-v2. They show what the driver's in-process tests cannot: several gateways
// sharing one database, a gateway killed with SIGKILL under load, and a PostgreSQL
// restart under load.
//
// The tests find PostgreSQL through ANYSQS_TEST_POSTGRES_DSN (scripts/test-env.sh
// exports it) and skip without it, except under CI=true where that fails. Each test uses
// its own database, anysqs_sys_<random>, dropped afterwards. The restart test never
// touches that server: it initdb's a throwaway cluster from the installed PostgreSQL
// binaries on a free port.
//
// Each test puts a few seconds of load through the gateways. ANYSQS_SOAK=N multiplies
// the message counts by 5N for a longer run (make soak sets N=2).
package system
