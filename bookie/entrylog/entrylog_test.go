package entrylog

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

const testDir = "/ledgers/current"

func openMem(t testing.TB, fs vfs.FS, limit int64) *Logger {
	t.Helper()
	l, err := Open(testDir, &Options{FS: fs, LogSizeLimit: limit, WriteBufferSize: 4 << 10})
	require.NoError(t, err)
	return l
}

func payloadOf(ledgerID, entryID int64, size int) []byte {
	p := make([]byte, size)
	rng := rand.New(rand.NewSource(ledgerID*1_000_003 + entryID))
	rng.Read(p)
	return p
}

// fileSize returns the size of the file name.
func fileSize(t testing.TB, fs vfs.FS, name string) int64 {
	t.Helper()
	fi, err := fs.Stat(name)
	require.NoError(t, err)
	return fi.Size()
}

// corrupt overwrites the bytes of name at offset with data, in place, as a
// disk fault would (the file keeps its inode, so open readers see the
// damage). The range must be inside the file.
func corrupt(t testing.TB, fs vfs.FS, name string, offset int64, data []byte) {
	t.Helper()
	b := readAll(t, fs, name)
	require.LessOrEqual(t, offset+int64(len(data)), int64(len(b)), "corrupting %s outside its %d bytes", name, len(b))
	copy(b[offset:], data)
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

type written struct {
	ledgerID, entryID, location int64
	payload                     []byte
}

func TestRoundTripAndRotation(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, 16<<10)
	rng := rand.New(rand.NewSource(1))
	var all []written
	for i := range 300 {
		ledgerID, entryID := int64(i%7), int64(i/7)
		size := rng.Intn(600)
		if i == 100 {
			size = 40 << 10 // larger than the buffer and than a log
		}
		p := payloadOf(ledgerID, entryID, size)
		loc, err := l.AddEntry(ledgerID, entryID, p)
		require.NoError(t, err)
		all = append(all, written{ledgerID, entryID, loc, p})
	}
	require.NoError(t, l.Flush())
	for _, w := range all {
		got, err := l.ReadEntry(w.ledgerID, w.entryID, w.location)
		require.NoError(t, err)
		require.Equal(t, w.payload, got)
	}
	// The large record has a log of its own; logs stay within the limit
	// otherwise.
	ids, err := ListLogs(fs, testDir)
	require.NoError(t, err)
	require.Greater(t, len(ids), 5)
	require.Equal(t, int64(0), ids[0])
	big := all[100].location
	require.Equal(t, int64(HeaderSize+4), LocationOffset(big))
	require.NotEqual(t, LocationLogID(all[99].location), LocationLogID(big))
	require.NotEqual(t, LocationLogID(all[101].location), LocationLogID(big))
	for _, id := range ids {
		size := fileSize(t, fs, l.LogPath(id))
		if id != LocationLogID(big) {
			require.LessOrEqual(t, size, int64(16<<10))
		}
	}

	// Scan sees every record in order.
	i := 0
	for _, id := range ids {
		res, err := Scan(fs, l.LogPath(id), func(rec *Record) error {
			w := all[i]
			require.Equal(t, w.location, rec.Location)
			require.Equal(t, w.ledgerID, rec.LedgerID)
			require.Equal(t, w.entryID, rec.EntryID)
			require.True(t, bytes.Equal(w.payload, rec.Payload))
			i++
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, res.Tail)
		require.Equal(t, id, res.LogID)
		require.Equal(t, res.Size, res.ValidEnd)
	}
	require.Equal(t, len(all), i)

	// ReadAfter follows a record to the end of its log.
	var after []int64
	require.NoError(t, l.ReadAfter(all[0].location, func(rec *Record) bool {
		after = append(after, rec.Location)
		return len(after) < 5
	}))
	require.Len(t, after, 5)
	for k, loc := range after {
		require.Equal(t, all[k+1].location, loc)
	}
	require.NoError(t, l.Close())
	_, err = l.AddEntry(1, 1, nil)
	require.ErrorIs(t, err, ErrClosed)
	_, err = l.ReadEntry(1, 1, all[0].location)
	require.Error(t, err)
}

// TestBadLocations reads at every kind of wrong location: each is a clear
// error, never a panic, and never the wrong payload.
func TestBadLocations(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, 0)
	var all []written
	for e := range int64(50) {
		p := payloadOf(3, e, int(e*13))
		loc, err := l.AddEntry(3, e, p)
		require.NoError(t, err)
		all = append(all, written{3, e, loc, p})
	}
	unflushed, err := l.AddEntry(3, 50, []byte("buffered"))
	require.NoError(t, err)
	require.NoError(t, l.Flush())
	_, err = l.AddEntry(3, 51, []byte("buffered, not flushed"))
	require.NoError(t, err)
	_ = unflushed

	for _, tc := range []struct {
		name     string
		location int64
		ledgerID int64
		entryID  int64
		target   error
	}{
		{"zero", 0, 3, 0, ErrBadLocation},
		{"negative", -5, 3, 0, ErrBadLocation},
		{"in the header", MakeLocation(0, 100), 3, 0, ErrBadLocation},
		{"no such log", MakeLocation(77, HeaderSize+4), 3, 0, ErrBadLocation},
		{"past the end", MakeLocation(0, 1<<31), 3, 0, ErrBadLocation},
		{"another entry's record", all[7].location, 3, 8, ErrBadLocation},
		{"another ledger", all[7].location, 4, 7, ErrBadLocation},
		{"mid record", all[7].location + 3, 3, 7, ErrBadLocation},
	} {
		_, err := l.ReadEntry(tc.ledgerID, tc.entryID, tc.location)
		require.ErrorIs(t, err, tc.target, tc.name)
		require.Contains(t, err.Error(), "entrylog: entry ")
	}
	// Every offset of the log: the right payload at the right location,
	// an error elsewhere.
	size := fileSize(t, fs, l.LogPath(0))
	good := map[int64]written{}
	for _, w := range all {
		good[w.location] = w
	}
	for off := int64(0); off < size+10; off++ {
		loc := MakeLocation(0, off)
		for _, w := range all[:3] {
			got, err := l.ReadEntry(w.ledgerID, w.entryID, loc)
			if g, ok := good[loc]; ok && g.entryID == w.entryID {
				require.NoError(t, err)
				require.Equal(t, w.payload, got)
				continue
			}
			require.Error(t, err, "offset %d", off)
			require.True(t, errors.Is(err, ErrBadLocation) || errors.Is(err, ErrCorruption), "offset %d: %v", off, err)
		}
		_ = l.ReadAfter(loc, func(*Record) bool { return true })
	}
	// Damage: a flipped payload byte is a checksum error, and Scan stops
	// there.
	w := all[20]
	corrupt(t, fs, l.LogPath(0), LocationOffset(w.location)+20+5, []byte{0xff ^ w.payload[5]})
	_, err = l.ReadEntry(w.ledgerID, w.entryID, w.location)
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "checksum")
	res, err := Scan(fs, l.LogPath(0), func(*Record) error { return nil })
	require.NoError(t, err)
	require.Equal(t, int64(20), res.Records)
	require.ErrorIs(t, res.Tail, ErrCorruption)
	require.NoError(t, l.Close())

	// A damaged header.
	corrupt(t, fs, l.LogPath(0), 0, []byte("XXXX"))
	_, err = Scan(fs, l.LogPath(0), func(*Record) error { return nil })
	require.ErrorIs(t, err, ErrCorruption)
	l2 := openMem(t, fs, 0)
	_, err = l2.ReadEntry(all[1].ledgerID, all[1].entryID, all[1].location)
	require.ErrorIs(t, err, ErrCorruption)
	require.NoError(t, l2.Close())
}

func TestOptionsAndNames(t *testing.T) {
	for _, limit := range []int64{-1, 100, MaxLogSizeLimit + 1} {
		_, err := Open(testDir, &Options{FS: vfs.NewMem(), LogSizeLimit: limit})
		require.ErrorIs(t, err, ErrInvalidArgument, "limit %d", limit)
	}
	_, err := Open(testDir, &Options{FS: vfs.NewMem(), WriteBufferSize: -1})
	require.ErrorIs(t, err, ErrInvalidArgument)
	l := openMem(t, vfs.NewMem(), 0)
	_, err = l.AddEntry(1, 1, make([]byte, MaxPayloadSize+1))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, l.Close())
	require.ErrorIs(t, l.Close(), ErrClosed)

	for name, want := range map[string]int64{"0.log": 0, "1f.log": 31, "7fffffff.log": MaxLogID} {
		id, ok := ParseLogFileName(name)
		require.True(t, ok, name)
		require.Equal(t, want, id)
		require.Equal(t, name, LogFileName(id))
	}
	for _, name := range []string{"1F.log", ".log", "x.log", "80000000.log", "1.log.tmp", "lastId", "-1.log", "123456789.log"} {
		_, ok := ParseLogFileName(name)
		require.False(t, ok, name)
	}
	loc := MakeLocation(0x1f, 1028)
	require.Equal(t, int64(0x1f), LocationLogID(loc))
	require.Equal(t, int64(1028), LocationOffset(loc))
	require.Equal(t, "(log 0x1f, offset 1028)", FormatLocation(loc))
}

// TestIDsNeverReused: a new Logger numbers its first log after every log
// in the directory and after lastId, even when logs were removed.
func TestIDsNeverReused(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, 0)
	for range 3 {
		_, err := l.AddEntry(1, 1, []byte("x"))
		require.NoError(t, err)
		require.NoError(t, l.Close())
		l = openMem(t, fs, 0)
	}
	require.Equal(t, MakeLocation(3, 0), l.Position())
	require.NoError(t, fs.Remove(filepath.Join(testDir, "2.log")))
	require.NoError(t, fs.Remove(filepath.Join(testDir, "1.log")))
	require.NoError(t, l.Close())
	l = openMem(t, fs, 0)
	loc, err := l.AddEntry(1, 1, []byte("x"))
	require.NoError(t, err)
	require.Equal(t, int64(3), LocationLogID(loc))
	require.NoError(t, l.Close())
}

// TestFaults injects a failure into each write, sync, creation and rename
// of the logs: the failing call returns an error, the log is abandoned, and
// what was flushed before and what is written again afterwards reads back
// after a crash. A failed write writes half its bytes first (a short write),
// as a full disk would.
func TestFaults(t *testing.T) {
	isDir := func(op vfs.Op) bool { return op.Path == testDir }
	for _, tc := range []struct {
		name    string
		kind    vfs.OpKind
		matches func(op vfs.Op) bool
		err     error
	}{
		{"write", vfs.OpWrite, func(vfs.Op) bool { return true }, errors.Wrap(vfs.ErrShortWrite, "disk on fire")},
		{"sync", vfs.OpSync, func(op vfs.Op) bool { return !isDir(op) }, errors.New("disk on fire")},
		{"syncdir", vfs.OpSync, isDir, errors.New("disk on fire")},
		{"create", vfs.OpCreate, func(vfs.Op) bool { return true }, errors.New("disk on fire")},
		{"create-exclusive", vfs.OpCreateExclusive, func(vfs.Op) bool { return true }, errors.New("disk on fire")},
		{"rename", vfs.OpRename, func(vfs.Op) bool { return true }, errors.New("disk on fire")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			armed := false
			fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
				if armed && op.Kind == tc.kind && tc.matches(op) {
					armed = false
					return tc.err
				}
				return nil
			}))
			l := openMem(t, fs, 0)
			var durable []written
			add := func(l *Logger, e int64) (written, error) {
				p := payloadOf(9, e, 100)
				loc, err := l.AddEntry(9, e, p)
				return written{9, e, loc, p}, err
			}
			for e := range int64(10) {
				w, err := add(l, e)
				require.NoError(t, err)
				durable = append(durable, w)
			}
			require.NoError(t, l.Flush())
			// Fail the next operation of this kind, once.
			armed = true
			var pending []written
			failed := false
			if tc.kind != vfs.OpWrite && tc.name != "sync" {
				// A new log is needed to hit these: rotate by closing.
				armed = false
				require.NoError(t, l.Close())
				l = openMem(t, fs, 0)
				armed = true
			}
			for e := int64(10); e < 20; e++ {
				w, err := add(l, e)
				if err != nil {
					require.ErrorContains(t, err, "disk on fire")
					failed = true
					continue
				}
				pending = append(pending, w)
			}
			if err := l.Flush(); err != nil {
				require.ErrorContains(t, err, "disk on fire")
				failed = true
			}
			require.True(t, failed, "no failure seen")
			require.False(t, armed, "the fault fired")
			// The checkpoint failed: write everything again.
			pending = pending[:0]
			for e := int64(10); e < 20; e++ {
				w, err := add(l, e)
				require.NoError(t, err)
				pending = append(pending, w)
			}
			require.NoError(t, l.Flush())
			durable = append(durable, pending...)
			crashed := openMem(t, mem.CrashClone(vfs.CrashOptions{}), 0)
			for _, w := range durable {
				got, err := crashed.ReadEntry(w.ledgerID, w.entryID, w.location)
				require.NoError(t, err, "entry %d", w.entryID)
				require.Equal(t, w.payload, got)
			}
			require.NoError(t, crashed.Close())
			require.NoError(t, l.Close())
		})
	}
}

// TestCrashModel runs random appends, flushes and crashes (with torn
// tails) against a model of what is durable: after each crash every
// flushed record reads back, and scanning the logs finds every flushed
// record, in order, before any torn tail.
func TestCrashModel(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	fs := vfs.NewMem()
	l := openMem(t, fs, 8<<10)
	var durable, pending []written
	next := map[int64]int64{}
	for step := range 2000 {
		switch r := rng.Intn(100); {
		case r < 80:
			ledgerID := int64(rng.Intn(5))
			e := next[ledgerID]
			next[ledgerID]++
			p := payloadOf(ledgerID, e, rng.Intn(300))
			loc, err := l.AddEntry(ledgerID, e, p)
			require.NoError(t, err)
			pending = append(pending, written{ledgerID, e, loc, p})
		case r < 95:
			require.NoError(t, l.Flush())
			durable = append(durable, pending...)
			pending = pending[:0]
		default:
			fs = fs.CrashClone(vfs.CrashOptions{Rand: rng, KeepUnsyncedTail: true})
			l = openMem(t, fs, 8<<10)
			pending = pending[:0]
			for _, w := range durable {
				got, err := l.ReadEntry(w.ledgerID, w.entryID, w.location)
				require.NoError(t, err, "step %d", step)
				require.Equal(t, w.payload, got)
			}
			ids, err := ListLogs(fs, testDir)
			require.NoError(t, err)
			var scanned []int64
			for _, id := range ids {
				_, err := Scan(fs, l.LogPath(id), func(rec *Record) error {
					scanned = append(scanned, rec.Location)
					return nil
				})
				require.NoError(t, err)
			}
			seen := map[int64]bool{}
			for _, loc := range scanned {
				seen[loc] = true
			}
			for _, w := range durable {
				require.True(t, seen[w.location], "step %d: durable record %s not scanned", step, FormatLocation(w.location))
			}
		}
	}
	require.NoError(t, l.Close())
}

// TestConcurrentReads reads flushed records while a writer appends and
// flushes (run with -race).
func TestConcurrentReads(t *testing.T) {
	l := openMem(t, vfs.NewMem(), 32<<10)
	var mu sync.Mutex
	var flushed []written
	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.Lock()
				if len(flushed) == 0 {
					mu.Unlock()
					continue
				}
				w := flushed[rng.Intn(len(flushed))]
				mu.Unlock()
				got, err := l.ReadEntry(w.ledgerID, w.entryID, w.location)
				if err != nil || !bytes.Equal(got, w.payload) {
					panic(fmt.Sprintf("read of entry %d: %v", w.entryID, err))
				}
			}
		}()
	}
	var pending []written
	for e := range int64(3000) {
		p := payloadOf(1, e, int(e%200))
		loc, err := l.AddEntry(1, e, p)
		require.NoError(t, err)
		pending = append(pending, written{1, e, loc, p})
		if e%100 == 99 {
			require.NoError(t, l.Flush())
			mu.Lock()
			flushed = append(flushed, pending...)
			mu.Unlock()
			pending = nil
		}
	}
	close(done)
	wg.Wait()
	require.NoError(t, l.Close())
}

func TestOSFS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "current")
	l, err := Open(dir, &Options{LogSizeLimit: 4 << 10})
	require.NoError(t, err)
	var all []written
	for e := range int64(100) {
		p := payloadOf(2, e, 100)
		loc, err := l.AddEntry(2, e, p)
		require.NoError(t, err)
		all = append(all, written{2, e, loc, p})
	}
	require.NoError(t, l.Close())
	l, err = Open(dir, nil)
	require.NoError(t, err)
	for _, w := range all {
		got, err := l.ReadEntry(w.ledgerID, w.entryID, w.location)
		require.NoError(t, err)
		require.Equal(t, w.payload, got)
	}
	// A log is never overwritten: a file in the way of the next log fails
	// the write and keeps its bytes.
	next := LocationLogID(l.Position())
	require.NoError(t, os.WriteFile(l.LogPath(next), []byte("precious"), 0o644))
	_, err = l.AddEntry(2, 100, []byte("x"))
	require.ErrorIs(t, err, os.ErrExist)
	got, err := os.ReadFile(l.LogPath(next))
	require.NoError(t, err)
	require.Equal(t, "precious", string(got))
	require.NoError(t, l.Close())
}
