package lsm

import (
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

// Check verifies every live table block by block (checksums, structure,
// key order, filters). The manifest and WALs were verified when the DB
// was opened. The error names the first bad file and block.
func (d *DB) Check() error {
	rs := d.loadReadState()
	defer rs.unref()
	if d.isClosed() {
		return errors.Wrap(ErrClosed, "lsm: Check")
	}
	for level := range manifest.NumLevels {
		for _, t := range rs.version.Tables(level) {
			path := manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum)
			h, err := d.tableCache.get(t.FileNum)
			if err != nil {
				return errors.Wrapf(err, "L%d table %s", level, path)
			}
			err = h.reader.Verify()
			d.tableCache.release(h)
			if err != nil {
				return errors.Wrapf(err, "L%d table %s", level, path)
			}
		}
	}
	return nil
}
