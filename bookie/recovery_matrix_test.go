package bookie

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// The storage-level corruption matrix: the file kinds the engine's own
// matrix (lsm/recovery_matrix_test.go) does not reach — entry logs, the
// ledgers index (an engine database whose WAL, manifest and tables the
// storage opens) and lastId — each with a flipped byte after acknowledged
// checkpoints and a process kill.

const matrixDir = "/data/ledgers"

// matrixStorage builds a storage on a MemFS by acknowledged checkpoints
// (four of them, over several entry logs, each adding ledgers and ledger
// state) and returns what a process kill leaves (every written byte) and
// the acknowledged entries. With restart, the storage is closed and
// reopened before the last checkpoint, so that the ledgers index holds a
// table (the flush of its replayed WAL) and its manifest the edits that
// added it.
func matrixStorage(t *testing.T, restart bool) (*vfs.MemFS, map[[2]int64][]byte) {
	env := newTestEnv(matrixDir)
	env.tweak = func(o *Options) { o.LogSizeLimit = 16 << 10 }
	s := env.open(t)
	acked := map[[2]int64][]byte{}
	add := func(ledgers []int64, from, to int64, version int) {
		for _, l := range ledgers {
			for e := from; e < to; e++ {
				p := payload(l, e, version)
				require.NoError(t, s.AddEntry(l, e, p))
				acked[[2]int64{l, e}] = p
			}
		}
	}
	add([]int64{1, 2, 3}, 0, 40, 0)
	require.NoError(t, s.SetMasterKey(1, []byte("key-1")))
	require.NoError(t, s.Checkpoint())
	add([]int64{2, 4}, 40, 80, 1)
	_, err := s.SetFenced(2)
	require.NoError(t, err)
	require.NoError(t, s.Checkpoint())
	if restart {
		require.NoError(t, s.Close())
		s = env.open(t)
	}
	add([]int64{5, 6}, 0, 30, 2)
	require.NoError(t, s.SetExplicitLAC(5, []byte("lac-5")))
	require.NoError(t, s.Checkpoint())
	add([]int64{7}, 0, 20, 3)
	require.NoError(t, s.Checkpoint())
	// The kill: the storage is never closed; its files are taken as they
	// are (a process crash loses no written byte).
	killed := env.mem.CrashClone(vfs.CrashOptions{KeepUnsyncedTail: true})
	env.restartOn(s, killed)
	return killed, acked
}

// matrixFiles lists the files under dir of fs, with their sizes.
func matrixFiles(t *testing.T, fs vfs.FS, dir string) map[string]int64 {
	files := map[string]int64{}
	names, err := fs.List(dir)
	require.NoError(t, err)
	for _, name := range names {
		path := filepath.Join(dir, name)
		st, err := fs.Stat(path)
		require.NoError(t, err)
		if st.IsDir() {
			for p, size := range matrixFiles(t, fs, path) {
				files[p] = size
			}
			continue
		}
		files[path] = st.Size()
	}
	return files
}

// stateOf is files without what an engine's open may replace by an
// equivalent before it reads its WALs, and so even when it then fails:
// the manifest and its synced-length file (a .synced file with no WAL of
// its number), and the lock.
func stateOf(files map[string]int64) map[string]int64 {
	state := map[string]int64{}
	for path, size := range files {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "MANIFEST-") || name == "LOCK" {
			continue
		}
		if num, ok := strings.CutSuffix(name, ".synced"); ok {
			if _, wal := files[filepath.Join(filepath.Dir(path), num+".log")]; !wal {
				continue
			}
		}
		state[path] = size
	}
	return state
}

// requireMatrixLedgers checks the ledger state matrixStorage set.
func requireMatrixLedgers(t *testing.T, s *Storage) {
	t.Helper()
	for l := int64(1); l <= 7; l++ {
		info, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		require.True(t, ok && info.Exists, "ledger %d", l)
		require.Equal(t, l == 2, info.Fenced, "ledger %d fenced", l)
		if l == 1 {
			require.Equal(t, "key-1", string(info.MasterKey))
		}
		if l == 5 {
			require.Equal(t, "lac-5", string(info.ExplicitLAC))
		}
	}
}

// requireKept checks that no entry log, lastId or table of before is
// missing from after.
func requireKept(t *testing.T, before, after map[string]int64) {
	t.Helper()
	for path := range before {
		if filepath.Dir(path) == filepath.Join(matrixDir, "current") || strings.HasSuffix(path, ".sst") {
			_, ok := after[path]
			require.True(t, ok, "%s vanished", path)
		}
	}
}

// matrixWrite replaces a file of fs, durably.
func matrixWrite(t *testing.T, fs vfs.FS, path string, data []byte) {
	f, err := fs.Create(path)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// matrixRead returns a whole file of fs.
func matrixRead(t *testing.T, fs vfs.FS, path string) []byte {
	f, err := fs.Open(path)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
		require.NoError(t, err)
	}
	return data
}

// walRecordSpans returns the [start, end) offsets of the records of an
// engine log (WAL or manifest): 32 KiB blocks of chunks, each a 7-byte
// header (checksum, little-endian length, type: 1 full, 2 first, 3
// middle, 4 last) and its payload.
func walRecordSpans(t *testing.T, data []byte) [][2]int64 {
	const blockSize, headerSize = 32 << 10, 7
	var spans [][2]int64
	start := int64(-1)
	for pos := int64(0); pos < int64(len(data)); {
		if rem := blockSize - pos%blockSize; rem < headerSize {
			pos += rem
			continue
		}
		if pos+headerSize > int64(len(data)) {
			break
		}
		length := int64(binary.LittleEndian.Uint16(data[pos+4:]))
		typ := data[pos+6]
		if typ == 0 {
			break // preallocated or zeroed space
		}
		if typ == 1 || typ == 2 {
			start = pos
		}
		pos += headerSize + length
		if typ == 1 || typ == 4 {
			require.GreaterOrEqual(t, start, int64(0))
			spans = append(spans, [2]int64{start, pos})
		}
	}
	return spans
}

// entryLogSpans returns the [start, end) offsets of the records of an
// entry log.
func entryLogSpans(t *testing.T, fs vfs.FS, path string) [][2]int64 {
	var spans [][2]int64
	res, err := entrylog.Scan(fs, path, func(rec *entrylog.Record) error {
		off := entrylog.LocationOffset(rec.Location)
		spans = append(spans, [2]int64{off - entrylog.SizeFieldSize, off - entrylog.SizeFieldSize + entrylog.RecordOverhead + int64(len(rec.Payload))})
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, res.Tail)
	return spans
}

// storageDamage is one flipped byte of the matrix.
type storageDamage struct {
	name string
	// kind is "entry log", "entry-log header" (its checked bytes),
	// "entry-log padding", "ledgers WAL", "ledgers MANIFEST" or "lastId".
	kind   string
	file   string
	offset int64
	// records is the number of records of the damaged entry log.
	records int
}

// storageMatrixCases lists, for the newest entry log, the ledgers index's
// newest WAL and its manifest, a flipped byte at the start, middle and end
// of the last record and of an earlier one; for lastId (one record), its
// first, middle and last byte.
func storageMatrixCases(t *testing.T, fs *vfs.MemFS) []storageDamage {
	var cases []storageDamage
	// The earlier record is the first, but in an entry log one in the
	// middle, which a read-ahead from the record before it reaches.
	add := func(kind, file string, spans [][2]int64) {
		require.NotEmpty(t, spans, "%s has records", file)
		earlier := spans[0]
		if kind == "entry log" {
			earlier = spans[len(spans)/2]
		}
		records := []struct {
			name string
			span [2]int64
		}{{"earlier", earlier}, {"last", spans[len(spans)-1]}}
		if len(spans) == 1 {
			records = records[1:]
		}
		for _, rec := range records {
			s, e := rec.span[0], rec.span[1]
			for _, pos := range []struct {
				name string
				off  int64
			}{{"start", s}, {"middle", (s + e) / 2}, {"end", e - 1}} {
				cases = append(cases, storageDamage{name: fmt.Sprintf("%s/%s record/%s", kind, rec.name, pos.name), kind: kind, file: file, offset: pos.off})
			}
		}
	}
	logDir := filepath.Join(matrixDir, "current")
	ids, err := entrylog.ListLogs(fs, logDir)
	require.NoError(t, err)
	require.Greater(t, len(ids), 1, "the checkpoints filled several entry logs")
	newest := filepath.Join(logDir, entrylog.LogFileName(ids[len(ids)-1]))
	spans := entryLogSpans(t, fs, newest)
	add("entry log", newest, spans)
	// The header: its checked bytes (magic, version, id, checksum) and
	// its zero padding, which no checksum covers and nothing reads.
	for _, pos := range []struct {
		name string
		off  int64
	}{{"start", 0}, {"id", 8}, {"checksum", 19}, {"padding", entrylog.HeaderSize / 2}, {"end", entrylog.HeaderSize - 1}} {
		kind := "entry-log header"
		if pos.off >= 20 {
			kind = "entry-log padding"
		}
		cases = append(cases, storageDamage{name: "entry log/header/" + pos.name, kind: kind, file: newest, offset: pos.off, records: len(spans)})
	}

	ledgers := filepath.Join(logDir, "ledgers")
	var wals []string
	for path := range matrixFiles(t, fs, ledgers) {
		if strings.HasSuffix(path, ".log") {
			wals = append(wals, path)
		}
	}
	require.NotEmpty(t, wals)
	slices.Sort(wals) // zero-padded numbers: the newest last
	wal := wals[len(wals)-1]
	walSpans := walRecordSpans(t, matrixRead(t, fs, wal))
	require.Greater(t, len(walSpans), 1, "the ledgers WAL holds several synced batches")
	add("ledgers WAL", wal, walSpans)

	current := strings.TrimSpace(string(matrixRead(t, fs, filepath.Join(ledgers, "CURRENT"))))
	manifest := filepath.Join(ledgers, current)
	add("ledgers MANIFEST", manifest, walRecordSpans(t, matrixRead(t, fs, manifest)))

	// The ledgers index's tables (after a restart).
	for path := range matrixFiles(t, fs, ledgers) {
		if !strings.HasSuffix(path, ".sst") {
			continue
		}
		size := int64(len(matrixRead(t, fs, path)))
		for _, pos := range []struct {
			name string
			off  int64
		}{{"start", 0}, {"middle", size / 2}, {"end", size - 1}} {
			cases = append(cases, storageDamage{name: "ledgers table/" + pos.name, kind: "ledgers table", file: path, offset: pos.off})
		}
	}

	lastID := filepath.Join(logDir, "lastId")
	size := int64(len(matrixRead(t, fs, lastID)))
	for _, pos := range []struct {
		name string
		off  int64
	}{{"start", 0}, {"middle", size / 2}, {"end", size - 1}} {
		cases = append(cases, storageDamage{name: "lastId/" + pos.name, kind: "lastId", file: lastID, offset: pos.off})
	}
	return cases
}

// TestStorageCorruptionMatrix flips one byte of an entry log (a record or
// its header), of the ledgers index's WAL, manifest and (after a restart)
// table, and of lastId, after acknowledged checkpoints and a process kill.
// Reopening the storage either fails with an error naming the file (and,
// for logs and manifests, the offset), losing no file — and with the byte
// repaired, everything reads back —, or every acknowledged entry and ledger
// reads back byte for byte but the damaged entry-log record's, whose read
// fails naming the log and offset: it is never returned as data. No entry
// log, table or lastId vanishes, and the offline checks (check.Directory,
// the engine's Check) report the damage.
func TestStorageCorruptionMatrix(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			testStorageCorruptionMatrix(t, restart)
		})
	}
}

func testStorageCorruptionMatrix(t *testing.T, restart bool) {
	base, acked := matrixStorage(t, restart)
	cases := storageMatrixCases(t, base)
	if restart {
		require.True(t, slices.ContainsFunc(cases, func(c storageDamage) bool { return c.kind == "ledgers table" }),
			"the restart left the ledgers index a table")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := base.CrashClone(vfs.CrashOptions{})
			original := matrixRead(t, fs, c.file)
			data := slices.Clone(original)
			data[c.offset] ^= 0x20
			matrixWrite(t, fs, c.file, data)
			before := matrixFiles(t, fs, "/")

			// The offline checks first: they write nothing.
			res, checkErr := check.Directory(check.Options{LedgerDir: matrixDir, FS: fs})
			require.Equal(t, before, matrixFiles(t, fs, "/"), "check.Directory changed files")
			requireCheckReports(t, c, res, checkErr)
			if strings.HasPrefix(c.kind, "ledgers") {
				ro, err := lsm.Open(filepath.Join(matrixDir, "current", "ledgers"), &lsm.Options{FS: fs, ReadOnly: true})
				if err == nil {
					err = ro.Check()
					require.NoError(t, ro.Close())
				}
				require.Error(t, err, "the engine's check of the ledgers index")
				require.ErrorContains(t, err, c.file)
				require.Equal(t, before, matrixFiles(t, fs, "/"), "a read-only open changed files")
			}

			env := &testEnv{mem: fs, dirs: []string{matrixDir}}
			s, err := Open(env.options())
			if err != nil {
				t.Logf("open refused: %v", err)
				require.ErrorContains(t, err, c.file)
				if c.kind != "lastId" && c.kind != "ledgers table" {
					require.ErrorContains(t, err, "offset")
				}
				require.True(t, errors.Is(err, entrylog.ErrCorruption) || errors.Is(err, lsm.ErrCorruption), "%v", err)
				if c.kind == "ledgers table" {
					// The engine opened (a table's damage shows when it is
					// read) and flushed its replayed WALs to a new table
					// before the storage read the index: it deleted the
					// WALs, not their records.
					requireKept(t, before, matrixFiles(t, fs, "/"))
				} else {
					require.Equal(t, stateOf(before), stateOf(matrixFiles(t, fs, "/")), "a failed open changed files")
				}
				// The refusal lost nothing: with the damaged byte repaired,
				// the storage opens and every entry reads back.
				matrixWrite(t, fs, c.file, original)
				s, err := Open(env.options())
				require.NoError(t, err, "reopen after the repair")
				for k, want := range acked {
					requireEntry(t, s, k[0], k[1], want)
				}
				requireMatrixLedgers(t, s)
				require.NoError(t, s.Close())
				return
			}
			defer s.Close()
			require.True(t, strings.HasPrefix(c.kind, "entry"), "only an entry log's damage lets the storage open: %v", c.name)
			damaged, damagedErr := 0, error(nil)
			// In order: each miss reads ahead the records after it, so both
			// the read of one record and the read-ahead meet the damage.
			keys := slices.SortedFunc(maps.Keys(acked), func(a, b [2]int64) int {
				return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
			})
			for _, k := range keys {
				want := acked[k]
				got, err := s.GetEntry(k[0], k[1])
				if err != nil {
					// The damaged record: the read names the log and the
					// record's offset, and says it is corruption.
					requireDamagedRead(t, c, err)
					damaged++
					damagedErr = err
					continue
				}
				require.Equal(t, string(want), string(got), "entry %d of ledger %d", k[1], k[0])
			}
			t.Logf("opened; the damaged record's read: %v", damagedErr)
			switch c.kind {
			case "entry-log header":
				require.Contains(t, []int{0, c.records}, damaged, "every entry of the log fails its read, or none")
			case "entry-log padding":
				require.Zero(t, damaged, "the padding holds nothing a read needs")
			default:
				require.Equal(t, 1, damaged, "exactly the damaged record fails its read")
			}
			// The ledgers' last entries, through the index's floor lookup.
			last := map[int64]int64{}
			for _, k := range keys {
				last[k[0]] = max(last[k[0]], k[1])
			}
			for l, e := range last {
				gotID, got, err := s.GetLastEntry(l)
				if err != nil {
					requireDamagedRead(t, c, err)
					if c.kind == "entry log" {
						require.EqualError(t, err, damagedErr.Error(), "ledger %d", l)
					}
					continue
				}
				require.Equal(t, e, gotID)
				require.Equal(t, string(acked[[2]int64{l, e}]), string(got), "last entry of ledger %d", l)
			}
			requireMatrixLedgers(t, s)
			requireKept(t, before, matrixFiles(t, fs, "/"))
		})
	}
}

// requireDamagedRead checks the error of a read that meets damage case
// c: corruption, naming the damaged log and the record's offset (for a
// damaged record, the offset of that record).
func requireDamagedRead(t *testing.T, c storageDamage, err error) {
	t.Helper()
	require.True(t, errors.Is(err, entrylog.ErrCorruption), "%v", err)
	var rerr *entrylog.RecordReadError
	require.True(t, errors.As(err, &rerr), "%v", err)
	path, off := rerr.FileOffset()
	require.Equal(t, c.file, path, "%v", err)
	require.Contains(t, err.Error(), fmt.Sprintf("offset %d", off))
	if c.kind == "entry log" {
		require.LessOrEqual(t, off-entrylog.SizeFieldSize, c.offset, "%v", err)
	}
}

// requireCheckReports checks that check.Directory reports case c: an error
// naming the damaged file, or a problem finding naming it and the
// damaged record's offset.
func requireCheckReports(t *testing.T, c storageDamage, res *check.Result, err error) {
	t.Helper()
	if c.kind == "entry-log padding" {
		// Nothing reads the padding and no checksum covers it: a flip
		// there loses nothing, and the check does not look.
		require.NoError(t, err)
		return
	}
	if err != nil {
		t.Logf("check: %v", err)
		require.ErrorContains(t, err, c.file)
		return
	}
	require.NotZero(t, res.Problems(), "check.Directory found nothing: %s", res.Summary())
	for _, f := range res.Findings {
		// An index's file is named by the finding's path, or by its
		// message when damage kept the index from being opened.
		named := f.Path == c.file && f.Offset <= c.offset || f.Kind == check.FindingBadIndexFile && strings.Contains(f.String(), c.file)
		if f.Kind.Problem() && named {
			t.Logf("check: %s", f.String())
			return
		}
	}
	require.Fail(t, "no finding names the damage", "%s; findings: %v", res.Summary(), res.Findings)
}
