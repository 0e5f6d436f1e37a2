package rebuild

import (
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// memEnv is a closed storage's directory on the in-memory FS.
type memEnv struct {
	mem  *vfs.MemFS
	opts *bookie.Options
}

func (e *memEnv) open(t *testing.T) *bookie.Storage {
	t.Helper()
	s, err := bookie.Open(e.opts)
	require.NoError(t, err)
	return s
}

// rebuildEnv is a closed storage on the in-memory FS holding
// storagetest.WriteWorkload, and its index paths.
func rebuildEnv(t *testing.T) (env *memEnv, want map[int64]map[int64][]byte, current, locations, ledgers string) {
	env = &memEnv{mem: vfs.NewMem(), opts: storageOptions("/data", 1)}
	env.opts.FS = env.mem
	s := env.open(t)
	want = storagetest.WriteWorkload(t, s)
	require.NoError(t, s.Close())
	current = filepath.Join(env.opts.IndexDirs[0], "current")
	return env, want, current, filepath.Join(current, "locations"), filepath.Join(current, "ledgers")
}

func (e *memEnv) rebuild(rebuildLedgers bool) (*Result, error) {
	return LocationsIndex(Options{LedgerDir: e.opts.LedgerDirs[0], IndexDir: e.opts.IndexDirs[0], FS: e.mem, RebuildLedgersIndex: rebuildLedgers})
}

// TestRebuildRefusesWithoutLedgersIndex: with the ledgers index missing,
// or unreadable, the rebuild fails naming it and the flag, and moves
// nothing (the old rebuild moved the good index aside and wrote an empty
// one).
func TestRebuildRefusesWithoutLedgersIndex(t *testing.T) {
	env, _, current, _, ledgers := rebuildEnv(t)
	before, err := env.mem.List(current)
	require.NoError(t, err)

	// Unreadable: its CURRENT names a manifest that is not there.
	cur := filepath.Join(ledgers, "CURRENT")
	f, err := env.mem.Create(cur)
	require.NoError(t, err)
	_, err = f.Write([]byte("MANIFEST-999999\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = env.rebuild(false)
	require.ErrorIs(t, err, ondisk.ErrLedgersIndexMissing)
	require.ErrorContains(t, err, "the ledgers index "+ledgers+" cannot be read")
	require.ErrorContains(t, err, "--rebuild-ledgers-index")
	after, err := env.mem.List(current)
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing moved")

	require.NoError(t, env.mem.RemoveAll(ledgers))
	_, err = env.rebuild(false)
	require.ErrorIs(t, err, ondisk.ErrLedgersIndexMissing)
	require.ErrorContains(t, err, "the ledgers index "+ledgers+" is missing; nothing was moved")
	after, err = env.mem.List(current)
	require.NoError(t, err)
	require.Equal(t, slicesWithout(before, "ledgers"), after, "nothing moved, no empty ledgers index created")
}

// TestRebuildLedgersIndexToo: told to, the rebuild rebuilds the ledgers
// index from the entry logs too: every ledger found exists and is fenced,
// every entry reads back (a deleted ledger whose entries are still in the
// logs comes back, as upstream's rebuild-db-ledgers-index), and the old
// ledgers index is kept.
func TestRebuildLedgersIndexToo(t *testing.T) {
	env, want, _, locations, ledgers := rebuildEnv(t)
	res, err := env.rebuild(true)
	require.NoError(t, err)
	require.NotEmpty(t, res.LedgersBackupPath)
	require.True(t, lsm.Exists(env.mem, res.LedgersBackupPath), "the old ledgers index is kept")
	require.Equal(t, 8, res.Ledgers, "ledgers 0-7, ledger 6 deleted but still in the logs")
	require.True(t, lsm.Exists(env.mem, ledgers))
	require.Equal(t, int64(8*100), res.Entries, "every ledger's entries, of every life")
	require.False(t, res.FewerEntries(), "old %d, new %d", res.OldEntries, res.Entries)
	require.NotEmpty(t, res.BackupPath)
	_ = locations

	s := env.open(t)
	defer s.Close()
	for l, es := range want {
		if l == 7 {
			continue // written again after a deletion: its first life is indexed too
		}
		for e, p := range es {
			storagetest.RequireEntry(t, s, l, e, p)
		}
		info, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, info.Fenced, "a rebuilt ledger is fenced")
		require.Empty(t, info.MasterKey)
	}
	storagetest.RequireEntry(t, s, 6, 0, storagetest.Payload(6, 0, 0))

	// Then, with the rebuilt ledgers index in place, a plain rebuild works.
	require.NoError(t, s.Close())
	_, err = env.rebuild(false)
	require.NoError(t, err)
}

// TestRebuildSaysFewerEntries: a ledgers index that lost a ledger makes a
// rebuilt index with fewer entries: the result and the log say so and the
// old index is kept whole.
func TestRebuildSaysFewerEntries(t *testing.T) {
	env, _, _, locations, ledgers := rebuildEnv(t)
	oldCount := countLocations(t, env, locations)
	db, err := lsm.Open(ledgers, &lsm.Options{FS: env.mem})
	require.NoError(t, err)
	var b lsm.Batch
	b.Delete(ondisk.LedgerKey(2))
	require.NoError(t, db.Apply(&b, lsm.Sync))
	require.NoError(t, db.Close())

	res, err := env.rebuild(false)
	require.NoError(t, err)
	require.Equal(t, oldCount, res.OldEntries)
	require.Equal(t, oldCount-100, res.Entries)
	require.True(t, res.FewerEntries())
	require.Equal(t, oldCount, countLocations(t, env, res.BackupPath), "the old index is kept whole")
}

func slicesWithout(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func countLocations(t *testing.T, env *memEnv, path string) int64 {
	t.Helper()
	db, err := lsm.Open(path, &lsm.Options{FS: env.mem, ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	require.NoError(t, it.Close())
	return n
}
