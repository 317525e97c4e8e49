//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive lock on dir so that a second gateway process cannot open
// the same database: it would work, but neither process would see the other's writes
// in time to wake its long polls. The kernel drops the lock when the process dies.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "anysqs.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: data_dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sqlite: data_dir %s is in use by another anysqs process", dir)
		}
		return nil, fmt.Errorf("sqlite: lock data_dir %s: %w", dir, err)
	}
	return f, nil
}
