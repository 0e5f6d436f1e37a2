package manifest

import (
	"bytes"
	"fmt"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// RangeDeleteSentinel is the trailer of a table's Largest bound when the
// bound comes from the exclusive end of a range tombstone. (e,
// RangeDeleteSentinel) sorts before every real internal key of user key e,
// so the bound says "every key of this table is < e" while staying an
// ordinary internal key that compares correctly with others. See the
// package documentation.
const RangeDeleteSentinel = base.Trailer(uint64(base.SeqNumMax)<<8 | uint64(base.KindRangeDelete))

// TableMeta describes one sorted table. Once a TableMeta is part of a
// Version it is shared by every later version holding the table and must not
// be modified, except for the compacting flag.
//
// It records only what the table's writer knows for good. How much data
// below the table its range tombstones cover changes as lower levels are
// compacted, so the compaction picker estimates that from the current
// version (Overlaps, LevelBytes) instead of reading a persisted number.
type TableMeta struct {
	// FileNum names the table's file (FileName(FileKindTable, FileNum)).
	FileNum uint64
	// Size is the length of the file in bytes.
	Size uint64
	// Smallest and Largest bound every point key and range tombstone of
	// the table, in internal-key order. A tombstone [s, e) contributes s
	// (with its own trailer) and (e, RangeDeleteSentinel).
	Smallest base.InternalKey
	Largest  base.InternalKey
	// SmallestSeqNum and LargestSeqNum bound the sequence numbers of every
	// entry of the table, tombstones included.
	SmallestSeqNum base.SeqNum
	LargestSeqNum  base.SeqNum
	// Entries counts the table's entries: point keys and range tombstones.
	Entries uint64
	// RangeDeletions counts the table's range tombstones.
	RangeDeletions uint64

	// compacting is set while a compaction uses the table as input, so
	// that the picker does not choose it twice. It is not persisted.
	compacting atomic.Bool
}

// IsCompacting reports whether a compaction holds the table.
func (m *TableMeta) IsCompacting() bool { return m.compacting.Load() }

// SetCompacting sets or clears the compacting flag. The picker sets it
// (under the engine's mutex) when it chooses the table, and the compaction
// clears it when it ends.
func (m *TableMeta) SetCompacting(compacting bool) { m.compacting.Store(compacting) }

// largestExclusive reports whether Largest is an exclusive sentinel, so that
// the table holds no key of the user key Largest.UserKey.
func (m *TableMeta) largestExclusive() bool { return m.Largest.Trailer == RangeDeleteSentinel }

// beforeUserKey reports whether every key of the table is smaller than the
// user key k.
func (m *TableMeta) beforeUserKey(k []byte) bool {
	c := bytes.Compare(m.Largest.UserKey, k)
	return c < 0 || (c == 0 && m.largestExclusive())
}

// validate checks the properties every table of a version has.
func (m *TableMeta) validate() error {
	switch {
	case m.FileNum == 0:
		return errors.New("table has file number 0")
	case m.Smallest.Compare(m.Largest) > 0:
		return errors.Newf("table %06d: smallest %s > largest %s",
			m.FileNum, formatInternalKey(m.Smallest), formatInternalKey(m.Largest))
	case m.SmallestSeqNum > m.LargestSeqNum:
		return errors.Newf("table %06d: smallest seqnum %d > largest seqnum %d",
			m.FileNum, m.SmallestSeqNum, m.LargestSeqNum)
	case m.LargestSeqNum > base.SeqNumMax:
		return errors.Newf("table %06d: largest seqnum %d beyond the maximum", m.FileNum, m.LargestSeqNum)
	case m.RangeDeletions > m.Entries:
		return errors.Newf("table %06d: %d range deletions among %d entries",
			m.FileNum, m.RangeDeletions, m.Entries)
	}
	return nil
}

// String describes the table on one line for tests and tools:
//
//	000012:[a#5,SET-c#MAX,RANGEDEL] seqnums:[3-9] size:4096 entries:10 rangedels:1
func (m *TableMeta) String() string {
	return fmt.Sprintf("%06d:[%s-%s] seqnums:[%d-%d] size:%d entries:%d rangedels:%d",
		m.FileNum, formatInternalKey(m.Smallest), formatInternalKey(m.Largest),
		m.SmallestSeqNum, m.LargestSeqNum, m.Size, m.Entries, m.RangeDeletions)
}

// formatInternalKey renders k as userkey#seq,KIND. Printable user keys are
// shown as they are, others in hex (0x...), so both the 16-byte binary keys
// of the entry-location index and readable test keys are legible.
func formatInternalKey(k base.InternalKey) string {
	seq := fmt.Sprint(uint64(k.SeqNum()))
	if k.SeqNum() == base.SeqNumMax {
		seq = "MAX"
	}
	return fmt.Sprintf("%s#%s,%s", formatUserKey(k.UserKey), seq, k.Kind())
}

// formatUserKey avoids '#' and '-' in plain keys, which would make the
// bounds ambiguous to a reader.
func formatUserKey(k []byte) string {
	printable := len(k) > 0
	for _, c := range k {
		if c < 0x21 || c > 0x7e || c == '#' || c == '-' {
			printable = false
			break
		}
	}
	if printable {
		return string(k)
	}
	return fmt.Sprintf("0x%x", k)
}
