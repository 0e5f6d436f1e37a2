package entrylocation

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

func TestOpenNilOptionsCreatesDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "current", "locations")
	ix, err := Open(dir, nil)
	require.NoError(t, err)
	require.Equal(t, dir, ix.Path())
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.True(t, st.IsDir())

	require.NoError(t, ix.AddLocation(1, 2, 3))
	require.NoError(t, ix.Close())

	ix, err = Open(dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	requireLocation(t, ix, 1, 2, 3)
}

func TestOptions(t *testing.T) {
	o, engine, err := (*Options)(nil).resolve()
	require.NoError(t, err)
	require.Equal(t, DefaultMaxBatchOps, o.MaxBatchOps)
	require.Equal(t, lsm.TableLayoutPartitioned, engine.TableLayout)
	require.False(t, engine.DisableCommonPrefix)
	require.False(t, engine.EnableStatistics)

	// The caller's engine options are copied, not modified.
	mine := &lsm.Options{FS: lsm.NewMemFS()}
	o, engine, err = (&Options{Engine: mine, EnableStatistics: true}).resolve()
	require.NoError(t, err)
	require.True(t, engine.EnableStatistics)
	require.False(t, mine.EnableStatistics)
	require.NotSame(t, mine, o.Engine)

	_, _, err = (&Options{MaxBatchOps: -1}).resolve()
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "MaxBatchOps -1")
	_, err = Open("/x", &Options{Engine: &lsm.Options{FS: lsm.NewMemFS()}, MaxBatchOps: -1})
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = Open("", nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestKeyEncoding(t *testing.T) {
	k := makeEntryKey(0x0102030405060708, -1)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, k[:])
	require.Equal(t, k, entryKey(EncodeKey(0x0102030405060708, -1)))
	v := EncodeLocation(0x0a0b0c0d0e0f1011)
	require.Equal(t, []byte{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11}, v[:])
	loc, err := decodeLocation(v[:])
	require.NoError(t, err)
	require.EqualValues(t, 0x0a0b0c0d0e0f1011, loc)
	first, end := entryRange(7)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0}, first[:])
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 7, 0x80, 0, 0, 0, 0, 0, 0, 0}, end[:])
	lower, upper := LedgerEntryRange(7)
	require.Equal(t, first, entryKey(lower))
	require.Equal(t, end, entryKey(upper))
	first, end = ledgerRange(7)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0}, first[:])
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0}, end[:])
	// The maxima: neither end overflows into a negative (or zero) word.
	first, end = entryRange(math.MaxInt64)
	require.Equal(t, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, first[:])
	require.Equal(t, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}, end[:])
	_, end = ledgerRange(math.MaxInt64)
	require.Equal(t, []byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, end[:])
	maxKey := makeEntryKey(math.MaxInt64, math.MaxInt64)
	require.Negative(t, bytes.Compare(maxKey[:], end[:]), "the greatest key is inside the last ledger's range")
	l, e, err := DecodeKey(maxKey[:])
	require.NoError(t, err)
	require.Equal(t, [2]int64{math.MaxInt64, math.MaxInt64}, [2]int64{l, e})
	_, _, err = DecodeKey(maxKey[:15])
	require.ErrorIs(t, err, lsm.ErrCorruption)
	id, err := decodeEntryID(k[:])
	require.NoError(t, err)
	require.EqualValues(t, -1, id)
	_, err = decodeEntryID(k[:15])
	require.ErrorIs(t, err, lsm.ErrCorruption)
	_, err = decodeLocation(make([]byte, 9))
	require.ErrorIs(t, err, lsm.ErrCorruption)
}

func TestGetLastEntryInLedger(t *testing.T) {
	ix := openTest(t, nil)
	requireNoEntry(t, ix, 0) // empty index
	requireNoEntry(t, ix, 5)

	require.NoError(t, ix.AddLocation(4, 100, 1))
	require.NoError(t, ix.UpdateLocations([]EntryLocation{{5, 0, 2}, {5, 7, 3}, {5, 3, 4}, {6, 1, 5}}))
	requireLastEntry(t, ix, 4, 100)
	requireLastEntry(t, ix, 5, 7)
	requireLastEntry(t, ix, 6, 1)
	requireNoEntry(t, ix, 3) // below every ledger
	requireNoEntry(t, ix, 7) // above every ledger: the floor is in ledger 6
	requireNoEntry(t, ix, math.MaxInt64)

	// Entry MaxInt64 is an ordinary entry (upstream's probe misses it).
	require.NoError(t, ix.AddLocation(9, math.MaxInt64-1, 9))
	requireLastEntry(t, ix, 9, math.MaxInt64-1)
	require.NoError(t, ix.AddLocation(9, math.MaxInt64, 7))
	requireLastEntry(t, ix, 9, math.MaxInt64)
	require.NoError(t, ix.AddLocation(8, 2, 10))
	requireLastEntry(t, ix, 8, 2)

	// A marked ledger has no entry, with upstream's message.
	require.NoError(t, ix.Delete(5))
	_, err := ix.GetLastEntryInLedger(5)
	require.ErrorIs(t, err, ErrNoEntry)
	require.ErrorContains(t, err, "Entry -1 not found in 5")
	requireLocation(t, ix, 5, 7, 3)
	requireLastEntry(t, ix, 4, 100)
	requireLastEntry(t, ix, 6, 1)

	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	requireNoEntry(t, ix, 5)
	require.NoError(t, ix.AddLocation(5, 1, 11))
	requireLastEntry(t, ix, 5, 1)

	m := ix.Metrics().GetLastEntryInLedger
	require.EqualValues(t, 9, m.SuccessCount)
	require.EqualValues(t, 7, m.FailureCount)
	require.Zero(t, m.SuccessLatency.Count, "latency is measured only with EnableStatistics")
	require.Zero(t, m.SuccessLatency.Sum)
}

// TestGetLastEntryAcrossTables puts the last entries of ledgers in tables
// of several levels with range deletions and newer overwrites in between.
func TestGetLastEntryAcrossTables(t *testing.T) {
	ix := openTest(t, smallTableOptions(nil))
	b := ix.NewBatch()
	for l := int64(0); l < 20; l++ {
		for e := int64(0); e < 1000; e++ {
			require.NoError(t, b.AddLocation(l, e, l*10000+e+1))
		}
	}
	require.NoError(t, b.Flush())
	require.NoError(t, ix.Compact(context.Background()))
	for l := int64(0); l < 20; l += 2 {
		require.NoError(t, ix.Delete(l))
	}
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	require.NoError(t, ix.AddLocation(4, 17, 99)) // after the purge, in the memtable
	for l := int64(0); l < 20; l++ {
		switch {
		case l == 4:
			requireLastEntry(t, ix, l, 17)
		case l%2 == 0:
			requireNoEntry(t, ix, l)
		default:
			requireLastEntry(t, ix, l, 999)
		}
	}
	require.NoError(t, ix.Compact(context.Background()))
	requireLastEntry(t, ix, 4, 17)
	requireNoEntry(t, ix, 6)
	requireLastEntry(t, ix, 7, 999)
	requireLocation(t, ix, 7, 234, 70235)
	requireLocation(t, ix, 6, 234, 0)
}

func TestPersistenceAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, ix.AddLocation(1, 0, 10))
	b := ix.NewBatch()
	for e := int64(0); e < 100; e++ {
		require.NoError(t, b.AddLocation(2, e, 100+e))
	}
	require.NoError(t, b.Flush())
	require.NoError(t, b.AddLocation(3, 0, 5)) // never flushed
	require.NoError(t, ix.UpdateLocations([]EntryLocation{{2, 50, 7}, {4, 1, 8}}))
	require.NoError(t, ix.Delete(4))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	require.NoError(t, ix.Delete(1)) // marked, not purged: forgotten at Close
	require.NoError(t, b.Close())
	require.NoError(t, ix.Close())

	check := func(ix *Index) {
		requireLocation(t, ix, 1, 0, 10)
		requireLastEntry(t, ix, 1, 0)
		requireLocation(t, ix, 2, 50, 7)
		requireLocation(t, ix, 2, 99, 199)
		requireLastEntry(t, ix, 2, 99)
		requireLocation(t, ix, 3, 0, 0)
		requireLocation(t, ix, 4, 1, 0)
		requireNoEntry(t, ix, 4)
	}
	ix, err = Open(dir, nil)
	require.NoError(t, err)
	check(ix)
	require.NoError(t, ix.Compact(context.Background()))
	require.NoError(t, ix.Close())

	ix, err = Open(dir, nil)
	require.NoError(t, err)
	check(ix)
	require.NoError(t, ix.Close())
}

func TestBadInput(t *testing.T) {
	ix := openTest(t, nil)
	b := ix.NewBatch()
	defer b.Close()
	for name, err := range map[string]error{
		"GetLocation":            second(ix.GetLocation(-1, 0)),
		"GetLocation min":        second(ix.GetLocation(math.MinInt64, 1)),
		"UpdateLocations ledger": ix.UpdateLocations([]EntryLocation{{1, 0, 1}, {-2, 1, 1}}),
		"GetLastEntryInLedger":   second(ix.GetLastEntryInLedger(-2)),
		"AddLocation":            ix.AddLocation(-3, 0, 1),
		"Batch.AddLocation":      b.AddLocation(-4, 0, 1),
		"UpdateLocations":        ix.UpdateLocations([]EntryLocation{{-5, 0, 1}}),
		"Delete":                 ix.Delete(-6),
		"AddLocation 0":          ix.AddLocation(1, 0, 0),
		"AddLocation negative":   ix.AddLocation(1, 0, -7),
		"Batch.AddLocation 0":    b.AddLocation(1, 0, 0),
		"Batch.AddLocation neg":  b.AddLocation(1, 0, math.MinInt64),
		//lint:ignore SA1012 a nil context is the invalid argument under test
		"Compact nil ctx": ix.Compact(nil),
	} {
		require.ErrorIs(t, err, ErrInvalidArgument, name)
	}
	_, err := ix.GetLocation(-1, 0)
	require.ErrorContains(t, err, "ledger id -1")
	require.ErrorContains(t, ix.UpdateLocations([]EntryLocation{{1, 0, 1}, {-2, 1, 1}}), "element 1: entrylocation: ledger id -2 is negative")
	require.ErrorContains(t, ix.AddLocation(1, 2, 0), "location 0")
	require.Zero(t, b.Count())

	// One bad element: nothing of the call is written.
	err = ix.UpdateLocations([]EntryLocation{{1, 1, 1}, {1, 2, 0}, {1, 3, 3}})
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "element 1")
	requireLocation(t, ix, 1, 1, 0)
	requireNoEntry(t, ix, 1)
	require.EqualValues(t, 0, ix.Metrics().Engine.Batches)

	// Bad lookups count as failures, as misses do.
	m := ix.Metrics()
	require.EqualValues(t, 4, m.LookupEntryLocation.FailureCount)
}

func second(_ int64, err error) error { return err }

func TestUseAfterClose(t *testing.T) {
	ix, err := Open("/index", memOptions(nil))
	require.NoError(t, err)
	require.NoError(t, ix.AddLocation(1, 1, 1))
	b := ix.NewBatch()
	require.NoError(t, b.AddLocation(1, 2, 2))
	b2 := ix.NewBatch()
	require.NoError(t, ix.Delete(1))
	require.NoError(t, ix.Close())

	loc, err := ix.GetLocation(1, 1)
	require.ErrorIs(t, err, ErrClosed)
	require.Zero(t, loc)
	for name, err := range map[string]error{
		"GetLastEntryInLedger":           second(ix.GetLastEntryInLedger(1)),
		"AddLocation":                    ix.AddLocation(1, 3, 3),
		"UpdateLocations":                ix.UpdateLocations([]EntryLocation{{1, 4, 4}}),
		"UpdateLocations empty":          ix.UpdateLocations(nil),
		"Delete":                         ix.Delete(1),
		"RemoveOffsetFromDeletedLedgers": ix.RemoveOffsetFromDeletedLedgers(),
		"Compact":                        ix.Compact(context.Background()),
		"Close":                          ix.Close(),
		"Batch.AddLocation":              b.AddLocation(1, 5, 5),
		"Batch.Flush":                    b.Flush(),
		"new Batch.AddLocation":          ix.NewBatch().AddLocation(1, 6, 6),
		"new Batch.Flush":                ix.NewBatch().Flush(),
		"Batch.Close":                    b2.Close(),
	} {
		require.ErrorIs(t, err, ErrClosed, name)
	}
	require.Equal(t, 1, b.Count(), "the batch still holds its operation")
	require.ErrorIs(t, b.Close(), ErrClosed)
	require.Zero(t, b.Count())
	require.False(t, ix.IsCompacting())
	require.Equal(t, "/index", ix.Path())
	m := ix.Metrics()
	require.EqualValues(t, -1, m.EntriesCount)
	require.EqualValues(t, 1, m.LookupEntryLocation.FailureCount)
}

func TestEntriesCount(t *testing.T) {
	ix := openTest(t, nil)
	require.Zero(t, ix.Metrics().EntriesCount)
	b := ix.NewBatch()
	for e := int64(0); e < 1000; e++ {
		require.NoError(t, b.AddLocation(e%10, e, e+1))
	}
	require.NoError(t, b.Flush())
	require.EqualValues(t, 1000, ix.Metrics().EntriesCount)
	for l := int64(0); l < 10; l++ {
		require.NoError(t, ix.Delete(l))
	}
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	// Approximate, as upstream's: purged entries count until a compaction
	// drops them (see TestCompactDropsPurgedEntries).
	m := ix.Metrics()
	require.GreaterOrEqual(t, m.EntriesCount, int64(1000))
	require.EqualValues(t, m.Engine.EstimatedKeys, m.EntriesCount)
	require.Positive(t, m.Engine.SyncedBatches)
	requireLocation(t, ix, 3, 3, 0)
}

// TestCorruptLocationValue checks that a value that is not 8 bytes is a
// corruption error, not a panic or a wrong location.
func TestCorruptLocationValue(t *testing.T) {
	fs := lsm.NewMemFS()
	db, err := lsm.Open("/index", &lsm.Options{FS: fs})
	require.NoError(t, err)
	var b lsm.Batch
	k := makeEntryKey(1, 1)
	b.Set(k[:], []byte{1, 2, 3})
	k2 := makeEntryKey(1, 2)
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], 42)
	b.Set(k2[:], v[:])
	b.Set([]byte{0, 0, 0, 0, 0, 0, 0, 2, 9}, v[:]) // a 9-byte key in ledger 2
	require.NoError(t, db.Apply(&b, lsm.Sync))
	require.NoError(t, db.Close())

	ix := openTest(t, memOptions(fs))
	_, err = ix.GetLocation(1, 1)
	require.ErrorIs(t, err, lsm.ErrCorruption)
	require.ErrorContains(t, err, "entry 1 of ledger 1")
	requireLocation(t, ix, 1, 2, 42)
	_, err = ix.GetLastEntryInLedger(2)
	require.ErrorIs(t, err, lsm.ErrCorruption)
	require.NotErrorIs(t, err, ErrNoEntry)
}

// TestPurgeFailureKeepsMarks makes the purge's write fail (a read-only
// engine) and checks that the ledgers stay marked for the next attempt.
func TestPurgeFailureKeepsMarks(t *testing.T) {
	fs := lsm.NewMemFS()
	ix, err := Open("/index", memOptions(fs))
	require.NoError(t, err)
	require.NoError(t, ix.AddLocation(7, 3, 1))
	require.NoError(t, ix.Close())

	opts := memOptions(fs)
	opts.Engine.ReadOnly = true
	ix = openTest(t, opts)
	require.NoError(t, ix.Delete(7))
	err = ix.RemoveOffsetFromDeletedLedgers()
	require.ErrorIs(t, err, lsm.ErrReadOnly)
	// Still marked (a purge would not have left the entry readable,
	// a lost mark would make the last entry visible again).
	requireLocation(t, ix, 7, 3, 1)
	requireNoEntry(t, ix, 7)
	require.Equal(t, []int64{7}, ix.markedLedgers())
	require.ErrorIs(t, ix.RemoveOffsetFromDeletedLedgers(), lsm.ErrReadOnly)
	require.Equal(t, []int64{7}, ix.markedLedgers())
}

func TestChunkedWrites(t *testing.T) {
	opts := memOptions(nil)
	opts.MaxBatchOps = 3
	ix := openTest(t, opts)
	synced := func() int64 { return ix.Metrics().Engine.SyncedBatches }

	var locs []EntryLocation
	for e := int64(0); e < 10; e++ {
		locs = append(locs, EntryLocation{LedgerID: e, EntryID: e, Location: e + 1})
	}
	before := synced()
	require.NoError(t, ix.UpdateLocations(locs))
	require.EqualValues(t, 4, synced()-before, "10 locations in chunks of 3")
	before = synced()
	require.NoError(t, ix.UpdateLocations(locs[:6]))
	require.EqualValues(t, 2, synced()-before, "6 locations in chunks of 3")
	before = synced()
	require.NoError(t, ix.UpdateLocations(nil))
	require.EqualValues(t, 0, synced()-before)

	for l := int64(0); l < 7; l++ {
		require.NoError(t, ix.Delete(l))
	}
	before = synced()
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	require.EqualValues(t, 3, synced()-before, "7 range deletions in chunks of 3")
	before = synced()
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	require.EqualValues(t, 0, synced()-before, "nothing marked: nothing written")
	for l := int64(0); l < 10; l++ {
		want := l + 1
		if l < 7 {
			want = 0
		}
		requireLocation(t, ix, l, l, want)
	}
}

// TestClosedBeforeBadInput: after Close, even a call with bad arguments
// reports ErrClosed.
func TestClosedBeforeBadInput(t *testing.T) {
	ix, err := Open("/index", memOptions(nil))
	require.NoError(t, err)
	b := ix.NewBatch()
	require.NoError(t, ix.Close())
	require.ErrorIs(t, second(ix.GetLocation(-1, 0)), ErrClosed)
	require.ErrorIs(t, second(ix.GetLastEntryInLedger(-1)), ErrClosed)
	require.ErrorIs(t, ix.AddLocation(1, 1, 0), ErrClosed)
	require.ErrorIs(t, ix.UpdateLocations([]EntryLocation{{-1, 0, 0}}), ErrClosed)
	require.ErrorIs(t, ix.Delete(-1), ErrClosed)
	require.ErrorIs(t, b.AddLocation(-1, 0, 0), ErrClosed)
	//lint:ignore SA1012 a nil context on a closed index is the case under test
	require.ErrorIs(t, ix.Compact(nil), ErrClosed)
}

// TestReadsRacingClose: point reads take no lock (enterRead), so one may
// reach the engine while Close closes it. Each read must return its
// location, or fail with ErrClosed; none may panic or answer wrongly.
func TestReadsRacingClose(t *testing.T) {
	for round := 0; round < 20; round++ {
		ix, err := Open("/index", memOptions(nil))
		require.NoError(t, err)
		for e := int64(0); e < 100; e++ {
			require.NoError(t, ix.AddLocation(1, e, 1000+e))
		}
		var wg sync.WaitGroup
		answered, closed := make([]int, 4), make([]int, 4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int64(0); ; i++ {
					var got, want int64
					var err error
					if g%2 == 0 {
						got, err = ix.GetLocation(1, i%100)
						want = 1000 + i%100
					} else {
						got, err = ix.GetLastEntryInLedger(1)
						want = 99
					}
					if errors.Is(err, ErrClosed) {
						closed[g]++
						return
					}
					if err != nil || got != want {
						t.Errorf("read %d: %d, %v; want %d", i, got, err, want)
						return
					}
					answered[g]++
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		require.NoError(t, ix.Close())
		wg.Wait()
		require.Equal(t, []int{1, 1, 1, 1}, closed, "every reader ends with ErrClosed")
	}
}
