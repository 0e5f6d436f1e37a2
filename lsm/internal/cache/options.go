package cache

import (
	"math"

	"github.com/cockroachdb/errors"
)

const (
	// OneShard is the NumShardBits of a single shard, which gives exact
	// global LRU order (tests use it).
	OneShard = -1
	// MaxDefaultNumShardBits is the most shards the default makes: 64, as
	// RocksDB's LRUCache does for caches of 32 MiB or more.
	MaxDefaultNumShardBits = 6
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

	// minDefaultShardBytes is the smallest shard the default shard count
	// makes (RocksDB's rule): a small cache gets fewer shards so that a
	// shard still holds a useful number of blocks.
	minDefaultShardBytes = 512 << 10
)

// Options configures a Cache. As every option struct of the engine
// (lsm.Options), a zero field means its default, and a field whose zero is
// a real setting spells that setting with a negative value. Capacity is the
// exception: it has no default, and 0 disables caching.
type Options struct {
	// Capacity is the cache size in bytes, shared by the shards and by
	// the bytes table readers pin outside the shards (AddPinned). 0
	// disables caching: every lookup misses, inserted values are handed
	// back detached and not kept, nothing else changes.
	Capacity int64
	// NumShardBits makes 2^NumShardBits shards. 0 means
	// DefaultNumShardBits(Capacity); negative (OneShard) means one shard.
	NumShardBits int
	// HighPriorityPoolRatio is the fraction of each shard's capacity that
	// high-priority entries may occupy; beyond it the oldest of them are
	// demoted to the low-priority list. 0 means
	// DefaultHighPriorityPoolRatio (0.5); negative means none (every entry
	// ages in one list). At most 1.
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

// DefaultNumShardBits returns the default shard bits of a cache of
// capacity bytes: 6 (64 shards) for caches of 32 MiB or more and, as in
// RocksDB, fewer for smaller caches so that each shard keeps at least
// 512 KiB.
func DefaultNumShardBits(capacity int64) int {
	bits := 0
	for bits < MaxDefaultNumShardBits && capacity/(int64(2)<<bits) >= minDefaultShardBytes {
		bits++
	}
	return bits
}

// withDefaults returns o with zero fields replaced by their defaults and
// negative ones by the settings they spell, or an error naming the first
// invalid field.
func (o Options) withDefaults() (Options, error) {
	if o.Capacity < 0 {
		return o, errors.Newf("cache: Options.Capacity must be >= 0, got %d", o.Capacity)
	}
	switch {
	case o.NumShardBits == 0:
		o.NumShardBits = DefaultNumShardBits(o.Capacity)
	case o.NumShardBits < 0:
		o.NumShardBits = 0
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
	if math.IsNaN(r) || r > 1 {
		return o, errors.Newf("cache: Options.HighPriorityPoolRatio must be at most 1 (negative: none), got %v", r)
	}
	switch {
	case r == 0:
		o.HighPriorityPoolRatio = DefaultHighPriorityPoolRatio
	case r < 0:
		o.HighPriorityPoolRatio = 0
	}
	return o, nil
}
