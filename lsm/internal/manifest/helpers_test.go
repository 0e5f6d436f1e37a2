package manifest

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// longTest runs the randomized tests for longer: go test -args -long.
var longTest = flag.Bool("long", false, "run randomized tests with more iterations")

// iterations scales a randomized test's loop count.
func iterations(short int) int {
	if *longTest {
		return short * 20
	}
	return short
}

func ikey(userKey string, seq base.SeqNum, kind base.Kind) base.InternalKey {
	return base.MakeInternalKey([]byte(userKey), seq, kind)
}

// table builds a TableMeta over point keys lo#seq..hi#seq.
func table(fileNum uint64, lo, hi string, seq base.SeqNum) *TableMeta {
	return &TableMeta{
		FileNum:        fileNum,
		Size:           fileNum * 100,
		Smallest:       ikey(lo, seq, base.KindSet),
		Largest:        ikey(hi, seq, base.KindSet),
		SmallestSeqNum: seq,
		LargestSeqNum:  seq,
		Entries:        2,
	}
}

// tableExcl builds a TableMeta whose upper bound is the exclusive end of a
// range tombstone [lo, hi).
func tableExcl(fileNum uint64, lo, hi string, seq base.SeqNum) *TableMeta {
	t := table(fileNum, lo, hi, seq)
	t.Smallest.Trailer = base.MakeTrailer(seq, base.KindRangeDelete)
	t.Largest.Trailer = RangeDeleteSentinel
	t.RangeDeletions = 1
	return t
}

// buildVersion applies one edit adding the given tables to an empty
// version.
func buildVersion(t *testing.T, tables map[int][]*TableMeta) *Version {
	t.Helper()
	var e VersionEdit
	for level, ts := range tables {
		for _, m := range ts {
			e.NewTables = append(e.NewTables, NewTable{Level: level, Meta: m})
		}
	}
	v, err := NewVersion().Apply(&e)
	require.NoError(t, err)
	return v
}

// fileNums lists the file numbers of tables, in order.
func fileNums(tables []*TableMeta) []uint64 {
	out := []uint64{}
	for _, t := range tables {
		out = append(out, t.FileNum)
	}
	return out
}

// randKey returns a random user key: sometimes empty, sometimes binary.
func randKey(rng *rand.Rand) []byte {
	k := make([]byte, rng.Intn(20))
	for i := range k {
		if rng.Intn(4) == 0 {
			k[i] = byte(rng.Intn(256))
		} else {
			k[i] = byte('a' + rng.Intn(26))
		}
	}
	return k
}

// randUint returns random values spread over every varint length.
func randUint(rng *rand.Rand) uint64 {
	return rng.Uint64() >> rng.Intn(64)
}

func randSeqNum(rng *rand.Rand) base.SeqNum {
	return base.SeqNum(randUint(rng) & uint64(base.SeqNumMax))
}

// randTableMeta returns a valid TableMeta with random contents.
func randTableMeta(rng *rand.Rand) *TableMeta {
	m := &TableMeta{
		FileNum:        randUint(rng) | 1,
		Size:           randUint(rng),
		Smallest:       base.InternalKey{UserKey: randKey(rng), Trailer: base.Trailer(rng.Uint64())},
		Largest:        base.InternalKey{UserKey: randKey(rng), Trailer: base.Trailer(rng.Uint64())},
		SmallestSeqNum: randSeqNum(rng),
		LargestSeqNum:  randSeqNum(rng),
		Entries:        randUint(rng),
	}
	if m.Smallest.Compare(m.Largest) > 0 {
		m.Smallest, m.Largest = m.Largest, m.Smallest
	}
	if m.SmallestSeqNum > m.LargestSeqNum {
		m.SmallestSeqNum, m.LargestSeqNum = m.LargestSeqNum, m.SmallestSeqNum
	}
	if m.Entries > 0 {
		m.RangeDeletions = rng.Uint64() % (m.Entries + 1)
	}
	return m
}

// randEdit returns an edit with random contents, deleted tables in the
// order Encode writes them.
func randEdit(rng *rand.Rand) *VersionEdit {
	e := &VersionEdit{}
	if rng.Intn(2) == 0 {
		e.LogNumber = randUint(rng) | 1
	}
	if rng.Intn(2) == 0 {
		e.NextFileNum = randUint(rng) | 1
	}
	if rng.Intn(2) == 0 {
		e.LastSeqNum = randSeqNum(rng) | 1
	}
	for range rng.Intn(3) {
		e.CompactPointers = append(e.CompactPointers, CompactPointer{
			Level: rng.Intn(NumLevels),
			Key:   base.InternalKey{UserKey: randKey(rng), Trailer: base.Trailer(rng.Uint64())},
		})
	}
	for level := range NumLevels {
		if rng.Intn(3) == 0 {
			continue
		}
		fileNum := uint64(0)
		for range rng.Intn(3) {
			fileNum += uint64(rng.Intn(1000)) + 1
			e.DeletedTables = append(e.DeletedTables, DeletedTable{Level: level, FileNum: fileNum})
		}
	}
	for range rng.Intn(5) {
		e.NewTables = append(e.NewTables, NewTable{Level: rng.Intn(NumLevels), Meta: randTableMeta(rng)})
	}
	return e
}

// stateString describes everything a VersionSet recovers, for comparing
// a recovered VersionSet with the one that crashed.
func stateString(vs *VersionSet) string {
	v := vs.Current()
	defer v.Unref()
	var b strings.Builder
	fmt.Fprintf(&b, "log=%d last=%d\n", vs.LogNumber(), vs.LastSeqNum())
	for level := range NumLevels {
		if cp := v.CompactPointer(level); cp.UserKey != nil {
			fmt.Fprintf(&b, "compact-pointer L%d: %s\n", level, formatInternalKey(cp))
		}
	}
	b.WriteString(v.String())
	return b.String()
}
