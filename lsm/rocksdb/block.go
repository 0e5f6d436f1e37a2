package rocksdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// blockEntry is one decoded entry of a block. key and value alias the
// block's decoded buffer (key is a fresh copy, since keys are prefix
// compressed).
type blockEntry struct {
	key    []byte
	value  []byte
	handle blockHandle // index blocks: the block the entry points at
	offset int         // the entry's offset in the block, for errors
}

// blockKind says how a block's values are encoded.
type blockKind int

const (
	dataBlock       blockKind = iota // values with a length (data, meta, properties, range deletions)
	indexBlock                       // values are block handles
	deltaIndexBlock                  // handles delta-encoded between restart points, no value length
)

// decodeBlock decodes every entry of a block (table/block_based/block.cc).
//
// A block is entries, then the restart array (fixed32 offsets of entries
// stored with their whole key), then a fixed32 footer: the number of
// restarts, with bit 31 set when a data block hash index (buckets, then
// their fixed16 count) sits between the restart array and the footer. An
// entry is shared key bytes (varint32), unshared key bytes (varint32), value
// length (varint32; absent in delta-encoded index blocks), the unshared key
// suffix and the value. In a delta-encoded index block the value is a full
// handle at a restart point, and elsewhere only the signed size change; the
// block then starts right after the previous one and its trailer.
func decodeBlock(b []byte, kind blockKind) ([]blockEntry, error) {
	restartsAt, restarts, err := blockRestarts(b, kind)
	if err != nil {
		return nil, err
	}
	numRestarts := len(restarts) / 4
	nextRestart := func(i int) int {
		if i >= numRestarts {
			return -1
		}
		return int(binary.LittleEndian.Uint32(restarts[4*i:]))
	}
	if nextRestart(0) != 0 {
		return nil, errorString("first restart point is not 0")
	}
	var entries []blockEntry
	var key []byte
	var prev blockHandle
	ri := 0
	d := decoder{b: b[:restartsAt]}
	for !d.empty() {
		off := d.off
		atRestart := off == nextRestart(ri)
		if atRestart {
			ri++
		} else if r := nextRestart(ri); r >= 0 && r < off {
			return nil, errorString(fmt.Sprintf("entry at offset %d: restart point inside an entry", off))
		}
		shared := d.uvarint32()
		unshared := d.uvarint32()
		var valueLen uint32
		if kind != deltaIndexBlock {
			valueLen = d.uvarint32()
		}
		if !d.ok() {
			return nil, errorString(fmt.Sprintf("entry at offset %d: truncated entry header", off))
		}
		if int(shared) > len(key) || (atRestart && shared != 0) {
			return nil, errorString(fmt.Sprintf("entry at offset %d: bad shared key length", off))
		}
		suffix := d.bytes(uint64(unshared))
		if !d.ok() {
			return nil, errorString(fmt.Sprintf("entry at offset %d: truncated key", off))
		}
		k := make([]byte, 0, int(shared)+len(suffix))
		k = append(append(k, key[:shared]...), suffix...)
		key = k
		e := blockEntry{key: k, offset: off}
		switch kind {
		case dataBlock:
			e.value = d.bytes(uint64(valueLen))
		case indexBlock:
			v := decoder{b: d.bytes(uint64(valueLen))}
			e.handle = decodeHandle(&v)
			if !v.ok() {
				return nil, errorString(fmt.Sprintf("entry at offset %d: bad block handle", off))
			}
		case deltaIndexBlock:
			if atRestart || len(entries) == 0 {
				e.handle = decodeHandle(&d)
			} else {
				delta := d.varsigned64()
				size := int64(prev.size) + delta
				if size < 0 {
					return nil, errorString(fmt.Sprintf("entry at offset %d: bad block size delta", off))
				}
				e.handle = blockHandle{offset: prev.offset + prev.size + blockTrailerSize, size: uint64(size)}
			}
			prev = e.handle
		}
		if !d.ok() {
			return nil, errorString(fmt.Sprintf("entry at offset %d: truncated value", off))
		}
		entries = append(entries, e)
	}
	if ri != numRestarts {
		return nil, errorString("restart point past the last entry")
	}
	return entries, nil
}

// blockRestarts splits a block's trailer: it returns where the restart
// array starts (the end of the entries) and the array.
func blockRestarts(b []byte, kind blockKind) (int, []byte, error) {
	if len(b) < 4 {
		return 0, nil, errorString("block shorter than its footer")
	}
	footer := binary.LittleEndian.Uint32(b[len(b)-4:])
	end := len(b) - 4
	numRestarts := int(footer)
	if footer&(1<<31) != 0 {
		if kind != dataBlock || end < 2 {
			return 0, nil, errorString("bad hash index footer")
		}
		numRestarts = int(footer &^ (1 << 31))
		buckets := int(binary.LittleEndian.Uint16(b[end-2:]))
		end -= 2 + buckets
		if end < 0 {
			return 0, nil, errorString("hash index larger than the block")
		}
	}
	if numRestarts == 0 || numRestarts > end/4 {
		return 0, nil, errorString("bad restart count")
	}
	restartsAt := end - 4*numRestarts
	return restartsAt, b[restartsAt:end], nil
}

// seekDataBlock returns the first entry of a data block whose user key is
// >= key, decoding only from the restart point before it (a binary search
// over the restart points, whose keys are stored whole). ok is false if
// every entry is smaller.
func seekDataBlock(b []byte, key []byte) (ik internalKey, value []byte, off int, ok bool, err error) {
	restartsAt, restarts, err := blockRestarts(b, dataBlock)
	if err != nil {
		return internalKey{}, nil, 0, false, err
	}
	n := len(restarts) / 4
	restart := func(i int) int { return int(binary.LittleEndian.Uint32(restarts[4*i:])) }
	// restartKey decodes the whole key stored at restart point i.
	restartKey := func(i int) ([]byte, error) {
		at := restart(i)
		if at >= restartsAt {
			return nil, errorString(fmt.Sprintf("restart point %d at %d is past the entries", i, at))
		}
		d := decoder{b: b[at:restartsAt]}
		shared, unshared := d.uvarint32(), d.uvarint32()
		d.uvarint32()
		k := d.bytes(uint64(unshared))
		if !d.ok() || shared != 0 || len(k) < 8 {
			return nil, errorString(fmt.Sprintf("entry at offset %d: bad restart entry", at))
		}
		return k[:len(k)-8], nil
	}
	// Find the first restart point whose key is >= key; start before it.
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, err := restartKey(mid)
		if err != nil {
			return internalKey{}, nil, 0, false, err
		}
		if bytes.Compare(k, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	start := 0
	if lo > 0 {
		start = restart(lo - 1)
	}
	if start >= restartsAt {
		return internalKey{}, nil, 0, false, errorString(fmt.Sprintf("restart point at %d is past the entries", start))
	}
	d := decoder{b: b[start:restartsAt], off: start}
	var prev []byte
	for !d.empty() {
		off := d.off
		shared, unshared, valueLen := d.uvarint32(), d.uvarint32(), d.uvarint32()
		suffix := d.bytes(uint64(unshared))
		v := d.bytes(uint64(valueLen))
		if !d.ok() || int(shared) > len(prev) {
			return internalKey{}, nil, 0, false, errorString(fmt.Sprintf("entry at offset %d: truncated or bad shared length", off))
		}
		k := append(prev[:shared:shared], suffix...)
		prev = k
		parsed, good := parseInternalKey(k)
		if !good {
			return internalKey{}, nil, 0, false, errorString(fmt.Sprintf("entry at offset %d: key shorter than its 8-byte trailer", off))
		}
		if bytes.Compare(parsed.user, key) >= 0 {
			return parsed, v, off, true, nil
		}
	}
	return internalKey{}, nil, 0, false, nil
}
