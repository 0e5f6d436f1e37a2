package sstable

import (
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
)

// SplitKeys returns at most n-1 increasing user keys that cut the table's
// data into n parts of about equal stored bytes: key k is the user key of
// the index separator after which the data blocks before it first hold
// k/n of the bytes. Every key of the data blocks before a separator is at
// or below its user key, every key after it above or equal. It reads the
// index partitions through the block cache. A table of fewer than n data
// blocks gives fewer keys (none for one block).
func (r *Reader) SplitKeys(n int) ([][]byte, error) {
	if n < 2 {
		return nil, nil
	}
	type sep struct {
		userKey []byte
		before  uint64 // stored bytes of the data blocks up to this one
	}
	var seps []sep
	var total uint64
	var top, idx block.Iter
	if err := top.Init(r.topIndex); err != nil {
		return nil, err
	}
	for ok := top.First(); ok; ok = top.Next() {
		h, err := DecodeBlockHandle(top.Value())
		if err != nil {
			return nil, err
		}
		ref, err := r.readBlock(h, cache.KindIndex, nil, readHold)
		if err != nil {
			return nil, err
		}
		if err := idx.Init(ref.data); err != nil {
			ref.release()
			return nil, err
		}
		for ok := idx.First(); ok; ok = idx.Next() {
			dh, err := DecodeBlockHandle(idx.Value())
			if err != nil {
				ref.release()
				return nil, err
			}
			total += dh.Length + blockTrailerSize
			seps = append(seps, sep{userKey: append([]byte(nil), idx.UserKey()...), before: total})
		}
		err = idx.Error()
		ref.release()
		if err != nil {
			return nil, err
		}
	}
	if err := top.Error(); err != nil {
		return nil, err
	}
	var keys [][]byte
	k := 1
	// The last separator ends the table: never a split.
	for _, s := range seps[:max(len(seps)-1, 0)] {
		if s.before*uint64(n) < uint64(k)*total {
			continue
		}
		if len(keys) == 0 || string(keys[len(keys)-1]) < string(s.userKey) {
			keys = append(keys, s.userKey)
		}
		if k++; k == n {
			break
		}
	}
	return keys, nil
}
