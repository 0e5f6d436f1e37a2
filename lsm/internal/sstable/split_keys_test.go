package sstable

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitKeys: the keys increase, lie inside the table, and cut its
// entries (which the workload spreads evenly over the data blocks) into
// parts of about equal size, with a partitioned and a one-level index; a
// table of one block has no split.
func TestSplitKeys(t *testing.T) {
	fs, dir := tempFS(t)
	kvs := entryLocationKVs(200, 500)
	for _, layout := range []Layout{LayoutPartitioned, LayoutFull} {
		path := fmt.Sprintf("%s/%d.sst", dir, layout)
		writeTable(t, fs, path, WriterOptions{BlockSize: 1024, MetadataBlockSize: 256, Layout: layout}, kvs, nil)
		r := openTable(t, fs, path, nil)
		for _, n := range []int{1, 2, 3, 8} {
			keys, err := r.SplitKeys(n)
			require.NoError(t, err)
			require.Len(t, keys, n-1, "layout %d, n %d", layout, n)
			// Entries below each key, and so each part's share.
			prev := 0
			for i, k := range keys {
				below := 0
				for below < len(kvs) && bytes.Compare(kvs[below].key.UserKey, k) < 0 {
					below++
				}
				require.Greater(t, below, prev, "layout %d, n %d: key %d does not increase", layout, n, i)
				part := below - prev
				require.InDelta(t, len(kvs)/n, part, float64(len(kvs))/float64(n)/10, "layout %d, n %d: part %d", layout, n, i)
				prev = below
			}
			require.Less(t, prev, len(kvs), "layout %d, n %d: the last part is empty", layout, n)
		}
		require.NoError(t, r.Close())
	}

	path := dir + "/one-block.sst"
	writeTable(t, fs, path, WriterOptions{}, kvs[:10], nil)
	r := openTable(t, fs, path, nil)
	keys, err := r.SplitKeys(4)
	require.NoError(t, err)
	require.Empty(t, keys)
	require.NoError(t, r.Close())
}
