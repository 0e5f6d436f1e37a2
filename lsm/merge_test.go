package lsm

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// maxMerge keeps the bytewise largest of the value and its operands.
type maxMerge struct{}

func (maxMerge) Name() string { return "test.max" }

func (maxMerge) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	v := existing
	for _, o := range operands {
		if v == nil || bytes.Compare(o, v) > 0 {
			v = o
		}
	}
	return append([]byte(nil), v...), nil
}

func (maxMerge) PartialMerge(key, older, newer []byte) ([]byte, bool) {
	if bytes.Compare(newer, older) > 0 {
		return append([]byte(nil), newer...), true
	}
	return append([]byte(nil), older...), true
}

// appendMerge joins the value and its operands with "+". Order matters,
// so it catches operands merged out of order. It declines partial merges
// of long operands, so that both outcomes of PartialMerge are exercised.
type appendMerge struct{}

func (appendMerge) Name() string { return "test.append" }

func (appendMerge) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	var v []byte
	if existing != nil {
		v = append(v, existing...)
	}
	for i, o := range operands {
		if i > 0 || existing != nil {
			v = append(v, '+')
		}
		v = append(v, o...)
	}
	return v, nil
}

func (appendMerge) PartialMerge(key, older, newer []byte) ([]byte, bool) {
	if len(older)+len(newer) > 40 {
		return nil, false
	}
	v := append(append(append([]byte(nil), older...), '+'), newer...)
	return v, true
}

// concatMerge appends fixed-width operands without separators.
type concatMerge struct{}

func (concatMerge) Name() string { return "test.concat" }

func (concatMerge) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	v := append([]byte(nil), existing...)
	for _, o := range operands {
		v = append(v, o...)
	}
	return v, nil
}

func (concatMerge) PartialMerge(key, older, newer []byte) ([]byte, bool) {
	return append(append([]byte(nil), older...), newer...), true
}

// failingMerge fails FullMerge when an operand is "bad".
type failingMerge struct{ appendMerge }

func (failingMerge) Name() string { return "test.failing" }

func (f failingMerge) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	for _, o := range operands {
		if string(o) == "bad" {
			return nil, errors.New("bad operand")
		}
	}
	return f.appendMerge.FullMerge(key, existing, operands)
}

func (failingMerge) PartialMerge(key, older, newer []byte) ([]byte, bool) { return nil, false }

// modelMerge applies one operand to the model's value.
func modelMerge(op MergeOperator, old string, exists bool, operand string) string {
	var existing []byte
	if exists {
		existing = []byte(old)
	}
	v, err := op.FullMerge(nil, existing, [][]byte{[]byte(operand)})
	if err != nil {
		panic(err)
	}
	return string(v)
}

func mergeOptions(fs FS, op MergeOperator) *Options {
	o := smallOptions(fs)
	o.MergeOperator = op
	return o
}

func apply(t *testing.T, d *DB, f func(b *Batch)) {
	t.Helper()
	var b Batch
	f(&b)
	require.NoError(t, d.Apply(&b, NoSync))
}

func requireGet(t *testing.T, d *DB, key, want string, s *Snapshot) {
	t.Helper()
	v, err := d.GetAppend(nil, []byte(key), &ReadOptions{Snapshot: s})
	if want == "" {
		require.True(t, errors.Is(err, ErrNotFound), "Get(%q) = %q, %v; want not found", key, v, err)
		return
	}
	require.NoError(t, err, "Get(%q)", key)
	require.Equal(t, want, string(v), "Get(%q)", key)
}

// scan returns key=value of every key, forward or backward.
func scan(t *testing.T, d *DB, o *IterOptions, reverse bool) []string {
	t.Helper()
	it, err := d.NewIter(o)
	require.NoError(t, err)
	var got []string
	if reverse {
		for ok := it.Last(); ok; ok = it.Prev() {
			got = append([]string{string(it.Key()) + "=" + string(it.Value())}, got...)
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key())+"="+string(it.Value()))
		}
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	return got
}

// TestMergeBasic runs testdata/merge_basic: merged values read from
// memtables, L0 and the bottom level, over Sets, Deletes and range
// deletions, in both directions and across direction changes.
func TestMergeBasic(t *testing.T) {
	runDBScript(t, "testdata/merge_basic")
}

// TestMergeSnapshotStripes checks that flushes and compactions do not
// combine operands across a snapshot, and do once it is released.
func TestMergeSnapshotStripes(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", mergeOptions(fs, appendMerge{}))
	require.NoError(t, err)
	apply(t, d, func(b *Batch) { b.Set([]byte("k"), []byte("s")) })
	apply(t, d, func(b *Batch) { b.Merge([]byte("k"), []byte("1")) })
	s1, err := d.NewSnapshot()
	require.NoError(t, err)
	apply(t, d, func(b *Batch) { b.Merge([]byte("k"), []byte("2")) })
	s2, err := d.NewSnapshot()
	require.NoError(t, err)
	apply(t, d, func(b *Batch) { b.Merge([]byte("k"), []byte("3")) })
	apply(t, d, func(b *Batch) { b.Merge([]byte("k"), []byte("4")) })
	for i := 0; i < 2; i++ {
		requireGet(t, d, "k", "s+1", s1)
		requireGet(t, d, "k", "s+1+2", s2)
		requireGet(t, d, "k", "s+1+2+3+4", nil)
		require.Equal(t, []string{"k=s+1"}, scan(t, d, &IterOptions{Snapshot: s1}, true))
		require.Equal(t, []string{"k=s+1+2"}, scan(t, d, &IterOptions{Snapshot: s2}, false))
		require.NoError(t, d.Compact(context.Background(), nil, nil))
	}
	require.NoError(t, s1.Close())
	require.NoError(t, s2.Close())
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	requireGet(t, d, "k", "s+1+2+3+4", nil)
	// With no snapshot left, the bottom level holds one Set.
	entries := tableEntries(t, d, fs)
	require.Equal(t, []string{"k SET s+1+2+3+4"}, entries)
	require.NoError(t, d.Close())
}

// tableEntries lists the entries of every table of d.
func tableEntries(t *testing.T, d *DB, fs FS) []string {
	t.Helper()
	var out []string
	rs := d.loadReadState()
	defer rs.unref()
	for level := range manifest.NumLevels {
		for _, tm := range rs.version.Tables(level) {
			h, err := d.tableCache.get(tm.FileNum)
			require.NoError(t, err)
			it := h.reader.NewIter(sstable.IterOptions{})
			for ok := it.First(); ok; ok = it.Next() {
				out = append(out, fmt.Sprintf("%s %s %s", it.UserKey(), it.Trailer().Kind(), it.Value()))
			}
			require.NoError(t, it.Close())
			d.tableCache.release(h)
		}
	}
	return out
}

// TestMergePartialInFlush checks that a flush partial-merges the operands
// it cannot full-merge (older tables may hold the key) and full-merges over
// a Set.
func TestMergePartialInFlush(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", mergeOptions(fs, appendMerge{}))
	require.NoError(t, err)
	apply(t, d, func(b *Batch) { b.Set([]byte("s"), []byte("base")) })
	for _, o := range []string{"1", "2", "3"} {
		apply(t, d, func(b *Batch) { b.Merge([]byte("m"), []byte(o)); b.Merge([]byte("s"), []byte(o)) })
	}
	require.NoError(t, d.Flush())
	require.Equal(t, []string{"m MERGE 1+2+3", "s SET base+1+2+3"}, tableEntries(t, d, fs))
	requireGet(t, d, "m", "1+2+3", nil)
	require.NoError(t, d.Close())
}

// TestMergeWithoutOperator: a batch holding a Merge is refused by a DB
// without a merge operator, and none of it is applied.
func TestMergeWithoutOperator(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	before := d.Metrics().LastSeqNum
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	b.Merge([]byte("b"), []byte("2"))
	err = d.Apply(&b, Sync)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrMergeOperator), "%v", err)
	requireGet(t, d, "a", "", nil)
	requireGet(t, d, "b", "", nil)
	require.Equal(t, before, d.Metrics().LastSeqNum)
	require.Empty(t, scan(t, d, nil, false))
	// Nothing reached the WAL: the DB reopens without an operator.
	require.NoError(t, d.Close())
	d, err = Open("db", smallOptions(fs))
	require.NoError(t, err)
	requireGet(t, d, "a", "", nil)
	require.NoError(t, d.Close())
}

// TestMergeOperatorNameChecked: once a DB holds merge operands it opens
// only with the same operator.
func TestMergeOperatorNameChecked(t *testing.T) {
	fs := NewMemFS()
	// A DB without merges opens with or without an operator.
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	apply(t, d, func(b *Batch) { b.Set([]byte("a"), []byte("1")) })
	require.NoError(t, d.Close())
	d, err = Open("db", mergeOptions(fs, appendMerge{}))
	require.NoError(t, err)
	require.NoError(t, d.Close())

	for _, flush := range []bool{false, true} {
		d, err = Open("db", mergeOptions(fs, maxMerge{}))
		require.NoError(t, err)
		apply(t, d, func(b *Batch) { b.Merge([]byte("m"), []byte("7")) })
		if flush {
			require.NoError(t, d.Flush())
		}
		// Closed without a flush: the operand is only in the WAL.
		require.NoError(t, d.Close())
		_, err = Open("db", smallOptions(fs))
		require.True(t, errors.Is(err, ErrMergeOperator), "%v", err)
		require.ErrorContains(t, err, `"test.max"`)
		_, err = Open("db", mergeOptions(fs, appendMerge{}))
		require.True(t, errors.Is(err, ErrMergeOperator), "%v", err)
		require.ErrorContains(t, err, `"test.append"`)
		ro := mergeOptions(fs, appendMerge{})
		ro.ReadOnly = true
		_, err = Open("db", ro)
		require.True(t, errors.Is(err, ErrMergeOperator), "read-only too: %v", err)
	}
	d, err = Open("db", mergeOptions(fs, maxMerge{}))
	require.NoError(t, err)
	requireGet(t, d, "m", "7", nil)
	require.NoError(t, d.Close())
}

// TestMergeOperandsWithoutOperatorFile: a DB whose MERGE-OPERATOR file
// was removed opens without an operator, and reading an operand is an
// error naming the key, not a panic.
func TestMergeOperandsWithoutOperatorFile(t *testing.T) {
	fs := NewMemFS()
	opts := func(op MergeOperator) *Options {
		o := mergeOptions(fs, op)
		o.Level0FileNumCompactionTrigger = 8 // no compaction merges before the file goes
		return o
	}
	d, err := Open("db", opts(maxMerge{}))
	require.NoError(t, err)
	apply(t, d, func(b *Batch) { b.Set([]byte("m"), []byte("9")) })
	require.NoError(t, d.Flush())
	apply(t, d, func(b *Batch) { b.Merge([]byte("m"), []byte("3")); b.Set([]byte("s"), []byte("1")) })
	require.NoError(t, d.Flush()) // an L0 flush keeps the operand
	require.NoError(t, d.Close())
	require.NoError(t, fs.Remove("db/"+mergeOperatorFile))
	d, err = Open("db", opts(nil))
	require.NoError(t, err)
	_, err = d.Get([]byte("m"))
	require.True(t, errors.Is(err, ErrMergeOperator), "%v", err)
	require.ErrorContains(t, err, `"m"`)
	requireGet(t, d, "s", "1", nil)
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	require.False(t, it.First())
	require.ErrorContains(t, it.Error(), `"m"`)
	require.Error(t, it.Close(), "Close returns the iteration's error")
	require.NoError(t, d.Compact(context.Background(), nil, nil), "compactions keep the operands")
	_, err = d.Get([]byte("m"))
	require.True(t, errors.Is(err, ErrMergeOperator), "%v", err)
	require.NoError(t, d.Close())
	// With the operator back, nothing was lost.
	d, err = Open("db", opts(maxMerge{}))
	require.NoError(t, err)
	requireGet(t, d, "m", "9", nil)
	require.NoError(t, d.Close())
}

// TestMergeTimeNanos: the operator is timed only with statistics.
func TestMergeTimeNanos(t *testing.T) {
	for _, stats := range []bool{false, true} {
		fs := NewMemFS()
		o := mergeOptions(fs, maxMerge{})
		o.EnableStatistics = stats
		d, err := Open("db", o)
		require.NoError(t, err)
		for i := 0; i < 100; i++ {
			apply(t, d, func(b *Batch) { b.Merge([]byte(fmt.Sprintf("k%03d", i%10)), []byte(fmt.Sprint(i))) })
		}
		requireGet(t, d, "k005", "95", nil)
		require.Len(t, scan(t, d, nil, false), 10)
		require.NoError(t, d.Compact(context.Background(), nil, nil))
		requireGet(t, d, "k005", "95", nil)
		if stats {
			require.Positive(t, d.Metrics().MergeTimeNanos)
		} else {
			require.Zero(t, d.Metrics().MergeTimeNanos)
		}
		require.NoError(t, d.Close())
	}
}

// TestMergeFullMergeError: a failing FullMerge is a read error naming the
// key, on every read path; compactions leave the operands for the reads
// and go on; other keys are unaffected.
func TestMergeFullMergeError(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", mergeOptions(fs, failingMerge{}))
	require.NoError(t, err)
	apply(t, d, func(b *Batch) {
		b.Set([]byte("bad-key"), []byte("base"))
		b.Set([]byte("good"), []byte("g"))
	})
	apply(t, d, func(b *Batch) {
		b.Merge([]byte("bad-key"), []byte("bad"))
		b.Merge([]byte("good"), []byte("1"))
	})
	checkReads := func(stage string) {
		_, err := d.Get([]byte("bad-key"))
		require.True(t, errors.Is(err, ErrMergeOperator), "%s: %v", stage, err)
		require.ErrorContains(t, err, `"bad-key"`, stage)
		requireGet(t, d, "good", "g+1", nil)
		it, err := d.NewIter(nil)
		require.NoError(t, err)
		require.False(t, it.First(), stage)
		require.ErrorContains(t, it.Error(), `"bad-key"`, stage)
		_ = it.Close()
		it, err = d.NewIter(nil)
		require.NoError(t, err)
		require.True(t, it.Last(), stage)
		require.Equal(t, "good", string(it.Key()))
		require.False(t, it.Prev(), stage)
		require.ErrorContains(t, it.Error(), `"bad-key"`, stage)
		_ = it.Close()
	}
	checkReads("memtable")
	require.NoError(t, d.Flush())
	checkReads("flushed")
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	checkReads("compacted")
	require.NoError(t, d.Close())
	// Nothing was lost: an operator of the same name that accepts the
	// operand reads the base and the operand.
	d, err = Open("db", mergeOptions(fs, fixedMerge{}))
	require.NoError(t, err)
	requireGet(t, d, "bad-key", "base+bad", nil)
	requireGet(t, d, "good", "g+1", nil)
	require.NoError(t, d.Close())
}

// fixedMerge is failingMerge's name without the failure.
type fixedMerge struct{ appendMerge }

func (fixedMerge) Name() string { return "test.failing" }

// TestCrashRecoveryMerge crashes the file system while writers add merge
// operands to shared counters: after recovery every counter holds exactly
// the operands of the batches present, and every synced batch is present.
func TestCrashRecoveryMerge(t *testing.T) {
	rng := newTestRand(t)
	const counters = 4
	fs := vfs.NewMem()
	opts := func(fs FS) *Options {
		o := mergeOptions(fs, concatMerge{})
		o.WriteBufferSize = 64 << 10
		return o
	}
	d, err := Open("db", opts(fs))
	require.NoError(t, err)
	var nextBatch atomic.Int64
	var ackedMu sync.Mutex
	acked := map[int]bool{}
	for round := 0; round < 6; round++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				r := rand.New(rand.NewSource(seed))
				for {
					select {
					case <-stop:
						return
					default:
					}
					id := int(nextBatch.Add(1))
					var b Batch
					var v [8]byte
					binary.BigEndian.PutUint64(v[:], uint64(id))
					b.Set(crashKey(id, 0), v[:])
					for c := 0; c < counters; c++ {
						b.Merge([]byte(fmt.Sprintf("counter-%d", c)), v[:])
					}
					sync := r.Intn(3) > 0
					if err := d.Apply(&b, &WriteOptions{Sync: sync}); err != nil {
						return
					}
					if sync {
						ackedMu.Lock()
						acked[id] = true
						ackedMu.Unlock()
					}
				}
			}(rng.Int63())
		}
		time.Sleep(time.Duration(5+rng.Intn(20)) * time.Millisecond)
		ackedMu.Lock()
		mustSurvive := make(map[int]bool, len(acked))
		for id := range acked {
			mustSurvive[id] = true
		}
		ackedMu.Unlock()
		crashed := fs.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewSource(rng.Int63())), KeepUnsyncedTail: rng.Intn(2) == 0})
		close(stop)
		wg.Wait()
		require.NoError(t, d.Close())
		written := int(nextBatch.Load())

		d, err = Open("db", opts(crashed))
		require.NoError(t, err, "round %d: recovery", round)
		present := map[int]bool{}
		for id := 1; id <= written; id++ {
			if _, err := d.Get(crashKey(id, 0)); err == nil {
				present[id] = true
			} else {
				require.True(t, errors.Is(err, ErrNotFound), "%v", err)
				require.False(t, mustSurvive[id], "round %d: synced batch %d lost", round, id)
			}
		}
		for c := 0; c < counters; c++ {
			v, err := d.Get([]byte(fmt.Sprintf("counter-%d", c)))
			if len(present) == 0 {
				require.True(t, errors.Is(err, ErrNotFound), "%v", err)
				continue
			}
			require.NoError(t, err)
			require.Zero(t, len(v)%8)
			seen := map[int]bool{}
			for i := 0; i < len(v); i += 8 {
				id := int(binary.BigEndian.Uint64(v[i:]))
				require.False(t, seen[id], "round %d: counter %d holds batch %d twice", round, c, id)
				seen[id] = true
			}
			require.Equal(t, present, seen, "round %d: counter %d", round, c)
		}
		if round%2 == 1 {
			require.NoError(t, d.Compact(context.Background(), nil, nil))
		}
		fs = crashed
		ackedMu.Lock()
		acked = mustSurvive
		ackedMu.Unlock()
	}
	require.NoError(t, d.Close())
}
