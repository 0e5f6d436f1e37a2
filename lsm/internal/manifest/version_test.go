package manifest

import (
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

func TestVersionLevelOrder(t *testing.T) {
	v := buildVersion(t, map[int][]*TableMeta{
		0: {table(1, "a", "z", 5), table(2, "c", "d", 9), table(3, "b", "b", 5)},
		1: {table(4, "m", "p", 1), table(5, "a", "c", 1), tableExcl(6, "d", "m", 1)},
	})
	// L0: newest first by largest seqnum, then file number.
	require.Equal(t, []uint64{2, 3, 1}, fileNums(v.Tables(0)))
	// L1: by smallest key; 6 ends exclusively at m, where 4 starts.
	require.Equal(t, []uint64{5, 6, 4}, fileNums(v.Tables(1)))
	require.Equal(t, 3, v.NumTables(1))
	require.Equal(t, uint64(400+500+600), v.LevelBytes(1))
	require.Equal(t, uint64(0), v.LevelBytes(2))
	require.Equal(t, `L0:
  000002:[c#9,SET-d#9,SET] seqnums:[9-9] size:200 entries:2 rangedels:0
  000003:[b#5,SET-b#5,SET] seqnums:[5-5] size:300 entries:2 rangedels:0
  000001:[a#5,SET-z#5,SET] seqnums:[5-5] size:100 entries:2 rangedels:0
L1:
  000005:[a#1,SET-c#1,SET] seqnums:[1-1] size:500 entries:2 rangedels:0
  000006:[d#1,RANGEDEL-m#MAX,RANGEDEL] seqnums:[1-1] size:600 entries:2 rangedels:1
  000004:[m#1,SET-p#1,SET] seqnums:[1-1] size:400 entries:2 rangedels:0
`, v.String())
}

func TestVersionApplyRejects(t *testing.T) {
	base1 := buildVersion(t, map[int][]*TableMeta{
		0: {table(1, "a", "c", 5)},
		1: {table(2, "a", "c", 1), table(3, "e", "g", 1)},
	})
	cases := []struct {
		name string
		edit VersionEdit
		want string
	}{
		{"overlap in L1", VersionEdit{NewTables: []NewTable{{1, table(4, "c", "e", 1)}}},
			"L1: table 000002 [a#1,SET-c#1,SET] overlaps table 000004 [c#1,SET-e#1,SET]"},
		{"same user key, inclusive bound", VersionEdit{NewTables: []NewTable{{1, table(4, "g", "h", 1)}}},
			"L1: table 000003 [e#1,SET-g#1,SET] overlaps table 000004"},
		{"overlap among new tables", VersionEdit{NewTables: []NewTable{{3, table(4, "a", "f", 1)}, {3, table(5, "b", "c", 1)}}},
			"L3: table 000004"},
		{"delete missing", VersionEdit{DeletedTables: []DeletedTable{{1, 1}}}, "deleted table 000001 is not in L1"},
		{"delete twice", VersionEdit{DeletedTables: []DeletedTable{{1, 2}, {1, 2}}}, "deleted table 000002 is not in L1"},
		{"duplicate file number", VersionEdit{NewTables: []NewTable{{2, table(1, "x", "y", 1)}}},
			"new table 000001 for L2 is already in L0"},
		{"added twice", VersionEdit{NewTables: []NewTable{{0, table(9, "x", "y", 1)}, {0, table(9, "x", "y", 1)}}},
			"new table 000009 for L0 is already in L0"},
		{"bad level", VersionEdit{NewTables: []NewTable{{NumLevels, table(9, "x", "y", 1)}}}, "level 7 out of range"},
		{"bad delete level", VersionEdit{DeletedTables: []DeletedTable{{-1, 1}}}, "level -1 out of range"},
		{"nil meta", VersionEdit{NewTables: []NewTable{{Level: 1}}}, "has no metadata"},
		{"invalid meta", VersionEdit{NewTables: []NewTable{{1, table(9, "y", "x", 1)}}}, "smallest y#1,SET > largest x#1,SET"},
		{"bad compact pointer", VersionEdit{CompactPointers: []CompactPointer{{Level: 8}}}, "compact pointer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := base1.Apply(&c.edit)
			require.ErrorContains(t, err, c.want)
		})
	}
	// Moving a table between levels and touching shared user keys through
	// an exclusive bound are fine.
	v, err := base1.Apply(&VersionEdit{
		DeletedTables: []DeletedTable{{0, 1}},
		NewTables:     []NewTable{{2, table(1, "a", "c", 5)}, {1, tableExcl(7, "c\x00", "e", 2)}},
	})
	require.NoError(t, err)
	require.Equal(t, []uint64{2, 7, 3}, fileNums(v.Tables(1)))
	require.Equal(t, []uint64{1}, fileNums(v.Tables(2)))
	require.Equal(t, 0, v.NumTables(0))
	// The base version is unchanged and shares untouched levels.
	require.Equal(t, []uint64{1}, fileNums(base1.Tables(0)))
	require.Equal(t, []uint64{2, 3}, fileNums(base1.Tables(1)))
}

// modelTable is a table over single-letter user keys, as a set of letters.
type modelTable struct {
	meta   *TableMeta
	lo, hi int // letters lo..hi are covered (hi exclusive if excl)
	excl   bool
}

// letters returns the bitmask of letters the table covers.
func (m modelTable) letters() uint64 {
	hi := m.hi
	if m.excl {
		hi--
	}
	return span(m.lo, hi)
}

// span returns the bitmask of letters lo..hi (empty if hi < lo).
func span(lo, hi int) uint64 {
	if hi < lo {
		return 0
	}
	return (1<<(hi+1) - 1) &^ (1<<lo - 1)
}

const modelLetters = 12

func letterKey(i int) string { return string(rune('a' + i)) }

// TestVersionApplyModel applies random edits, many invalid, to a version
// and to a model (level -> tables by file number), and checks that both
// accept the same edits and end up with the same tables.
func TestVersionApplyModel(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for range iterations(20) {
		v := NewVersion()
		model := make([]map[uint64]modelTable, NumLevels)
		for level := range model {
			model[level] = map[uint64]modelTable{}
		}
		nextFile := uint64(1)
		seq := base.SeqNum(1)
		var accepted, rejected int
		for range 200 {
			edit, tables := randModelEdit(rng, model, &nextFile, &seq)
			next, err := v.Apply(edit)
			wantErr := modelApply(model, edit, tables)
			if wantErr {
				require.Error(t, err, "edit %+v", edit)
				rejected++
				continue
			}
			require.NoError(t, err)
			accepted++
			v = next
			checkVersionAgainstModel(t, v, model)
			checkOverlapsAgainstModel(t, rng, v, model)
		}
		require.Greater(t, accepted, 50)
		require.Greater(t, rejected, 10)
	}
}

// randModelEdit makes a random edit: deletions mostly of existing tables,
// and new tables over random letter ranges (so L1+ overlaps happen).
func randModelEdit(rng *rand.Rand, model []map[uint64]modelTable, nextFile *uint64,
	seq *base.SeqNum) (*VersionEdit, map[uint64]modelTable) {
	e := &VersionEdit{}
	tables := map[uint64]modelTable{}
	for level := range NumLevels {
		for fileNum := range model[level] {
			if rng.Intn(6) == 0 {
				e.DeletedTables = append(e.DeletedTables, DeletedTable{Level: level, FileNum: fileNum})
			}
		}
	}
	if rng.Intn(10) == 0 { // a table that is not there
		e.DeletedTables = append(e.DeletedTables, DeletedTable{Level: rng.Intn(NumLevels), FileNum: *nextFile + 100})
	}
	for range rng.Intn(4) {
		lo := rng.Intn(modelLetters)
		hi := min(lo+rng.Intn(3), modelLetters-1)
		mt := modelTable{lo: lo, hi: hi, excl: rng.Intn(3) == 0 && hi > lo}
		*seq++
		fileNum := *nextFile
		*nextFile++
		if rng.Intn(15) == 0 && len(tables) > 0 { // reuse a number
			fileNum--
		}
		if mt.excl {
			mt.meta = tableExcl(fileNum, letterKey(mt.lo), letterKey(mt.hi), *seq)
		} else {
			mt.meta = table(fileNum, letterKey(mt.lo), letterKey(mt.hi), *seq)
		}
		tables[fileNum] = mt
		e.NewTables = append(e.NewTables, NewTable{Level: rng.Intn(NumLevels), Meta: mt.meta})
	}
	return e, tables
}

// modelApply applies e to model unless the model finds it invalid; it
// reports whether it did.
func modelApply(model []map[uint64]modelTable, e *VersionEdit, tables map[uint64]modelTable) (invalid bool) {
	next := make([]map[uint64]modelTable, NumLevels)
	for level := range model {
		next[level] = map[uint64]modelTable{}
		for k, v := range model[level] {
			next[level][k] = v
		}
	}
	for _, d := range e.DeletedTables {
		if _, ok := next[d.Level][d.FileNum]; !ok {
			return true
		}
		delete(next[d.Level], d.FileNum)
	}
	for _, n := range e.NewTables {
		for level := range next {
			if _, ok := next[level][n.Meta.FileNum]; ok {
				return true
			}
		}
		next[n.Level][n.Meta.FileNum] = tables[n.Meta.FileNum]
	}
	// L1+: no two tables share a letter.
	for level := 1; level < NumLevels; level++ {
		for a, ta := range next[level] {
			for b, tb := range next[level] {
				if a != b && ta.letters()&tb.letters() != 0 {
					return true
				}
			}
		}
	}
	copy(model, next)
	return false
}

func checkVersionAgainstModel(t *testing.T, v *Version, model []map[uint64]modelTable) {
	t.Helper()
	for level := range NumLevels {
		var want []*TableMeta
		for _, mt := range model[level] {
			want = append(want, mt.meta)
		}
		got := v.Tables(level)
		require.ElementsMatch(t, fileNums(want), fileNums(got), "L%d", level)
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			if level == 0 {
				require.True(t, a.LargestSeqNum > b.LargestSeqNum ||
					(a.LargestSeqNum == b.LargestSeqNum && a.FileNum > b.FileNum), "L0 order")
			} else {
				require.Negative(t, a.Largest.Compare(b.Smallest), "L%d order", level)
			}
		}
	}
}

// checkOverlapsAgainstModel compares Overlaps with a brute-force answer over
// letter sets for random query ranges.
func checkOverlapsAgainstModel(t *testing.T, rng *rand.Rand, v *Version, model []map[uint64]modelTable) {
	t.Helper()
	for range 10 {
		level := rng.Intn(NumLevels)
		if rng.Intn(2) == 0 {
			level = 0
		}
		lo, hi := rng.Intn(modelLetters), rng.Intn(modelLetters)
		if lo > hi {
			lo, hi = hi, lo
		}
		endInclusive := rng.Intn(2) == 0
		var start, end []byte
		qlo, qhi := lo, hi
		if !endInclusive {
			qhi--
		}
		if rng.Intn(8) == 0 {
			qlo = 0
		} else {
			start = []byte(letterKey(lo))
		}
		if rng.Intn(8) == 0 {
			qhi = modelLetters
		} else {
			end = []byte(letterKey(hi))
		}
		query := span(qlo, qhi)
		if level == 0 {
			// Grow the query to the span of every table it touches,
			// until it stops growing.
			for grown := true; grown && query != 0; {
				grown = false
				for _, mt := range model[0] {
					l := mt.letters()
					if l&query == 0 {
						continue
					}
					lo, hi := lowBit(query|l), highBit(query|l)
					if s := span(lo, hi); s != query {
						query, grown = s, true
					}
				}
			}
		}
		var want []uint64
		for _, tm := range v.Tables(level) {
			if model[level][tm.FileNum].letters()&query != 0 {
				want = append(want, tm.FileNum)
			}
		}
		got := v.Overlaps(level, start, end, endInclusive)
		require.Equal(t, want, nilIfEmpty(fileNums(got)), "L%d [%q, %q] incl=%v\n%s", level, start, end, endInclusive, v)
	}
}

func nilIfEmpty(s []uint64) []uint64 {
	if len(s) == 0 {
		return nil
	}
	return s
}

func lowBit(m uint64) int {
	for i := range 64 {
		if m&(1<<i) != 0 {
			return i
		}
	}
	return 64
}

func highBit(m uint64) int {
	for i := 63; i >= 0; i-- {
		if m&(1<<i) != 0 {
			return i
		}
	}
	return -1
}

func TestOverlapsL0Transitive(t *testing.T) {
	v := buildVersion(t, map[int][]*TableMeta{
		0: {
			table(1, "a", "c", 1),
			table(2, "b", "e", 2),
			tableExcl(3, "e", "g", 3), // covers e..f
			table(4, "g", "h", 4),     // starts where 3 ends exclusively
			table(5, "x", "z", 5),
		},
	})
	cases := []struct {
		start, end string
		incl       bool
		want       []uint64
	}{
		// a..c pulls in 2 (b..e), which pulls in 3 (e..g), which stops at g.
		{"a", "a", true, []uint64{3, 2, 1}},
		{"d", "d", true, []uint64{3, 2, 1}},
		{"f", "f", true, []uint64{3, 2, 1}},
		// g is only in 4: 3 ends exclusively at g.
		{"g", "g", true, []uint64{4}},
		{"f", "g", false, []uint64{3, 2, 1}},
		{"f", "g", true, []uint64{4, 3, 2, 1}},
		{"i", "w", true, nil},
		{"i", "x", false, nil},
		{"i", "x", true, []uint64{5}},
	}
	for _, c := range cases {
		got := v.Overlaps(0, []byte(c.start), []byte(c.end), c.incl)
		require.Equal(t, c.want, nilIfEmpty(fileNums(got)), "[%s, %s] incl=%v", c.start, c.end, c.incl)
	}
	require.Equal(t, []uint64{5, 4, 3, 2, 1}, fileNums(v.Overlaps(0, nil, nil, false)))
	require.Equal(t, []uint64{5}, fileNums(v.Overlaps(0, []byte("y"), nil, false)))
}

func TestOverlapsL1(t *testing.T) {
	v := buildVersion(t, map[int][]*TableMeta{
		3: {table(1, "a", "c", 1), tableExcl(2, "d", "f", 1), table(3, "f", "h", 1), table(4, "k", "m", 1)},
	})
	cases := []struct {
		start, end []byte
		incl       bool
		want       []uint64
	}{
		{[]byte("c"), []byte("d"), true, []uint64{1, 2}},
		{[]byte("c"), []byte("d"), false, []uint64{1}},
		{[]byte("f"), []byte("f"), true, []uint64{3}},
		{[]byte("e"), []byte("f"), false, []uint64{2}},
		{[]byte("i"), []byte("j"), true, nil},
		{nil, []byte("b"), true, []uint64{1}},
		{[]byte("g"), nil, true, []uint64{3, 4}},
		{nil, nil, true, []uint64{1, 2, 3, 4}},
	}
	for _, c := range cases {
		got := v.Overlaps(3, c.start, c.end, c.incl)
		require.Equal(t, c.want, nilIfEmpty(fileNums(got)), "[%q, %q] incl=%v", c.start, c.end, c.incl)
	}
	// The result shares the level's memory but cannot clobber it.
	got := v.Overlaps(3, []byte("a"), []byte("a"), true)
	_ = append(got, table(9, "z", "z", 1))
	require.Equal(t, []uint64{1, 2, 3, 4}, fileNums(v.Tables(3)))
}

func TestVersionRefs(t *testing.T) {
	v := NewVersion()
	v.Ref()
	v.Unref()
	v.Unref()
	require.Panics(t, v.Ref, "Ref of a released version")
	v = NewVersion()
	v.Unref()
	require.Panics(t, v.Unref, "Unref of a released version")
}

func TestTableMetaCompacting(t *testing.T) {
	m := table(1, "a", "b", 1)
	require.False(t, m.IsCompacting())
	m.SetCompacting(true)
	require.True(t, m.IsCompacting())
	m.SetCompacting(false)
	require.False(t, m.IsCompacting())
	require.Equal(t, "0x00ff#3,DEL", formatInternalKey(base.MakeInternalKey([]byte{0, 0xff}, 3, base.KindDelete)))
	require.Equal(t, "0x#3,SET", formatInternalKey(ikey("", 3, base.KindSet)))
}
