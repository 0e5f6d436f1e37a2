package manifest

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// NumLevels is the number of levels of the LSM: L0 to L6.
const NumLevels = 7

// Version is an immutable snapshot of the tables of each level. Readers
// hold a reference to the version they read while they read it, so its
// tables stay on disk; see the package documentation.
//
// Invariants:
//   - L0 tables are ordered newest first: by LargestSeqNum descending, then
//     FileNum descending. They may overlap.
//   - Tables of L1 and below are ordered by Smallest and disjoint in user
//     keys: each table's Largest user key is smaller than the next table's
//     Smallest user key, or equal to it if Largest is an exclusive
//     sentinel. The versions of a user key never span two tables of a
//     level, so a point lookup reads one table per level.
//   - A file number appears at most once in a version.
type Version struct {
	levels          [NumLevels][]*TableMeta
	compactPointers [NumLevels]base.InternalKey

	// refs counts references; the version's creator holds the first.
	refs atomic.Int32
	// vs is the VersionSet that installed the version, told when the last
	// reference is dropped. It is nil for versions no VersionSet installed
	// (Apply's results before LogAndApply, test fixtures).
	vs *VersionSet
}

// NewVersion returns an empty version holding one reference.
func NewVersion() *Version {
	v := &Version{}
	v.refs.Store(1)
	return v
}

// Ref adds a reference. The caller must already hold one (directly, or
// through the VersionSet's lock as Current does): a released version cannot
// be revived.
func (v *Version) Ref() {
	if v.refs.Add(1) <= 1 {
		panic(errors.AssertionFailedf("manifest: Ref of a released version"))
	}
}

// Unref drops a reference. Dropping the last one tells the VersionSet that
// installed the version, which then learns which tables no live version
// references any more (VersionSet.TakeObsoleteTables).
func (v *Version) Unref() {
	switch n := v.refs.Add(-1); {
	case n < 0:
		panic(errors.AssertionFailedf("manifest: Unref of a released version"))
	case n == 0 && v.vs != nil:
		v.vs.releaseVersion(v)
	}
}

// Tables returns the tables of a level in the level's order. The slice is
// shared with the version: do not modify it.
func (v *Version) Tables(level int) []*TableMeta { return v.levels[level] }

// NumTables returns the number of tables in a level.
func (v *Version) NumTables(level int) int { return len(v.levels[level]) }

// LevelBytes returns the total size of the tables of a level.
func (v *Version) LevelBytes(level int) uint64 {
	var total uint64
	for _, t := range v.levels[level] {
		total += t.Size
	}
	return total
}

// CompactPointer returns the key where the last compaction of a level
// ended, or the zero key (nil user key) if none was recorded.
func (v *Version) CompactPointer(level int) base.InternalKey { return v.compactPointers[level] }

// Overlaps returns the tables of a level whose user-key range intersects
// [start, end] (endInclusive) or [start, end) (not endInclusive), in the
// level's order. A nil start or end leaves that side unbounded (a non-nil
// empty slice is the empty key). A table whose Largest is an exclusive
// sentinel covers user keys below Largest.UserKey only. The result may
// share memory with the version: do not modify it.
//
// In L0, where tables overlap one another, the range grows to cover each
// table found and the search restarts, until it no longer grows: the result
// holds every L0 table that shares a user key, transitively, with the
// range. A compaction of L0 must take all of them, or it would move older
// versions of a key below newer ones left behind.
func (v *Version) Overlaps(level int, start, end []byte, endInclusive bool) []*TableMeta {
	r := userRange{start: start, end: end, endInclusive: endInclusive}
	if r.empty() {
		return nil
	}
	if level > 0 {
		tables := v.levels[level]
		// The tables are sorted and disjoint, so the ones before start
		// form a prefix.
		i := sort.Search(len(tables), func(i int) bool { return !r.after(tables[i]) })
		j := i
		for j < len(tables) && !r.before(tables[j]) {
			j++
		}
		return tables[i:j:j]
	}
	var result []*TableMeta
	for restart := true; restart; {
		restart = false
		result = result[:0]
		for _, t := range v.levels[0] {
			if r.after(t) || r.before(t) {
				continue
			}
			result = append(result, t)
			if r.start != nil && bytes.Compare(t.Smallest.UserKey, r.start) < 0 {
				r.start, restart = t.Smallest.UserKey, true
			}
			if r.end != nil && r.endsBeforeTable(t) {
				r.end, r.endInclusive, restart = t.Largest.UserKey, !t.largestExclusive(), true
			}
			if restart {
				break
			}
		}
	}
	return result
}

// userRange is a range of user keys; nil bounds are unbounded.
type userRange struct {
	start, end   []byte
	endInclusive bool
}

// empty reports whether the range holds no user key.
func (r userRange) empty() bool {
	if r.start == nil || r.end == nil {
		return false
	}
	c := bytes.Compare(r.start, r.end)
	return c > 0 || (c == 0 && !r.endInclusive)
}

// after reports whether the range starts after every key of t.
func (r userRange) after(t *TableMeta) bool {
	return r.start != nil && t.beforeUserKey(r.start)
}

// before reports whether the range ends before every key of t.
func (r userRange) before(t *TableMeta) bool {
	if r.end == nil {
		return false
	}
	c := bytes.Compare(t.Smallest.UserKey, r.end)
	return c > 0 || (c == 0 && !r.endInclusive)
}

// endsBeforeTable reports whether t has keys beyond the range's (bounded)
// end, so that the range must grow to cover t.
func (r userRange) endsBeforeTable(t *TableMeta) bool {
	c := bytes.Compare(t.Largest.UserKey, r.end)
	return c > 0 || (c == 0 && !r.endInclusive && !t.largestExclusive())
}

// String lists the non-empty levels, one table per line, for tests and
// tools:
//
//	L0:
//	  000007:[a#9,SET-k#8,SET] seqnums:[8-9] size:1024 entries:2 rangedels:0
//	L2:
//	  000004:[a#1,SET-z#2,SET] seqnums:[1-2] size:2048 entries:40 rangedels:0
func (v *Version) String() string {
	var b strings.Builder
	for level := range NumLevels {
		if len(v.levels[level]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "L%d:\n", level)
		for _, t := range v.levels[level] {
			fmt.Fprintf(&b, "  %s\n", t)
		}
	}
	return b.String()
}

// Apply returns the version that results from applying edit to v, holding
// one reference and installed in no VersionSet; v is unchanged. It checks
// the edit against v: every deleted table must be in its level, no file
// number may appear twice, and L1+ levels must stay disjoint in user keys.
func (v *Version) Apply(edit *VersionEdit) (*Version, error) {
	b := newVersionBuilder(v)
	if err := b.apply(edit); err != nil {
		return nil, err
	}
	return b.finish()
}

// versionBuilder accumulates edits on top of a base version, so that
// recovery applies thousands of edits without building a version for each.
// Levels an edit touches are copied into maps keyed by file number; the
// others stay shared with the base.
type versionBuilder struct {
	base            *Version
	levels          [NumLevels]map[uint64]*TableMeta // nil: as in base
	compactPointers [NumLevels]base.InternalKey
}

func newVersionBuilder(v *Version) *versionBuilder {
	return &versionBuilder{base: v, compactPointers: v.compactPointers}
}

// levelMap returns the map of a level, copying the base level on first use.
func (b *versionBuilder) levelMap(level int) map[uint64]*TableMeta {
	if b.levels[level] == nil {
		m := make(map[uint64]*TableMeta, len(b.base.levels[level]))
		for _, t := range b.base.levels[level] {
			m[t.FileNum] = t
		}
		b.levels[level] = m
	}
	return b.levels[level]
}

// holds reports whether a level holds the table fileNum.
func (b *versionBuilder) holds(level int, fileNum uint64) bool {
	if m := b.levels[level]; m != nil {
		_, ok := m[fileNum]
		return ok
	}
	return slices.ContainsFunc(b.base.levels[level], func(t *TableMeta) bool { return t.FileNum == fileNum })
}

func checkLevel(level int) error {
	if level < 0 || level >= NumLevels {
		return errors.Newf("level %d out of range [0, %d)", level, NumLevels)
	}
	return nil
}

// apply adds one edit. On error the builder is left half-applied and must
// be discarded.
func (b *versionBuilder) apply(e *VersionEdit) error {
	for _, cp := range e.CompactPointers {
		if err := checkLevel(cp.Level); err != nil {
			return errors.Wrap(err, "manifest: compact pointer")
		}
		b.compactPointers[cp.Level] = cp.Key
	}
	for _, d := range e.DeletedTables {
		if err := checkLevel(d.Level); err != nil {
			return errors.Wrapf(err, "manifest: deleted table %06d", d.FileNum)
		}
		m := b.levelMap(d.Level)
		if _, ok := m[d.FileNum]; !ok {
			return errors.Newf("manifest: deleted table %06d is not in L%d", d.FileNum, d.Level)
		}
		delete(m, d.FileNum)
	}
	for _, n := range e.NewTables {
		if n.Meta == nil {
			return errors.Newf("manifest: new table for L%d has no metadata", n.Level)
		}
		if err := checkLevel(n.Level); err != nil {
			return errors.Wrapf(err, "manifest: new table %06d", n.Meta.FileNum)
		}
		if err := n.Meta.validate(); err != nil {
			return errors.Wrap(err, "manifest: new table")
		}
		for level := range NumLevels {
			if b.holds(level, n.Meta.FileNum) {
				return errors.Newf("manifest: new table %06d for L%d is already in L%d",
					n.Meta.FileNum, n.Level, level)
			}
		}
		b.levelMap(n.Level)[n.Meta.FileNum] = n.Meta
	}
	return nil
}

// finish builds the version, sorting the levels edits touched and checking
// that L1+ levels stay disjoint in user keys.
func (b *versionBuilder) finish() (*Version, error) {
	v := NewVersion()
	v.compactPointers = b.compactPointers
	for level := range NumLevels {
		if b.levels[level] == nil {
			v.levels[level] = b.base.levels[level]
			continue
		}
		tables := slices.Collect(maps.Values(b.levels[level]))
		if level == 0 {
			slices.SortFunc(tables, compareL0)
		} else {
			slices.SortFunc(tables, compareBySmallest)
			if err := checkDisjoint(level, tables); err != nil {
				return nil, err
			}
		}
		v.levels[level] = tables
	}
	return v, nil
}

// compareL0 orders L0 newest first.
func compareL0(a, b *TableMeta) int {
	return cmp.Or(cmp.Compare(b.LargestSeqNum, a.LargestSeqNum), cmp.Compare(b.FileNum, a.FileNum))
}

func compareBySmallest(a, b *TableMeta) int {
	return cmp.Or(a.Smallest.Compare(b.Smallest), cmp.Compare(a.FileNum, b.FileNum))
}

// checkDisjoint checks that sorted tables share no user key.
func checkDisjoint(level int, tables []*TableMeta) error {
	for i := 1; i < len(tables); i++ {
		prev, t := tables[i-1], tables[i]
		if !prev.beforeUserKey(t.Smallest.UserKey) {
			return errors.Newf("manifest: L%d: table %06d [%s-%s] overlaps table %06d [%s-%s]", level,
				prev.FileNum, formatInternalKey(prev.Smallest), formatInternalKey(prev.Largest),
				t.FileNum, formatInternalKey(t.Smallest), formatInternalKey(t.Largest))
		}
	}
	return nil
}
