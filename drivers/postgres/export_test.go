package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SweepLockKey is the advisory lock (two-key form) that Sweep takes, for tests.
func SweepLockKey(schema string) (int32, int32) { return newLockKeys(schema).class, lockSweep }

// SchemaVersions is how many migrations the driver has, for tests.
var SchemaVersions = len(migrations)

// Migration returns migration v (the one that brings the schema to version v), for tests.
func Migration(v int) string { return migrations[v-1] }

// OpenListener starts the driver's LISTEN connection on dsn, listening on channel, with
// pool sending its probe notification, and returns what closes it as Driver.Close does;
// for tests.
func OpenListener(ctx context.Context, dsn, channel string, pool *pgxpool.Pool) (close func(), err error) {
	cfg, err := poolConfig(Options{DSN: dsn, Schema: defaultSchema})
	if err != nil {
		return nil, err
	}
	l, err := startListener(ctx, cfg, false, channel, pool)
	if err != nil {
		return nil, err
	}
	return l.close, nil
}
