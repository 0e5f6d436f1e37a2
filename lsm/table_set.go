package lsm

import (
	"fmt"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// TableSet writes entries, in increasing key order, into tables of about
// a target size in one directory, for one Ingest: how an index is built
// outside a DB (bookie's rebuild and migration, the bench's ingested
// load). The tables are named table-NNNNNN.sst in the order written, so
// they do not overlap.
type TableSet struct {
	fs      vfs.FS
	dir     string
	opts    TableOptions
	target  uint64
	w       *TableWriter
	paths   []string
	entries int64
}

// NewTableSet returns a set writing into dir (which must exist) with the
// table options opts (a DB's TableOptions, so that the tables read as the
// DB's own), cutting a table once its estimated size reaches targetSize
// bytes (a DB's TargetFileSizeBase).
func NewTableSet(fs vfs.FS, dir string, opts TableOptions, targetSize int64) *TableSet {
	return &TableSet{fs: fs, dir: dir, opts: opts, target: uint64(max(targetSize, 1))}
}

// Set adds an entry; keys must strictly increase.
func (s *TableSet) Set(key, value []byte) error {
	if s.w == nil {
		path := filepath.Join(s.dir, fmt.Sprintf("table-%06d.sst", len(s.paths)))
		w, err := CreateTable(s.fs, path, s.opts)
		if err != nil {
			return err
		}
		s.w = w
		s.paths = append(s.paths, path)
	}
	if err := s.w.Set(key, value); err != nil {
		return errors.Wrapf(err, "lsm: writing table %s", s.paths[len(s.paths)-1])
	}
	s.entries++
	if s.w.EstimatedSize() >= s.target {
		return s.closeTable()
	}
	return nil
}

func (s *TableSet) closeTable() error {
	w := s.w
	s.w = nil
	_, err := w.Close()
	return errors.Wrapf(err, "lsm: finishing table %s", s.paths[len(s.paths)-1])
}

// Entries returns the number of entries set so far.
func (s *TableSet) Entries() int64 { return s.entries }

// Finish closes the last table and returns the paths of all, in key order.
func (s *TableSet) Finish() ([]string, error) {
	if s.w != nil {
		if err := s.closeTable(); err != nil {
			return nil, err
		}
	}
	return s.paths, nil
}

// Abort closes an unfinished table; the caller removes the directory.
func (s *TableSet) Abort() {
	if s.w != nil {
		_, _ = s.w.Close()
		s.w = nil
	}
}
