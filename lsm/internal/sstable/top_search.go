package sstable

import (
	"bytes"
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
)

// topSearch is a sorted run of index entries (separator → block handle)
// decoded for seeks, built when a table pins its partitions in order: the
// entries of a top-level block, or of all index partitions together (then
// one search finds a data block). A seek in a block itself probes restart
// points spread over tens of KiB (the top-level filter index of a 64 MiB
// table has ~3,800 entries), a likely cache miss and a header decode per
// probe: 15% of a get at a 1 GiB cache. Here a binary search runs over one
// dense array of 8-byte key values, whose upper levels stay in the CPU
// cache, and full keys are compared only to break ties.
type topSearch struct {
	prefix   []byte         // the common prefix of every separator
	vals     []uint64       // first 8 bytes after the prefix, zero-padded, big-endian
	keys     [][]byte       // the separators' user keys
	trailers []base.Trailer // and trailers
	handles  []BlockHandle  // the entries' values
}

// newTopSearch decodes the entries of index-format blocks, which together
// must be in increasing order.
func newTopSearch(blocks ...[]byte) (*topSearch, error) {
	t := &topSearch{}
	for _, data := range blocks {
		var it block.Iter
		if err := it.Init(data); err != nil {
			return nil, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			h, err := DecodeBlockHandle(it.Value())
			if err != nil {
				return nil, err
			}
			t.keys = append(t.keys, append([]byte(nil), it.UserKey()...))
			t.trailers = append(t.trailers, it.Trailer())
			t.handles = append(t.handles, h)
		}
		if err := it.Error(); err != nil {
			return nil, err
		}
	}
	if n := len(t.keys); n > 0 {
		t.prefix = t.keys[0][:block.SharedPrefixLen(t.keys[0], t.keys[n-1])]
	}
	t.vals = make([]uint64, len(t.keys))
	for i, k := range t.keys {
		t.vals[i] = prefixValue(k[len(t.prefix):])
	}
	return t, nil
}

// size estimates the memory the search holds.
func (t *topSearch) size() int64 {
	n := int64(len(t.keys)) * (8 + 24 + 8 + 16)
	for _, k := range t.keys {
		n += int64(len(k))
	}
	return n
}

// prefixValue is the first 8 bytes of b, zero-padded, as a big-endian
// number. If prefixValue(a) < prefixValue(b) then a < b.
func prefixValue(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var v uint64
	for i, c := range b {
		v |= uint64(c) << (56 - 8*i)
	}
	return v
}

// seek returns the ordinal of the first separator >= (userKey, trailer),
// or len(keys) if there is none.
func (t *topSearch) seek(userKey []byte, trailer base.Trailer) int {
	p := len(t.prefix)
	if len(userKey) < p || !bytes.Equal(userKey[:p], t.prefix) {
		// Before or after every separator (they all start with the prefix).
		if bytes.Compare(userKey, t.prefix) < 0 {
			return 0
		}
		return len(t.keys)
	}
	tv := prefixValue(userKey[p:])
	// Separators with a smaller value are smaller keys.
	i, hi := 0, len(t.vals)
	for i < hi {
		mid := int(uint(i+hi) >> 1)
		if t.vals[mid] < tv {
			i = mid + 1
		} else {
			hi = mid
		}
	}
	// A separator with a larger value is a larger key: only those with an
	// equal value need their key bytes (another cache line) compared.
	for i < len(t.keys) && t.vals[i] == tv && base.CompareInternal(t.keys[i], t.trailers[i], userKey, trailer) < 0 {
		i++
	}
	return i
}
