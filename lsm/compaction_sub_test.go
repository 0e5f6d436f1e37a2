package lsm

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// subOptions are small tables (64 KiB, the least allowed) and memtables,
// so that a load of a few MB builds levels of several tables whose
// compactions split into key ranges.
func subOptions(fs FS, maxSub int) *Options {
	o := smallOptions(fs)
	o.WriteBufferSize = 128 << 10
	o.MaxSubcompactions = maxSub
	o.IdleCompactionDelay = -1
	return o
}

// loadKey is the key of (ledger, entry), as entrylocation writes it.
func loadKey(ledger, entry int) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], uint64(ledger))
	binary.BigEndian.PutUint64(k[8:], uint64(entry))
	return k[:]
}

// subcompactionLoad writes the bench's load shape (batch k: entries
// [k·per, (k+1)·per) of every ledger), with deleted ledgers (range
// tombstones spanning table boundaries), point deletions and a snapshot
// taken in the middle, into d and into the model (the batches the DB
// acknowledged). It returns the snapshot and what it sees, or the first
// write's error.
func subcompactionLoad(d *DB, rng *rand.Rand, m model) (*Snapshot, model, error) {
	const ledgers, batches, per = 120, 10, 40
	var snap *Snapshot
	var snapModel model
	var b Batch
	apply := func(change map[string]*string) error {
		if err := d.Apply(&b, Sync); err != nil {
			return err
		}
		for k, v := range change {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = *v
			}
		}
		return nil
	}
	for k := 0; k < batches; k++ {
		b.Reset()
		change := map[string]*string{}
		for l := 0; l < ledgers; l++ {
			for e := k * per; e < (k+1)*per; e++ {
				v := fmt.Sprintf("loc-%d-%d-%d", l, e, rng.Intn(1000))
				b.Set(loadKey(l, e), []byte(v))
				change[string(loadKey(l, e))] = &v
			}
		}
		if err := apply(change); err != nil {
			return snap, snapModel, err
		}
		switch k {
		case 4:
			var err error
			if snap, err = d.NewSnapshot(); err != nil {
				return nil, nil, err
			}
			snapModel = m.clone()
		case 6:
			b.Reset()
			change := map[string]*string{}
			for l := 30; l < 70; l += 7 { // deleted ledgers, as a bookie purges them
				b.DeleteRange(loadKey(l, 0), loadKey(l+1, 0))
				for key := range m {
					if key >= string(loadKey(l, 0)) && key < string(loadKey(l+1, 0)) {
						change[key] = nil
					}
				}
			}
			for n := 0; n < 200; n++ {
				key := loadKey(rng.Intn(ledgers), rng.Intn((k+1)*per))
				b.Delete(key)
				change[string(key)] = nil
			}
			if err := apply(change); err != nil {
				return snap, snapModel, err
			}
		}
	}
	return snap, snapModel, nil
}

// requireDisjointLevels checks that below L0 every level's tables are
// sorted and do not overlap, as split outputs must leave them.
func requireDisjointLevels(t *testing.T, d *DB) {
	t.Helper()
	tables, err := d.Tables()
	require.NoError(t, err)
	last := map[int][]byte{}
	for _, ti := range tables {
		if ti.Level == 0 {
			continue
		}
		if prev, ok := last[ti.Level]; ok {
			// Equal when the previous table ends with a range tombstone's
			// exclusive end.
			require.LessOrEqual(t, bytes.Compare(prev, ti.Smallest), 0, "L%d: table %d starts at %q, before the previous table's end %q", ti.Level, ti.FileNum, ti.Smallest, prev)
		}
		last[ti.Level] = ti.Largest
	}
}

// TestSubcompactions loads the same writes with compactions run whole and
// split into up to 3 key ranges: both hold exactly the model's contents,
// at the head and at a snapshot taken halfway, before and after a manual
// compaction, with disjoint levels and tables that verify.
func TestSubcompactions(t *testing.T) {
	for _, maxSub := range []int{1, 3} {
		t.Run(fmt.Sprintf("max=%d", maxSub), func(t *testing.T) {
			d, err := Open("db", subOptions(NewMemFS(), maxSub))
			require.NoError(t, err)
			defer func() { require.NoError(t, d.Close()) }()
			m := model{}
			snap, snapModel, err := subcompactionLoad(d, rand.New(rand.NewSource(1)), m)
			require.NoError(t, err)
			require.NoError(t, d.Flush())
			require.NoError(t, d.WaitForCompactions(context.Background()))
			check := func(what string) {
				checkAll(t, d, m)
				checkAllAt(t, d, snap, snapModel)
				requireDisjointLevels(t, d)
				require.NoError(t, d.Check(), what)
			}
			check("after the load")
			require.NoError(t, d.Compact(context.Background(), nil, nil))
			check("after Compact")
			mt := d.Metrics()
			t.Logf("levels %v, %d compactions, %d key ranges of split ones", levelTables(mt), mt.Compactions, mt.Subcompactions)
			if maxSub == 1 {
				require.Zero(t, mt.Subcompactions)
			} else {
				require.Positive(t, mt.Subcompactions, "no compaction was split")
			}
			require.NoError(t, snap.Close())
		})
	}
}

// TestSubcompactionRanges checks the split itself: boundaries at the
// starts of output-level tables holding about equal bytes, and no split
// for small, sliced, intra-L0 or in-place compactions.
func TestSubcompactionRanges(t *testing.T) {
	d := &DB{opts: &Options{MaxSubcompactions: 3, TargetFileSizeBase: 100}}
	table := func(lo, hi string, size uint64) *manifest.TableMeta {
		tm := &manifest.TableMeta{Size: size}
		tm.Smallest.UserKey, tm.Largest.UserKey = []byte(lo), []byte(hi)
		return tm
	}
	below := []*manifest.TableMeta{table("a", "b", 100), table("c", "d", 100), table("e", "f", 100), table("g", "h", 100), table("i", "j", 100), table("k", "l", 100)}
	c := &compaction{startLevel: 0, outputLevel: 6}
	c.inputs[0] = []*manifest.TableMeta{table("a", "z", 300)}
	c.inputs[1] = below
	spell := func(rs []keyRange) string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("[%s,%s)", r.lo, r.hi))
		}
		return strings.Join(s, " ")
	}
	require.Equal(t, "[,e) [e,i) [i,)", spell(d.subcompactionRanges(c)))
	d.opts.MaxSubcompactions = 2
	require.Equal(t, "[,g) [g,)", spell(d.subcompactionRanges(c)))
	// Uneven tables: the boundary where half the level's bytes are behind.
	c.inputs[1] = []*manifest.TableMeta{table("a", "b", 500), table("c", "d", 100), table("e", "f", 100)}
	require.Equal(t, "[,c) [c,)", spell(d.subcompactionRanges(c)))

	for name, mod := range map[string]func(c *compaction){
		"one table below": func(c *compaction) { c.inputs[1] = below[:1] },
		"small": func(c *compaction) {
			c.inputs[0], c.inputs[1] = nil, []*manifest.TableMeta{table("a", "b", 50), table("c", "d", 50)}
		},
		"sliced":   func(c *compaction) { c.sliced = true },
		"intra-L0": func(c *compaction) { c.outputLevel = 0 },
		"in place": func(c *compaction) { c.inPlace = true },
	} {
		c := &compaction{startLevel: 0, outputLevel: 6}
		c.inputs[0] = []*manifest.TableMeta{table("a", "z", 300)}
		c.inputs[1] = below
		mod(c)
		require.Nil(t, d.subcompactionRanges(c), name)
	}
	d.opts.MaxSubcompactions = 1
	c.inputs[1] = below
	require.Nil(t, d.subcompactionRanges(c), "MaxSubcompactions 1")
}

// inSplitCompaction reports whether the caller runs one key range of a
// split compaction.
func inSplitCompaction() bool {
	buf := make([]byte, 16<<10)
	st := string(buf[:runtime.Stack(buf, false)])
	return strings.Contains(st, "writeCompactionOutputs.func") && strings.Contains(st, "compactionJob).run")
}

// TestSubcompactionFailure fails the creation of a table in one key range
// of a split background compaction (out of space, then an I/O error): the
// compaction installs nothing and leaves no table behind (the other
// ranges' tables are removed), every key stays readable, and after the
// fault the DB compacts again (out of space: by itself; an I/O error
// stops writes: after a reopen).
func TestSubcompactionFailure(t *testing.T) {
	for _, fault := range []error{syscall.ENOSPC, syscall.EIO} {
		t.Run(fault.Error(), func(t *testing.T) {
			mem := vfs.NewMem()
			var creates, failed atomic.Int64
			fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
				if op.Kind == vfs.OpCreate && strings.HasSuffix(op.Path, ".sst") && inSplitCompaction() {
					// The second table split ranges create: the other
					// range has one under way or done.
					if creates.Add(1) == 2 {
						failed.Add(1)
						return fault
					}
				}
				return nil
			}))
			o := subOptions(fs, 2)
			o.NoSpaceRetryInterval, o.NoSpaceRetryMaxInterval = 1e6, 4e6
			d, err := Open("db", o)
			require.NoError(t, err)
			m := model{}
			snap, _, loadErr := subcompactionLoad(d, rand.New(rand.NewSource(2)), m)
			if snap != nil {
				require.NoError(t, snap.Close())
			}
			if fault == syscall.ENOSPC {
				require.NoError(t, loadErr, "writes go on while compactions wait for space")
			}
			_ = d.Flush()
			_ = d.WaitForCompactions(context.Background())
			require.Equal(t, int64(1), failed.Load(), "one table creation of a split compaction failed")
			if fault == syscall.ENOSPC {
				// Out of space is recovered in place.
				waitUntil(t, "recovery", func() bool { return d.BackgroundError() == nil })
				require.NoError(t, d.WaitForCompactions(context.Background()))
				checkAll(t, d, m)
				require.NoError(t, d.Compact(context.Background(), nil, nil))
				checkAll(t, d, m)
				requireDisjointLevels(t, d)
				d.deleteObsoleteFiles(false) // those readers released since the last compaction
				requireNoStrayTables(t, d, mem, "after recovery")
				require.NoError(t, d.Close())
				return
			}
			// An I/O error stops writes; reads go on, and a reopen has every
			// key and no table of the failed compaction.
			require.Error(t, d.BackgroundError())
			require.True(t, errors.Is(d.BackgroundError(), syscall.EIO), "%v", d.BackgroundError())
			checkAll(t, d, m)
			requireNoStrayTables(t, d, mem, "after the failure")
			_ = d.Close()
			d, err = Open("db", subOptions(mem, 2))
			require.NoError(t, err)
			checkAll(t, d, m)
			require.NoError(t, d.WaitForCompactions(context.Background()))
			checkAll(t, d, m)
			d.deleteObsoleteFiles(false) // those readers released since the last compaction
			requireNoStrayTables(t, d, mem, "after a reopen")
			require.NoError(t, d.Close())
		})
	}
}

// TestSplitIntoEmptyLevel: a load's first compaction, L0 tables that each
// span every ledger into an empty level, is split at keys from the
// largest input's index into parts of about equal bytes, and leaves the
// model's contents in disjoint tables; a compaction run whole leaves the
// same.
func TestSplitIntoEmptyLevel(t *testing.T) {
	for _, maxSub := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("max=%d", maxSub), func(t *testing.T) {
			o := subOptions(NewMemFS(), maxSub)
			o.Level0FileNumCompactionTrigger = 2
			d, err := Open("db", o)
			require.NoError(t, err)
			defer func() { require.NoError(t, d.Close()) }()
			m := model{}
			var b Batch
			const ledgers, per = 500, 40
			for k := 0; k < 2; k++ { // two L0 tables, each over every ledger
				b.Reset()
				for l := 0; l < ledgers; l++ {
					for e := k * per; e < (k+1)*per; e++ {
						v := fmt.Sprintf("loc-%d-%d", l, e)
						b.Set(loadKey(l, e), []byte(v))
						m[string(loadKey(l, e))] = v
					}
				}
				require.NoError(t, d.Apply(&b, Sync))
				require.NoError(t, d.Flush())
			}
			require.NoError(t, d.WaitForCompactions(context.Background()))
			mt := d.Metrics()
			t.Logf("levels %v, %d compactions, %d key ranges", levelTables(mt), mt.Compactions, mt.Subcompactions)
			require.Zero(t, mt.Levels[0].Tables, "L0 was not compacted")
			require.EqualValues(t, 1, mt.Compactions)
			if maxSub == 1 {
				require.Zero(t, mt.Subcompactions)
			} else {
				require.EqualValues(t, maxSub, mt.Subcompactions, "the compaction into the empty level was not split")
				// Each range wrote its own tables, of about equal size.
				tables, err := d.Tables()
				require.NoError(t, err)
				var sizes []uint64
				var total uint64
				for _, ti := range tables {
					sizes = append(sizes, ti.Size)
					total += ti.Size
				}
				require.Len(t, sizes, maxSub)
				t.Logf("table sizes %v", sizes)
				for _, size := range sizes {
					require.InDelta(t, total/uint64(maxSub), size, float64(total)/float64(maxSub)/4, "table sizes %v", sizes)
				}
			}
			checkAll(t, d, m)
			requireDisjointLevels(t, d)
			require.NoError(t, d.Check())
		})
	}
}

// TestSplitIntoEmptyLevelOnlyThere: no split into a level that has
// tables (subcompactionRanges' case), for a manual, sliced, intra-L0 or
// in-place compaction, one from below L0, or one under two target table sizes.
func TestSplitIntoEmptyLevelOnlyThere(t *testing.T) {
	d := &DB{opts: &Options{MaxSubcompactions: 2, TargetFileSizeBase: 100}}
	for name, mod := range map[string]func(c *compaction){
		"a table below": func(c *compaction) { c.inputs[1] = []*manifest.TableMeta{{Size: 10}} },
		"sliced":        func(c *compaction) { c.sliced = true },
		"intra-L0":      func(c *compaction) { c.outputLevel = 0 },
		"in place":      func(c *compaction) { c.inPlace = true },
		"from L1":       func(c *compaction) { c.startLevel = 1 },
		"manual":        func(c *compaction) { c.manual = true },
		"small":         func(c *compaction) { c.inputs[0] = []*manifest.TableMeta{{Size: 150}} },
	} {
		c := &compaction{startLevel: 0, outputLevel: 6}
		c.inputs[0] = []*manifest.TableMeta{{Size: 300}}
		mod(c)
		job := &compactionJob{c: c, tables: c.allInputs()}
		// No handles: reaching the index would panic.
		require.Nil(t, d.splitIntoEmptyLevel(c, job), name)
	}
}
