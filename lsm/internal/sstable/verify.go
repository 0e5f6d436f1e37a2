package sstable

import (
	"fmt"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/bloom"
	"github.com/cockroachdb/errors"
)

// BlockError says which block of a table is bad.
type BlockError struct {
	Kind   string // "data", "index", "filter", "top-level index", ...
	Offset uint64
	Err    error
}

func (e *BlockError) Error() string {
	return fmt.Sprintf("%s block at offset %d: %v", e.Kind, e.Offset, e.Err)
}

func (e *BlockError) Unwrap() error { return e.Err }

// Verify reads every block of the table from the file (bypassing the
// cache), checks checksums and structure, that the index agrees with the
// data blocks and that keys increase across blocks, and that every key is in
// its filter. It returns a *BlockError (marked as corruption) for the first
// bad block.
func (r *Reader) Verify() error {
	v := verifier{r: r}
	return v.run()
}

type verifier struct {
	r            *Reader
	prevKey      base.InternalKey
	prevIndex    base.InternalKey // key of the previous index entry: every later key is above it
	hasPrevIndex bool

	topFilter block.Iter // over the top-level filter index (if any)
	filter    []byte     // the filter partition at filterAt
	filterAt  uint64
	entries   uint64
}

func (v *verifier) fail(kind string, off uint64, err error) error {
	return base.MarkCorruption(&BlockError{Kind: kind, Offset: off, Err: err})
}

func (v *verifier) readBlock(kind string, h BlockHandle) ([]byte, error) {
	data, err := v.r.readRaw(h, nil)
	if err != nil {
		return nil, v.fail(kind, h.Offset, err)
	}
	if kind != "filter" {
		if err := block.Validate(data); err != nil {
			return nil, v.fail(kind, h.Offset, err)
		}
	} else if err := bloom.Validate(data); err != nil {
		return nil, v.fail(kind, h.Offset, err)
	}
	return data, nil
}

func (v *verifier) run() error {
	r := v.r
	ft := r.footer
	if ft.flags&flagPartitionedIndex != 0 {
		if _, err := v.readBlock("top-level index", ft.index); err != nil {
			return err
		}
	}
	if ft.filter.Length > 0 {
		if err := v.topFilter.Init(r.topFilter); err != nil {
			return v.fail("top-level filter index", ft.filter.Offset, err)
		}
		v.filterAt = noBlock
	}
	var top block.Iter
	if err := top.Init(r.topIndex); err != nil {
		return v.fail("top-level index", ft.index.Offset, err)
	}
	for ok := top.First(); ok; ok = top.Next() {
		h, err := DecodeBlockHandle(top.Value())
		if err != nil {
			return v.fail("top-level index", ft.index.Offset, err)
		}
		if err := v.partition(h, top.UserKey(), top.Trailer()); err != nil {
			return err
		}
	}
	if err := top.Error(); err != nil {
		return v.fail("top-level index", ft.index.Offset, err)
	}
	if v.entries != r.props.Entries {
		return v.fail("properties", ft.properties.Offset, errors.Newf("properties count %d entries, blocks hold %d", r.props.Entries, v.entries))
	}
	return nil
}

func (v *verifier) partition(h BlockHandle, lastUser []byte, lastTrailer base.Trailer) error {
	idx, err := v.readBlock("index", h)
	if err != nil {
		return err
	}
	var it block.Iter
	_ = it.Init(idx)
	for ok := it.First(); ok; ok = it.Next() {
		dh, err := DecodeBlockHandle(it.Value())
		if err != nil {
			return v.fail("index", h.Offset, err)
		}
		data, err := v.readBlock("data", dh)
		if err != nil {
			return err
		}
		var d block.Iter
		_ = d.Init(data)
		var last base.InternalKey
		for ok := d.First(); ok; ok = d.Next() {
			k := base.InternalKey{UserKey: d.UserKey(), Trailer: d.Trailer()}
			if v.entries > 0 && (v.prevKey.Compare(k) >= 0 || v.hasPrevIndex && v.prevIndex.Compare(k) >= 0) {
				return v.fail("data", dh.Offset, errors.Newf("key %q#%d is not after the previous block's %q#%d", k.UserKey, k.Trailer, v.prevKey.UserKey, v.prevKey.Trailer))
			}
			if err := v.checkFilter(k); err != nil {
				return err
			}
			v.prevKey = k.Clone()
			last = v.prevKey
			v.entries++
		}
		if base.CompareInternal(last.UserKey, last.Trailer, it.UserKey(), it.Trailer()) > 0 {
			return v.fail("index", h.Offset, errors.Newf("index key %q is below its data block's last key %q", it.UserKey(), last.UserKey))
		}
		v.hasPrevIndex = true
		v.prevIndex = base.InternalKey{UserKey: append(v.prevIndex.UserKey[:0], it.UserKey()...), Trailer: it.Trailer()}
	}
	if err := it.Error(); err != nil {
		return v.fail("index", h.Offset, err)
	}
	if base.CompareInternal(v.prevIndex.UserKey, v.prevIndex.Trailer, lastUser, lastTrailer) != 0 {
		return v.fail("top-level index", v.r.footer.index.Offset, errors.Newf("partition key %q does not match its last index key %q", lastUser, v.prevIndex.UserKey))
	}
	return nil
}

// checkFilter finds the filter partition of k as a Get would and checks
// that it holds k's hash.
func (v *verifier) checkFilter(k base.InternalKey) error {
	if v.r.footer.filter.Length == 0 {
		return nil
	}
	ft := v.r.footer.filter
	if !v.topFilter.SeekGE(k.UserKey, k.Trailer) {
		if err := v.topFilter.Error(); err != nil {
			return v.fail("top-level filter index", ft.Offset, err)
		}
		return v.fail("top-level filter index", ft.Offset, errors.Newf("no filter partition covers key %q", k.UserKey))
	}
	h, err := DecodeBlockHandle(v.topFilter.Value())
	if err != nil {
		return v.fail("top-level filter index", ft.Offset, err)
	}
	if h.Offset != v.filterAt {
		if v.filter, err = v.readBlock("filter", h); err != nil {
			return err
		}
		v.filterAt = h.Offset
	}
	if !bloom.MayContain(v.filter, bloom.Hash(k.UserKey)) {
		return v.fail("filter", h.Offset, errors.Newf("key %q is missing from its filter", k.UserKey))
	}
	return nil
}
