package sstable

import (
	"github.com/bookie-index/bookie-index/lsm/internal/block"
)

// BlockInfo locates one block of a table, for tools.
type BlockInfo struct {
	Kind   string // data, index, top-level index, filter, top-level filter index, range deletions, properties
	Offset uint64
	Length uint64 // stored length, without the 5-byte trailer
}

// Layout lists the table's blocks in file order: data blocks, filter
// partitions (or the full filter), the top-level filter index, index
// partitions (or the single index), the top-level index, range deletions
// and properties.
func (r *Reader) Layout() ([]BlockInfo, error) {
	var out []BlockInfo
	ft := r.footer
	partitionedIndex := ft.flags&flagPartitionedIndex != 0
	var indexes []BlockInfo
	var top block.Iter
	if err := top.Init(r.topIndex); err != nil {
		return nil, err
	}
	for ok := top.First(); ok; ok = top.Next() {
		h, err := DecodeBlockHandle(top.Value())
		if err != nil {
			return nil, err
		}
		indexes = append(indexes, BlockInfo{Kind: "index", Offset: h.Offset, Length: h.Length})
		raw, err := r.readRaw(h, nil)
		if err != nil {
			return nil, err
		}
		var it block.Iter
		if err := it.Init(raw); err != nil {
			return nil, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			dh, err := DecodeBlockHandle(it.Value())
			if err != nil {
				return nil, err
			}
			out = append(out, BlockInfo{Kind: "data", Offset: dh.Offset, Length: dh.Length})
		}
		if err := it.Error(); err != nil {
			return nil, err
		}
	}
	if err := top.Error(); err != nil {
		return nil, err
	}
	if len(indexes) == 0 && !partitionedIndex {
		indexes = append(indexes, BlockInfo{Kind: "index", Offset: ft.index.Offset, Length: ft.index.Length})
	}
	if ft.filter.Length > 0 {
		if ft.flags&flagPartitionedFilter != 0 {
			if err := top.Init(r.topFilter); err != nil {
				return nil, err
			}
			for ok := top.First(); ok; ok = top.Next() {
				h, err := DecodeBlockHandle(top.Value())
				if err != nil {
					return nil, err
				}
				out = append(out, BlockInfo{Kind: "filter", Offset: h.Offset, Length: h.Length})
			}
			if err := top.Error(); err != nil {
				return nil, err
			}
			out = append(out, BlockInfo{Kind: "top-level filter index", Offset: ft.filter.Offset, Length: ft.filter.Length})
		} else {
			out = append(out, BlockInfo{Kind: "filter", Offset: ft.filter.Offset, Length: ft.filter.Length})
		}
	}
	out = append(out, indexes...)
	if partitionedIndex {
		out = append(out, BlockInfo{Kind: "top-level index", Offset: ft.index.Offset, Length: ft.index.Length})
	}
	out = append(out,
		BlockInfo{Kind: "range deletions", Offset: ft.rangeDel.Offset, Length: ft.rangeDel.Length},
		BlockInfo{Kind: "properties", Offset: ft.properties.Offset, Length: ft.properties.Length})
	return out, nil
}
