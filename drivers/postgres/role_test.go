package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/internal/testenv"
)

// Managed PostgreSQL services give no superuser. The driver needs only a role that may
// connect to its database and create a schema there: the contract suite and cross-instance
// wake-ups run as such a role.
func TestUnprivilegedRole(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := dbName(t, dsn)
	var b [4]byte
	rand.Read(b[:])
	role := "anysqs_app_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, adminDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE"); err != nil {
		testenv.Unavailable(t, "a test server whose user can create roles: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, adminDSN())
		if err != nil {
			t.Errorf("drop role %s: %v", role, err)
			return
		}
		defer c.Close(ctx)
		// The database (dropped by newDatabase's cleanup, which runs after this one) holds
		// the role's objects; drop them first so the role can go.
		c2, err := pgx.Connect(ctx, dsn)
		if err == nil {
			_, err = c2.Exec(ctx, "DROP OWNED BY "+role)
			c2.Close(ctx)
		}
		if err != nil {
			t.Errorf("drop objects of %s: %v", role, err)
		}
		if _, err := c.Exec(ctx, "DROP ROLE "+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	if _, err := admin.Exec(ctx, "GRANT CONNECT, CREATE ON DATABASE "+db+" TO "+role); err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	roleDSN := u.String()
	t.Run("contract", func(t *testing.T) { runContract(t, roleDSN) })
	t.Run("await-activity-across-instances", func(t *testing.T) { awaitActivityAcrossInstances(t, roleDSN) })
}
