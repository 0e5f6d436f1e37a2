package bookie

import (
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/stretchr/testify/require"
)

// openPairs opens the env's storage with ledger directories ledgers and
// index directories indexes.
func (e *testEnv) openPairs(ledgers, indexes []string) (*Storage, error) {
	e.dirs = ledgers
	o := e.options()
	o.IndexDirs = indexes
	return Open(o)
}

// swap exchanges two directories of the env's file system.
func (e *testEnv) swap(t *testing.T, a, b string) {
	t.Helper()
	require.NoError(t, e.mem.Rename(a, "/swap.tmp"))
	require.NoError(t, e.mem.Rename(b, a))
	require.NoError(t, e.mem.Rename("/swap.tmp", b))
}

// TestLayoutGuardSwappedDirectories: two ledger directories, or two index
// directories, swapped under unchanged paths (a wrong mount) are refused:
// each copy records its place, which is not where it is configured.
// Before identities the index swap went unnoticed.
func TestLayoutGuardSwappedDirectories(t *testing.T) {
	for _, swap := range [][2]string{{"/a", "/b"}, {"/ia", "/ib"}} {
		env := newTestEnv()
		ledgers, indexes := []string{"/a", "/b"}, []string{"/ia", "/ib"}
		s, err := env.openPairs(ledgers, indexes)
		require.NoError(t, err)
		addLedgers(t, s, 0, 10)
		require.NoError(t, s.Close())

		env.swap(t, swap[0], swap[1])
		_, err = env.openPairs(ledgers, indexes)
		require.ErrorIs(t, err, ondisk.ErrMisplaced, "%v", swap)
		require.ErrorContains(t, err, swap[0]+"/current is the")
		require.ErrorContains(t, err, "of pair 2 of this bookie (recorded at "+swap[1]+"/current), but it is configured as")

		env.swap(t, swap[0], swap[1])
		s, err = env.openPairs(ledgers, indexes)
		require.NoError(t, err)
		requireLedgers(t, s, 0, 10)
		require.NoError(t, s.Close())
	}
}

// TestLayoutGuardMovedDirectories: every directory moved to a new path
// (with its copy proving its place) is refused with the command that
// records the new paths; a mix of moved and unknown directories gets the
// general refusal, which names relocate too.
func TestLayoutGuardMovedDirectories(t *testing.T) {
	env := newTestEnv()
	s, err := env.openPairs([]string{"/a", "/b"}, []string{"/ia", "/ib"})
	require.NoError(t, err)
	addLedgers(t, s, 0, 10)
	require.NoError(t, s.Close())
	for _, d := range []string{"/a", "/b", "/ia", "/ib"} {
		require.NoError(t, env.mem.MkdirAll("/new", 0o755))
		require.NoError(t, env.mem.Rename(d, "/new"+d))
	}
	_, err = env.openPairs([]string{"/new/a", "/new/b"}, []string{"/new/ia", "/new/ib"})
	require.ErrorContains(t, err, "the directories moved: [/a (index /ia), /b (index /ib)] were recorded, "+
		"[/new/a (index /new/ia), /new/b (index /new/ib)] are configured")
	require.ErrorContains(t, err, "bookie-index relocate --conf FILE")

	// The command named is the configuration's, when the caller says it.
	o := env.options()
	o.LedgerDirs, o.IndexDirs = []string{"/new/a", "/new/b"}, []string{"/new/ia", "/new/ib"}
	o.RelocateCommand = "bookie-index relocate --conf /etc/bk.conf"
	_, err = Open(o)
	require.ErrorContains(t, err, "record the new paths with `bookie-index relocate --conf /etc/bk.conf` while the bookie is stopped")
}

// TestLayoutGuardUnreadableCopy: a LAYOUT copy that does not decode is
// refused saying what to do: an index directory's is removed (the start
// writes it again), a ledger directory's restored from a backup (another
// directory's copy records another place).
func TestLayoutGuardUnreadableCopy(t *testing.T) {
	env := newTestEnv()
	ledgers, indexes := []string{"/a", "/b"}, []string{"/ia", "/ib"}
	s, err := env.openPairs(ledgers, indexes)
	require.NoError(t, err)
	addLedgers(t, s, 0, 10)
	require.NoError(t, s.Close())

	for _, dir := range []string{"/ib", "/b"} {
		good := readFileBytes(t, env.mem, dir+"/current/LAYOUT")
		bad := append([]byte(nil), good...)
		bad[20] ^= 1
		writeFileBytes(t, env.mem, dir+"/current/LAYOUT", bad)
		_, err = env.openPairs(ledgers, indexes)
		require.ErrorIs(t, err, ondisk.ErrLayoutCorrupt)
		require.ErrorContains(t, err, "directory layout "+dir+"/current/LAYOUT: offset ")
		if dir == "/ib" {
			require.ErrorContains(t, err, "the LAYOUT of the index directory of pair 2 does not decode: remove it and start again")
			require.NoError(t, env.mem.Remove(dir+"/current/LAYOUT"))
		} else {
			require.ErrorContains(t, err, "the LAYOUT of the ledger directory of pair 2 does not decode: restore it from a backup of this directory")
			// Another directory's copy does not fit: it records its place.
			writeFileBytes(t, env.mem, dir+"/current/LAYOUT", readFileBytes(t, env.mem, "/a/current/LAYOUT"))
			_, err = env.openPairs(ledgers, indexes)
			require.ErrorIs(t, err, ondisk.ErrMisplaced)
			writeFileBytes(t, env.mem, dir+"/current/LAYOUT", good)
		}
		s, err = env.openPairs(ledgers, indexes)
		require.NoError(t, err, dir)
		requireLedgers(t, s, 0, 10)
		require.NoError(t, s.Close())
	}
}

// TestLayoutGuardUpgradesVersion1Copies: copies written by a version
// before identities (format version 1) are read, and the next start
// rewrites them with each directory's place.
func TestLayoutGuardUpgradesVersion1Copies(t *testing.T) {
	env := newTestEnv()
	ledgers, indexes := []string{"/a", "/b"}, []string{"/ia", "/ib"}
	s, err := env.openPairs(ledgers, indexes)
	require.NoError(t, err)
	addLedgers(t, s, 0, 10)
	require.NoError(t, s.Close())
	dirs := []string{"/a/current", "/ia/current", "/b/current", "/ib/current"}
	for _, d := range dirs {
		l, err := ondisk.DecodeLayout(readFileBytes(t, env.mem, d+"/LAYOUT"))
		require.NoError(t, err)
		l.Self = ondisk.Identity{}
		v1 := ondisk.EncodeLayout(l)
		require.Equal(t, byte(1), v1[8], "version 1")
		writeFileBytes(t, env.mem, d+"/LAYOUT", v1)
	}
	s, err = env.openPairs(ledgers, indexes)
	require.NoError(t, err)
	requireLedgers(t, s, 0, 10)
	require.NoError(t, s.Close())
	want := []ondisk.Identity{{Position: 0, Role: ondisk.RoleLedger}, {Position: 0, Role: ondisk.RoleIndex},
		{Position: 1, Role: ondisk.RoleLedger}, {Position: 1, Role: ondisk.RoleIndex}}
	for i, d := range dirs {
		l, err := ondisk.DecodeLayout(readFileBytes(t, env.mem, d+"/LAYOUT"))
		require.NoError(t, err)
		require.Equal(t, want[i], l.Self, d)
		require.Equal(t, uint64(1), l.Generation, "the list did not change")
	}
}
