package cache

import (
	"math"

	"github.com/cockroachdb/errors"
)

const (
	// DefaultNumShardBits is used when Options.NumShardBits is negative:
	// 64 shards, as RocksDB's LRUCache uses for caches of 32 MiB or more.
	DefaultNumShardBits = 6
	// MaxNumShardBits bounds Options.NumShardBits: 65536 shards of about
	// 500 bytes each already take 32 MiB before caching anything.
	MaxNumShardBits = 16
	// DefaultFullAdmitOneIn is used when Options.FullAdmitOneIn is 0.
	DefaultFullAdmitOneIn = 4
	// MaxFullAdmitOneIn bounds Options.FullAdmitOneIn (one admission in a
	// billion misses is as good as none).
	MaxFullAdmitOneIn = 1 << 30
	// DefaultHighPriorityPoolRatio is used when
	// Options.HighPriorityPoolRatio is 0.
	DefaultHighPriorityPoolRatio = 0.5

	// minDefaultShardBytes is the smallest shard DefaultOptions makes
	// (RocksDB's rule for its default shard count): a small cache gets
	// fewer shards so that a shard still holds a useful number of blocks.
	minDefaultShardBytes = 512 << 10
)

// Options configures a Cache. The zero value of each field means its
// default, except Capacity: a zero Capacity disables caching.
type Options struct {
	// Capacity is the cache size in bytes, shared by the shards and by
	// the bytes table readers pin outside the shards (AddPinned). 0
	// disables caching: every lookup misses, inserted values are handed
	// back detached and not kept, nothing else changes.
	Capacity int64
	// NumShardBits makes 2^NumShardBits shards. A negative value means
	// DefaultNumShardBits (6, 64 shards). 0 means one shard, which gives
	// exact global LRU order (tests use it).
	NumShardBits int
	// HighPriorityPoolRatio is the fraction of each shard's capacity that
	// high-priority entries may occupy; beyond it the oldest of them are
	// demoted to the low-priority list. 0 means
	// DefaultHighPriorityPoolRatio (0.5). Must be in [0, 1].
	HighPriorityPoolRatio float64
	// StrictCapacityLimit makes an insert that cannot fit, even after
	// evicting every unreferenced entry of its shard, fail with ErrFull
	// (Insert) or hand back a detached value (GetOrLoad), instead of
	// letting the shard's usage exceed its capacity.
	StrictCapacityLimit bool
	// FullAdmitOneIn: once a shard is full (its last insert had to evict),
	// Admit tells callers to cache one block in FullAdmitOneIn of those
	// they miss (admission.go). 0 means DefaultFullAdmitOneIn (4); 1
	// admits every block.
	FullAdmitOneIn int
}

// DefaultOptions returns the options for a cache of capacity bytes: 64 shards
// for caches of 32 MiB or more and, as in RocksDB, fewer shards for smaller
// caches so that each shard keeps at least 512 KiB; a high-priority pool of
// half of each shard; no strict capacity limit.
func DefaultOptions(capacity int64) Options {
	bits := 0
	for bits < DefaultNumShardBits && capacity/(int64(2)<<bits) >= minDefaultShardBytes {
		bits++
	}
	return Options{
		Capacity:              capacity,
		NumShardBits:          bits,
		HighPriorityPoolRatio: DefaultHighPriorityPoolRatio,
	}
}

// withDefaults returns o with zero or negative fields replaced by their
// defaults, or an error naming the first invalid field.
func (o Options) withDefaults() (Options, error) {
	if o.Capacity < 0 {
		return o, errors.Newf("cache: Options.Capacity must be >= 0, got %d", o.Capacity)
	}
	if o.NumShardBits < 0 {
		o.NumShardBits = DefaultNumShardBits
	}
	switch {
	case o.FullAdmitOneIn == 0:
		o.FullAdmitOneIn = DefaultFullAdmitOneIn
	case o.FullAdmitOneIn < 0 || o.FullAdmitOneIn > MaxFullAdmitOneIn:
		return o, errors.Newf("cache: Options.FullAdmitOneIn must be in [0, %d], got %d", MaxFullAdmitOneIn, o.FullAdmitOneIn)
	}
	if o.NumShardBits > MaxNumShardBits {
		return o, errors.Newf("cache: Options.NumShardBits must be <= %d, got %d",
			MaxNumShardBits, o.NumShardBits)
	}
	r := o.HighPriorityPoolRatio
	if math.IsNaN(r) || r < 0 || r > 1 {
		return o, errors.Newf("cache: Options.HighPriorityPoolRatio must be in [0, 1], got %v", r)
	}
	if r == 0 {
		o.HighPriorityPoolRatio = DefaultHighPriorityPoolRatio
	}
	return o, nil
}
