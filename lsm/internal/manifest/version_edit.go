package manifest

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Tags of the fields of an encoded VersionEdit (see the package
// documentation for the layout of each). They are persisted in every
// manifest: do not change them, only add new ones.
const (
	tagLogNumber      = 1
	tagNextFileNum    = 2
	tagLastSeqNum     = 3
	tagCompactPointer = 4
	tagDeletedTable   = 5
	tagNewTable       = 6
)

// VersionEdit is one change to the state the manifest records: the tables
// of each level and a few counters. The manifest is a sequence of encoded
// edits; replaying them from the first rebuilds the state.
//
// A zero counter (LogNumber, NextFileNum, LastSeqNum) means "unchanged":
// file numbers start at 1, and a database's last sequence number is 0 only
// until its first write, which no edit needs to restore.
type VersionEdit struct {
	// LogNumber is the number of the oldest WAL still needed: WALs with a
	// smaller number have been flushed and are obsolete.
	LogNumber uint64
	// NextFileNum is the next unallocated file number.
	NextFileNum uint64
	// LastSeqNum is the largest sequence number used.
	LastSeqNum base.SeqNum
	// CompactPointers record, per level, where the last compaction of the
	// level ended, so that the next one can continue after it.
	CompactPointers []CompactPointer
	// DeletedTables are removed from their levels before NewTables are
	// added, so an edit may move a table between levels.
	DeletedTables []DeletedTable
	// NewTables are added to their levels.
	NewTables []NewTable
}

// CompactPointer is the key where the last compaction of a level ended.
type CompactPointer struct {
	Level int
	Key   base.InternalKey
}

// DeletedTable names a table an edit removes from a level.
type DeletedTable struct {
	Level   int
	FileNum uint64
}

// NewTable is a table an edit adds to a level.
type NewTable struct {
	Level int
	Meta  *TableMeta
}

// Encode appends the encoding of e to dst and returns the result. Fields are
// written in a fixed order (counters, compact pointers, deleted tables
// sorted by level and file number, new tables as given), so equal edits
// encode identically. Every NewTables entry must have a Meta.
func (e *VersionEdit) Encode(dst []byte) []byte {
	putUvarintField := func(tag, v uint64) {
		if v != 0 {
			dst = binary.AppendUvarint(dst, tag)
			dst = binary.AppendUvarint(dst, v)
		}
	}
	putUvarintField(tagLogNumber, e.LogNumber)
	putUvarintField(tagNextFileNum, e.NextFileNum)
	putUvarintField(tagLastSeqNum, uint64(e.LastSeqNum))
	for _, cp := range e.CompactPointers {
		dst = binary.AppendUvarint(dst, tagCompactPointer)
		dst = binary.AppendUvarint(dst, uint64(cp.Level))
		dst = appendInternalKey(dst, cp.Key)
	}
	deleted := slices.SortedFunc(slices.Values(e.DeletedTables), func(a, b DeletedTable) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.FileNum, b.FileNum))
	})
	for _, d := range deleted {
		dst = binary.AppendUvarint(dst, tagDeletedTable)
		dst = binary.AppendUvarint(dst, uint64(d.Level))
		dst = binary.AppendUvarint(dst, d.FileNum)
	}
	for _, n := range e.NewTables {
		m := n.Meta
		dst = binary.AppendUvarint(dst, tagNewTable)
		dst = binary.AppendUvarint(dst, uint64(n.Level))
		dst = binary.AppendUvarint(dst, m.FileNum)
		dst = binary.AppendUvarint(dst, m.Size)
		dst = appendInternalKey(dst, m.Smallest)
		dst = appendInternalKey(dst, m.Largest)
		dst = binary.AppendUvarint(dst, uint64(m.SmallestSeqNum))
		dst = binary.AppendUvarint(dst, uint64(m.LargestSeqNum))
		dst = binary.AppendUvarint(dst, m.Entries)
		dst = binary.AppendUvarint(dst, m.RangeDeletions)
	}
	return dst
}

// appendInternalKey appends uvarint(len(user key)) ‖ user key ‖ trailer
// (8 bytes, little-endian).
func appendInternalKey(dst []byte, k base.InternalKey) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(k.UserKey)))
	dst = append(dst, k.UserKey...)
	return binary.LittleEndian.AppendUint64(dst, uint64(k.Trailer))
}

// Decode replaces e with the edit encoded in data. It checks every length
// and value against the bytes present and returns an error marked
// base.ErrCorruption for anything that does not decode: a truncated field,
// an unknown tag, a level out of range, a counter set twice, a table whose
// bounds are out of order. The decoded edit shares no memory with data.
func (e *VersionEdit) Decode(data []byte) error {
	*e = VersionEdit{}
	d := editDecoder{data: data}
	var seen [tagNewTable + 1]bool
	for d.off < len(d.data) {
		tagOffset := d.off
		tag := d.uvarint("tag")
		if d.err != nil {
			break
		}
		if tag <= tagLastSeqNum {
			if seen[tag] {
				return base.CorruptionErrorf("manifest: version edit: tag %d repeated at offset %d", tag, tagOffset)
			}
			seen[tag] = true
		}
		switch tag {
		case tagLogNumber:
			e.LogNumber = d.uvarint("log number")
		case tagNextFileNum:
			e.NextFileNum = d.uvarint("next file number")
		case tagLastSeqNum:
			e.LastSeqNum = d.seqNum("last seqnum")
		case tagCompactPointer:
			cp := CompactPointer{Level: d.level()}
			cp.Key = d.internalKey("compact pointer")
			e.CompactPointers = append(e.CompactPointers, cp)
		case tagDeletedTable:
			dt := DeletedTable{Level: d.level()}
			dt.FileNum = d.uvarint("deleted table number")
			e.DeletedTables = append(e.DeletedTables, dt)
		case tagNewTable:
			e.NewTables = append(e.NewTables, d.newTable())
		default:
			return base.CorruptionErrorf("manifest: version edit: unknown tag %d at offset %d", tag, tagOffset)
		}
		if d.err != nil {
			break
		}
	}
	return d.err
}

// editDecoder reads the fields of an encoded edit. The first error sticks:
// later reads return zero values, so a field's decoding reads straight
// through and checks d.err once.
type editDecoder struct {
	data []byte
	off  int
	err  error
}

func (d *editDecoder) fail(what, problem string) {
	if d.err == nil {
		d.err = base.CorruptionErrorf("manifest: version edit: %s at offset %d: %s", what, d.off, problem)
	}
}

func (d *editDecoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		if n == 0 {
			d.fail(what, "truncated varint")
		} else {
			d.fail(what, "varint overflows 64 bits")
		}
		return 0
	}
	d.off += n
	return v
}

func (d *editDecoder) seqNum(what string) base.SeqNum {
	off := d.off
	v := d.uvarint(what)
	if v > uint64(base.SeqNumMax) {
		d.off = off
		d.fail(what, "beyond the largest sequence number")
		return 0
	}
	return base.SeqNum(v)
}

func (d *editDecoder) level() int {
	off := d.off
	v := d.uvarint("level")
	if v >= NumLevels {
		d.off = off
		d.fail("level", "out of range")
		return 0
	}
	return int(v)
}

func (d *editDecoder) internalKey(what string) base.InternalKey {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return base.InternalKey{}
	}
	if n > uint64(len(d.data)-d.off) || len(d.data)-d.off-int(n) < 8 {
		d.fail(what, "key runs past the end of the edit")
		return base.InternalKey{}
	}
	userKey := append(make([]byte, 0, n), d.data[d.off:d.off+int(n)]...)
	d.off += int(n)
	trailer := base.Trailer(binary.LittleEndian.Uint64(d.data[d.off:]))
	d.off += 8
	return base.InternalKey{UserKey: userKey, Trailer: trailer}
}

func (d *editDecoder) newTable() NewTable {
	start := d.off
	nt := NewTable{Level: d.level(), Meta: &TableMeta{}}
	m := nt.Meta
	m.FileNum = d.uvarint("table number")
	m.Size = d.uvarint("table size")
	m.Smallest = d.internalKey("smallest key")
	m.Largest = d.internalKey("largest key")
	m.SmallestSeqNum = d.seqNum("smallest seqnum")
	m.LargestSeqNum = d.seqNum("largest seqnum")
	m.Entries = d.uvarint("entries")
	m.RangeDeletions = d.uvarint("range deletions")
	if d.err == nil {
		if err := m.validate(); err != nil {
			d.err = base.MarkCorruption(errors.Wrapf(err, "manifest: version edit: new table at offset %d", start))
		}
	}
	return nt
}
