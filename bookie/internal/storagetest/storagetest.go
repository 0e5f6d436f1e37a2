// Package storagetest holds the test helpers that the storage's tests and
// its offline tools' tests share: payloads, reads that must succeed or
// fail, a workload, the dump of a location index. It does not import
// package bookie (whose own tests use it): the helpers take the storage
// through small interfaces that *bookie.Storage satisfies.
package storagetest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// Reader reads entries (a *bookie.Storage).
type Reader interface {
	GetEntry(ledgerID, entryID int64) ([]byte, error)
	GetLastEntry(ledgerID int64) (int64, []byte, error)
}

// Writer writes entries and ledgers (a *bookie.Storage).
type Writer interface {
	AddEntry(ledgerID, entryID int64, payload []byte) error
	SetMasterKey(ledgerID int64, key []byte) error
	SetFenced(ledgerID int64) (bool, error)
	DeleteLedger(ledgerID int64) (bool, error)
	Checkpoint() error
	Purge() error
}

// Payload returns the payload of version version of an entry: its ids
// and version, padded to a length that varies with them.
func Payload(ledgerID, entryID int64, version int) []byte {
	return fmt.Appendf(nil, "ledger %d entry %d version %d %s", ledgerID, entryID, version, make([]byte, (ledgerID*7+entryID)%300))
}

// RequireEntry requires s to read want as the entry.
func RequireEntry(t testing.TB, s Reader, ledgerID, entryID int64, want []byte) {
	t.Helper()
	got, err := s.GetEntry(ledgerID, entryID)
	require.NoError(t, err, "entry %d of ledger %d", entryID, ledgerID)
	require.Equal(t, string(want), string(got), "entry %d of ledger %d", entryID, ledgerID)
}

// RequireNoEntry requires s to answer "no entry" (bookie.ErrNoEntry, which
// is entrylocation.ErrNoEntry).
func RequireNoEntry(t testing.TB, s Reader, ledgerID, entryID int64) {
	t.Helper()
	_, err := s.GetEntry(ledgerID, entryID)
	require.ErrorIs(t, err, entrylocation.ErrNoEntry, "entry %d of ledger %d", entryID, ledgerID)
}

// RequireNoLedger requires s to answer errNoLedger (bookie.ErrNoLedger) to
// a read of the ledger's first entry and of its last.
func RequireNoLedger(t testing.TB, s Reader, ledgerID int64, errNoLedger error) {
	t.Helper()
	_, err := s.GetEntry(ledgerID, 0)
	require.ErrorIs(t, err, errNoLedger, "ledger %d", ledgerID)
	_, _, err = s.GetLastEntry(ledgerID)
	require.ErrorIs(t, err, errNoLedger, "ledger %d", ledgerID)
}

// Dirs returns n ledger directories, root/ledgers/a, b, ..., and their
// index directories, root/index/a, b, ....
func Dirs(root string, n int) (ledgerDirs, indexDirs []string) {
	for i := range n {
		ledgerDirs = append(ledgerDirs, filepath.Join(root, "ledgers", string(rune('a'+i))))
		indexDirs = append(indexDirs, filepath.Join(root, "index", string(rune('a'+i))))
	}
	return ledgerDirs, indexDirs
}

// IndexEngine is the engine of a small entry location index (small
// memtables, tables and blocks: a few thousand entries make several
// tables).
func IndexEngine() *lsm.Options {
	return &lsm.Options{WriteBufferSize: 64 << 10, TargetFileSizeBase: 64 << 10, BlockSize: 4 << 10}
}

// SmallEngine is a small engine on the OS file system.
func SmallEngine() *lsm.Options {
	return &lsm.Options{WriteBufferSize: 64 << 10, TargetFileSizeBase: 64 << 10, BlockSize: 4 << 10, BlockCacheSize: 1 << 20}
}

// DumpLocations reads every key of the location index at path, on the OS
// file system.
func DumpLocations(t testing.TB, path string) map[[2]int64]int64 {
	t.Helper()
	db, err := lsm.Open(path, &lsm.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	m := map[[2]int64]int64{}
	for ok := it.First(); ok; ok = it.Next() {
		ledgerID, entryID, err := entrylocation.DecodeKey(it.Key())
		require.NoError(t, err)
		m[[2]int64{ledgerID, entryID}], err = entrylocation.DecodeLocation(it.Value())
		require.NoError(t, err)
	}
	require.NoError(t, it.Close())
	return m
}

// WriteWorkload writes entries over several checkpoints and logs:
// rewrites, a deleted ledger (6), a ledger deleted and written again (7),
// fenced ledgers with master keys (0 to 4). It returns the entries s must
// hold, by ledger.
func WriteWorkload(t *testing.T, s Writer) map[int64]map[int64][]byte {
	m := map[int64]map[int64][]byte{}
	add := func(l, e int64, v int) {
		require.NoError(t, s.AddEntry(l, e, Payload(l, e, v)))
		if m[l] == nil {
			m[l] = map[int64][]byte{}
		}
		m[l][e] = Payload(l, e, v)
	}
	for l := int64(0); l < 5; l++ {
		require.NoError(t, s.SetMasterKey(l, []byte{'k', byte(l)}))
	}
	for round := range 4 {
		for l := int64(0); l < 8; l++ {
			for e := int64(round * 25); e < int64(round*25+25); e++ {
				add(l, e, 0)
			}
		}
		if round == 2 {
			for e := int64(0); e < 100; e += 7 {
				add(3, e, 1) // rewrites
			}
		}
		require.NoError(t, s.Checkpoint())
	}
	for l := int64(0); l < 5; l++ {
		_, err := s.SetFenced(l)
		require.NoError(t, err)
	}
	_, err := s.DeleteLedger(6)
	require.NoError(t, err)
	delete(m, 6)
	_, err = s.DeleteLedger(7)
	require.NoError(t, err)
	delete(m, 7)
	for e := int64(0); e < 10; e++ {
		add(7, e, 2)
	}
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	return m
}
