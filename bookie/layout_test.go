package bookie

import (
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// layoutEnv is a testEnv whose directory list a test changes between
// opens.
func (e *testEnv) openWith(dirs []string, allowExpansion bool) (*Storage, error) {
	e.dirs = dirs
	o := e.options()
	o.AllowStorageExpansion = allowExpansion
	return Open(o)
}

func addLedgers(t *testing.T, s *Storage, from, to int64) {
	t.Helper()
	for l := from; l < to; l++ {
		for e := int64(0); e < 5; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
	}
	require.NoError(t, s.Checkpoint())
}

func requireLedgers(t *testing.T, s *Storage, from, to int64) {
	t.Helper()
	for l := from; l < to; l++ {
		for e := int64(0); e < 5; e++ {
			requireEntry(t, s, l, e, payload(l, e, 0))
		}
		requireEntry(t, s, l, LastEntry, payload(l, 4, 0))
	}
}

func ledgerDirOf(t *testing.T, s *Storage, ledgerID int64) string {
	t.Helper()
	d, err := s.Dir(ledgerID)
	require.NoError(t, err)
	return filepath.Dir(d.LedgerDir())
}

// TestLayoutGuardExpansion: a directory added without allowStorageExpansion
// is refused naming both lists and the key, and nothing is written; with
// it every existing ledger stays readable, new ledgers use the new
// directory, and restarts (without the key) keep both; a second expansion
// too.
func TestLayoutGuardExpansion(t *testing.T) {
	env := newTestEnv()
	s, err := env.openWith([]string{"/a"}, false)
	require.NoError(t, err)
	addLedgers(t, s, 0, 10)
	require.NoError(t, s.Close())
	before := readFileBytes(t, env.mem, "/a/current/LAYOUT")

	_, err = env.openWith([]string{"/a", "/b"}, false)
	require.ErrorContains(t, err, "the directories changed: [/a] were recorded at the first start, [/a, /b] are configured")
	require.ErrorContains(t, err, "allowStorageExpansion=true")
	_, statErr := env.mem.Stat("/b")
	require.Error(t, statErr, "a refused open creates nothing")
	require.Equal(t, before, readFileBytes(t, env.mem, "/a/current/LAYOUT"))

	s, err = env.openWith([]string{"/a", "/b"}, true)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 10)
	addLedgers(t, s, 10, 20)
	require.Equal(t, "/a", ledgerDirOf(t, s, 1), "an existing ledger stays")
	require.Equal(t, "/b", ledgerDirOf(t, s, 11), "a new ledger uses the new directory")
	require.Equal(t, "/a", ledgerDirOf(t, s, 12))
	// A ledger deleted before the expansion and written again keeps its
	// directory until its record is purged.
	_, err = s.DeleteLedger(3)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Restart: the expanded list is the recorded one now.
	s, err = env.openWith([]string{"/a", "/b"}, false)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 3)
	requireLedgers(t, s, 4, 20)
	requireNoLedger(t, s, 3)
	require.Equal(t, "/a", ledgerDirOf(t, s, 1))
	require.Equal(t, "/b", ledgerDirOf(t, s, 11))
	require.NoError(t, s.Close())

	// Removing a directory is refused, with or without the key.
	_, err = env.openWith([]string{"/a"}, false)
	require.ErrorContains(t, err, "the directories changed")
	_, err = env.openWith([]string{"/a"}, true)
	require.ErrorContains(t, err, "recorded directory [/b] is no longer configured")
	// So is a reordering, with or without the key: each directory's copy
	// names its place.
	for _, expand := range []bool{false, true} {
		_, err = env.openWith([]string{"/b", "/a"}, expand)
		require.ErrorIs(t, err, ondisk.ErrMisplaced)
		require.ErrorContains(t, err, "/b/current is the ledger and index directory of pair 2 of this bookie (recorded at /b/current), "+
			"but it is configured as the ledger and index directory of pair 1")
	}

	// A second expansion, then a restart.
	s, err = env.openWith([]string{"/a", "/b", "/c"}, true)
	require.NoError(t, err)
	requireLedgers(t, s, 4, 20)
	addLedgers(t, s, 20, 30)
	require.Equal(t, "/c", ledgerDirOf(t, s, 23))
	require.NoError(t, s.Close())
	s = env.crash(t, mustOpen(t, env, []string{"/a", "/b", "/c"}), 0)
	requireLedgers(t, s, 4, 30)
	require.Equal(t, "/b", ledgerDirOf(t, s, 11))
	require.Equal(t, "/c", ledgerDirOf(t, s, 23))
	require.NoError(t, s.Close())
}

func mustOpen(t *testing.T, env *testEnv, dirs []string) *Storage {
	t.Helper()
	s, err := env.openWith(dirs, false)
	require.NoError(t, err)
	return s
}

func readFileBytes(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	_, _ = f.ReadAt(b, 0)
	return b
}

func writeFileBytes(t *testing.T, fs vfs.FS, name string, b []byte) {
	t.Helper()
	require.NoError(t, fs.MkdirAll(filepath.Dir(name), 0o755))
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// TestLayoutGuardRefusals: a new directory that is not empty, a directory
// of another instance, a corrupt LAYOUT, a directory wiped of its LAYOUT
// but holding data.
func TestLayoutGuardRefusals(t *testing.T) {
	env := newTestEnv()
	s, err := env.openWith([]string{"/a", "/b"}, false)
	require.NoError(t, err)
	addLedgers(t, s, 0, 4)
	require.NoError(t, s.Close())

	writeFileBytes(t, env.mem, "/d/current/stray", []byte("x"))
	_, err = env.openWith([]string{"/a", "/b", "/d"}, true)
	require.ErrorContains(t, err, "new directory /d/current is not empty")

	other := newTestEnv()
	so, err := other.openWith([]string{"/x"}, false)
	require.NoError(t, err)
	require.NoError(t, so.Close())
	good := readFileBytes(t, env.mem, "/b/current/LAYOUT")
	writeFileBytes(t, env.mem, "/b/current/LAYOUT", readFileBytes(t, other.mem, "/x/current/LAYOUT"))
	_, err = env.openWith([]string{"/a", "/b"}, false)
	require.ErrorContains(t, err, "belongs to another bookie instance")

	bad := append([]byte(nil), good...)
	bad[20] ^= 1
	writeFileBytes(t, env.mem, "/b/current/LAYOUT", bad)
	_, err = env.openWith([]string{"/a", "/b"}, false)
	require.ErrorIs(t, err, ondisk.ErrLayoutCorrupt)
	require.ErrorContains(t, err, "directory layout /b/current/LAYOUT: offset ")
	require.ErrorContains(t, err, "checksum")
	require.ErrorContains(t, err, "the LAYOUT of the ledger and index directory of pair 2 does not decode: restore it from a backup of this directory")

	require.NoError(t, env.mem.Remove("/b/current/LAYOUT"))
	_, err = env.openWith([]string{"/a", "/b"}, false)
	require.ErrorContains(t, err, "/b/current holds data but no LAYOUT")

	writeFileBytes(t, env.mem, "/b/current/LAYOUT", good)
	s, err = env.openWith([]string{"/a", "/b"}, false)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 4)
	require.NoError(t, s.Close())
}

// TestLayoutGuardUpgrade: a storage from before the layout records (no
// LAYOUT anywhere) records its list at its next start; one whose list was
// changed back then (ledgers outside their modulo directory) is refused,
// and with allowStorageExpansion routed by its ledgers indexes from then
// on, across a restart.
func TestLayoutGuardUpgrade(t *testing.T) {
	env := newTestEnv()
	s, err := env.openWith([]string{"/a"}, false)
	require.NoError(t, err)
	addLedgers(t, s, 0, 6)
	require.NoError(t, s.Close())
	require.NoError(t, env.mem.Remove("/a/current/LAYOUT"))

	s, err = env.openWith([]string{"/a"}, false)
	require.NoError(t, err, "the first start of this version records the list")
	require.NoError(t, s.Close())
	require.NoError(t, env.mem.Remove("/a/current/LAYOUT"))

	// The list was changed while nothing recorded it.
	_, err = env.openWith([]string{"/a", "/b"}, false)
	require.ErrorContains(t, err, "ledger 1 is in /a/current, but routing by ledger id modulo 2 directories puts it in /b/current")
	require.ErrorContains(t, err, "allowStorageExpansion=true")
	s, err = env.openWith([]string{"/a"}, false)
	require.NoError(t, err, "the refused start recorded nothing")
	require.NoError(t, s.Close())
	require.NoError(t, env.mem.Remove("/a/current/LAYOUT"))
	s, err = env.openWith([]string{"/a", "/b"}, true)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 6)
	addLedgers(t, s, 6, 10)
	require.Equal(t, "/b", ledgerDirOf(t, s, 7))
	require.NoError(t, s.Close())
	s, err = env.openWith([]string{"/a", "/b"}, false)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 10)
	require.NoError(t, s.Close())
}

// TestLayoutGuardInterruptedExpansion: a crash while an expansion wrote
// its copies (the first directory has the new layout, the new directory
// none yet) is finished by the next start with the new list: the highest
// generation wins and the missing copy is written.
func TestLayoutGuardInterruptedExpansion(t *testing.T) {
	env := newTestEnv()
	s, err := env.openWith([]string{"/a"}, false)
	require.NoError(t, err)
	addLedgers(t, s, 0, 4)
	require.NoError(t, s.Close())
	old, err := ondisk.DecodeLayout(readFileBytes(t, env.mem, "/a/current/LAYOUT"))
	require.NoError(t, err)
	next := &ondisk.Layout{Instance: old.Instance, Generation: old.Generation + 1, Routing: ondisk.RouteRecorded,
		Dirs: []ondisk.DirPair{{Ledger: "/a", Index: "/a"}, {Ledger: "/b", Index: "/b"}}}
	require.NoError(t, ondisk.WriteLayout(env.mem, "/a/current", next))

	s, err = env.openWith([]string{"/a", "/b"}, false)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 4)
	require.Equal(t, "/a", ledgerDirOf(t, s, 1))
	require.NoError(t, s.Close())
	got, err := ondisk.DecodeLayout(readFileBytes(t, env.mem, "/b/current/LAYOUT"))
	require.NoError(t, err)
	next.Self = ondisk.Identity{Position: 1, Role: ondisk.RoleLedgerAndIndex}
	require.Equal(t, next, got)
}

// TestLayoutGuardIndexMoved: an index directory moved (or a checkpoint of
// it restored elsewhere) keeps every ledger where it is, so it is accepted
// without allowStorageExpansion and recorded; the ledger directories'
// list is what the guard holds fixed.
func TestLayoutGuardIndexMoved(t *testing.T) {
	env := newTestEnv()
	open := func(index string) (*Storage, error) {
		env.dirs = []string{"/a"}
		o := env.options()
		o.IndexDirs = []string{index}
		return Open(o)
	}
	s, err := open("/ia")
	require.NoError(t, err)
	addLedgers(t, s, 0, 4)
	require.NoError(t, s.Close())
	require.NoError(t, env.mem.Rename("/ia", "/ib"))
	require.NoError(t, env.mem.Remove("/ib/current/LAYOUT")) // as a restored checkpoint has none

	s, err = open("/ib")
	require.NoError(t, err)
	requireLedgers(t, s, 0, 4)
	require.NoError(t, s.Close())
	l, err := ondisk.DecodeLayout(readFileBytes(t, env.mem, "/ib/current/LAYOUT"))
	require.NoError(t, err)
	require.Equal(t, []ondisk.DirPair{{Ledger: "/a", Index: "/ib"}}, l.Dirs)
	require.Equal(t, uint64(2), l.Generation)
}
