package lsm

import (
	"fmt"
	"strings"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/cockroachdb/errors"
)

// TableInfo describes one live table, for tools.
type TableInfo struct {
	Level          int
	FileNum        uint64
	Path           string
	Size           uint64
	Entries        uint64 // point entries and range tombstones
	RangeDeletions uint64
	Smallest       []byte // user key bounds
	Largest        []byte
	SmallestSeqNum uint64
	LargestSeqNum  uint64
	// Properties are the table's own properties (bytes per tier, blocks,
	// options); nil if the table could not be opened.
	Properties *TableProperties
}

// Tables lists the live tables, level by level.
func (d *DB) Tables() ([]TableInfo, error) {
	rs := d.loadReadState()
	defer rs.unref()
	if d.isClosed() {
		return nil, errors.Wrap(ErrClosed, "lsm: Tables")
	}
	var out []TableInfo
	for level := range manifest.NumLevels {
		for _, t := range rs.version.Tables(level) {
			info := TableInfo{
				Level: level, FileNum: t.FileNum, Path: manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum),
				Size: t.Size, Entries: t.Entries, RangeDeletions: t.RangeDeletions,
				Smallest: t.Smallest.UserKey, Largest: t.Largest.UserKey,
				SmallestSeqNum: uint64(t.SmallestSeqNum), LargestSeqNum: uint64(t.LargestSeqNum),
			}
			h, err := d.tableCache.get(t.FileNum)
			if err != nil {
				return nil, err
			}
			props := *h.reader.Properties()
			info.Properties = &props
			d.tableCache.release(h)
			out = append(out, info)
		}
	}
	return out, nil
}

// CheckProblem is one thing CheckProblems found.
type CheckProblem struct {
	// Path is the file concerned: a table, a WAL, the manifest, or the
	// lost/ folder.
	Path string
	// CrashLeftover marks what a crash leaves and Open cleans up without
	// losing a write it acknowledged: a WAL's torn tail beyond its synced
	// length, a manifest's torn tail beyond its synced length (an edit
	// that never took effect), an orphan table the manifest proves
	// unused. The rest is damage (or, for lost/, damage set aside
	// earlier).
	CrashLeftover bool
	// Problem says what is wrong and where (the table's block and its
	// offset, the log's offset), as Check prints it.
	Problem string
}

// Check verifies the database and returns an error marked ErrCorruption
// listing every problem CheckProblems finds (nil if none).
func (d *DB) Check() error {
	problems, err := d.CheckProblems()
	if err != nil || len(problems) == 0 {
		return err
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = p.Problem
	}
	return base.CorruptionErrorf("lsm: check of %s found %d problem(s):\n  %s",
		d.dir, len(problems), strings.Join(lines, "\n  "))
}

// CheckProblems verifies the database and lists every problem found:
//   - every live table, block by block (checksums, structure, key order,
//     filters), naming the bad file and block;
//   - every WAL not being written that does not replay to its end, with
//     its offset and whether the damage lies within synced bytes (a torn
//     tail after a crash is listed too: it is why Open drops bytes);
//   - files set aside in lost/;
//   - in a read-only DB (what `db check` opens), table files no version
//     references (orphans) and a manifest whose last record fails its
//     checksum or is incomplete. A DB open for writing removed or set
//     aside its orphans at open, and tables a flush is writing are not
//     live yet, so it does not list them.
func (d *DB) CheckProblems() ([]CheckProblem, error) {
	rs := d.loadReadState()
	defer rs.unref()
	if d.isClosed() {
		return nil, errors.Wrap(ErrClosed, "lsm: Check")
	}
	var problems []CheckProblem
	for level := range manifest.NumLevels {
		for _, t := range rs.version.Tables(level) {
			path := manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum)
			h, err := d.tableCache.get(t.FileNum)
			if err == nil {
				err = h.reader.Verify()
				d.tableCache.release(h)
			}
			if err != nil {
				problems = append(problems, CheckProblem{Path: path, Problem: errors.Wrapf(err, "L%d table %s", level, path).Error()})
			}
		}
	}
	fileProblems, err := d.checkFiles()
	if err != nil {
		return nil, err
	}
	return append(problems, fileProblems...), nil
}

// checkFiles lists the problems of the files around the tables: WALs,
// lost/, orphans and the manifest's tail (see Check).
func (d *DB) checkFiles() ([]CheckProblem, error) {
	var problems []CheckProblem
	vs := d.mu.versions
	names, err := d.fs.List(d.dir)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: listing %s", d.dir)
	}
	// The WAL being written is skipped: its tail may be in flight.
	current := uint64(0)
	if !d.opts.ReadOnly {
		d.mu.Lock()
		current = d.mu.mem.walNum
		d.mu.Unlock()
	}
	var wals []uint64
	for _, name := range names {
		if kind, num, ok := manifest.ParseFileName(name); ok && kind == manifest.FileKindLog && num >= vs.LogNumber() {
			wals = append(wals, num)
		}
	}
	newest := d.newestWrittenWAL(wals)
	for i, num := range wals {
		if num == current {
			continue
		}
		e, err := d.readWAL(num, i >= newest, nil)
		if isNotExist(err) {
			continue // flushed and removed meanwhile
		} else if err != nil {
			return nil, err
		}
		if e.damaged() {
			problems = append(problems, CheckProblem{Path: e.path, CrashLeftover: e.tornTail(), Problem: e.describe()})
		}
	}
	lost, err := manifest.ListLost(d.fs, d.dir)
	if err != nil {
		return nil, err
	}
	if len(lost) > 0 {
		problems = append(problems, CheckProblem{Path: manifest.LostPath(d.dir, ""), Problem: fmt.Sprintf("%s/ holds %d file(s) set aside by recovery (%s): inspect them, then remove them",
			manifest.LostPath(d.dir, ""), len(lost), strings.Join(lost, ", "))})
	}
	if d.opts.ReadOnly {
		info := vs.RecoveryInfo()
		for _, num := range info.OrphanTables {
			path := manifest.FilePath(d.dir, manifest.FileKindTable, num)
			problems = append(problems, CheckProblem{Path: path, CrashLeftover: info.Complete,
				Problem: fmt.Sprintf("orphan table %s: no version references it (%s)", path, orphanVerdict(info))})
		}
		if info.TailBytes > 0 {
			synced := "synced length unknown: the edit may have taken effect"
			if info.SyncedLengthKnown {
				synced = fmt.Sprintf("beyond the %d bytes a completed sync covered: an edit that never took effect", info.SyncedLength)
			}
			problems = append(problems, CheckProblem{Path: info.Manifest, CrashLeftover: info.SyncedLengthKnown,
				Problem: fmt.Sprintf("manifest %s: its last record fails at offset %d (%d bytes, %s): %s",
					info.Manifest, info.ValidLength, info.TailBytes, synced, info.TailProblem)})
		}
	}
	return problems, nil
}

// orphanVerdict says what Open will do with an orphan table.
func orphanVerdict(info manifest.RecoveryInfo) string {
	if info.Complete {
		return "the manifest proves it unused; Open removes it"
	}
	return "the manifest cannot prove it unused; Open moves it to lost/"
}
