package bookkeeper

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/journaled"
	"github.com/bookie-index/bookie-index/bookie/migrate"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	}))
}

// entryHash is how expected.json names an entry: the SHA-256 of its ledger
// and entry ids (big-endian) and its payload, and its size with the ids.
func entryHash(ledgerID, entryID int64, payload []byte) (string, int) {
	h := sha256.New()
	var ids [16]byte
	binary.BigEndian.PutUint64(ids[:8], uint64(ledgerID))
	binary.BigEndian.PutUint64(ids[8:], uint64(entryID))
	h.Write(ids[:])
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil)), 16 + len(payload)
}

// checkMigrateKilledBookie migrates a copy of the journal scenario's
// directories (a BookKeeper bookie killed with acknowledged adds only in
// its journal) without restarting BookKeeper: the RocksDB indexes
// converted (migrate.FromRocksDB), BookKeeper's lastMark files kept
// (migrate.BackupLastMarks), then the storage opened behind BookKeeper's
// journal (journaled.Open), which replays it from BookKeeper's last log
// mark. Every entry BookKeeper acknowledged reads back byte for byte, the
// journal-only ones among them; the fences and explicit LACs are there;
// an add in flight is there whole or not at all; and without the replay
// the journal-only entries are missing (the replay put them there).
func checkMigrateKilledBookie(t *testing.T, src string, e *expectedDirs) {
	root := t.TempDir()
	copyTree(t, src, root)
	abs := func(dirs []string) []string {
		out := make([]string, len(dirs))
		for i, d := range dirs {
			out[i] = filepath.Join(root, d)
		}
		return out
	}
	ledgerDirs, indexDirs, journalDirs := abs(e.LedgerDirs), abs(e.IndexDirs), abs(e.JournalDirs)
	for _, d := range indexDirs {
		_, err := migrate.FromRocksDB(migrate.Options{IndexDir: d})
		require.NoError(t, err, "migrating %s", d)
	}
	storageOpts := func() *bookie.Options {
		return &bookie.Options{LedgerDirs: ledgerDirs, IndexDirs: indexDirs, FlushInterval: -1, GCWaitTime: -1,
			WriteCacheSize: 16 << 20, ReadCacheSize: 4 << 20}
	}
	// Without the journal: only the checkpointed entries.
	plain, err := bookie.Open(storageOpts())
	require.NoError(t, err)
	journalOnly := 0
	for _, l := range e.Ledgers {
		for _, en := range l.Entries {
			if *en.Checkpointed {
				continue
			}
			journalOnly++
			if _, err := plain.GetEntry(l.ID, en.ID); err == nil {
				// The ledger's record is in the storage; its entry is not.
				t.Fatalf("ledger %d entry %d is in the migrated storage without the journal", l.ID, en.ID)
			}
		}
	}
	// Closing checkpoints nothing new: no journal, no writes.
	require.NoError(t, plain.Close())
	require.Positive(t, journalOnly, "the scenario has entries only in the journal")

	backups, err := migrate.BackupLastMarks(nil, ledgerDirs)
	require.NoError(t, err)
	require.Len(t, backups, len(ledgerDirs)*len(journalDirs), "one lastMark per ledger directory and journal")
	bkMarks := make([]journal.LogMark, len(journalDirs))
	for i := range journalDirs {
		var problems []error
		bkMarks[i], problems = journal.ReadLastMark(vfs.Default, ledgerDirs, journal.LastMarkFileName(i, len(journalDirs)))
		require.Empty(t, problems)
	}

	open := func() *journaled.Storage {
		s, err := journaled.Open(journaled.Options{Storage: storageOpts(), Journal: journal.Options{
			JournalDirectories: journalDirs, MaxBackupJournals: 1 << 30}})
		require.NoError(t, err)
		return s
	}
	s := open()
	st := s.Replayed()
	t.Logf("replayed BookKeeper's journals from %v: %+v", bkMarks, st)
	require.GreaterOrEqual(t, st.EntriesAdded, int64(journalOnly))
	check := func(s *journaled.Storage) {
		for _, l := range e.Ledgers {
			info, ok, err := s.LedgerInfo(l.ID)
			require.NoError(t, err)
			require.True(t, ok && info.Exists, "ledger %d", l.ID)
			require.Equal(t, l.Fenced, info.Fenced, "ledger %d: fenced", l.ID)
			require.Equal(t, hexOrNil(l.MasterKey), nonNil(info.MasterKey), "ledger %d: master key", l.ID)
			if l.ExplicitLAC != nil {
				require.Equal(t, hexOrNil(l.ExplicitLAC), info.ExplicitLAC, "ledger %d: explicit LAC", l.ID)
			}
			for _, en := range l.Entries {
				p, err := s.GetEntry(l.ID, en.ID)
				require.NoError(t, err, "ledger %d entry %d (checkpointed by BookKeeper: %v)", l.ID, en.ID, *en.Checkpointed)
				sum, size := entryHash(l.ID, en.ID, p)
				require.Equal(t, en.SHA256, sum, "ledger %d entry %d", l.ID, en.ID)
				require.Equal(t, en.Size, size, "ledger %d entry %d", l.ID, en.ID)
			}
			for _, en := range l.InFlight {
				if p, err := s.GetEntry(l.ID, en.ID); err == nil {
					sum, _ := entryHash(l.ID, en.ID, p)
					require.Equal(t, en.SHA256, sum, "ledger %d entry %d, in flight, is there whole or not at all", l.ID, en.ID)
				}
			}
		}
	}
	check(s)
	require.NoError(t, s.Close())

	// The mark moved past the replay; BookKeeper's is kept for a roll back,
	// and its journal files are still there.
	for i, jd := range journalDirs {
		ourMark, _ := journal.ReadLastMark(vfs.Default, ledgerDirs, journal.LastMarkFileName(i, len(journalDirs)))
		require.True(t, bkMarks[i].Less(ourMark), "%s: %s -> %s", jd, bkMarks[i], ourMark)
		if bkMarks[i].FileID == 0 {
			continue // a mark of zeros (journalSyncData=false): the replay began at the first file
		}
		ids, err := journal.ListFiles(vfs.Default, jd)
		require.NoError(t, err)
		require.Contains(t, ids, bkMarks[i].FileID, "%s: BookKeeper's journal file stays", jd)
	}
	for _, b := range backups {
		data, err := os.ReadFile(b)
		require.NoError(t, err)
		require.Len(t, data, 16)
	}

	// A second start replays nothing and reads the same.
	s = open()
	require.Zero(t, s.Replayed().EntriesAdded)
	check(s)
	require.NoError(t, s.Close())
}

// journalVariants are BookKeeper journal configurations of the killed
// bookie (JournalBookie): several journal directories (the ledgers spread
// over them, a lastMark.<i> per journal), the older format versions it
// still writes (V4: an 8-byte header and no padding; V5: a sector header
// and padding records), a larger alignment, files rotated at
// journalMaxSizeMB, an unsynced journal (journalSyncData=false) and
// upstream's fixed group wait.
var journalVariants = []writerVariant{
	{name: "two-journals", args: []string{"--journals", "2"}},
	{name: "three-journals-rotated", args: []string{"--journals", "3", "--ledgers", "40", "--set", "journalMaxSizeMB=1"}},
	{name: "format-v4", args: []string{"--set", "journalFormatVersionToWrite=4"}},
	{name: "format-v5", args: []string{"--set", "journalFormatVersionToWrite=5"}},
	{name: "aligned-4k", args: []string{"--set", "journalAlignmentSize=4096,journalWriteBufferSizeKB=256"}},
	{name: "rotated", args: []string{"--ledgers", "40", "--set", "journalMaxSizeMB=1"}},
	{name: "unsynced", args: []string{"--set", "journalSyncData=false"}},
	{name: "fixed-group-wait", args: []string{"--set", "journalAdaptiveGroupWrites=false,journalMaxGroupWaitMSec=5,journalBufferedEntriesThreshold=7"}},
}

// TestMigrateKilledBookieFresh has BookKeeper's bookie write a journal
// with a new seed under one of journalVariants (chosen by the seed; with
// -variant all, every one; -variant a,b some), killed with acknowledged
// adds only in its journal; BookKeeper replays a copy; the directories
// are checked, and a copy is migrated and served (the replay of
// BookKeeper's journal by this storage), rolled back and read by
// BookKeeper again (migrateAndCheck), as TestWriterFresh does for the
// default journal.
func TestMigrateKilledBookieFresh(t *testing.T) {
	p := Build(t)
	bin := buildBookieIndex(t)
	seed := testSeed(t)
	run := pickVariants(t, journalVariants, seed)
	for i, v := range run {
		t.Run(v.name, func(t *testing.T) {
			t.Logf("replay with: go test ./interop/bookkeeper -run 'TestMigrateKilledBookieFresh' -seed %d -variant %s", seed, v.name)
			dir := t.TempDir()
			p.Run(t, "JournalBookie", append([]string{"--seed", strconv.FormatInt(seed+int64(i), 10), "--out", dir}, v.args...)...)
			p.Run(t, "JournalBookie", "--verify", copyDir(t, dir))
			checkDirs(t, dir)
			migrateAndCheck(t, bin, dir, p)
		})
	}
}
