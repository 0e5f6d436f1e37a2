package lsm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"path/filepath"

	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// logBuffer is a slog destination safe for the engine's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func loggedOptions(fs FS, logs *logBuffer) *Options {
	o := smallOptions(fs)
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return o
}

// quietOptions are smallOptions without automatic compactions, so that the
// tables of a killed database are exactly the flushed ones and a reopen
// does not rewrite (and delete) a damaged table behind the test's back.
func quietOptions(fs FS, logs *logBuffer) *Options {
	o := loggedOptions(fs, logs)
	o.Level0FileNumCompactionTrigger = 8
	return o
}

func matrixKey(i int) string   { return fmt.Sprintf("key%05d", i) }
func matrixValue(i int) string { return fmt.Sprintf("value-%05d-%s", i, strings.Repeat("v", 60)) }

// killedDB builds a database on a MemFS by acknowledged synced writes (two
// flushed tables and a WAL of several batches) and returns what a process
// kill leaves: every byte written survives, synced or not. It returns the
// number of keys written, all acknowledged.
func killedDB(t *testing.T) (*vfs.MemFS, int) {
	fs := vfs.NewMem()
	d, err := Open("db", quietOptions(fs, &logBuffer{}))
	require.NoError(t, err)
	n := 0
	write := func(count int) {
		var b Batch
		for range count {
			b.Reset()
			b.Set([]byte(matrixKey(n)), []byte(matrixValue(n)))
			require.NoError(t, d.Apply(&b, Sync))
			n++
		}
	}
	write(150)
	require.NoError(t, d.Flush())
	write(150)
	require.NoError(t, d.Flush())
	write(40)
	// The kill: the DB is never closed, and its files are taken as they
	// are (a process crash loses no written byte).
	killed := fs.CrashClone(vfs.CrashOptions{KeepUnsyncedTail: true})
	require.NoError(t, d.Close())
	return killed, n
}

// readFile returns a whole file of fs.
func readFile(t *testing.T, fs FS, path string) []byte {
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

// writeWholeFile replaces a file of fs, durably.
func writeWholeFile(t *testing.T, fs FS, path string, data []byte) {
	f, err := fs.Create(path)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// recordSpans returns the [start, end) offsets of the records of a log.
func recordSpans(t *testing.T, data []byte) [][2]int64 {
	r := record.NewReader(bytes.NewReader(data))
	var spans [][2]int64
	for {
		start := r.Offset()
		_, err := r.Next()
		if err == io.EOF {
			return spans
		}
		require.NoError(t, err)
		// A record starts at its first chunk, past any block trailer.
		if rem := record.BlockSize - start%record.BlockSize; rem < record.HeaderSize {
			start += rem
		}
		spans = append(spans, [2]int64{start, r.Offset()})
	}
}

// dirState lists the files of the database directory and lost/ with their
// contents' lengths, manifests left out (Recover may replace the manifest
// by a new one holding the same state before it reads the WALs).
func dirState(t *testing.T, fs FS) map[string]int {
	state := map[string]int{}
	for _, dir := range []string{"db", "db/lost"} {
		names, err := fs.List(dir)
		if err != nil {
			continue
		}
		for _, name := range names {
			kind, num, ok := manifest.ParseFileName(name)
			if ok && (kind == manifest.FileKindManifest || kind == manifest.FileKindLock) {
				continue
			}
			if ok && kind == manifest.FileKindSyncedLength && !strings.HasSuffix(dir, "lost") {
				if _, err := fs.Stat(manifest.FilePath("db", manifest.FileKindLog, num)); err != nil {
					continue // a manifest's
				}
			}
			path := filepath.Join(dir, name)
			if st, err := fs.Stat(path); err == nil && !st.IsDir() {
				state[path] = int(st.Size())
			}
		}
	}
	return state
}

// damageCase is one flipped byte of the corruption matrix.
type damageCase struct {
	name   string
	file   string
	offset int64
}

// matrixCases lists, for the newest WAL, the manifest, CURRENT and both
// tables of a killed database, a flipped byte at the start, middle and end
// of the last record and of an earlier one (for a table, the first block
// and the footer; CURRENT holds one record).
func matrixCases(t *testing.T, fs *vfs.MemFS) []damageCase {
	var cases []damageCase
	add := func(kind, file string, spans [][2]int64) {
		for _, rec := range []struct {
			name string
			span [2]int64
		}{{"earlier", spans[0]}, {"last", spans[len(spans)-1]}} {
			s, e := rec.span[0], rec.span[1]
			for _, pos := range []struct {
				name string
				off  int64
			}{{"start", s}, {"middle", (s + e) / 2}, {"end", e - 1}} {
				cases = append(cases, damageCase{name: fmt.Sprintf("%s/%s record/%s", kind, rec.name, pos.name), file: file, offset: pos.off})
			}
		}
	}
	wals := filesOf(t, fs, ".log")
	require.NotEmpty(t, wals)
	newest := wals[len(wals)-1]
	walSpans := recordSpans(t, readFile(t, fs, newest))
	require.Greater(t, len(walSpans), 10, "the WAL holds several synced batches")
	add("WAL", newest, walSpans)

	current := string(readFile(t, fs, "db/CURRENT"))
	manifestPath := "db/" + strings.TrimSuffix(current, "\n")
	manifestSpans := recordSpans(t, readFile(t, fs, manifestPath))
	require.Greater(t, len(manifestSpans), 1, "the manifest holds edits after its snapshot")
	add("MANIFEST", manifestPath, manifestSpans)

	for _, pos := range []struct {
		name string
		off  int64
	}{{"start", 0}, {"middle", int64(len(current) / 2)}, {"end", int64(len(current) - 1)}} {
		cases = append(cases, damageCase{name: "CURRENT/" + pos.name, file: "db/CURRENT", offset: pos.off})
	}

	tables := filesOf(t, fs, ".sst")
	require.Len(t, tables, 2)
	for i, table := range tables {
		size := int64(len(readFile(t, fs, table)))
		which := []string{"earlier", "last"}[i]
		for _, pos := range []struct {
			name string
			off  int64
		}{{"start", 0}, {"middle", size / 2}, {"end", size - 1}} {
			cases = append(cases, damageCase{name: fmt.Sprintf("table/%s table/%s", which, pos.name), file: table, offset: pos.off})
		}
	}
	return cases
}

// TestCorruptionMatrix flips one byte of each persisted file kind after
// acknowledged synced writes and a process kill. Open must either fail
// with an error naming the file (and, for logs, the offset), changing no
// file, or serve every acknowledged write (a damaged table may only fail
// its reads with corruption naming it); no table or WAL may vanish, and
// Check, or the read-only open behind `db check`, must report the damage.
func TestCorruptionMatrix(t *testing.T) {
	base, n := killedDB(t)
	for _, c := range matrixCases(t, base) {
		t.Run(c.name, func(t *testing.T) {
			fs := base.CrashClone(vfs.CrashOptions{})
			data := readFile(t, fs, c.file)
			data[c.offset] ^= 0x20
			writeWholeFile(t, fs, c.file, data)
			before := dirState(t, fs)

			// What `db check` sees first: the read-only open.
			var roLogs logBuffer
			ro, roErr := Open("db", &Options{FS: fs, ReadOnly: true, Logger: loggedOptions(fs, &roLogs).Logger})
			var checkErr error
			if roErr == nil {
				checkErr = ro.Check()
				require.NoError(t, ro.Close())
			}
			require.Equal(t, before, dirState(t, fs), "a read-only open changed files")

			var logs logBuffer
			d, err := Open("db", quietOptions(fs, &logs))
			if err != nil {
				require.True(t, errors.Is(err, ErrCorruption), "%v", err)
				require.ErrorContains(t, err, c.file)
				if !strings.HasSuffix(c.file, "CURRENT") {
					require.ErrorContains(t, err, "offset")
				}
				require.Equal(t, before, dirState(t, fs), "a failed open changed files")
				require.Error(t, roErr, "db check must fail too")
				require.ErrorContains(t, roErr, c.file)
				return
			}
			defer d.Close()
			require.True(t, strings.HasSuffix(c.file, ".sst"), "only a table's damage lets Open succeed: %s", c.name)
			badReads := 0
			for i := range n {
				v, err := d.Get([]byte(matrixKey(i)))
				if err != nil {
					require.True(t, errors.Is(err, ErrCorruption), "key %d: %v", i, err)
					require.ErrorContains(t, err, c.file)
					badReads++
					continue
				}
				require.Equal(t, matrixValue(i), string(v), "key %d", i)
			}
			after := dirState(t, fs)
			for path := range before {
				if strings.HasSuffix(path, ".sst") {
					_, inDir := after[path]
					_, inLost := after[filepath.Join("db/lost", filepath.Base(path))]
					require.True(t, inDir || inLost, "table %s vanished", path)
				}
			}
			require.Error(t, checkErr, "db check must report the damaged table (bad reads: %d)", badReads)
			require.ErrorContains(t, checkErr, c.file)
			require.Error(t, d.Check())
		})
	}
}

// TestSyncedWALTailIsCorruption repeats the probe of the issue: a byte
// flipped 12 bytes before the end of the newest WAL after a synced write
// and a kill is damage within synced bytes, and Open says where.
func TestSyncedWALTailIsCorruption(t *testing.T) {
	fs, _ := killedDB(t)
	wals := filesOf(t, fs, ".log")
	path := wals[len(wals)-1]
	data := readFile(t, fs, path)
	spans := recordSpans(t, data)
	last := spans[len(spans)-1]
	data[last[1]-12] ^= 0x01 // the probe's "12 bytes before the end"
	writeWholeFile(t, fs, path, data)
	_, err := Open("db", smallOptions(fs))
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
	require.ErrorContains(t, err, fmt.Sprintf("%s does not replay to its end: damage at offset %d (within the %d bytes a completed sync covered", path, last[0], len(data)))
	require.Equal(t, data, readFile(t, fs, path), "the WAL is untouched")
}

// TestPointInTimeWALRecovery recovers the writes before damage within
// synced bytes, keeps the WAL in lost/, and says so.
func TestPointInTimeWALRecovery(t *testing.T) {
	fs, n := killedDB(t)
	wals := filesOf(t, fs, ".log")
	path := wals[len(wals)-1]
	data := readFile(t, fs, path)
	spans := recordSpans(t, data)
	damaged := len(spans) / 2
	data[spans[damaged][0]+3] ^= 0x01
	writeWholeFile(t, fs, path, data)

	var logs logBuffer
	opts := loggedOptions(fs, &logs)
	opts.WALRecoveryMode = WALRecoveryPointInTime
	d, err := Open("db", opts)
	require.NoError(t, err)
	defer d.Close()
	require.Contains(t, logs.String(), "point-in-time WAL recovery")
	require.Contains(t, logs.String(), fmt.Sprintf("offset=%d", spans[damaged][0]))
	// The WAL holds the last 40 keys, one per record.
	firstInWAL := n - len(spans)
	for i := range n {
		v, err := d.Get([]byte(matrixKey(i)))
		if i < firstInWAL+damaged {
			require.NoError(t, err, "key %d precedes the damage", i)
			require.Equal(t, matrixValue(i), string(v))
		} else {
			require.True(t, errors.Is(err, ErrNotFound), "key %d follows the damage: %v", i, err)
		}
	}
	require.Equal(t, data, readFile(t, fs, filepath.Join("db/lost", filepath.Base(path))), "the damaged WAL is kept")
	err = d.Check()
	require.Error(t, err)
	require.ErrorContains(t, err, "lost/")
}

// TestTornWALTailIsDropped loses power after synced and unsynced writes:
// the bytes no sync covered are torn (a random prefix survives). Open
// recovers every synced write, and a WARN about a torn tail is true: the
// damage lies beyond what a completed sync covered.
func TestTornWALTailIsDropped(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	torn, unknown := 0, 0
	for round := range 20 {
		fs := vfs.NewMem()
		d, err := Open("db", smallOptions(fs))
		require.NoError(t, err)
		var b Batch
		synced := 20 + rng.Intn(20)
		for i := range synced + 30 {
			b.Reset()
			b.Set([]byte(matrixKey(i)), []byte(matrixValue(i)))
			wo := Sync
			if i >= synced {
				wo = NoSync
			}
			require.NoError(t, d.Apply(&b, wo))
		}
		crashed := fs.CrashClone(vfs.CrashOptions{KeepUnsyncedTail: true, Rand: rng})
		syncedOnly := fs.CrashClone(vfs.CrashOptions{})
		require.NoError(t, d.Close())
		wals := filesOf(t, crashed, ".log")
		walSynced := len(readFile(t, syncedOnly, wals[len(wals)-1]))

		var logs logBuffer
		d, err = Open("db", loggedOptions(crashed, &logs))
		require.NoError(t, err, "round %d", round)
		for i := range synced {
			v, err := d.Get([]byte(matrixKey(i)))
			require.NoError(t, err, "round %d: synced key %d", round, i)
			require.Equal(t, matrixValue(i), string(v))
		}
		require.NoError(t, d.Close())
		out := logs.String()
		if strings.Contains(out, "dropped the torn tail of a WAL") {
			var offset, syncedLen int
			line := out[strings.Index(out, "dropped the torn tail of a WAL"):]
			_, err := fmt.Sscanf(line[strings.Index(line, "offset="):], "offset=%d", &offset)
			require.NoError(t, err)
			_, err = fmt.Sscanf(line[strings.Index(line, "syncedLength="):], "syncedLength=%d", &syncedLen)
			require.NoError(t, err)
			require.GreaterOrEqual(t, offset, walSynced, "round %d: the torn tail starts before the synced bytes end:\n%s", round, out)
			require.LessOrEqual(t, syncedLen, walSynced, "round %d: the mark claims unsynced bytes", round)
			torn++
		}
		if strings.Contains(out, "synced length is unknown") {
			// The unsynced marks were lost too: the WAL is kept.
			names, err := crashed.List("db/lost")
			require.NoError(t, err)
			require.Contains(t, names, filepath.Base(wals[len(wals)-1]))
			unknown++
		}
	}
	t.Logf("torn tails with a known synced length: %d, with an unknown one: %d", torn, unknown)
	require.Greater(t, torn+unknown, 0, "no round tore a record")
}

// TestOrphanTables: a table no version references is removed at open when
// the manifest proves itself complete (a flush that never finished), and
// kept in lost/ when it cannot (its synced-length file lost).
func TestOrphanTables(t *testing.T) {
	t.Run("complete manifest", func(t *testing.T) {
		fs, _ := killedDB(t)
		writeWholeFile(t, fs, "db/999999.sst", []byte("an unfinished flush"))
		ro, err := Open("db", &Options{FS: fs, ReadOnly: true})
		require.NoError(t, err)
		err = ro.Check()
		require.ErrorContains(t, err, "orphan table db/999999.sst")
		require.NoError(t, ro.Close())
		var logs logBuffer
		d, err := Open("db", loggedOptions(fs, &logs))
		require.NoError(t, err)
		require.NoError(t, d.Close())
		_, err = fs.Stat("db/999999.sst")
		require.Error(t, err, "removed")
		require.Contains(t, logs.String(), "removing a table no version references")
	})
	t.Run("unproven manifest", func(t *testing.T) {
		fs, n := killedDB(t)
		writeWholeFile(t, fs, "db/999999.sst", []byte("who knows"))
		names, err := fs.List("db")
		require.NoError(t, err)
		for _, name := range names {
			if kind, num, ok := manifest.ParseFileName(name); ok && kind == manifest.FileKindManifest {
				require.NoError(t, fs.Remove(manifest.FilePath("db", manifest.FileKindSyncedLength, num)))
			}
		}
		var logs logBuffer
		d, err := Open("db", loggedOptions(fs, &logs))
		require.NoError(t, err)
		require.Contains(t, logs.String(), "moved a table no version references to lost/")
		require.Contains(t, logs.String(), "999999.sst")
		require.Equal(t, []byte("who knows"), readFile(t, fs, "db/lost/999999.sst"))
		for i := range n {
			_, err := d.Get([]byte(matrixKey(i)))
			require.NoError(t, err)
		}
		err = d.Check()
		require.ErrorContains(t, err, "999999.sst")
		require.NoError(t, d.Close())
	})
}

// TestManifestTailDamageIsReported: a manifest whose last record fails its
// checksum beyond its synced length (an edit that never took effect) opens,
// and `db check` (a read-only open and Check) reports it.
func TestManifestTailDamageIsReported(t *testing.T) {
	fs, _ := killedDB(t)
	current := strings.TrimSuffix(string(readFile(t, fs, "db/CURRENT")), "\n")
	path := "db/" + current
	data := readFile(t, fs, path)
	// A torn append: garbage after the last synced edit.
	writeWholeFile(t, fs, path, append(data, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x01, 0x02))
	ro, err := Open("db", &Options{FS: fs, ReadOnly: true})
	require.NoError(t, err)
	err = ro.Check()
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, fmt.Sprintf("offset %d", len(data)))
	require.NoError(t, ro.Close())
}

// TestWALWithoutSyncedLength opens a WAL whose synced-length file is gone
// (a database written before marks existed): a damaged last record is
// dropped as a torn tail, but the WARN says the synced length is unknown
// and the WAL is kept in lost/.
func TestWALWithoutSyncedLength(t *testing.T) {
	fs, n := killedDB(t)
	wals := filesOf(t, fs, ".log")
	path := wals[len(wals)-1]
	num := strings.TrimSuffix(filepath.Base(path), ".log")
	require.NoError(t, fs.Remove("db/"+num+".synced"))
	data := readFile(t, fs, path)
	data[len(data)-12] ^= 0x01
	writeWholeFile(t, fs, path, data)

	var logs logBuffer
	d, err := Open("db", loggedOptions(fs, &logs))
	require.NoError(t, err)
	defer d.Close()
	require.Contains(t, logs.String(), "whose synced length is unknown")
	require.NotContains(t, logs.String(), "dropped the torn tail of a WAL")
	require.Equal(t, data, readFile(t, fs, "db/lost/"+num+".log"))
	for i := range n - 1 {
		v, err := d.Get([]byte(matrixKey(i)))
		require.NoError(t, err, "key %d", i)
		require.Equal(t, matrixValue(i), string(v))
	}
}

// TestSyncedLengthFailureIsSticky fails the write of a WAL's synced-length
// mark: the synced write that needed it is not acknowledged, later writes
// fail, and what was acknowledged survives a reopen.
func TestSyncedLengthFailureIsSticky(t *testing.T) {
	mem := vfs.NewMem()
	toggle := vfs.NewToggle(vfs.OnOp(vfs.OpWrite, ".synced"))
	fs := vfs.NewErrorFS(mem, toggle)
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	require.NoError(t, d.Apply(&b, Sync))
	toggle.On()
	b.Reset()
	b.Set([]byte("b"), []byte("2"))
	err = d.Apply(&b, Sync)
	require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)
	toggle.Off()
	b.Reset()
	b.Set([]byte("c"), []byte("3"))
	require.Error(t, d.Apply(&b, Sync), "writes stay failed")
	_ = d.Close()
	d, err = Open("db", smallOptions(mem))
	require.NoError(t, err)
	v, err := d.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	require.NoError(t, d.Close())
}

// TestCrashedFlushLeavesNothingInLost fails the manifest write of a flush
// and of a compaction (their tables are written), then crashes: the open
// proves the leftover tables unused and removes them, puts nothing in
// lost/, and loses no acknowledged write. This is the ordinary crash the
// orphan rule must not punish.
func TestCrashedFlushLeavesNothingInLost(t *testing.T) {
	for _, job := range []string{"flush", "compaction"} {
		for _, power := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/powerLoss=%v", job, power), func(t *testing.T) {
				mem := vfs.NewMem()
				toggle := vfs.NewToggle(vfs.OnOp(vfs.OpWrite, "MANIFEST"))
				d, err := Open("db", smallOptions(vfs.NewErrorFS(mem, toggle)))
				require.NoError(t, err)
				var b Batch
				n := 0
				write := func(count int) {
					for range count {
						b.Reset()
						b.Set([]byte(matrixKey(n)), []byte(matrixValue(n)))
						require.NoError(t, d.Apply(&b, Sync))
						n++
					}
				}
				write(100)
				if job == "compaction" {
					require.NoError(t, d.Flush())
					write(100)
					require.NoError(t, d.Flush())
					// Two L0 tables start a background compaction; let it
					// finish, or its table and its failed manifest write are
					// counted for the job under test.
					require.NoError(t, d.WaitForCompactions(context.Background()))
				}
				write(50)
				tablesBefore := len(filesOf(t, mem, ".sst"))
				toggle.On()
				if job == "flush" {
					require.Error(t, d.Flush())
				} else {
					require.Error(t, d.Compact(context.Background(), nil, nil))
				}
				require.Greater(t, len(filesOf(t, mem, ".sst")), tablesBefore, "the job wrote its tables")
				crashed := mem.CrashClone(vfs.CrashOptions{KeepUnsyncedTail: !power})
				toggle.Off()
				_ = d.Close()

				var logs logBuffer
				d, err = Open("db", loggedOptions(crashed, &logs))
				require.NoError(t, err)
				defer d.Close()
				for i := range n {
					v, err := d.Get([]byte(matrixKey(i)))
					require.NoError(t, err, "key %d", i)
					require.Equal(t, matrixValue(i), string(v))
				}
				_, err = crashed.Stat("db/lost")
				require.Error(t, err, "nothing goes to lost/:\n%s", logs.String())
				require.Contains(t, logs.String(), "removing a table no version references")
				require.NoError(t, d.Check())
			})
		}
	}
}
