//go:build !unix

package sqlite

import "os"

// lockDataDir does nothing where flock is not available; see lock_unix.go.
func lockDataDir(dir string) (*os.File, error) { return nil, nil }
