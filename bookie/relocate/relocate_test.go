package relocate_test

import (
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/bookie/relocate"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// fixture is a storage of two pairs (ledger and index directories apart)
// on an in-memory file system, ledgers 0 to 9 written and closed.
type fixture struct {
	fs               *vfs.MemFS
	ledgers, indexes []string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{fs: vfs.NewMem(), ledgers: []string{"/a", "/b"}, indexes: []string{"/ia", "/ib"}}
	s := f.open(t, f.ledgers, f.indexes)
	for l := int64(0); l < 10; l++ {
		for e := int64(0); e < 5; e++ {
			require.NoError(t, s.AddEntry(l, e, storagetest.Payload(l, e, 0)))
		}
	}
	require.NoError(t, s.Close())
	return f
}

func (f *fixture) options(ledgers, indexes []string) *bookie.Options {
	return &bookie.Options{LedgerDirs: ledgers, IndexDirs: indexes, FS: f.fs, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20, Index: &entrylocation.Options{Engine: storagetest.IndexEngine()}}
}

func (f *fixture) open(t *testing.T, ledgers, indexes []string) *bookie.Storage {
	t.Helper()
	s, err := bookie.Open(f.options(ledgers, indexes))
	require.NoError(t, err)
	return s
}

func (f *fixture) move(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, f.fs.MkdirAll("/new", 0o755))
	require.NoError(t, f.fs.MkdirAll("/other", 0o755))
	require.NoError(t, f.fs.Rename(from, to))
}

func (f *fixture) requireLedgers(t *testing.T, ledgers, indexes []string) {
	t.Helper()
	s := f.open(t, ledgers, indexes)
	for l := int64(0); l < 10; l++ {
		for e := int64(0); e < 5; e++ {
			storagetest.RequireEntry(t, s, l, e, storagetest.Payload(l, e, 0))
		}
	}
	require.NoError(t, s.Close())
}

// TestRelocate: directories moved to new paths are refused by the
// storage, which names relocate; relocate proves each one and records the
// new paths (one generation later, in every copy); the storage then opens
// there and every entry reads back; a second relocate has nothing to do.
func TestRelocate(t *testing.T) {
	f := newFixture(t)
	newLedgers, newIndexes := []string{"/new/a", "/other/b"}, []string{"/new/ia", "/ib"}
	f.move(t, "/a", "/new/a")
	f.move(t, "/b", "/other/b")
	f.move(t, "/ia", "/new/ia")
	_, err := bookie.Open(f.options(newLedgers, newIndexes))
	require.ErrorContains(t, err, "the directories moved")
	require.ErrorContains(t, err, "bookie-index relocate --conf FILE")

	res, err := relocate.Directories(relocate.Options{LedgerDirs: newLedgers, IndexDirs: newIndexes, FS: f.fs})
	require.NoError(t, err)
	require.True(t, res.Moved())
	require.Equal(t, []ondisk.DirPair{{Ledger: "/a", Index: "/ia"}, {Ledger: "/b", Index: "/ib"}}, res.Recorded)
	require.Equal(t, []ondisk.DirPair{{Ledger: "/new/a", Index: "/new/ia"}, {Ledger: "/other/b", Index: "/ib"}}, res.Configured)
	require.Equal(t, uint64(2), res.Generation)
	require.Equal(t, []string{"/new/ia/current", "/ib/current", "/new/a/current", "/other/b/current"}, res.Written)
	for _, d := range res.Written {
		l, err := ondisk.ReadLayout(f.fs, d)
		require.NoError(t, err)
		require.Equal(t, res.Configured, l.Dirs, d)
		require.Equal(t, uint64(2), l.Generation)
	}
	f.requireLedgers(t, newLedgers, newIndexes)

	res, err = relocate.Directories(relocate.Options{LedgerDirs: newLedgers, IndexDirs: newIndexes, FS: f.fs})
	require.NoError(t, err)
	require.False(t, res.Moved())
	require.Empty(t, res.Written)
}

// TestRelocateRefuses: a swapped pair of directories, another bookie's
// directory, a ledger directory without a copy, a version 1 copy and a
// changed count are refused before anything is written, naming both
// directories where there are two.
func TestRelocateRefuses(t *testing.T) {
	f := newFixture(t)
	other := newFixture(t)
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		for _, d := range []string{"/a/current", "/b/current", "/ia/current", "/ib/current"} {
			l, err := ondisk.ReadLayout(f.fs, d)
			require.NoError(t, err)
			if l != nil {
				m[d] = ondisk.EncodeLayout(l)
			}
		}
		return m
	}
	before := snapshot()
	for _, tc := range []struct {
		name             string
		ledgers, indexes []string
		prepare, undo    func()
		want             []string
	}{
		{name: "swapped ledger directories", ledgers: []string{"/b", "/a"}, indexes: []string{"/ia", "/ib"},
			want: []string{"/b/current is the ledger directory of pair 2 of this bookie (recorded at /b/current), " +
				"but it is configured as the ledger directory of pair 1", "swapped"}},
		{name: "index directory of another pair", ledgers: []string{"/a", "/b"}, indexes: []string{"/ib", "/ia"},
			want: []string{"/ib/current is the index directory of pair 2 of this bookie (recorded at /ib/current), " +
				"but it is configured as the index directory of pair 1"}},
		{name: "another bookie's directory", ledgers: []string{"/a", "/b"}, indexes: []string{"/ia", "/ib"},
			prepare: func() { require.NoError(t, f.fs.Rename("/b", "/b.mine")); copyTree(t, other.fs, "/b", f.fs, "/b") },
			undo: func() {
				require.NoError(t, f.fs.RemoveAll("/b"))
				require.NoError(t, f.fs.Rename("/b.mine", "/b"))
			},
			want: []string{"/b/current belongs to another bookie instance", "than /a/current"}},
		{name: "no copy in a ledger directory", ledgers: []string{"/a", "/nowhere"}, indexes: []string{"/ia", "/ib"},
			want: []string{"/nowhere/current has no LAYOUT: it is not a directory of this storage"}},
		{name: "a directory fewer", ledgers: []string{"/a"}, indexes: []string{"/ia"},
			want: []string{"1 directory pairs are configured, 2 recorded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prepare != nil {
				tc.prepare()
			}
			res, err := relocate.Directories(relocate.Options{LedgerDirs: tc.ledgers, IndexDirs: tc.indexes, FS: f.fs})
			require.Error(t, err)
			require.Nil(t, res)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			if tc.undo != nil {
				tc.undo()
			}
			require.Equal(t, before, snapshot(), "nothing was written")
		})
	}

	// A version 1 copy does not say which directory it is.
	l, err := ondisk.ReadLayout(f.fs, "/a/current")
	require.NoError(t, err)
	l.Self = ondisk.Identity{}
	w, err := f.fs.Create("/a/current/LAYOUT")
	require.NoError(t, err)
	_, err = w.Write(ondisk.EncodeLayout(l))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = relocate.Directories(relocate.Options{LedgerDirs: []string{"/a", "/b"}, IndexDirs: []string{"/ia", "/ib"}, FS: f.fs})
	require.ErrorContains(t, err, "/a/current holds a LAYOUT of format version 1, which does not record which directory it is")
	require.ErrorContains(t, err, "start the storage once with its directories at their recorded paths [/a (index /ia), /b (index /ib)]")
}

// copyTree copies dir of from into to at dst.
func copyTree(t *testing.T, from vfs.FS, dir string, to vfs.FS, dst string) {
	t.Helper()
	names, err := from.List(dir)
	require.NoError(t, err)
	require.NoError(t, to.MkdirAll(dst, 0o755))
	for _, n := range names {
		src := dir + "/" + n
		st, err := from.Stat(src)
		require.NoError(t, err)
		if st.IsDir() {
			copyTree(t, from, src, to, dst+"/"+n)
			continue
		}
		r, err := from.Open(src)
		require.NoError(t, err)
		size, err := r.Size()
		require.NoError(t, err)
		b := make([]byte, size)
		_, _ = r.ReadAt(b, 0)
		require.NoError(t, r.Close())
		w, err := to.Create(dst + "/" + n)
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
}
