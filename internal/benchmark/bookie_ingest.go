package benchmark

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"

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

	sink := &tableSink{dir: tmp, opts: e.opts.TableOptions(), target: uint64(e.opts.TargetFileSizeBase)}
	for en := range entries {
		if err = sink.add(en); err != nil {
			sink.abort()
			return 0, err
		}
	}
	paths, err := sink.finish()
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

// tableSink writes sorted entries into tables of about target bytes, as
// the rebuild's does.
type tableSink struct {
	dir    string
	opts   lsm.TableOptions
	target uint64
	w      *lsm.TableWriter
	paths  []string
}

func (t *tableSink) add(en Entry) error {
	if t.w == nil {
		path := filepath.Join(t.dir, fmt.Sprintf("table-%06d.sst", len(t.paths)))
		w, err := lsm.CreateTable(vfs.Default, path, t.opts)
		if err != nil {
			return errors.Wrap(err, "bench: ingest")
		}
		t.w = w
		t.paths = append(t.paths, path)
	}
	k, v := entrylocation.EncodeKey(en.Ledger, en.EntryID), entrylocation.EncodeLocation(en.Location)
	if err := t.w.Set(k[:], v[:]); err != nil {
		return errors.Wrap(err, "bench: ingest: writing a table")
	}
	if t.w.EstimatedSize() >= t.target {
		return t.closeTable()
	}
	return nil
}

func (t *tableSink) closeTable() error {
	w := t.w
	t.w = nil
	_, err := w.Close()
	return errors.Wrap(err, "bench: ingest: finishing a table")
}

// finish closes the last table and returns the paths of all.
func (t *tableSink) finish() ([]string, error) {
	if t.w != nil {
		if err := t.closeTable(); err != nil {
			return nil, err
		}
	}
	return t.paths, nil
}

// abort closes an unfinished table (its directory is removed anyway).
func (t *tableSink) abort() {
	if t.w != nil {
		_, _ = t.w.Close()
		t.w = nil
	}
}
