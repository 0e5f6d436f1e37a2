package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	errInjectedWrite = errors.New("injected write failure")
	errInjectedSync  = errors.New("injected sync failure")
)

// fakeFile is an in-memory vfs.File that counts calls, can slow Sync down
// and fails chosen calls. Sync makes durable only the bytes present when it
// starts, so a Writer that counts a concurrent Write as synced is caught.
type fakeFile struct {
	t         *testing.T
	syncDelay time.Duration

	mu          sync.Mutex
	data        []byte
	syncedLen   int
	writes      int
	syncs       int
	failWriteAt int // fail the n-th Write (1-based) after writing half of it; 0 = never
	failSyncAt  int // fail the n-th Sync; 0 = never
	closed      bool

	inWrite, inSync atomic.Int32
}

var _ vfs.File = (*fakeFile)(nil)

func (f *fakeFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *fakeFile) Write(p []byte) (int, error) {
	if f.inWrite.Add(1) != 1 {
		f.t.Error("concurrent File.Write calls")
	}
	defer f.inWrite.Add(-1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		f.t.Error("Write after Close")
	}
	f.writes++
	if f.writes == f.failWriteAt {
		f.data = append(f.data, p[:len(p)/2]...)
		return len(p) / 2, errInjectedWrite
	}
	f.data = append(f.data, p...)
	return len(p), nil
}

func (f *fakeFile) Sync() error {
	if f.inSync.Add(1) != 1 {
		f.t.Error("concurrent File.Sync calls")
	}
	defer f.inSync.Add(-1)
	f.mu.Lock()
	if f.closed {
		f.t.Error("Sync after Close")
	}
	f.syncs++
	fail := f.syncs == f.failSyncAt
	covered := len(f.data)
	f.mu.Unlock()
	time.Sleep(f.syncDelay)
	if fail {
		return errInjectedSync
	}
	f.mu.Lock()
	f.syncedLen = max(f.syncedLen, covered)
	f.mu.Unlock()
	return nil
}

// WriteAt and Datasync complete vfs.File; the WAL writer appends and
// syncs with Sync only.
func (f *fakeFile) WriteAt([]byte, int64) (int, error) {
	f.t.Error("the WAL writer called WriteAt")
	return 0, errInjectedWrite
}

func (f *fakeFile) Datasync() error { return f.Sync() }

func (f *fakeFile) Size() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.data)), nil
}

func (f *fakeFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("fake: double close")
	}
	f.closed = true
	return nil
}

func (f *fakeFile) lens() (written, synced int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.data), f.syncedLen
}

func (f *fakeFile) bytes() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]byte(nil), f.data...)
}

// readLog reads every record of data, requiring a clean or torn end (never
// corruption). It returns copies of the records and the end offset of each.
func readLog(t *testing.T, data []byte) (records [][]byte, ends []int64, torn bool) {
	t.Helper()
	r := record.NewReader(bytes.NewReader(data))
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		records = append(records, append([]byte(nil), rec...))
	}
	// Recompute where each record ends by encoding them again: the file is
	// exactly this encoding.
	enc := record.NewWriter(io.Discard)
	for _, rec := range records {
		_, err := enc.WriteRecord(rec)
		require.NoError(t, err)
		ends = append(ends, enc.Size())
	}
	return records, ends, r.TornTail()
}

// makeRecord encodes (writer, seq) plus padding whose length varies, so that
// records cross block boundaries.
func makeRecord(writer, seq, padding int) []byte {
	b := make([]byte, 16+padding)
	binary.LittleEndian.PutUint64(b[0:8], uint64(writer))
	binary.LittleEndian.PutUint64(b[8:16], uint64(seq))
	for i := 16; i < len(b); i++ {
		b[i] = byte(writer + seq + i)
	}
	return b
}

func parseRecord(t *testing.T, b []byte) (writer, seq int) {
	require.GreaterOrEqual(t, len(b), 16)
	writer = int(binary.LittleEndian.Uint64(b[0:8]))
	seq = int(binary.LittleEndian.Uint64(b[8:16]))
	require.True(t, bytes.Equal(makeRecord(writer, seq, len(b)-16), b), "record %d/%d damaged", writer, seq)
	return writer, seq
}

func TestAppendAndReadBack(t *testing.T) {
	f := &fakeFile{t: t}
	w := NewWriter(f, Options{})
	var want [][]byte
	for i, n := range []int{0, 1, 100, record.BlockSize, 3*record.BlockSize + 17, 5} {
		rec := makeRecord(0, i, n)
		require.NoError(t, w.Append(rec, i%2 == 0))
		want = append(want, rec)
		written, synced := f.lens()
		require.Equal(t, w.Size(), int64(written), "Append returns after the Write")
		if i%2 == 0 {
			require.Equal(t, written, synced, "a synced Append returns after the Sync")
		}
	}
	require.NoError(t, w.Close())
	written, synced := f.lens()
	require.Equal(t, written, synced, "Close syncs")
	require.True(t, f.closed)

	got, _, torn := readLog(t, f.bytes())
	require.False(t, torn)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "record %d", i)
	}
	m := w.Metrics()
	require.Equal(t, int64(len(want)), m.Records)
	require.Equal(t, int64(written), m.BytesWritten)
	require.Equal(t, int64(4), m.Syncs, "three synced appends and Close")
	require.Equal(t, int64(len(want)), m.Writes)
}

// ack is one successful Append as its caller saw it.
type ack struct {
	writer, seq int
	synced      bool
	// writtenLen and syncedLen are the fake file's lengths when Append
	// returned.
	writtenLen, syncedLen int
}

// runConcurrent starts writers goroutines each appending perWriter records,
// a random half of them synced, and returns every successful ack and the
// first error each writer saw (after which it stopped).
func runConcurrent(t *testing.T, w *Writer, f *fakeFile, writers, perWriter int) ([]ack, []error) {
	var (
		mu   sync.Mutex
		acks []ack
		errs = make([]error, writers)
		wg   sync.WaitGroup
	)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for seq := 0; seq < perWriter; seq++ {
				padding := rng.Intn(300)
				if rng.Intn(50) == 0 {
					padding = rng.Intn(3 * record.BlockSize)
				}
				synced := rng.Intn(2) == 0
				if err := w.Append(makeRecord(g, seq, padding), synced); err != nil {
					errs[g] = err
					return
				}
				written, syncedLen := f.lens()
				mu.Lock()
				acks = append(acks, ack{g, seq, synced, written, syncedLen})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return acks, errs
}

// checkLog verifies the model: each writer's records appear in its order,
// every acked record is in the file, and was in the written (or synced)
// prefix of the file when its Append returned.
func checkLog(t *testing.T, f *fakeFile, acks []ack) {
	records, ends, _ := readLog(t, f.bytes())
	type key struct{ writer, seq int }
	end := map[key]int64{}
	next := map[int]int{}
	for i, rec := range records {
		g, seq := parseRecord(t, rec)
		require.Equal(t, next[g], seq, "writer %d: records out of order", g)
		next[g]++
		end[key{g, seq}] = ends[i]
	}
	for _, a := range acks {
		e, ok := end[key{a.writer, a.seq}]
		require.True(t, ok, "acked record %d/%d missing", a.writer, a.seq)
		require.LessOrEqual(t, e, int64(a.writtenLen), "record %d/%d acked before its Write", a.writer, a.seq)
		if a.synced {
			require.LessOrEqual(t, e, int64(a.syncedLen), "record %d/%d acked before its Sync", a.writer, a.seq)
		}
	}
}

func TestConcurrentAppends(t *testing.T) {
	f := &fakeFile{t: t, syncDelay: 100 * time.Microsecond}
	w := NewWriter(f, Options{})
	acks, errs := runConcurrent(t, w, f, 16, 100)
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	require.Len(t, acks, 16*100)
	checkLog(t, f, acks)
	written, synced := f.lens()
	require.Equal(t, written, synced)
	m := w.Metrics()
	require.Equal(t, int64(16*100), m.Records)
	require.Equal(t, int64(written), m.BytesWritten)
	t.Logf("records %d writes %d syncs %d", m.Records, m.Writes, m.Syncs)
}

// TestGroupCommit shows that concurrent synced appends share Syncs.
func TestGroupCommit(t *testing.T) {
	const writers, perWriter = 32, 20
	f := &fakeFile{t: t, syncDelay: time.Millisecond}
	w := NewWriter(f, Options{})
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; seq < perWriter; seq++ {
				require.NoError(t, w.Append(makeRecord(g, seq, 50), true))
			}
		}()
	}
	wg.Wait()
	m := w.Metrics()
	require.NoError(t, w.Close())
	t.Logf("%d synced appends: %d syncs, %d writes (%.1f records/sync)",
		m.Records, m.Syncs, m.Writes, float64(m.Records)/float64(m.Syncs))
	require.Equal(t, int64(writers*perWriter), m.Records)
	require.Less(t, m.Syncs, m.Records/4, "group commit should batch syncs")
	require.Greater(t, m.SyncWaitNanos, m.Syncs*int64(time.Millisecond)/2)
}

// TestSyncFailureSequential checks the sticky failure step by step.
func TestSyncFailureSequential(t *testing.T) {
	f := &fakeFile{t: t, failSyncAt: 2}
	w := NewWriter(f, Options{})
	require.NoError(t, w.Append([]byte("a"), true))
	require.NoError(t, w.Append([]byte("b"), false))
	err := w.Append([]byte("c"), true)
	require.ErrorIs(t, err, errInjectedSync)
	require.Contains(t, err.Error(), "wal: syncing records 2..3")
	// Sticky: later calls, synced or not, fail with the same cause and
	// write nothing.
	written, synced := f.lens()
	for _, sync := range []bool{false, true} {
		err2 := w.Append([]byte("d"), sync)
		require.ErrorIs(t, err2, errInjectedSync)
		require.Equal(t, err.Error(), err2.Error())
	}
	w2, s2 := f.lens()
	require.Equal(t, written, w2)
	require.Equal(t, synced, s2)
	require.ErrorIs(t, w.Close(), errInjectedSync)
	require.True(t, f.closed, "Close closes the file even when broken")
	require.ErrorIs(t, w.Append(nil, false), base.ErrClosed)
	require.ErrorIs(t, w.Close(), base.ErrClosed)
}

func TestWriteFailureSequential(t *testing.T) {
	f := &fakeFile{t: t, failWriteAt: 2}
	w := NewWriter(f, Options{})
	require.NoError(t, w.Append([]byte("a"), false))
	err := w.Append(bytes.Repeat([]byte("b"), 100), false)
	require.ErrorIs(t, err, errInjectedWrite)
	require.ErrorIs(t, w.Append([]byte("c"), true), errInjectedWrite)
	require.Equal(t, 0, f.syncs, "a broken writer never syncs")
	require.ErrorIs(t, w.Close(), errInjectedWrite)
	// The file holds "a" and a torn half of "b".
	records, _, torn := readLog(t, f.bytes())
	require.Equal(t, [][]byte{[]byte("a")}, records)
	require.True(t, torn)
}

// TestConcurrentFailure injects a Write or a Sync failure under load: every
// caller gets either success (and then its record is where it should be) or
// an error wrapping the injected one, and nothing succeeds after the first
// failure was reported.
func TestConcurrentFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		file *fakeFile
		want error
	}{
		{"write", &fakeFile{failWriteAt: 25}, errInjectedWrite},
		{"sync", &fakeFile{failSyncAt: 10, syncDelay: 50 * time.Microsecond}, errInjectedSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.file
			f.t = t
			w := NewWriter(f, Options{})
			acks, errs := runConcurrent(t, w, f, 8, 200)
			for g, err := range errs {
				require.ErrorIs(t, err, tc.want, "writer %d", g)
			}
			require.ErrorIs(t, w.Append([]byte("late"), false), tc.want)
			require.ErrorIs(t, w.Close(), tc.want)
			// Everything acknowledged survives with its guarantees; the
			// failed write left a torn tail, not corruption.
			checkLog(t, f, acks)
			// After a failure, no record is acked durable beyond the synced
			// length.
			_, synced := f.lens()
			for _, a := range acks {
				if a.synced {
					require.LessOrEqual(t, a.syncedLen, synced)
				}
			}
		})
	}
}

func TestCloseWithConcurrentAppends(t *testing.T) {
	f := &fakeFile{t: t, syncDelay: 50 * time.Microsecond}
	w := NewWriter(f, Options{})
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked int
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				err := w.Append(makeRecord(g, seq, 10), seq%3 == 0)
				if err != nil {
					require.ErrorIs(t, err, base.ErrClosed)
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, w.Close())
	wg.Wait()
	written, synced := f.lens()
	require.Equal(t, written, synced, "Close synced everything")
	records, _, torn := readLog(t, f.bytes())
	require.False(t, torn)
	require.GreaterOrEqual(t, len(records), acked)
	require.Equal(t, int64(len(records)), w.Metrics().Records)
}

// TestStartOffset continues a log that already has bytes in the file.
func TestStartOffset(t *testing.T) {
	var prefix bytes.Buffer
	rw := record.NewWriter(&prefix)
	_, err := rw.WriteRecord(bytes.Repeat([]byte("p"), record.BlockSize-record.HeaderSize-3))
	require.NoError(t, err)
	require.NoError(t, rw.Flush())

	f := &fakeFile{t: t, data: append([]byte(nil), prefix.Bytes()...)}
	w := NewWriter(f, Options{StartOffset: int64(prefix.Len())})
	require.NoError(t, w.Append([]byte("next"), true))
	require.NoError(t, w.Close())
	records, _, torn := readLog(t, f.bytes())
	require.False(t, torn)
	require.Len(t, records, 2)
	require.Equal(t, []byte("next"), records[1])
}

// TestOSFile runs concurrent appends against a real file and reads it back.
func TestOSFile(t *testing.T) {
	fs := vfs.Default
	name := filepath.Join(t.TempDir(), "000001.log")
	file, err := fs.Create(name)
	require.NoError(t, err)
	w := NewWriter(file, Options{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; seq < 25; seq++ {
				require.NoError(t, w.Append(makeRecord(g, seq, seq*97), seq%5 == 0))
			}
		}()
	}
	wg.Wait()
	require.NoError(t, w.Close())

	file, err = fs.Open(name)
	require.NoError(t, err)
	defer file.Close()
	size, err := file.Size()
	require.NoError(t, err)
	require.Equal(t, w.Size(), size)
	data := make([]byte, size)
	_, err = file.ReadAt(data, 0)
	require.NoError(t, err)
	records, _, torn := readLog(t, data)
	require.False(t, torn)
	require.Len(t, records, 8*25)
	next := map[int]int{}
	for _, rec := range records {
		g, seq := parseRecord(t, rec)
		require.Equal(t, next[g], seq)
		next[g]++
	}
}

// TestCrashKeepsSyncedRecords takes a power-loss snapshot of an in-memory FS
// while appends run: every record acknowledged as synced before the snapshot
// is in the snapshot's log, which ends cleanly or at a torn tail.
func TestCrashKeepsSyncedRecords(t *testing.T) {
	mem := vfs.NewMem()
	file, err := mem.Create("wal.log")
	require.NoError(t, err)
	// Make the file's name durable, as the DB does after creating a WAL.
	dir, err := mem.OpenDir(".")
	require.NoError(t, err)
	require.NoError(t, dir.Sync())
	require.NoError(t, dir.Close())
	w := NewWriter(file, Options{})

	type key struct{ writer, seq int }
	var (
		mu     sync.Mutex
		synced = map[key]bool{}
		stop   atomic.Bool
		wg     sync.WaitGroup
	)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; seq < 400 && !stop.Load(); seq++ {
				sync := seq%2 == 0
				require.NoError(t, w.Append(makeRecord(g, seq, (seq*131)%700), sync))
				if sync {
					mu.Lock()
					synced[key{g, seq}] = true
					mu.Unlock()
				}
			}
		}()
	}
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 5; round++ {
		time.Sleep(time.Millisecond)
		mu.Lock()
		mustHave := make(map[key]bool, len(synced))
		for k := range synced {
			mustHave[k] = true
		}
		mu.Unlock()
		crashed := mem.CrashClone(vfs.CrashOptions{Rand: rng, KeepUnsyncedTail: true})

		f, err := crashed.Open("wal.log")
		require.NoError(t, err)
		size, err := f.Size()
		require.NoError(t, err)
		data := make([]byte, size)
		_, err = f.ReadAt(data, 0)
		require.NoError(t, err)
		records, _, _ := readLog(t, data)
		for _, rec := range records {
			g, seq := parseRecord(t, rec)
			delete(mustHave, key{g, seq})
		}
		require.Empty(t, mustHave, "round %d: synced records lost in the crash", round)
	}
	stop.Store(true)
	wg.Wait()
	require.NoError(t, w.Close())
}

// BenchmarkAppend measures appends of 100-byte records to a real file in
// b.TempDir(), from one goroutine or from 16 per GOMAXPROCS, reporting Syncs
// per append and records per Write.
func BenchmarkAppend(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, perProc := range []int{0, 16} {
			goroutines := max(1, perProc*runtime.GOMAXPROCS(0))
			b.Run(fmt.Sprintf("sync=%t/goroutines=%d", sync, goroutines), func(b *testing.B) {
				file, err := vfs.Default.Create(filepath.Join(b.TempDir(), "bench.log"))
				require.NoError(b, err)
				w := NewWriter(file, Options{})
				rec := make([]byte, 100)
				b.SetBytes(int64(len(rec)))
				if perProc == 0 {
					for b.Loop() {
						if err := w.Append(rec, sync); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(perProc)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := w.Append(rec, sync); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				m := w.Metrics()
				b.ReportMetric(float64(m.Syncs)/float64(max(m.Records, 1)), "syncs/op")
				b.ReportMetric(float64(m.Records)/float64(max(m.Writes, 1)), "records/write")
				if m.Syncs > 0 {
					b.ReportMetric(float64(m.SyncWaitNanos)/float64(m.Syncs)/1e3, "µs/sync")
				}
				require.NoError(b, w.Close())
			})
		}
	}
}

func TestEnqueueThenWait(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("wal")
	require.NoError(t, err)
	w := NewWriter(f, Options{})
	var last uint64
	for i := 0; i < 3; i++ {
		n, err := w.Enqueue([]byte{byte(i)})
		require.NoError(t, err)
		require.Equal(t, uint64(i+1), n)
		last = n
	}
	require.Zero(t, w.Metrics().Syncs, "Enqueue does no I/O")
	require.NoError(t, w.Wait(last, true))
	require.Equal(t, int64(1), w.Metrics().Syncs, "one sync covers the three records")
	require.NoError(t, w.Close())
	require.NoError(t, w.Wait(last, true), "records enqueued before Close stay durable")
}

// markBuffer collects synced-length marks and checks, as each arrives, that
// it never claims bytes the file has not synced.
type markBuffer struct {
	*fakeFile // the synced-length file (Write overridden)
	t         *testing.T
	file      *fakeFile // the log
	bytes.Buffer
}

func (m *markBuffer) Write(p []byte) (int, error) {
	m.file.mu.Lock()
	synced := m.file.syncedLen
	m.file.mu.Unlock()
	m.Buffer.Write(p)
	if got := m.last(); got > int64(synced) {
		m.t.Errorf("mark %d is beyond the %d synced bytes", got, synced)
	}
	return len(p), nil
}

func (m *markBuffer) last() int64 {
	b := m.Bytes()
	length, ok, err := record.ReadSyncedLength(bytes.NewReader(b), int64(len(b)))
	require.NoError(m.t, err)
	if !ok {
		return 0
	}
	return length
}

// TestSyncedLengthMarks checks that a synced append returns only once a
// mark covers its record, that marks never exceed the synced bytes, and
// that unsynced appends and their Writes add no mark.
func TestSyncedLengthMarks(t *testing.T) {
	f := &fakeFile{t: t}
	marks := &markBuffer{fakeFile: &fakeFile{t: t}, t: t, file: f}
	w := NewWriter(f, Options{SyncedLength: marks})
	rng := rand.New(rand.NewSource(1))
	for i := range 200 {
		rec := make([]byte, rng.Intn(3*record.BlockSize/2))
		n, err := w.Enqueue(rec)
		require.NoError(t, err)
		end := w.Size()
		durable := i%3 == 0
		before := marks.Len()
		require.NoError(t, w.Wait(n, durable))
		if durable {
			require.GreaterOrEqual(t, marks.last(), end, "record %d", i)
		} else {
			require.Equal(t, before, marks.Len(), "an unsynced append marked a length")
		}
	}
	require.NoError(t, w.Close())
	require.Equal(t, int64(len(f.data)), marks.last(), "Close syncs and marks everything")
	require.Zero(t, marks.Len()%record.SyncedMarkSize)
	require.True(t, marks.closed, "Close closes the synced-length file")
}

// discardFile is a fakeFile whose Write keeps nothing, so that a test can
// count the Writer's own allocations.
type discardFile struct{ fakeFile }

func (f *discardFile) Write(p []byte) (int, error) { return len(p), nil }

// TestLargeRecordsReuseBuffers appends checkpoint-sized records (2.7 MB,
// entrylocation's MaxBatchOps locations) one after another: once warm,
// the Writer frames them into a buffer it keeps, allocating nothing per
// record (each one grew a new buffer when only 1 MiB was kept), and keeps
// no second buffer since nothing is framed while it writes.
func TestLargeRecordsReuseBuffers(t *testing.T) {
	w := NewWriter(&discardFile{fakeFile{t: t}}, Options{})
	rec := make([]byte, 2700<<10)
	for i := 0; i < 3; i++ {
		require.NoError(t, w.Append(rec, true))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 10
	for i := 0; i < n; i++ {
		require.NoError(t, w.Append(rec, true))
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Less(t, allocated, uint64(len(rec)), "%d records of %d bytes allocated %d bytes", n, len(rec), allocated)
	// One committer at a time: one buffer, no spare.
	w.mu.Lock()
	spare := w.mu.spare
	w.mu.Unlock()
	require.Nil(t, spare, "a lone committer keeps a spare buffer of %d bytes", cap(spare))
	require.NoError(t, w.Close())
}
