package postgres

// SweepLockKey is the advisory lock (two-key form) that Sweep takes, for tests.
func SweepLockKey(schema string) (int32, int32) { return newLockKeys(schema).class, lockSweep }

// SchemaVersions is how many migrations the driver has, for tests.
var SchemaVersions = len(migrations)
