package bookie

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/bookie-index/bookie-index/bookie/rebuild"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/stretchr/testify/require"
)

// TestIDBoundaries runs the ledgers and entries at both ends of the id
// space, 0 and MaxInt64, through the storage: write, read from the write
// cache, checkpoint, read from the log, last entry, restart, delete, and a
// new life of the deleted ledger, which must not see its old entries.
func TestIDBoundaries(t *testing.T) {
	const maxID = math.MaxInt64
	for _, purgeFirst := range []bool{true, false} {
		name := map[bool]string{true: "purged before the rewrite", false: "rewritten before the purge"}[purgeFirst]
		t.Run(name, func(t *testing.T) {
			env := newTestEnv("/data/a", "/data/b", "/data/c")
			s := env.open(t)
			ledgers := []int64{0, 1, maxID - 1, maxID}
			entries := []int64{0, 1, maxID - 1, maxID}
			for _, l := range ledgers {
				for _, e := range entries {
					require.NoError(t, s.AddEntry(l, e, idPayload(l, e, 0)))
				}
			}
			check := func(when string) {
				for _, l := range ledgers {
					for _, e := range entries {
						requireEntry(t, s, l, e, idPayload(l, e, 0))
					}
					requireLastEntry(t, s, l, maxID, idPayload(l, maxID, 0), when)
				}
			}
			check("in the write cache")
			require.NoError(t, s.Checkpoint())
			check("after a checkpoint")
			s = env.crash(t, s, 0)
			check("after a restart")

			// Delete the ledgers at both ends; their neighbours stay.
			for _, l := range []int64{0, maxID} {
				existed, err := s.DeleteLedger(l)
				require.NoError(t, err)
				require.True(t, existed)
				requireNoLedger(t, s, l)
			}
			if purgeFirst {
				require.NoError(t, s.Purge())
				for _, l := range []int64{0, maxID} {
					for _, e := range entries {
						require.Zero(t, location(t, s, l, e), "location of entry %d of ledger %d after the purge", e, l)
					}
				}
			}
			// A new life: only entry 5. The old entries, MaxInt64
			// included, are gone for good.
			for _, l := range []int64{0, maxID} {
				require.NoError(t, s.AddEntry(l, 5, idPayload(l, 5, 1)))
			}
			newLife := func(when string) {
				for _, l := range []int64{0, maxID} {
					for _, e := range entries {
						requireNoEntry(t, s, l, e)
					}
					requireEntry(t, s, l, 5, idPayload(l, 5, 1))
					requireLastEntry(t, s, l, 5, idPayload(l, 5, 1), when)
				}
				for _, l := range []int64{1, maxID - 1} {
					requireEntry(t, s, l, maxID, idPayload(l, maxID, 0))
					requireLastEntry(t, s, l, maxID, idPayload(l, maxID, 0), when)
				}
			}
			newLife("in the write cache")
			require.NoError(t, s.Checkpoint())
			newLife("after a checkpoint")
			s = env.crash(t, s, 0)
			newLife("after a restart")
			require.NoError(t, s.Close())
		})
	}
}

// idPayload is payload for any ids (payload's padding overflows at the
// maxima).
func idPayload(ledgerID, entryID int64, version int) []byte {
	return fmt.Appendf(nil, "ledger %d entry %d version %d", ledgerID, entryID, version)
}

func requireLastEntry(t testing.TB, s *Storage, ledgerID, wantID int64, want []byte, when string) {
	t.Helper()
	id, p, err := s.GetLastEntry(ledgerID)
	require.NoError(t, err, "last entry of ledger %d %s", ledgerID, when)
	require.Equal(t, wantID, id, "last entry of ledger %d %s", ledgerID, when)
	require.Equal(t, string(want), string(p), "last entry of ledger %d %s", ledgerID, when)
	p, err = s.GetEntry(ledgerID, LastEntry)
	require.NoError(t, err, "entry -1 of ledger %d %s", ledgerID, when)
	require.Equal(t, string(want), string(p), "entry -1 of ledger %d %s", ledgerID, when)
}

// TestNegativeIDsRefused calls every method that takes an id, on the
// Storage and on a DirStorage, with negative ids: each is an error
// matching ErrInvalidArgument that names the id, never a panic (a ledger
// id is used modulo the directories) nor a silent answer. Entry id -1
// reads the last entry; other negative entry ids are refused.
func TestNegativeIDsRefused(t *testing.T) {
	env := newTestEnv("/data/a", "/data/b")
	s := env.open(t)
	defer s.Close()
	require.NoError(t, s.AddEntry(3, 7, []byte("x")))
	d := s.Dirs()[1]
	for _, l := range []int64{-1, -3, math.MinInt64} {
		storageCalls := map[string]error{
			"AddEntry":       s.AddEntry(l, 0, nil),
			"GetEntry":       second2(s.GetEntry(l, 0)),
			"GetEntry -1":    second2(s.GetEntry(l, LastEntry)),
			"GetLastEntry":   third(s.GetLastEntry(l)),
			"DeleteLedger":   second(s.DeleteLedger(l)),
			"LedgerExists":   second(s.LedgerExists(l)),
			"SetMasterKey":   s.SetMasterKey(l, []byte("k")),
			"SetFenced":      second(s.SetFenced(l)),
			"SetExplicitLAC": s.SetExplicitLAC(l, []byte("lac")),
			"LedgerInfo":     third(s.LedgerInfo(l)),
			"Dir":            second(s.Dir(l)),
			"UpdateEntriesLocations": s.UpdateEntriesLocations(
				[]entrylocation.EntryLocation{{LedgerID: l, EntryID: 0, Location: 5 << 32}}),
			"DirStorage.AddEntry":       d.AddEntry(l, 0, nil),
			"DirStorage.GetEntry":       second2(d.GetEntry(l, 0)),
			"DirStorage.GetLastEntry":   third(d.GetLastEntry(l)),
			"DirStorage.DeleteLedger":   second(d.DeleteLedger(l)),
			"DirStorage.LedgerExists":   second(d.LedgerExists(l)),
			"DirStorage.SetMasterKey":   d.SetMasterKey(l, []byte("k")),
			"DirStorage.SetFenced":      second(d.SetFenced(l)),
			"DirStorage.SetExplicitLAC": d.SetExplicitLAC(l, []byte("lac")),
			"DirStorage.LedgerInfo":     third(d.LedgerInfo(l)),
		}
		for name, err := range storageCalls {
			require.ErrorIs(t, err, ErrInvalidArgument, "%s(ledger %d)", name, l)
			require.ErrorContains(t, err, "is negative", "%s(ledger %d)", name, l)
		}
	}
	for _, e := range []int64{-2, math.MinInt64} {
		for name, err := range map[string]error{
			"AddEntry":            s.AddEntry(3, e, nil),
			"GetEntry":            second2(s.GetEntry(3, e)),
			"DirStorage.AddEntry": d.AddEntry(3, e, nil),
			"DirStorage.GetEntry": second2(d.GetEntry(3, e)),
			"UpdateEntriesLocations": s.UpdateEntriesLocations(
				[]entrylocation.EntryLocation{{LedgerID: 3, EntryID: e, Location: 5 << 32}}),
			"DirStorage.UpdateEntriesLocations": d.UpdateEntriesLocations(
				[]entrylocation.EntryLocation{{LedgerID: 3, EntryID: 1, Location: 5 << 32}, {LedgerID: 3, EntryID: e, Location: 5 << 32}}),
		} {
			require.ErrorIs(t, err, ErrInvalidArgument, "%s(entry %d)", name, e)
			require.ErrorContains(t, err, "is negative", "%s(entry %d)", name, e)
		}
	}
	require.ErrorIs(t, s.AddEntry(3, LastEntry, nil), ErrInvalidArgument, "-1 is not an entry id to write")
	p, err := s.GetEntry(3, LastEntry)
	require.NoError(t, err)
	require.Equal(t, "x", string(p))
	require.NoError(t, s.Checkpoint())
	requireEntry(t, s, 3, 7, []byte("x"))
	exists, err := s.LedgerExists(3)
	require.NoError(t, err)
	require.True(t, exists)
}

func second[T any](_ T, err error) error        { return err }
func second2(_ []byte, err error) error         { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

// TestDeletedEntryMaxIDStaysDeleted is a regression test: entry MaxInt64
// of a deleted ledger came back when the ledger was written again, because
// the purge's range ended before it.
func TestDeletedEntryMaxIDStaysDeleted(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	defer s.Close()
	require.NoError(t, s.AddEntry(7, math.MaxInt64, []byte("old life")))
	require.NoError(t, s.Checkpoint())
	_, err := s.DeleteLedger(7)
	require.NoError(t, err)
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	require.NoError(t, s.AddEntry(7, 0, []byte("new life")))
	require.NoError(t, s.Checkpoint())
	requireNoEntry(t, s, 7, math.MaxInt64)
	requireLastEntry(t, s, 7, 0, []byte("new life"), "in its new life")
}

// TestRebuildIDBoundaries: a rebuild indexes the entries at both ends of
// the id space, and the check finds the storage clean.
func TestRebuildIDBoundaries(t *testing.T) {
	opts := osOptions(t.TempDir(), 1)
	s, err := Open(opts)
	require.NoError(t, err)
	const maxID = math.MaxInt64
	for _, l := range []int64{0, maxID} {
		for _, e := range []int64{0, maxID} {
			require.NoError(t, s.AddEntry(l, e, idPayload(l, e, 0)))
		}
	}
	require.NoError(t, s.Close())
	before := dumpLocations(t, filepath.Join(opts.IndexDirs[0], "current", "locations"))
	require.Len(t, before, 4)
	res, err := check.Directory(check.Options{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
	require.NoError(t, err)
	require.Empty(t, res.Findings)
	require.EqualValues(t, 4, res.Locations)

	_, err = rebuild.LocationsIndex(rebuild.Options{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
	require.NoError(t, err)
	require.Equal(t, before, dumpLocations(t, filepath.Join(opts.IndexDirs[0], "current", "locations")))
	s, err = Open(opts)
	require.NoError(t, err)
	defer s.Close()
	for _, l := range []int64{0, maxID} {
		requireLastEntry(t, s, l, maxID, idPayload(l, maxID, 0), "after a rebuild")
		requireEntry(t, s, l, 0, idPayload(l, 0, 0))
	}
}
