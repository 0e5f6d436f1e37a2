package lsm

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLockDir(t *testing.T) {
	for name, fs := range map[string]FS{"mem": NewMemFS(), "os": nil} {
		t.Run(name, func(t *testing.T) {
			dir := "/db"
			if fs == nil {
				dir = filepath.Join(t.TempDir(), "db")
			}
			_, err := LockDir(fs, dir)
			require.Error(t, err, "no directory: nothing to lock")

			d, err := Open(dir, &Options{FS: fs})
			require.NoError(t, err)
			_, err = LockDir(fs, dir)
			require.ErrorContains(t, err, "is a process using the database?")
			require.NoError(t, d.Close())

			lock, err := LockDir(fs, dir)
			require.NoError(t, err)
			_, err = Open(dir, &Options{FS: fs})
			require.Error(t, err, "a writable Open while the lock is held")
			ro, err := Open(dir, &Options{FS: fs, ReadOnly: true})
			require.NoError(t, err, "a ReadOnly Open takes no lock")
			require.NoError(t, ro.Close())
			require.NoError(t, lock.Close())
			d, err = Open(dir, &Options{FS: fs})
			require.NoError(t, err)
			require.NoError(t, d.Close())
		})
	}
}
