package postgres

// SweepLockKey is the advisory lock (two-key form) that Sweep takes, for tests.
func SweepLockKey(schema string) (int32, int32) { return newLockKeys(schema).class, lockSweep }
