package lsm

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var modelDuration = flag.Duration("model-duration", 0, "run the randomized model test for this long per option set (default: a fixed number of steps)")

// model is the reference: a map from key to value.
type model map[string]string

func (m model) clone() model {
	c := make(model, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (m model) sortedKeys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func modelKey(rng *rand.Rand) []byte {
	switch rng.Intn(3) {
	case 0:
		return []byte(fmt.Sprintf("k%c%c", 'a'+rng.Intn(8), 'a'+rng.Intn(8)))
	case 1:
		return []byte(fmt.Sprintf("k%c", 'a'+rng.Intn(8)))
	default:
		var k [16]byte
		k[7] = byte(rng.Intn(4))
		k[15] = byte(rng.Intn(64))
		return k[:]
	}
}

type modelOptionSet struct {
	name string
	opts func(fs FS) *Options
}

func modelOptionSets() []modelOptionSet {
	return []modelOptionSet{
		{"tiny-partitioned", func(fs FS) *Options {
			o := smallOptions(fs)
			o.WriteBufferSize = 64 << 10
			return o
		}},
		{"tiny-full-nocompress", func(fs FS) *Options {
			o := smallOptions(fs)
			o.TableLayout = TableLayoutFull
			o.Compression = NoCompression
			o.BloomBitsPerKey = -1
			o.DisableCommonPrefix = true
			o.BlockRestartInterval = 1
			return o
		}},
		{"static-levels", func(fs FS) *Options {
			o := smallOptions(fs)
			o.StaticLevelBytes = true
			o.Level0FileNumCompactionTrigger = 1
			o.MaxBackgroundJobs = 4
			return o
		}},
		// Merge operands with an operator whose partial merges always
		// succeed (max) and one that declines long ones and whose result
		// depends on the operands' order (append).
		{"merge-max", func(fs FS) *Options {
			o := smallOptions(fs)
			o.MergeOperator = maxMerge{}
			o.Level0FileNumCompactionTrigger = 1
			return o
		}},
		{"merge-append", func(fs FS) *Options {
			o := smallOptions(fs)
			o.MergeOperator = appendMerge{}
			o.TableLayout = TableLayoutFull
			return o
		}},
		// Iterators convert runs of two or more point tombstones into
		// range tombstones.
		{"convert-runs", func(fs FS) *Options {
			o := smallOptions(fs)
			o.MinTombstonesForRangeConversion = 2
			o.MergeOperator = maxMerge{}
			return o
		}},
	}
}

func TestModel(t *testing.T) {
	for i, set := range modelOptionSets() {
		t.Run(set.name, func(t *testing.T) {
			runModel(t, int64(100+i), set.opts)
		})
	}
}

type openSnapshot struct {
	s *Snapshot
	m model
}

func runModel(t *testing.T, seed int64, opts func(FS) *Options) {
	rng := rand.New(rand.NewSource(seed))
	fs := NewMemFS()
	d, err := Open("db", opts(fs))
	require.NoError(t, err)
	m := model{}
	mergeOp := opts(fs).MergeOperator
	var converted int64 // read-path range tombstones, over reopens
	var snaps []openSnapshot
	deadline := time.Now().Add(*modelDuration)
	steps := 1500
	var b Batch
	for step := 0; ; step++ {
		if *modelDuration > 0 {
			if time.Now().After(deadline) {
				break
			}
		} else if step >= steps {
			break
		}
		what := fmt.Sprintf("step %d", step)
		switch r := rng.Intn(100); {
		case r < 50: // a batch
			b.Reset()
			next := m.clone()
			for n := 1 + rng.Intn(20); n > 0; n-- {
				k := modelKey(rng)
				op := rng.Intn(10)
				if mergeOp != nil && op >= 5 && rng.Intn(2) == 0 {
					// Short operands, so that append chains stay short.
					v := fmt.Sprintf("m%d.%d", step, n)
					b.Merge(k, []byte(v))
					old, ok := next[string(k)]
					next[string(k)] = modelMerge(mergeOp, old, ok, v)
					continue
				}
				switch op {
				case 0, 1:
					b.Delete(k)
					delete(next, string(k))
				case 2:
					end := modelKey(rng)
					if rng.Intn(4) == 0 {
						// An empty range: a no-op, as RocksDB and Pebble
						// take it (the loop below deletes nothing).
						end = k
					}
					if bytes.Compare(k, end) > 0 {
						continue
					}
					b.DeleteRange(k, end)
					for key := range next {
						if key >= string(k) && key < string(end) {
							delete(next, key)
						}
					}
				default:
					v := fmt.Sprintf("v%d-%d-%s", step, n, bytes.Repeat([]byte("x"), rng.Intn(400)))
					b.Set(k, []byte(v))
					next[string(k)] = v
				}
			}
			require.NoError(t, d.Apply(&b, &WriteOptions{Sync: rng.Intn(2) == 0}), what)
			m = next
		case r < 70: // point reads
			for n := 0; n < 10; n++ {
				k := modelKey(rng)
				checkGet(t, d, m, nil, k, what)
			}
		case r < 80:
			checkIter(t, rng, d, m, nil, what)
		case r < 84:
			require.NoError(t, d.Flush(), what)
		case r < 86:
			var start, end []byte
			if rng.Intn(2) == 0 {
				start, end = modelKey(rng), modelKey(rng)
				if bytes.Compare(start, end) > 0 {
					start, end = end, start
				}
			}
			require.NoError(t, d.Compact(context.Background(), start, end), what)
		case r < 90: // snapshots
			if len(snaps) > 0 && rng.Intn(2) == 0 {
				i := rng.Intn(len(snaps))
				s := snaps[i]
				k := modelKey(rng)
				checkGet(t, d, s.m, s.s, k, what+" (snapshot)")
				checkIter(t, rng, d, s.m, s.s, what+" (snapshot)")
				if rng.Intn(3) == 0 {
					require.NoError(t, s.s.Close())
					snaps = append(snaps[:i], snaps[i+1:]...)
				}
			} else {
				s, err := d.NewSnapshot()
				require.NoError(t, err)
				snaps = append(snaps, openSnapshot{s: s, m: m.clone()})
			}
		case r < 92: // close and reopen
			for _, s := range snaps {
				require.NoError(t, s.s.Close())
			}
			snaps = nil
			converted += d.Metrics().ReadPathRangeTombstonesInserted
			require.NoError(t, d.Close(), what)
			d, err = Open("db", opts(fs))
			require.NoError(t, err, what)
		default:
			// Let background work run.
			time.Sleep(time.Millisecond)
		}
	}
	// Final full check.
	checkAll(t, d, m)
	for _, s := range snaps {
		require.NoError(t, s.s.Close())
	}
	t.Logf("metrics: levels %v, flushes %d, compactions %d, trivial moves %d, read-path range tombstones %d",
		levelTables(d.Metrics()), d.Metrics().ImmutableFlushes, d.Metrics().Compactions, d.Metrics().TrivialMoves,
		converted+d.Metrics().ReadPathRangeTombstonesInserted)
	require.NoError(t, d.Close())
}

func levelTables(m Metrics) []int {
	var n []int
	for _, l := range m.Levels {
		n = append(n, l.Tables)
	}
	return n
}

func checkGet(t *testing.T, d *DB, m model, s *Snapshot, k []byte, what string) {
	t.Helper()
	v, err := d.GetAppend(nil, k, &ReadOptions{Snapshot: s})
	want, ok := m[string(k)]
	if !ok {
		require.True(t, errors.Is(err, ErrNotFound), "%s: Get(%q) = %q, %v; want not found", what, k, v, err)
		return
	}
	require.NoError(t, err, "%s: Get(%q)", what, k)
	require.Equal(t, want, string(v), "%s: Get(%q)", what, k)
}

func checkAll(t *testing.T, d *DB, m model) {
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	require.NoError(t, it.Close())
	var want []string
	for _, k := range m.sortedKeys() {
		want = append(want, k+"="+m[k])
	}
	require.Equal(t, want, got)
}

// checkIter drives random iterator operations with random bounds against
// the model.
func checkIter(t *testing.T, rng *rand.Rand, d *DB, m model, s *Snapshot, what string) {
	var lower, upper []byte
	if rng.Intn(2) == 0 {
		lower = modelKey(rng)
	}
	if rng.Intn(2) == 0 {
		upper = modelKey(rng)
	}
	var keys []string
	for _, k := range m.sortedKeys() {
		if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
			keys = append(keys, k)
		}
	}
	// LastInRange agrees with the model (and so with Iterator.Last).
	if lower != nil && upper != nil {
		k, v, found, err := d.LastInRange(nil, nil, lower, upper, &ReadOptions{Snapshot: s})
		require.NoError(t, err)
		require.Equal(t, len(keys) > 0, found, "%s: LastInRange [%q, %q)", what, lower, upper)
		if found {
			require.Equal(t, keys[len(keys)-1], string(k))
			require.Equal(t, m[keys[len(keys)-1]], string(v))
		}
	}
	it, err := d.NewIter(&IterOptions{LowerBound: lower, UpperBound: upper, Snapshot: s})
	require.NoError(t, err)
	pos := -1
	var ops []string
	for op := 0; op < 30; op++ {
		var ok bool
		switch rng.Intn(6) {
		case 0:
			k := modelKey(rng)
			ok = it.SeekGE(k)
			ops = append(ops, fmt.Sprintf("SeekGE(%q)", k))
			pos = sort.SearchStrings(keys, string(k))
		case 1:
			k := modelKey(rng)
			ok = it.SeekLT(k)
			ops = append(ops, fmt.Sprintf("SeekLT(%q)", k))
			pos = sort.SearchStrings(keys, string(k)) - 1
		case 2:
			ok = it.First()
			ops = append(ops, "First")
			pos = 0
		case 3:
			ok = it.Last()
			ops = append(ops, "Last")
			pos = len(keys) - 1
		case 4:
			if pos < 0 || pos >= len(keys) {
				continue
			}
			ok = it.Next()
			ops = append(ops, "Next")
			pos++
		case 5:
			if pos < 0 || pos >= len(keys) {
				continue
			}
			ok = it.Prev()
			ops = append(ops, "Prev")
			pos--
		}
		valid := pos >= 0 && pos < len(keys)
		desc := fmt.Sprintf("%s: bounds [%q, %q) ops %v", what, lower, upper, ops)
		require.NoError(t, it.Error(), desc)
		require.Equal(t, valid, ok, desc)
		if valid {
			require.Equal(t, keys[pos], string(it.Key()), desc)
			require.Equal(t, m[keys[pos]], string(it.Value()), desc)
		}
	}
	require.NoError(t, it.Close())
}
