package benchmark

import (
	"iter"
	"os"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// IngestSorted implements Ingester the way `bookie-index rebuild` builds an
// index (bookie/rebuild.go): the entries go, in key order, into tables
// written with lsm.CreateTable and the DB's own table options (block size,
// layout, compression, common prefix), a table cut once it reaches the
// DB's target file size; then they are ingested into the empty DB. Tables
// that overlap nothing land in the last level at sequence number 0, as a
// full compaction leaves written data (docs/design.md, "Ingested tables
// read like compacted ones").
//
// The tables are built in a directory beside the index's (the ingest
// hard-links them in, so it must be on the same file system) and that
// directory is removed afterwards.
func (e *BookieEngine) IngestSorted(entries iter.Seq[Entry]) (tables int, err error) {
	db := e.ix.DB()
	if empty, err := isEmpty(db); err != nil {
		return 0, err
	} else if !empty {
		return 0, errors.Newf("bench: --load-via ingest needs an empty index, and %s holds entries", e.dir)
	}
	tmp := e.dir + ".ingest"
	if err := os.RemoveAll(tmp); err != nil {
		return 0, errors.Wrap(err, "bench: ingest")
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return 0, errors.Wrap(err, "bench: ingest")
	}
	defer func() { err = errors.CombineErrors(err, errors.Wrap(os.RemoveAll(tmp), "bench: ingest")) }()

	set := lsm.NewTableSet(vfs.Default, tmp, e.opts.TableOptions(), e.opts.TargetFileSizeBase)
	for en := range entries {
		k, v := entrylocation.EncodeKey(en.Ledger, en.EntryID), entrylocation.EncodeLocation(en.Location)
		if err = set.Set(k[:], v[:]); err != nil {
			set.Abort()
			return 0, errors.Wrap(err, "bench: ingest")
		}
	}
	paths, err := set.Finish()
	if err != nil {
		return 0, err
	}
	if err := db.Ingest(paths); err != nil {
		return 0, errors.Wrapf(err, "bench: ingesting %d tables", len(paths))
	}
	return len(paths), nil
}

// isEmpty reports whether db holds no entry at all.
func isEmpty(db *lsm.DB) (bool, error) {
	it, err := db.NewIter(nil)
	if err != nil {
		return false, err
	}
	found := it.First()
	return !found, errors.CombineErrors(it.Error(), it.Close())
}
