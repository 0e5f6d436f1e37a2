package lsm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOptionsZeroMeansDefaultNegativeMeansNone checks the options' one
// convention: a zero field is its default, a negative one the setting whose
// zero is real (one shard, no reserved high-priority share).
func TestOptionsZeroMeansDefaultNegativeMeansNone(t *testing.T) {
	open := func(o *Options) *DB {
		t.Helper()
		o.FS = NewMemFS()
		d, err := Open("db", o)
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	m := open(&Options{}).cache.Metrics()
	require.Equal(t, 64, m.NumShards, "the default for a 256 MiB cache")
	m = open(&Options{BlockCacheSize: 1 << 20}).cache.Metrics()
	require.Equal(t, 2, m.NumShards, "the default keeps shards of at least 512 KiB")
	d := open(&Options{BlockCacheSize: 1 << 20, BlockCacheNumShardBits: -1, BlockCacheHighPriorityRatio: -1})
	require.Equal(t, 1, d.cache.Metrics().NumShards)

	o := DefaultOptions()
	require.Equal(t, DefaultBlockRestartInterval, o.BlockRestartInterval)
	require.Equal(t, DefaultBlockCacheHighPriorityRatio, o.BlockCacheHighPriorityRatio)
	require.Equal(t, o.TableOptions().RestartInterval, o.BlockRestartInterval)
	o.BlockCacheNumShardBits = 17
	require.ErrorContains(t, o.Validate(), "BlockCacheNumShardBits 17 is above 16")
	o.BlockCacheNumShardBits, o.BlockCacheHighPriorityRatio = 0, 1.5
	require.ErrorContains(t, o.Validate(), "BlockCacheHighPriorityRatio 1.5 is above 1")
}
