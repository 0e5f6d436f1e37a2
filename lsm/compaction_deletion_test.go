package lsm

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/stretchr/testify/require"
)

func metaOf(num uint64, lo, hi string, rangeDels uint64) *manifest.TableMeta {
	return &manifest.TableMeta{FileNum: num, Size: 1, Entries: 1 + rangeDels, RangeDeletions: rangeDels,
		Smallest: base.MakeInternalKey([]byte(lo), 1, base.KindSet), Largest: base.MakeInternalKey([]byte(hi), 1, base.KindSet)}
}

// TestTombstoneGen checks that the fingerprint of the tombstone-bearing
// tables changes when such a table comes, goes or changes level, and only
// then: a rescan is needed exactly when the tombstones may cover
// something else.
func TestTombstoneGen(t *testing.T) {
	apply := func(v *manifest.Version, e *manifest.VersionEdit) *manifest.Version {
		t.Helper()
		nv, err := v.Apply(e)
		require.NoError(t, err)
		return nv
	}
	v0 := apply(manifest.NewVersion(), &manifest.VersionEdit{NewTables: []manifest.NewTable{
		{Level: 6, Meta: metaOf(1, "a", "c", 0)},
	}})
	empty := tombstoneGen(v0)
	require.Equal(t, empty, tombstoneGen(manifest.NewVersion()), "tables without tombstones are not fingerprinted")

	v1 := apply(v0, &manifest.VersionEdit{NewTables: []manifest.NewTable{{Level: 6, Meta: metaOf(2, "d", "f", 0)}}})
	require.Equal(t, empty, tombstoneGen(v1), "a table without tombstones changes nothing")

	v2 := apply(v1, &manifest.VersionEdit{NewTables: []manifest.NewTable{{Level: 0, Meta: metaOf(3, "a", "z", 1)}}})
	g2 := tombstoneGen(v2)
	require.NotEqual(t, empty, g2, "a tombstone table arrived")

	moved := apply(v2, &manifest.VersionEdit{
		DeletedTables: []manifest.DeletedTable{{Level: 0, FileNum: 3}},
		NewTables:     []manifest.NewTable{{Level: 5, Meta: metaOf(3, "a", "z", 1)}},
	})
	require.NotEqual(t, g2, tombstoneGen(moved), "the tombstone table moved down a level")

	rewritten := apply(v2, &manifest.VersionEdit{
		DeletedTables: []manifest.DeletedTable{{Level: 0, FileNum: 3}},
		NewTables:     []manifest.NewTable{{Level: 0, Meta: metaOf(4, "a", "z", 1)}},
	})
	require.NotEqual(t, g2, tombstoneGen(rewritten), "the tombstone table was rewritten")

	gone := apply(v2, &manifest.VersionEdit{DeletedTables: []manifest.DeletedTable{{Level: 0, FileNum: 3}}})
	require.Equal(t, empty, tombstoneGen(gone), "the tombstones are gone")
}

// TestOverlapsAny checks the bounds: a fragment's end is exclusive, a
// table's largest key inclusive.
func TestOverlapsAny(t *testing.T) {
	frags := []rangedel.Fragment{{Start: []byte("c"), End: []byte("e"), Seqs: []base.SeqNum{9}}}
	for _, tc := range []struct {
		lo, hi string
		want   bool
	}{
		{"a", "b", false},
		{"a", "c", true}, // the table's largest is the fragment's start
		{"c", "c", true},
		{"d", "z", true},
		{"a", "z", true},  // the table spans the fragment
		{"e", "f", false}, // the fragment ends before e
		{"f", "g", false},
	} {
		require.Equal(t, tc.want, overlapsAny(frags, metaOf(1, tc.lo, tc.hi, 0)), "[%s, %s]", tc.lo, tc.hi)
	}
	require.False(t, overlapsAny(nil, metaOf(1, "a", "z", 0)))
}

// TestScanCoverage checks the covered-fraction estimates of a real DB: the
// tables of the last level under a newer range tombstone are estimated
// covered in proportion (whole tables under it fully), and a table under
// no tombstone gets no estimate.
func TestScanCoverage(t *testing.T) {
	o := noCompactions(smallOptions(NewMemFS()))
	o.Compression = NoCompression
	o.BlockSize = 512
	d, err := Open("db", o)
	require.NoError(t, err)
	defer d.Close()
	rng := rand.New(rand.NewSource(1))
	var b Batch
	for _, prefix := range []string{"a", "c"} {
		for i := 0; i < 2000; i++ {
			v := make([]byte, 50)
			rng.Read(v)
			b.Set([]byte(fmt.Sprintf("%s%05d", prefix, i)), v)
		}
	}
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	// A newer tombstone over the first half of c, left in L0. The open
	// snapshot keeps the background deletion compaction from rewriting the
	// covered table before the scan below (it waits for snapshots); it
	// did, under -race, in CI.
	snap, err := d.NewSnapshot()
	require.NoError(t, err)
	defer func() { require.NoError(t, snap.Close()) }()
	b.Reset()
	b.DeleteRange([]byte("c"), []byte("c01000"))
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Flush())

	d.mu.Lock()
	v := d.mu.versions.Current()
	d.mu.Unlock()
	defer v.Unref()
	fractions := d.scanCoverage(v)
	t.Logf("fractions %v\n%s", fractions, v)
	last := d.opts.NumLevels - 1
	require.Greater(t, v.NumTables(last), 2, "the test needs several tables")
	var coveredBytes, totalBytes float64
	for _, tm := range v.Tables(last) {
		totalBytes += float64(tm.Size)
		f, ok := fractions[tm.FileNum]
		switch {
		case string(tm.Largest.UserKey) < "c":
			require.False(t, ok, "table %s: under no tombstone, yet estimated %.2f", tm, f)
		case string(tm.Largest.UserKey) < "c01000" && string(tm.Smallest.UserKey) >= "c":
			require.InDelta(t, 1, f, 0.01, "table %s wholly under the tombstone", tm)
		}
		coveredBytes += f * float64(tm.Size)
	}
	require.InDelta(t, 0.25, coveredBytes/totalBytes, 0.03, "a quarter of the data is covered")
}
