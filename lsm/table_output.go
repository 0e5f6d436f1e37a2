package lsm

import (
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/cockroachdb/errors"
)

// tableOutput writes one table for a flush or compaction and describes it
// for the manifest.
type tableOutput struct {
	d       *DB
	fileNum uint64
	path    string
	w       *sstable.Writer
	// Bounds of the range tombstones written, if any.
	tombLower, tombUpper base.InternalKey
	tombSeqs             [2]base.SeqNum // smallest, largest
	hasTombs             bool
}

func (d *DB) newTableOutput() (*tableOutput, error) {
	num := d.mu.versions.NextFileNum()
	path := manifest.FilePath(d.dir, manifest.FileKindTable, num)
	f, err := d.fs.Create(path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: creating table %s", path)
	}
	w, err := sstable.NewWriter(f, path, d.tableOpts)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &tableOutput{d: d, fileNum: num, path: path, w: w}, nil
}

func (o *tableOutput) add(userKey []byte, trailer base.Trailer, value []byte) error {
	return o.w.Add(base.InternalKey{UserKey: userKey, Trailer: trailer}, value)
}

// addTombstones writes fragments (already clipped to this table's bounds).
func (o *tableOutput) addTombstones(frags []rangedel.Fragment) error {
	for _, t := range rangedel.Flatten(frags) {
		if err := o.w.AddRangeDeletion(t.Start, t.End, t.Seq); err != nil {
			return err
		}
		lower := base.MakeInternalKey(t.Start, t.Seq, base.KindRangeDelete)
		upper := base.InternalKey{UserKey: t.End, Trailer: manifest.RangeDeleteSentinel}
		if !o.hasTombs {
			o.tombLower, o.tombUpper = lower.Clone(), upper.Clone()
			o.tombSeqs = [2]base.SeqNum{t.Seq, t.Seq}
			o.hasTombs = true
			continue
		}
		if lower.Compare(o.tombLower) < 0 {
			o.tombLower = lower.Clone()
		}
		if upper.Compare(o.tombUpper) > 0 {
			o.tombUpper = upper.Clone()
		}
		o.tombSeqs[0] = min(o.tombSeqs[0], t.Seq)
		o.tombSeqs[1] = max(o.tombSeqs[1], t.Seq)
	}
	return nil
}

func (o *tableOutput) estimatedSize() uint64 { return o.w.EstimatedSize() }

// finish closes (and syncs) the table and returns its metadata, or nil
// (and removes the file) if it is empty.
func (o *tableOutput) finish() (*manifest.TableMeta, error) {
	props, err := o.w.Close()
	if err != nil {
		o.d.removeFile(o.path)
		return nil, err
	}
	if props.Entries == 0 && !o.hasTombs {
		o.d.removeFile(o.path)
		return nil, nil
	}
	st, err := o.d.fs.Stat(o.path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: stat %s", o.path)
	}
	meta := &manifest.TableMeta{
		FileNum:        o.fileNum,
		Size:           uint64(st.Size()),
		Entries:        props.Entries + props.RangeDeletions,
		RangeDeletions: props.RangeDeletions,
		SmallestSeqNum: base.SeqNum(props.SmallestSeqNum),
		LargestSeqNum:  base.SeqNum(props.LargestSeqNum),
	}
	switch {
	case props.Entries == 0:
		meta.Smallest, meta.Largest = o.tombLower, o.tombUpper
	case !o.hasTombs:
		meta.Smallest, meta.Largest = props.Smallest, props.Largest
	default:
		meta.Smallest, meta.Largest = props.Smallest, props.Largest
		if o.tombLower.Compare(meta.Smallest) < 0 {
			meta.Smallest = o.tombLower
		}
		if o.tombUpper.Compare(meta.Largest) > 0 {
			meta.Largest = o.tombUpper
		}
	}
	return meta, nil
}

// abort gives up the table and removes its file.
func (o *tableOutput) abort() {
	o.w.Abort()
	o.d.removeFile(o.path)
}
