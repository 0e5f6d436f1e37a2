package bookie

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/rebuild"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// writeBKLog writes a BookKeeper DefaultEntryLogger log (no ledgers map, as
// the current log of a stopped bookie leaves it): a 1 KiB header "BKLO",
// version 1, then [i32 size][i64 ledger][i64 entry][payload] records. It
// returns the entries' locations (upstream's: the position after the
// size).
func writeBKLog(t testing.TB, fs vfs.FS, dir string, id int64, entries [][2]int64) []entrylocation.EntryLocation {
	b := make([]byte, entrylog.HeaderSize)
	copy(b, "BKLO")
	binary.BigEndian.PutUint32(b[4:], 1)
	var locs []entrylocation.EntryLocation
	for _, e := range entries {
		p := bkTestPayload(e[0], e[1])
		b = binary.BigEndian.AppendUint32(b, uint32(entrylog.BKEntryHeaderSize+len(p)))
		locs = append(locs, entrylocation.EntryLocation{LedgerID: e[0], EntryID: e[1], Location: entrylog.MakeLocation(id, int64(len(b)))})
		b = binary.BigEndian.AppendUint64(b, uint64(e[0]))
		b = binary.BigEndian.AppendUint64(b, uint64(e[1]))
		b = append(b, p...)
	}
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	f, err := fs.Create(filepath.Join(dir, entrylog.LogFileName(id)))
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	return locs
}

func bkTestPayload(ledger, entry int64) []byte {
	return fmt.Appendf(nil, "bookkeeper ledger %d entry %d", ledger, entry)
}

// TestOpenRefusesRocksDBIndexes: a directory holding BookKeeper's RocksDB
// indexes is refused before anything is written there, with an error
// naming the directory and the migrate command.
func TestOpenRefusesRocksDBIndexes(t *testing.T) {
	for _, name := range []string{"locations", "ledgers"} {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv()
			rocks := filepath.Join(env.dirs[0], "current", name)
			require.NoError(t, env.mem.MkdirAll(rocks, 0o755))
			for _, f := range []string{"CURRENT", "MANIFEST-000005", "OPTIONS-000007", "000004.log"} {
				w, err := env.mem.Create(filepath.Join(rocks, f))
				require.NoError(t, err)
				require.NoError(t, w.Close())
			}
			before, err := env.mem.List(filepath.Join(env.dirs[0], "current"))
			require.NoError(t, err)
			_, err = Open(env.options())
			require.ErrorIs(t, err, ErrUnconverted)
			require.Contains(t, err.Error(), env.dirs[0])
			require.Contains(t, err.Error(), rocks)
			require.Contains(t, err.Error(), "bookie-index migrate --conf")
			after, err := env.mem.List(filepath.Join(env.dirs[0], "current"))
			require.NoError(t, err)
			require.ElementsMatch(t, before, after, "a refused directory is left as it was")
		})
	}
}

// TestOpenRefusesBookKeeperLogsWithoutIndexes: BookKeeper's entry logs
// with the index directories removed are refused (serving would answer
// "no ledger" for data that is there and write logs beside them), naming
// the logs and pointing to migrate and rebuild.
func TestOpenRefusesBookKeeperLogsWithoutIndexes(t *testing.T) {
	env := newTestEnv()
	logDir := filepath.Join(env.dirs[0], "current")
	writeBKLog(t, env.mem, logDir, 0, [][2]int64{{1, 0}})
	writeBKLog(t, env.mem, logDir, 3, [][2]int64{{1, 1}})
	_, err := Open(env.options())
	require.ErrorIs(t, err, ErrUnconverted)
	for _, want := range []string{"2 BookKeeper entry logs", filepath.Join(logDir, "0.log"), filepath.Join(logDir, "3.log"), "migrate", "rebuild"} {
		require.Contains(t, err.Error(), want)
	}
	names, err := env.mem.List(logDir)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"0.log", "3.log"}, names)
}

// TestBookKeeperLogsServed: once the indexes name them (as migrate leaves
// them), BookKeeper's logs are read through every path of the storage —
// GetEntry, read-ahead, the offline check, a rebuild — with the bytes after
// each entry's 16-byte ledger/entry header, as our own entries; new
// entries go to a log of ours numbered after BookKeeper's.
func TestBookKeeperLogsServed(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	for _, l := range []int64{1, 2} {
		require.NoError(t, s.SetMasterKey(l, []byte("key")))
	}
	require.NoError(t, s.Close())

	logDir := filepath.Join(env.dirs[0], "current")
	var entries [][2]int64
	for e := int64(0); e < 20; e++ {
		entries = append(entries, [2]int64{1, e})
	}
	locs := writeBKLog(t, env.mem, logDir, 0, entries)
	locs = append(locs, writeBKLog(t, env.mem, logDir, 1, [][2]int64{{2, 0}, {2, 1}, {1, 20}})...)

	verify := func(s *Storage) {
		for _, l := range locs {
			p, err := s.GetEntry(l.LedgerID, l.EntryID)
			require.NoError(t, err, "entry %d of ledger %d", l.EntryID, l.LedgerID)
			require.Equal(t, bkTestPayload(l.LedgerID, l.EntryID), p)
		}
	}
	s = env.open(t)
	require.NoError(t, s.UpdateEntriesLocations(locs))
	require.NoError(t, s.Checkpoint())
	verify(s)
	m := s.Metrics()[0]
	require.Positive(t, m.ReadAheadEntries, "read-ahead through a BookKeeper log")
	require.NoError(t, s.AddEntry(2, 2, []byte("ours")))
	require.NoError(t, s.Checkpoint())
	require.Equal(t, int64(2), m2(s).EntryLog.CurrentLogID)
	require.NoError(t, s.Close())

	res, err := check.Directory(check.Options{LedgerDir: env.dirs[0], FS: env.mem})
	require.NoError(t, err)
	require.Zero(t, res.Problems(), "%v", res.Findings)

	_, err = rebuild.LocationsIndex(rebuild.Options{LedgerDir: env.dirs[0], FS: env.mem})
	require.NoError(t, err)
	s = env.open(t)
	defer s.Close()
	verify(s)
	p, err := s.GetEntry(2, 2)
	require.NoError(t, err)
	require.Equal(t, []byte("ours"), p)
}

func m2(s *Storage) DirMetrics { return s.Metrics()[0] }
