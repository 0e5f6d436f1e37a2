package journal

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// testOptions returns options for one journal in j and one ledger
// directory l on fs, without grouping delays, pre-allocating 4 KiB at a
// time (the default 16 MiB per file would make every crash image of a
// MemFS hold 16 MiB a file, and pre-allocate once per test).
func testOptions(fs vfs.FS) Options {
	return Options{
		FS:                  fs,
		JournalDirectories:  []string{"j"},
		LedgerDirectories:   []string{"l"},
		FlushWhenQueueEmpty: true,
		PreAllocSize:        4 << 10,
	}
}

// replayed is one record as a test keeps it.
type replayed struct {
	Kind     Kind
	Ledger   int64
	Entry    int64
	Payload  string
	Position LogMark
}

func (r replayed) String() string {
	return fmt.Sprintf("%s %d/%d %q at %s", r.Kind, r.Ledger, r.Entry, r.Payload, r.Position)
}

// openCollect opens a Set and returns the records its replay delivered.
func openCollect(t testing.TB, opts Options) (*Set, []replayed) {
	t.Helper()
	var got []replayed
	s, err := Open(opts, func(r *Record) error {
		got = append(got, replayed{r.Kind, r.LedgerID, r.EntryID, string(r.Payload), r.Pos})
		return nil
	})
	require.NoError(t, err)
	return s, got
}

func TestAddCloseReplay(t *testing.T) {
	fs := vfs.NewMem()
	s, got := openCollect(t, testOptions(fs))
	require.Empty(t, got)
	var cs []Completion
	cs = append(cs, s.AddMasterKey(7, []byte("key")))
	for e := int64(0); e < 5; e++ {
		cs = append(cs, s.Add(7, e, fmt.Appendf(nil, "entry %d", e)))
	}
	cs = append(cs, s.AddExplicitLAC(7, []byte("lac")), s.AddFence(7), s.ForceLedger(7), s.Add(8, 0, nil))
	for i, c := range cs {
		require.NoError(t, c.Wait(), "add %d", i)
		require.NotZero(t, c.Mark().FileID, "add %d", i)
		if i > 0 {
			require.False(t, c.Mark().Less(cs[i-1].Mark()), "marks in add order")
		}
	}
	require.False(t, s.CurrentMark()[0].Less(cs[len(cs)-1].Mark()), "the current mark covers every completed add")
	require.NoError(t, s.Close())

	s, got = openCollect(t, testOptions(fs))
	defer s.Close()
	var lines []string
	for _, r := range got {
		lines = append(lines, fmt.Sprintf("%s %d/%d %q", r.Kind, r.Ledger, r.Entry, r.Payload))
	}
	require.Equal(t, []string{
		`master-key 7/-4096 "key"`,
		`entry 7/0 "entry 0"`, `entry 7/1 "entry 1"`, `entry 7/2 "entry 2"`, `entry 7/3 "entry 3"`, `entry 7/4 "entry 4"`,
		`explicit-lac 7/-32768 "lac"`, `fence 7/-8192 ""`, `entry 8/0 ""`,
	}, lines)
	// Each record ends where its add's completion says.
	for i, c := range []Completion{cs[0], cs[1], cs[6], cs[7], cs[9]} {
		r := got[[]int{0, 1, 6, 7, 8}[i]]
		require.Equal(t, c.Mark().FileID, r.Position.FileID)
		require.Less(t, r.Position.Offset, c.Mark().Offset)
	}
	// The first file is the replayed one; the second was started by this
	// open; both have a synced-length file.
	names, err := fs.List("j/current")
	require.NoError(t, err)
	require.Len(t, names, 5, "%v", names) // LOCK, 2 × (.txn, .synced)
	require.Equal(t, int64(9), s.Journals()[0].Replayed().Records)
}

// readFile returns a file's bytes.
func readFile(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	require.NoError(t, err)
	defer f.Close()
	n, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, n)
	if n > 0 {
		_, err = f.ReadAt(b, 0)
		require.NoError(t, err)
	}
	return b
}

// TestRollCheckpointRemove: files roll past MaxFileSize; a checkpoint
// writes the mark to lastMark and removes the files before the mark's but
// MaxBackupJournals; a reopen replays only what follows the mark.
func TestRollCheckpointRemove(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.MaxFileSize = 2048
	opts.MaxBackupJournals = 2
	s, _ := openCollect(t, opts)
	payload := make([]byte, 100)
	for e := int64(0); e < 40; e++ {
		require.NoError(t, s.Add(1, e, payload).Wait())
	}
	ids, err := ListFiles(fs, "j")
	require.NoError(t, err)
	require.Greater(t, len(ids), 8, "files rolled")
	for i := 1; i < len(ids); i++ {
		require.Equal(t, ids[i-1]+1, ids[i], "ids follow each other")
	}
	for _, id := range ids[:len(ids)-1] {
		size := int64(len(readFile(t, fs, filepath.Join("j/current", FileName(id)))))
		require.Greater(t, size, opts.MaxFileSize, "a file rolls once past the limit")
		require.Zero(t, size%512, "every batch is padded")
	}

	// The last add rolled the file or not; the mark is in the last file
	// synced.
	m := s.CurrentMark()
	k := slices.Index(ids, m[0].FileID)
	require.GreaterOrEqual(t, k, len(ids)-2)
	require.NoError(t, s.SetCheckpointed(m))
	require.Equal(t, appendLogMark(nil, m[0]), readFile(t, fs, "l/current/lastMark"))
	after, err := ListFiles(fs, "j")
	require.NoError(t, err)
	require.Equal(t, ids[k-2:], after, "the files from 2 before the mark's on")
	names, err := fs.List("j/current")
	require.NoError(t, err)
	require.Equal(t, 2*len(after)+1, len(names), "synced-length files removed with their journals: %v", names)

	for e := int64(40); e < 43; e++ {
		require.NoError(t, s.Add(1, e, []byte("after")).Wait())
	}
	require.NoError(t, s.Close())
	s, got := openCollect(t, opts)
	require.Len(t, got, 3)
	require.Equal(t, int64(40), got[0].Entry)
	require.NoError(t, s.Close())
}

// TestCheckpointMarkRules: a mark older than the recorded one is ignored
// (concurrent checkpoints never move it back); a mark past what is synced
// is refused; with several ledger directories every one gets the mark.
func TestCheckpointMarkRules(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.LedgerDirectories = []string{"l1", "l2"}
	s, _ := openCollect(t, opts)
	defer s.Close()
	j := s.Journals()[0]
	require.NoError(t, j.Add(1, 0, []byte("a")).Wait())
	m1 := j.CurrentMark()
	require.NoError(t, j.Add(1, 1, []byte("b")).Wait())
	m2 := j.CurrentMark()
	require.True(t, m1.Less(m2))
	require.NoError(t, j.SetCheckpointed(m2))
	require.NoError(t, j.SetCheckpointed(m1))
	for _, d := range opts.LedgerDirectories {
		got, _ := ReadLastMark(fs, []string{d}, "lastMark")
		require.Equal(t, m2, got, d)
	}
	err := j.SetCheckpointed(LogMark{FileID: m2.FileID, Offset: m2.Offset + 1})
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "past the synced position")
	require.ErrorIs(t, s.SetCheckpointed(Checkpoint{}), ErrInvalidArgument)
}

// TestSetSpreadsLedgers: ledger L goes to journal L mod n, sign-safe, and
// journal i's mark is lastMark.<i>.
func TestSetSpreadsLedgers(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.JournalDirectories = []string{"j0", "j1", "j2"}
	s, _ := openCollect(t, opts)
	for _, l := range []int64{-4, -2, -1, 0, 1, 2, 3, 5, 1 << 62} {
		require.NoError(t, s.Add(l, 0, nil).Wait())
	}
	require.NoError(t, s.SetCheckpointed(s.CurrentMark()))
	for i := range 3 {
		_, err := fs.Stat(LastMarkPath("l", fmt.Sprintf("lastMark.%d", i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	// Reopen from the zero marks to see every record again.
	for i := range 3 {
		require.NoError(t, fs.Remove(LastMarkPath("l", fmt.Sprintf("lastMark.%d", i))))
	}
	perJournal := map[string][]int64{}
	for _, dir := range opts.JournalDirectories {
		_, err := Replay(fs, dir, LogMark{}, func(r *Record) error {
			perJournal[dir] = append(perJournal[dir], r.LedgerID)
			return nil
		})
		require.NoError(t, err)
	}
	require.Equal(t, map[string][]int64{
		"j0": {0, 3},
		"j1": {-2, 1, 1 << 62},
		"j2": {-4, -1, 2, 5},
	}, perJournal)
}

// TestGroupingThresholds: without FlushWhenQueueEmpty and with a long
// journalMaxGroupWaitMSec, a batch is written once it holds more than
// journalBufferedEntriesThreshold adds or journalBufferedWritesThreshold
// bytes, or at Close; not before.
func TestGroupingThresholds(t *testing.T) {
	notDone := func(t *testing.T, cs []Completion) {
		time.Sleep(20 * time.Millisecond)
		for i, c := range cs {
			select {
			case <-c.Done():
				t.Fatalf("add %d done before its batch was due", i)
			default:
			}
		}
	}
	for _, tc := range []struct {
		name string
		set  func(*Options)
		size int
	}{
		{"entries", func(o *Options) { o.BufferedEntriesThreshold = 3 }, 10},
		{"bytes", func(o *Options) { o.BufferedWritesThreshold = 1000 }, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			opts := testOptions(fs)
			opts.FlushWhenQueueEmpty = false
			opts.MaxGroupWait = time.Hour
			tc.set(&opts)
			s, _ := openCollect(t, opts)
			var cs []Completion
			for e := range int64(3) {
				cs = append(cs, s.Add(1, e, make([]byte, tc.size)))
			}
			notDone(t, cs)
			cs = append(cs, s.Add(1, 3, make([]byte, tc.size)))
			for _, c := range cs {
				require.NoError(t, c.Wait())
			}
			require.Equal(t, cs[0].Mark().FileID, cs[3].Mark().FileID)
			last := s.Add(1, 4, nil)
			notDone(t, []Completion{last})
			require.NoError(t, s.Close())
			require.NoError(t, last.Wait(), "Close writes what is queued")
		})
	}
}

// countingFS counts the fsyncs of journal files.
func countingFS(inner vfs.FS, syncs *atomicCounter) vfs.FS {
	return vfs.NewErrorFS(inner, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpSync && filepath.Ext(op.Path) == ".txn" {
			syncs.add()
		}
		return nil
	}))
}

// TestNoSyncData: with journalSyncData=false adds complete once written;
// the file is synced every journalPageCacheFlushInterval and at Close.
func TestNoSyncData(t *testing.T) {
	mem := vfs.NewMem()
	var syncs atomicCounter
	opts := testOptions(countingFS(mem, &syncs))
	opts.NoSyncData = true
	opts.PageCacheFlushInterval = time.Hour
	s, _ := openCollect(t, opts)
	require.Equal(t, int64(1), syncs.get(), "the new file's header")
	for e := range int64(20) {
		require.NoError(t, s.Add(1, e, []byte("x")).Wait())
	}
	require.Zero(t, s.Journals()[0].Stats().Syncs, "no fsync per add")
	require.Equal(t, int64(SectorHeaderSize), s.CurrentMark()[0].Offset, "the mark moves only with fsyncs")
	require.NoError(t, s.Close())
	// The header's, the pre-allocator's (zeros ahead) and Close's.
	st := s.Journals()[0].Stats()
	require.Equal(t, int64(1), st.Syncs, "Close syncs")
	require.Equal(t, 2+st.PreallocatedAhead, syncs.get(), "Close syncs")
	_, got := openCollect(t, testOptions(mem.CrashClone(vfs.CrashOptions{})))
	require.Len(t, got, 20)
}

// TestNoWriteData: with journalWriteData=false entries complete at once and
// are not written; meta-entries still are.
func TestNoWriteData(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.NoWriteData = true
	s, _ := openCollect(t, opts)
	c := s.Add(1, 0, []byte("x"))
	require.NoError(t, c.Wait())
	require.Equal(t, LogMark{}, c.Mark())
	require.NoError(t, s.AddFence(1).Wait())
	require.NoError(t, s.Close())
	_, got := openCollect(t, testOptions(fs))
	require.Len(t, got, 1)
	require.Equal(t, KindFence, got[0].Kind)
}

// TestFormatVersion4: the 8-byte header, no padding, and no explicit LAC
// (it completes with its batch but is not written), as upstream.
func TestFormatVersion4(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.FormatVersionToWrite = V4
	s, _ := openCollect(t, opts)
	require.NoError(t, s.Add(1, 0, []byte("a")).Wait())
	require.NoError(t, s.AddExplicitLAC(1, []byte("lac")).Wait())
	require.NoError(t, s.Add(1, 1, []byte("b")).Wait())
	id := s.Journals()[0].CurrentMark().FileID
	require.NoError(t, s.Close())
	data := readFile(t, fs, filepath.Join("j/current", FileName(id)))
	want := appendEntryRecord(appendEntryRecord(encodeHeader(V4), 1, 0, []byte("a")), 1, 1, []byte("b"))
	// The records, then the zeros pre-allocated after them (a version-4
	// journal has no padding): the first chunk's, and the next chunk's if
	// the pre-allocator wrote it ahead before Close.
	want = appendZeros(want, int(opts.PreAllocSize)-len(want))
	require.Equal(t, want, data[:min(len(want), len(data))])
	require.Contains(t, []int{len(want), 2 * len(want)}, len(data))
	require.Equal(t, make([]byte, len(data)-len(want)), data[len(want):])
}

func TestInvalidUse(t *testing.T) {
	fs := vfs.NewMem()
	_, err := Open(Options{FS: fs, LedgerDirectories: []string{"l"}}, nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Open(Options{FS: fs, JournalDirectories: []string{"j"}}, nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	for _, o := range []Options{{AlignmentSize: 4}, {FormatVersionToWrite: 3}, {FormatVersionToWrite: 7}} {
		o.FS, o.JournalDirectories, o.LedgerDirectories = fs, []string{"j"}, []string{"l"}
		_, err = Open(o, nil)
		require.ErrorIs(t, err, ErrInvalidArgument, "%+v", o)
	}

	s, _ := openCollect(t, testOptions(fs))
	require.ErrorIs(t, s.Add(1, -1, nil).Wait(), ErrInvalidArgument)
	_, err = Open(testOptions(fs), nil)
	require.ErrorIs(t, err, vfs.ErrLockHeld, "one process per journal directory")
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Add(1, 0, nil).Wait(), ErrClosed)
	require.NoError(t, s.Close(), "a second Close")
}

// TestReplayErrorStopsOpen: an error from the replay function fails Open
// as it is, and leaves the directory unlocked.
func TestReplayErrorStopsOpen(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := openCollect(t, testOptions(fs))
	require.NoError(t, s.Add(1, 0, nil).Wait())
	require.NoError(t, s.Close())
	boom := fmt.Errorf("storage refused")
	_, err := Open(testOptions(fs), func(*Record) error { return boom })
	require.ErrorIs(t, err, boom)
	s, got := openCollect(t, testOptions(fs))
	require.Len(t, got, 1)
	require.NoError(t, s.Close())
}
