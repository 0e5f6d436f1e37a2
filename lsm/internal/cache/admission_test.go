package cache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAdmit: every miss is admitted while the shard has room; once an
// insert has had to evict, one in FullAdmitOneIn; again all once an insert
// fits without evicting. FullAdmitOneIn 1 admits everything.
func TestAdmit(t *testing.T) {
	const block = 1000
	admitted := func(c *Cache, n int) int {
		a := 0
		for i := range n {
			if c.Admit(1, uint64(1_000_000+i)) {
				a++
			}
		}
		return a
	}
	c := newTestCache(t, Options{Capacity: 10 * charge(block), NumShardBits: OneShard})
	require.Equal(t, DefaultFullAdmitOneIn, c.opts.FullAdmitOneIn)
	for i := range 10 {
		require.Equal(t, 1000, admitted(c, 1000), "room for block %d", i)
		insertValue(t, c, 1, uint64(i*block), make([]byte, block))
	}
	require.Equal(t, 1000, admitted(c, 1000), "full, but no insert has evicted yet")
	insertValue(t, c, 1, 10*block, make([]byte, block))
	n := admitted(c, 8000)
	require.InDelta(t, 8000/DefaultFullAdmitOneIn, n, 300, "one in %d once inserts evict", DefaultFullAdmitOneIn)

	c.EvictFile(1)
	insertValue(t, c, 1, 0, make([]byte, block))
	require.Equal(t, 1000, admitted(c, 1000), "an insert fitted without evicting")

	all := newTestCache(t, Options{Capacity: 2 * charge(block), NumShardBits: OneShard, FullAdmitOneIn: 1})
	for i := range 5 {
		insertValue(t, all, 1, uint64(i*block), make([]byte, block))
	}
	require.Equal(t, 1000, admitted(all, 1000))
}

// insertValue caches value as (id, offset) at low priority and releases the
// handle.
func insertValue(t *testing.T, c *Cache, id, offset uint64, value []byte) {
	t.Helper()
	h, err := c.insertBytes(id, offset, KindData, PriorityLow, value)
	require.NoError(t, err)
	h.Release()
}
