package postgres_test

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestTLSEndToEnd connects with tls.mode verify-full to a server that has TLS on (Debian's
// PostgreSQL does, with its self-signed "snakeoil" certificate for localhost, which then
// serves as its own CA): every connection of the driver, the LISTEN one included, must be
// encrypted, and a name the certificate does not cover must be refused.
func TestTLSEndToEnd(t *testing.T) {
	t.Parallel()
	requireServer(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, adminDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var on, certFile string
	if err := admin.QueryRow(ctx, `SELECT current_setting('ssl'), current_setting('ssl_cert_file')`).Scan(&on, &certFile); err != nil {
		t.Fatal(err)
	}
	if on != "on" {
		t.Skip("the test server has TLS off (ssl = off)")
	}
	if _, err := os.Stat(certFile); err != nil {
		t.Skipf("the server's certificate is not readable here: %v", err)
	}
	dsn := newDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" {
		t.Skipf("the test server is not local (%s): its certificate's names are unknown", u.Hostname())
	}
	tlsOpts := &postgres.TLSOptions{Mode: "verify-full", CAFile: certFile}

	u.Host = "localhost:" + u.Port()
	d, err := postgres.Open(ctx, postgres.Options{DSN: u.String(), TLS: tlsOpts})
	if err != nil {
		t.Fatalf("Open with verify-full to localhost: %v", err)
	}
	defer d.Close()
	createQueue(t, d, "q", stdAttrs())
	send(t, d, "q", epoch, drivers.SendEntry{Body: "over TLS"})
	if got := receive(t, d, "q", epoch, 1, 30).Messages; len(got) != 1 || got[0].Body != "over TLS" {
		t.Fatalf("received %+v", got)
	}
	var conns int
	var allTLS bool
	if err := admin.QueryRow(ctx, `SELECT count(*), coalesce(bool_and(s.ssl), false) FROM pg_stat_activity a
		JOIN pg_stat_ssl s USING (pid) WHERE a.datname = $1 AND a.application_name = 'anysqs'`,
		dbName(t, dsn)).Scan(&conns, &allTLS); err != nil {
		t.Fatal(err)
	}
	if conns < 2 || !allTLS {
		t.Fatalf("%d driver connections, all encrypted: %v; want the pool's and the LISTEN one, all encrypted", conns, allTLS)
	}

	// The certificate names localhost only: verify-full to 127.0.0.1 must fail.
	u.Host = "127.0.0.1:" + u.Port()
	if d, err := postgres.Open(ctx, postgres.Options{DSN: u.String(), TLS: tlsOpts}); err == nil {
		d.Close()
		t.Fatal("Open with verify-full to a name the certificate does not cover succeeded")
	}
}
