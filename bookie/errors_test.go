package bookie

import (
	stderrors "errors"
	"io"
	"path"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestSentinelsMatchStdlibErrorsIs checks that the storage's errors, its own
// and the indexes' passed through, match their sentinels under the standard
// library's errors.Is as well as cockroachdb's.
func TestSentinelsMatchStdlibErrorsIs(t *testing.T) {
	requireIs := func(err, sentinel error) {
		t.Helper()
		require.Error(t, err)
		require.True(t, stderrors.Is(err, sentinel), "stdlib errors.Is(%v, %v)", err, sentinel)
		require.True(t, errors.Is(err, sentinel), "cockroachdb errors.Is(%v, %v)", err, sentinel)
	}

	env := newTestEnv()
	s := env.open(t)
	const entries = 500
	require.NoError(t, s.SetMasterKey(1, []byte("key")))
	for e := int64(0); e < entries; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Dirs()[0].locations.DB().Flush())
	requireIs(s.SetMasterKey(1, []byte("other")), ErrWrongMasterKey)
	_, err := s.GetEntry(2, 0)
	requireIs(err, ErrNoLedger)
	_, err = s.GetEntry(1, entries)
	requireIs(err, ErrNoEntry)
	requireIs(noEntry(1, 2), ErrNoEntry)
	_, err = s.GetEntry(-1, 0)
	requireIs(err, ErrInvalidArgument)
	require.NoError(t, s.Close())
	_, err = s.GetEntry(1, 0)
	requireIs(err, ErrClosed)

	// Damage the locations index's table: reads through it fail with the
	// engine's corruption error.
	tables := findFiles(t, env.mem, "/data", "/locations/", ".sst")
	require.Len(t, tables, 1)
	damage(t, env.mem, tables[0])
	s = env.open(t)
	defer s.Close()
	bad := 0
	for e := int64(0); e < entries && bad == 0; e++ {
		if _, err := s.GetEntry(1, e); err != nil {
			requireIs(err, lsm.ErrCorruption)
			bad++
		}
	}
	require.Greater(t, bad, 0, "no read saw the damaged block")
}

// findFiles returns the files under dir whose paths contain infix and end in
// suffix.
func findFiles(t *testing.T, fs lsm.FS, dir, infix, suffix string) []string {
	t.Helper()
	names, err := fs.List(dir)
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		p := path.Join(dir, n)
		if fi, err := fs.Stat(p); err == nil && fi.IsDir() {
			out = append(out, findFiles(t, fs, p, infix, suffix)...)
		} else if strings.Contains(p, infix) && strings.HasSuffix(p, suffix) {
			out = append(out, p)
		}
	}
	return out
}

// damage flips a byte a third of the way into the file p.
func damage(t *testing.T, fs lsm.FS, p string) {
	t.Helper()
	f, err := fs.Open(p)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	data[size/3] ^= 0x55
	w, err := fs.Create(p)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())
}
