package check

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// checkFixture is a closed storage on the OS file system: ledgers 1 to 3
// with checkLedgerEntries entries each over several entry logs, entries of
// ledger 1 written twice (stale copies stay in the logs), and ledger 4
// deleted and purged.
type checkFixture struct {
	dir string // the ledger (and index) directory
}

const checkLedgerEntries = 60

func (f *checkFixture) options() *bookie.Options {
	return &bookie.Options{
		LedgerDirs:    []string{f.dir},
		FlushInterval: -1,
		GCWaitTime:    -1,
		LogSizeLimit:  8 << 10,
		Index:         &entrylocation.Options{Engine: storagetest.SmallEngine()},
	}
}

func newCheckFixture(t *testing.T) *checkFixture {
	t.Helper()
	f := &checkFixture{dir: filepath.Join(t.TempDir(), "ledgers")}
	s, err := bookie.Open(f.options())
	require.NoError(t, err)
	for l := int64(1); l <= 4; l++ {
		for e := int64(0); e < checkLedgerEntries; e++ {
			require.NoError(t, s.AddEntry(l, e, storagetest.Payload(l, e, 0)))
		}
		require.NoError(t, s.Checkpoint())
	}
	for e := int64(0); e < 10; e++ {
		require.NoError(t, s.AddEntry(1, e, storagetest.Payload(1, e, 1)))
	}
	require.NoError(t, s.Checkpoint())
	_, err = s.DeleteLedger(4)
	require.NoError(t, err)
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	require.NoError(t, s.Close())
	return f
}

func (f *checkFixture) check(t *testing.T) *Result {
	t.Helper()
	res, err := Directory(Options{LedgerDir: f.dir, Engine: storagetest.SmallEngine()})
	require.NoError(t, err)
	for _, f := range res.Findings {
		t.Log(f.String())
	}
	t.Log(res.Summary())
	return res
}

// location returns an entry's location, from the index of the closed
// storage.
func (f *checkFixture) location(t *testing.T, ledgerID, entryID int64) int64 {
	t.Helper()
	ix, err := entrylocation.Open(f.locationsPath(), &entrylocation.Options{Engine: storagetest.SmallEngine()})
	require.NoError(t, err)
	defer ix.Close()
	loc, err := ix.GetLocation(ledgerID, entryID)
	require.NoError(t, err)
	require.NotZero(t, loc)
	return loc
}

func (f *checkFixture) addLocation(t *testing.T, ledgerID, entryID, location int64) {
	t.Helper()
	ix, err := entrylocation.Open(f.locationsPath(), &entrylocation.Options{Engine: storagetest.SmallEngine()})
	require.NoError(t, err)
	require.NoError(t, ix.AddLocation(ledgerID, entryID, location))
	require.NoError(t, ix.Close())
}

func (f *checkFixture) locationsPath() string { return filepath.Join(f.dir, "current", "locations") }

func (f *checkFixture) logPath(location int64) string {
	return filepath.Join(f.dir, "current", entrylog.LogFileName(entrylog.LocationLogID(location)))
}

// findings returns the result's findings of a kind.
func findings(res *Result, kind FindingKind) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func TestCheckClean(t *testing.T) {
	f := newCheckFixture(t)
	res := f.check(t)
	require.Empty(t, res.Findings)
	require.Zero(t, res.Problems())
	require.EqualValues(t, 3*checkLedgerEntries, res.Locations, "ledgers 1 to 3; ledger 4 is purged")
	require.EqualValues(t, 4*checkLedgerEntries+10, res.Records, "every copy, stale and deleted ones too")
	require.Greater(t, res.Logs, 2)
	require.Contains(t, res.Summary(), ": OK")

	// The check wrote nothing: the storage opens and reads as before.
	s, err := bookie.Open(f.options())
	require.NoError(t, err)
	defer s.Close()
	storagetest.RequireEntry(t, s, 1, 3, storagetest.Payload(1, 3, 1))
	storagetest.RequireEntry(t, s, 2, checkLedgerEntries-1, storagetest.Payload(2, checkLedgerEntries-1, 0))
	storagetest.RequireNoLedger(t, s, 4, bookie.ErrNoLedger)
}

// TestCheckRefusesARunningStorage: a check of a directory an open storage
// holds fails at once, saying so.
func TestCheckRefusesARunningStorage(t *testing.T) {
	f := newCheckFixture(t)
	s, err := bookie.Open(f.options())
	require.NoError(t, err)
	_, err = Directory(Options{LedgerDir: f.dir})
	require.ErrorContains(t, err, "is in use: stop the storage (bookie-index serve) first")
	require.NoError(t, s.Close())
	_, err = Directory(Options{LedgerDir: f.dir})
	require.NoError(t, err)

	_, err = Directory(Options{LedgerDir: filepath.Join(t.TempDir(), "none")})
	require.ErrorContains(t, err, "no entry location index at")
	_, err = Directory(Options{})
	require.ErrorIs(t, err, entrylocation.ErrInvalidArgument)
}

func TestCheckFlippedByte(t *testing.T) {
	f := newCheckFixture(t)
	loc := f.location(t, 2, 7)
	path := f.logPath(loc)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	offset := entrylog.LocationOffset(loc) - entrylog.SizeFieldSize
	data[offset+entrylog.RecordOverhead+3] ^= 0x01 // a byte of the payload
	require.NoError(t, os.WriteFile(path, data, 0o644))

	res := f.check(t)
	damaged := findings(res, FindingDamagedRecord)
	require.Len(t, damaged, 1, "%v", res.Findings)
	require.Equal(t, path, damaged[0].Path)
	require.Equal(t, offset, damaged[0].Offset)
	require.Contains(t, damaged[0].String(), fmt.Sprintf("%s: 1374 bytes not scanned: at offset %d", path, offset))
	require.Contains(t, damaged[0].String(), "checksum")
	entries := findings(res, FindingDamagedEntry)
	require.Len(t, entries, 1)
	require.Equal(t, [2]int64{2, 7}, [2]int64{entries[0].LedgerID, entries[0].EntryID})
	require.Equal(t, loc, entries[0].Location)
	require.EqualValues(t, 2, res.Problems())
	require.Len(t, res.Findings, 2, "the records after the damaged one are verified one by one: intact")
	require.Contains(t, res.Summary(), "2 problems")
}

// TestCheckFlippedByteInLastRecord: the last record of the newest log,
// acknowledged by a checkpoint, is damaged, not a torn tail: the index
// names it.
func TestCheckFlippedByteInLastRecord(t *testing.T) {
	f := newCheckFixture(t)
	loc := f.location(t, 1, 9) // the fixture's last write
	path := f.logPath(loc)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	offset := entrylog.LocationOffset(loc) - entrylog.SizeFieldSize
	require.Equal(t, int64(len(data)), offset+entrylog.RecordOverhead+int64(len(storagetest.Payload(1, 9, 1))), "the last record of its log")
	data[len(data)-12] ^= 0x80
	require.NoError(t, os.WriteFile(path, data, 0o644))

	res := f.check(t)
	require.Zero(t, res.Count(FindingTornTail))
	damaged := findings(res, FindingDamagedRecord)
	require.Len(t, damaged, 1, "%v", res.Findings)
	require.Equal(t, offset, damaged[0].Offset)
	require.Len(t, findings(res, FindingDamagedEntry), 1)
	require.EqualValues(t, 2, res.Problems())
}

func TestCheckTruncatedLog(t *testing.T) {
	f := newCheckFixture(t)
	loc := f.location(t, 3, 20)
	path := f.logPath(loc)
	offset := entrylog.LocationOffset(loc) - entrylog.SizeFieldSize
	require.NoError(t, os.Truncate(path, offset+10)) // inside the record of (3, 20)

	res := f.check(t)
	damaged := findings(res, FindingDamagedRecord)
	require.Len(t, damaged, 1, "%v", res.Findings)
	require.Equal(t, offset, damaged[0].Offset)
	require.EqualValues(t, 10, damaged[0].Unscanned)
	missing := append(findings(res, FindingMissingRecord), findings(res, FindingDamagedEntry)...)
	require.NotEmpty(t, missing)
	for _, m := range missing {
		require.Equal(t, path, m.Path)
		require.GreaterOrEqual(t, m.Offset, offset)
	}
	require.Contains(t, fmt.Sprint(res.Findings), "entry 20 of ledger 3")
	require.Positive(t, res.Problems())
}

func TestCheckLocationPastTheEnd(t *testing.T) {
	f := newCheckFixture(t)
	loc := f.location(t, 1, 0)
	st, err := os.Stat(f.logPath(loc))
	require.NoError(t, err)
	bad := entrylog.MakeLocation(entrylog.LocationLogID(loc), st.Size()+100)
	f.addLocation(t, 1, 1000, bad)
	// And one naming another entry's record, and one in the header.
	f.addLocation(t, 1, 1001, loc)
	f.addLocation(t, 1, 1002, entrylog.MakeLocation(entrylog.LocationLogID(loc), 8))

	res := f.check(t)
	missing := findings(res, FindingMissingRecord)
	require.Len(t, missing, 2, "%v", res.Findings)
	require.Equal(t, int64(1000), missing[0].EntryID)
	require.Equal(t, bad, missing[0].Location)
	require.Contains(t, missing[0].String(), "past the readable end")
	require.Equal(t, int64(1001), missing[1].EntryID)
	require.Contains(t, missing[1].String(), "the record there is entry 0 of ledger 1")
	badKeys := findings(res, FindingBadIndexRecord)
	require.Len(t, badKeys, 1)
	require.Contains(t, badKeys[0].String(), "is no record's")
	require.EqualValues(t, 3, res.Problems())
	require.Len(t, res.Findings, 3)
}

func TestCheckDeletedLog(t *testing.T) {
	f := newCheckFixture(t)
	loc := f.location(t, 2, 30)
	path := f.logPath(loc)
	require.NoError(t, os.Remove(path))

	res := f.check(t)
	missing := findings(res, FindingMissingRecord)
	require.NotEmpty(t, missing)
	require.Equal(t, int64(len(res.Findings)), res.Problems())
	for _, m := range missing {
		require.Equal(t, path, m.Path)
		require.Contains(t, m.String(), "does not exist")
	}
	require.Contains(t, fmt.Sprint(res.Findings), "entry 30 of ledger 2")
}

// TestCheckTornTail: garbage after the last record that no location names
// is what a crash during a checkpoint leaves: a warning, not a problem.
func TestCheckTornTail(t *testing.T) {
	f := newCheckFixture(t)
	ids, err := entrylog.ListLogs(vfs.Default, filepath.Join(f.dir, "current"))
	require.NoError(t, err)
	path := filepath.Join(f.dir, "current", entrylog.LogFileName(ids[len(ids)-1]))
	st, err := os.Stat(path)
	require.NoError(t, err)
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fh.Write([]byte{0, 0, 1, 0, 9, 9, 9})
	require.NoError(t, err)
	require.NoError(t, fh.Close())

	res := f.check(t)
	require.Zero(t, res.Problems(), "%v", res.Findings)
	torn := findings(res, FindingTornTail)
	require.Len(t, torn, 1)
	require.Equal(t, path, torn[0].Path)
	require.Equal(t, st.Size(), torn[0].Offset)
	require.EqualValues(t, 1, res.Count(FindingTornTail))
	require.Contains(t, res.Summary(), ": OK")
}

func TestCheckBadHeader(t *testing.T) {
	f := newCheckFixture(t)
	loc := f.location(t, 1, 40)
	path := f.logPath(loc)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[1] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o644))

	res := f.check(t)
	bad := findings(res, FindingBadLog)
	require.Len(t, bad, 1, "%v", res.Findings)
	require.Equal(t, path, bad[0].Path)
	require.Contains(t, bad[0].String(), "bad magic")
	require.NotEmpty(t, findings(res, FindingDamagedEntry))
	require.Equal(t, int64(len(res.Findings)), res.Problems())
}

// TestCheckMaxFindings: the counts are complete, the list is bounded.
func TestCheckMaxFindings(t *testing.T) {
	f := newCheckFixture(t)
	require.NoError(t, os.Remove(f.logPath(f.location(t, 3, 0))))
	res, err := Directory(Options{LedgerDir: f.dir, Engine: storagetest.SmallEngine(), MaxFindings: 2})
	require.NoError(t, err)
	require.Len(t, res.Findings, 2)
	require.Greater(t, res.Count(FindingMissingRecord), int64(2))
	require.Equal(t, res.Count(FindingMissingRecord)-2, res.Unlisted())
	require.True(t, strings.Contains(res.Summary(), fmt.Sprintf("%d locations naming no record of their entry", res.Count(FindingMissingRecord))), res.Summary())
}

var (
	checkFlipRounds = flag.Int("check-flip-rounds", 40, "rounds of TestCheckRandomFlips")
	checkFlipSeed   = flag.Int64("check-flip-seed", 0, "seed of TestCheckRandomFlips (0: the time)")
)

// TestCheckRandomFlips flips one random byte of one random entry log at a
// time and checks that the check reports exactly what a model of the logs
// says: nothing for the header's zero padding (no checksum covers it); an
// unreadable log for the rest of the header; otherwise the record hit. It
// is damage when the log's ledgers map says the log was written whole
// (every log a storage closed cleanly has one), when the index names a
// record at or after it, or when the log is not the newest (a flipped
// byte leaves a whole record that fails its checksum, or a size field that
// one corrected byte makes whole again: no interrupted write leaves that);
// a torn tail only in the newest log without a map, when nothing after it
// is named. And the location of that record if the index names it. The
// other locations are intact and not reported. The subtest without maps
// is a storage whose maps a crash lost (they are written lazily).
func TestCheckRandomFlips(t *testing.T) {
	for _, maps := range []bool{true, false} {
		t.Run(fmt.Sprintf("maps=%v", maps), func(t *testing.T) { testCheckRandomFlips(t, maps) })
	}
}

func testCheckRandomFlips(t *testing.T, maps bool) {
	seed := *checkFlipSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (-check-flip-seed to repeat)", seed)
	rng := rand.New(rand.NewSource(seed))
	f := newCheckFixture(t)
	// And a last log that only a deleted ledger wrote: nothing names its
	// records, so without its map damage there is a torn tail.
	s, err := bookie.Open(f.options())
	require.NoError(t, err)
	for e := int64(0); e < 20; e++ {
		require.NoError(t, s.AddEntry(5, e, storagetest.Payload(5, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	_, err = s.DeleteLedger(5)
	require.NoError(t, err)
	require.NoError(t, s.Purge())
	require.NoError(t, s.Close())
	logDir := filepath.Join(f.dir, "current")
	ids, err := entrylog.ListLogs(vfs.Default, logDir)
	require.NoError(t, err)
	for _, id := range ids {
		path := filepath.Join(logDir, entrylog.MetadataFileName(id))
		_, err := os.Stat(path)
		require.NoError(t, err, "a closed storage leaves a ledgers map for every log")
		if !maps {
			require.NoError(t, os.Remove(path))
		}
	}

	// The model: every record of every log, and whether the index names it.
	ix, err := entrylocation.Open(f.locationsPath(), &entrylocation.Options{Engine: storagetest.SmallEngine()})
	require.NoError(t, err)
	type record struct {
		start, end             int64
		ledgerID, entryID, loc int64
		named                  bool
	}
	records := map[int64][]record{}
	for _, id := range ids {
		_, err := entrylog.Scan(vfs.Default, filepath.Join(logDir, entrylog.LogFileName(id)), func(r *entrylog.Record) error {
			cur, err := ix.GetLocation(r.LedgerID, r.EntryID)
			start := entrylog.LocationOffset(r.Location) - entrylog.SizeFieldSize
			records[id] = append(records[id], record{start, start + entrylog.RecordOverhead + int64(len(r.Payload)), r.LedgerID, r.EntryID, r.Location, cur == r.Location})
			return err
		})
		require.NoError(t, err)
	}
	require.NoError(t, ix.Close())

	torn := 0
	for round := 0; round < *checkFlipRounds; round++ {
		id := ids[rng.Intn(len(ids))]
		path := filepath.Join(logDir, entrylog.LogFileName(id))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		pos := rng.Int63n(int64(len(data)))
		if rng.Intn(4) == 0 {
			pos = rng.Int63n(entrylog.HeaderSize)
		}
		bit := byte(1) << rng.Intn(8)
		data[pos] ^= bit
		require.NoError(t, os.WriteFile(path, data, 0o644))

		res := f.check(t)
		what := fmt.Sprintf("round %d: bit %#x of byte %d of %s", round, bit, pos, path)
		switch {
		case pos >= 20 && pos < entrylog.HeaderSize:
			require.Empty(t, res.Findings, what)
		case pos < 20:
			require.Len(t, findings(res, FindingBadLog), 1, what)
			require.Equal(t, path, res.Findings[0].Path, what)
			require.Zero(t, res.Count(FindingMissingRecord)+res.Count(FindingDamagedRecord)+res.Count(FindingTornTail), what)
		default:
			var hit record
			laterNamed := false
			for _, r := range records[id] {
				if pos >= r.start && pos < r.end {
					hit = r
				}
				if r.named && r.start >= hit.start && hit.end > 0 {
					laterNamed = true
				}
			}
			require.NotZero(t, hit.end, what)
			want := FindingDamagedRecord
			if !maps && !laterNamed && id == ids[len(ids)-1] {
				want = FindingTornTail
				torn++
			}
			logFindings := append(findings(res, FindingDamagedRecord), findings(res, FindingTornTail)...)
			require.Len(t, logFindings, 1, "%s: %v", what, res.Findings)
			require.Equal(t, want, logFindings[0].Kind, "%s: %v", what, logFindings[0].String())
			require.Equal(t, hit.start, logFindings[0].Offset, what)
			locs := append(findings(res, FindingDamagedEntry), findings(res, FindingMissingRecord)...)
			if hit.named {
				require.Len(t, locs, 1, "%s: %v", what, res.Findings)
				require.Equal(t, [3]int64{hit.ledgerID, hit.entryID, hit.loc}, [3]int64{locs[0].LedgerID, locs[0].EntryID, locs[0].Location}, what)
			} else {
				require.Empty(t, locs, "%s: %v", what, res.Findings)
			}
			require.Equal(t, want.Problem() || hit.named, res.Problems() > 0, what)
		}
		data[pos] ^= bit
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	require.Empty(t, f.check(t).Findings)
	t.Logf("%d rounds, %d torn tails", *checkFlipRounds, torn)
}

// TestCheckIOErrors: an I/O error while scanning a log or while reading
// the record of a location stops the check with an error naming the file;
// it is never taken for damage nor for a clean directory.
func TestCheckIOErrors(t *testing.T) {
	f := newCheckFixture(t)
	path := f.logPath(f.location(t, 2, 30))
	var reads, failAt atomic.Int64
	fs := vfs.NewErrorFS(vfs.Default, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind != vfs.OpRead || op.Path != path {
			return nil
		}
		if n := reads.Add(1); n == failAt.Load() {
			return vfs.ErrInjected
		}
		return nil
	}))
	res, err := Directory(Options{LedgerDir: f.dir, FS: fs, Engine: storagetest.SmallEngine()})
	require.NoError(t, err)
	require.Empty(t, res.Findings)
	scanReads := reads.Load() // the scan's, and the locations' after it
	require.Positive(t, scanReads)
	for _, n := range []int64{1, 2, scanReads} {
		reads.Store(0)
		failAt.Store(n)
		_, err := Directory(Options{LedgerDir: f.dir, FS: fs, Engine: storagetest.SmallEngine()})
		require.ErrorIs(t, err, vfs.ErrInjected, "read %d of %d", n, scanReads)
		require.ErrorContains(t, err, path, "read %d of %d", n, scanReads)
	}
}

// TestCheckBadLastID: a lastId that is not a log id (the storage refuses
// to open), one not written as the storage writes it, and one below the
// newest log's id are problems naming the file; the rest is checked.
func TestCheckBadLastID(t *testing.T) {
	f := newCheckFixture(t)
	path := filepath.Join(f.dir, "current", "lastId")
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	ids, err := entrylog.ListLogs(vfs.Default, filepath.Join(f.dir, "current"))
	require.NoError(t, err)
	newest := ids[len(ids)-1]
	require.Equal(t, strconv.FormatInt(newest, 16)+"\n", string(good))
	for _, tc := range []struct{ content, want string }{
		{"zz\n", `holds "zz\n", not a log id: entry log corruption`},
		{"", `holds "", not a log id`},
		{strings.ToUpper(string(good)) + " ", `not "` + strconv.FormatInt(newest, 16) + `\n" as the storage writes log id`},
		{strconv.FormatInt(newest-1, 16) + "\n", fmt.Sprintf("names log %#x, below log %#x, which exists", newest-1, newest)},
	} {
		require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
		res := f.check(t)
		bad := findings(res, FindingBadStorageFile)
		require.Len(t, bad, 1, "%q: %v", tc.content, res.Findings)
		require.Equal(t, path, bad[0].Path)
		require.Contains(t, bad[0].String(), path)
		require.Contains(t, bad[0].String(), tc.want)
		require.EqualValues(t, 1, res.Problems(), "%q: the rest is clean: %v", tc.content, res.Findings)
		require.EqualValues(t, 3*checkLedgerEntries, res.Locations, "%q", tc.content)
	}
	// A lastId above every log (the newest logs were removed) is right.
	require.NoError(t, os.WriteFile(path, []byte(strconv.FormatInt(newest+5, 16)+"\n"), 0o644))
	require.Empty(t, f.check(t).Findings)
}

// TestCheckLedgersIndex: a location of a ledger the ledgers index does not
// hold is a warning; a location below its ledger's floor (a copy from
// before the ledger was deleted) is a problem.
func TestCheckLedgersIndex(t *testing.T) {
	f := newCheckFixture(t)
	oldLife := f.location(t, 3, 1)
	s, err := bookie.Open(f.options())
	require.NoError(t, err)
	_, err = s.DeleteLedger(3)
	require.NoError(t, err)
	require.NoError(t, s.AddEntry(3, 0, storagetest.Payload(3, 0, 2)))
	require.NoError(t, s.Checkpoint())
	info, ok, err := s.LedgerInfo(3)
	require.NoError(t, err)
	require.True(t, ok)
	require.Greater(t, info.Floor, oldLife)
	require.NoError(t, s.Close())
	require.Empty(t, f.check(t).Findings, "the new life is clean")

	// The old life's location of (3, 1), back in the index: reads would
	// return the deleted entry.
	f.addLocation(t, 3, 1, oldLife)
	res := f.check(t)
	below := findings(res, FindingBelowFloor)
	require.Len(t, below, 1, "%v", res.Findings)
	require.Equal(t, [3]int64{3, 1, oldLife}, [3]int64{below[0].LedgerID, below[0].EntryID, below[0].Location})
	require.Contains(t, below[0].String(), "the ledger's current life starts at")
	require.Len(t, res.Findings, 1, "the record itself is intact")
	require.EqualValues(t, 1, res.Problems())

	// Ledger 2's record gone from the ledgers index: its locations are
	// unreachable, a warning each.
	db, err := lsm.Open(filepath.Join(f.dir, "current", "ledgers"), storagetest.SmallEngine())
	require.NoError(t, err)
	var b lsm.Batch
	b.Delete(ondisk.LedgerKey(2))
	require.NoError(t, db.Apply(&b, lsm.Sync))
	require.NoError(t, db.Close())
	res = f.check(t)
	require.EqualValues(t, checkLedgerEntries, res.Count(FindingUnknownLedger))
	require.EqualValues(t, 1, res.Problems(), "only the location below the floor")
	require.Contains(t, res.Summary(), fmt.Sprintf("%d locations of ledgers the ledgers index does not hold", checkLedgerEntries))
}

// middleOfRotatedLog returns a record of the deleted ledger 4 in the
// middle of a log other than the newest, followed in its log only by
// ledger 4's records: the case of a damaged record no location reaches.
func (f *checkFixture) middleOfRotatedLog(t *testing.T) (path string, start int64) {
	t.Helper()
	logDir := filepath.Join(f.dir, "current")
	ids, err := entrylog.ListLogs(vfs.Default, logDir)
	require.NoError(t, err)
	for _, id := range ids[:len(ids)-1] {
		p := filepath.Join(logDir, entrylog.LogFileName(id))
		var recs []entrylog.Record
		_, err := entrylog.Scan(vfs.Default, p, func(r *entrylog.Record) error {
			recs = append(recs, entrylog.Record{LedgerID: r.LedgerID, Location: r.Location})
			return nil
		})
		require.NoError(t, err)
		for i := 1; i < len(recs)-2; i++ {
			if recs[i-1].LedgerID == 4 {
				continue // a record with another ledger's before it
			}
			only4 := true
			for _, r := range recs[i:] {
				only4 = only4 && r.LedgerID == 4
			}
			if only4 {
				return p, entrylog.LocationOffset(recs[i+1].Location) - entrylog.SizeFieldSize
			}
		}
	}
	t.Fatal("no rotated log ends with the deleted ledger's records")
	return "", 0
}

// TestCheckDamageInRotatedLog: a record that fails its checksum in the
// middle of a rotated log, followed only by a deleted ledger's records
// (no location reaches it), is damage: the log's ledgers map says it was
// written whole; without the map (a crash lost it: maps are written
// lazily), the log is not the newest and the record is whole, which no
// interrupted write leaves. Only in the newest log, without its map, is
// it taken for a torn tail.
func TestCheckDamageInRotatedLog(t *testing.T) {
	f := newCheckFixture(t)
	path, start := f.middleOfRotatedLog(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[start+entrylog.RecordOverhead+2] ^= 0x08
	require.NoError(t, os.WriteFile(path, data, 0o644))

	res := f.check(t)
	damaged := findings(res, FindingDamagedRecord)
	require.Len(t, damaged, 1, "%v", res.Findings)
	require.Equal(t, path, damaged[0].Path)
	require.Equal(t, start, damaged[0].Offset)
	require.Contains(t, damaged[0].String(), fmt.Sprintf("%s: %d bytes not scanned: at offset %d: record checksum", path, int64(len(data))-start, start))
	require.Contains(t, damaged[0].String(), "says it was written whole up to offset")
	require.EqualValues(t, 1, res.Problems(), "no location reaches it: %v", res.Findings)

	ids, err := entrylog.ListLogs(vfs.Default, filepath.Join(f.dir, "current"))
	require.NoError(t, err)
	for _, id := range ids {
		require.NoError(t, os.Remove(filepath.Join(f.dir, "current", entrylog.MetadataFileName(id))))
	}
	res = f.check(t)
	damaged = findings(res, FindingDamagedRecord)
	require.Len(t, damaged, 1, "%v", res.Findings)
	require.Equal(t, start, damaged[0].Offset)
	require.Contains(t, damaged[0].String(), "not the newest log, and the record at offset")
	require.Contains(t, damaged[0].String(), "is whole")

	// A torn record at the end of a log that is no longer the newest (a
	// crash, then a start that wrote a new log): a warning.
	require.NoError(t, os.Truncate(path, start+30))
	res = f.check(t)
	require.Zero(t, res.Problems(), "%v", res.Findings)
	torn := findings(res, FindingTornTail)
	require.Len(t, torn, 1)
	require.Contains(t, torn[0].String(), "runs past the end of the file")
}

// TestCheckIndexFiles: damage in any block of a table, the filters
// included, is found as `db check` finds it, naming the file and the
// block's offset; a WAL's torn tail past its synced length (what a crash
// leaves) is a warning.
func TestCheckIndexFiles(t *testing.T) {
	base, _ := newFlipFixture(t)
	locations := filepath.Join(flipIndexDir, "current", "locations")
	names, err := base.List(locations)
	require.NoError(t, err)
	var table, wal string
	for _, n := range names {
		switch filepath.Ext(n) {
		case ".sst":
			table = filepath.Join(locations, n)
		case ".log":
			wal = filepath.Join(locations, n)
		}
	}
	require.NotEmpty(t, table)
	require.NotEmpty(t, wal)
	tb, err := lsm.OpenTable(base, table)
	require.NoError(t, err)
	blocks, err := tb.Blocks()
	require.NoError(t, err)
	require.NoError(t, tb.Close())
	pristine := readMemFile(t, base, table)
	seen := map[string]bool{}
	for _, b := range blocks {
		if seen[b.Kind] || b.Length == 0 {
			continue
		}
		seen[b.Kind] = true
		fs := base.CrashClone(vfs.CrashOptions{})
		data := append([]byte(nil), pristine...)
		data[b.Offset+b.Length/2] ^= 0x20
		require.NoError(t, writeMemFile(fs, table, data))
		res, err := Directory(Options{LedgerDir: flipLedgerDir, IndexDir: flipIndexDir, FS: fs, Engine: flipEngine()})
		if err != nil {
			// A block read at open (properties, range deletions): the
			// index cannot be opened, as the storage cannot open it.
			require.ErrorContains(t, err, table, b.Kind)
			t.Logf("%s: %v", b.Kind, err)
			continue
		}
		bad := findings(res, FindingBadIndexFile)
		require.NotEmpty(t, bad, "%s: %v", b.Kind, res.Findings)
		require.Equal(t, table, bad[0].Path)
		require.Contains(t, bad[0].String(), fmt.Sprintf("block at offset %d", b.Offset), b.Kind)
		require.Positive(t, res.Problems())
		t.Logf("%s: %s", b.Kind, bad[0].String())
	}
	require.True(t, seen["filter"] && seen["data"] && seen["index"] && seen["top-level filter index"], "%v", seen)

	fs := base.CrashClone(vfs.CrashOptions{})
	require.NoError(t, writeMemFile(fs, wal, append(readMemFile(t, fs, wal), 1, 2, 3, 4, 5, 6, 7, 8, 9)))
	res, err := Directory(Options{LedgerDir: flipLedgerDir, IndexDir: flipIndexDir, FS: fs, Engine: flipEngine()})
	require.NoError(t, err)
	require.Zero(t, res.Problems(), "%v", res.Findings)
	left := findings(res, FindingIndexCrashLeftover)
	require.Len(t, left, 1, "%v", res.Findings)
	require.Equal(t, wal, left[0].Path)
	require.Contains(t, left[0].String(), "beyond the")
}

// TestCheckLayout: a flipped byte of either LAYOUT copy is a problem
// naming the file and the offset (the storage refuses to open).
func TestCheckLayout(t *testing.T) {
	root := t.TempDir()
	ledgerDir, indexDir := filepath.Join(root, "l"), filepath.Join(root, "i")
	s, err := bookie.Open(&bookie.Options{LedgerDirs: []string{ledgerDir}, IndexDirs: []string{indexDir}, FlushInterval: -1, GCWaitTime: -1,
		Index: &entrylocation.Options{Engine: storagetest.SmallEngine()}})
	require.NoError(t, err)
	require.NoError(t, s.AddEntry(1, 0, []byte("x")))
	require.NoError(t, s.Close())
	check := func() *Result {
		res, err := Directory(Options{LedgerDir: ledgerDir, IndexDir: indexDir, Engine: storagetest.SmallEngine()})
		require.NoError(t, err)
		return res
	}
	require.Empty(t, check().Findings)
	for _, dir := range []string{ledgerDir, indexDir} {
		path := filepath.Join(dir, "current", ondisk.LayoutFileName)
		good, err := os.ReadFile(path)
		require.NoError(t, err)
		bad := append([]byte(nil), good...)
		bad[20] ^= 0x01
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		res := check()
		layouts := findings(res, FindingBadLayout)
		require.Len(t, layouts, 1, "%v", res.Findings)
		require.Equal(t, path, layouts[0].Path)
		require.Contains(t, layouts[0].String(), fmt.Sprintf("directory layout %s: offset %d: checksum", path, len(good)-4))
		require.EqualValues(t, 1, res.Problems())
		_, err = bookie.Open(&bookie.Options{LedgerDirs: []string{ledgerDir}, IndexDirs: []string{indexDir}})
		require.ErrorIs(t, err, ondisk.ErrLayoutCorrupt, "the storage refuses it too")
		require.NoError(t, os.WriteFile(path, good, 0o644))
	}
}

// TestCheckLedgersMaps: a ledgers map that does not decode, names another
// log, covers less than its log or disagrees with it is a problem (the
// garbage collector removes a log by its map); a log shorter than its map
// says is damage even where the cut falls between two records.
func TestCheckLedgersMaps(t *testing.T) {
	f := newCheckFixture(t)
	logDir := filepath.Join(f.dir, "current")
	ids, err := entrylog.ListLogs(vfs.Default, logDir)
	require.NoError(t, err)
	id := ids[1]
	mapPath := filepath.Join(logDir, entrylog.MetadataFileName(id))
	good, err := os.ReadFile(mapPath)
	require.NoError(t, err)
	m, err := entrylog.DecodeMetadata(good)
	require.NoError(t, err)
	require.NotEmpty(t, m.Ledgers)
	rewrite := func(b []byte) *Result {
		t.Helper()
		require.NoError(t, os.WriteFile(mapPath, b, 0o644))
		return f.check(t)
	}
	one := func(res *Result, want string) {
		t.Helper()
		bad := findings(res, FindingBadStorageFile)
		require.Len(t, bad, 1, "%v", res.Findings)
		require.Equal(t, mapPath, bad[0].Path)
		require.Contains(t, bad[0].String(), want)
		require.EqualValues(t, 1, res.Problems(), "%v", res.Findings)
	}
	flipped := append([]byte(nil), good...)
	flipped[9] ^= 0x01
	one(rewrite(flipped), "checksum")

	other := *m
	other.LogID = id + 100
	one(rewrite(entrylog.EncodeMetadata(&other)), fmt.Sprintf("names log %#x", id+100))

	missing := *m
	missing.Ledgers = m.Ledgers[1:]
	one(rewrite(entrylog.EncodeMetadata(&missing)), fmt.Sprintf("ledger %d has %d bytes in the log and none in the map", m.Ledgers[0].LedgerID, m.Ledgers[0].Bytes))

	wrong := *m
	wrong.Ledgers = append([]entrylog.LedgerUsage(nil), m.Ledgers...)
	wrong.Ledgers[0].Bytes--
	one(rewrite(entrylog.EncodeMetadata(&wrong)), "bytes in the map,")

	// Covering less than the log's records.
	var first int64
	_, err = entrylog.Scan(vfs.Default, filepath.Join(logDir, entrylog.LogFileName(id)), func(r *entrylog.Record) error {
		if first == 0 {
			first = entrylog.LocationOffset(r.Location) - entrylog.SizeFieldSize + r.Size
		}
		return nil
	})
	require.NoError(t, err)
	short := entrylog.Metadata{LogID: id, Size: entrylog.HeaderSize}
	one(rewrite(entrylog.EncodeMetadata(&short)), "but its records go on to offset")

	// The log cut at a record boundary: a scan sees nothing wrong, the map
	// does.
	require.NoError(t, os.WriteFile(mapPath, good, 0o644))
	logPath := filepath.Join(logDir, entrylog.LogFileName(id))
	require.NoError(t, os.Truncate(logPath, first))
	res := f.check(t)
	damaged := findings(res, FindingDamagedRecord)
	require.Len(t, damaged, 1, "%v", res.Findings)
	require.Equal(t, first, damaged[0].Offset)
	require.Contains(t, damaged[0].String(), fmt.Sprintf("the log ends at offset %d", first))
	require.Contains(t, damaged[0].String(), fmt.Sprintf("says it was written whole up to offset %d", m.Size))
}

// TestCheckCompactionMarker: a marker that is not a log id as the storage
// writes it is a problem; one naming a log is an interrupted compaction
// the next open finishes.
func TestCheckCompactionMarker(t *testing.T) {
	f := newCheckFixture(t)
	path := filepath.Join(f.dir, "current", ondisk.CompactionMarkerName)
	for content, want := range map[string]string{
		"1\n":  "",
		"zz\n": `holds "zz\n", not an entry log id`,
		"01\n": `holds "01\n", not "1\n"`,
	} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		res := f.check(t)
		if want == "" {
			require.Empty(t, res.Findings)
			continue
		}
		bad := findings(res, FindingBadStorageFile)
		require.Len(t, bad, 1, "%q: %v", content, res.Findings)
		require.Equal(t, path, bad[0].Path)
		require.Contains(t, bad[0].String(), want)
	}
}

// TestCheckMigration: a directory a migration left half switched is
// refused, as the storage refuses it, and nothing else is checked; a
// marker without its text is a warning.
func TestCheckMigration(t *testing.T) {
	f := newCheckFixture(t)
	marker := filepath.Join(f.dir, "current", ondisk.MigrateMarker)
	require.NoError(t, os.WriteFile(marker, []byte(ondisk.MigrateReadyContent), 0o644))
	res := f.check(t)
	refused := findings(res, FindingRefused)
	require.Len(t, refused, 1, "%v", res.Findings)
	require.Len(t, res.Findings, 1)
	require.Contains(t, refused[0].String(), "bookie-index migrate")
	require.Zero(t, res.Locations)

	require.NoError(t, os.WriteFile(marker, []byte(ondisk.MigrateReadyContent[:10]), 0o644))
	res = f.check(t)
	require.Zero(t, res.Problems(), "%v", res.Findings)
	stale := findings(res, FindingStaleMarker)
	require.Len(t, stale, 1)
	require.Equal(t, marker, stale[0].Path)
	require.EqualValues(t, 3*checkLedgerEntries, res.Locations)
}
