package check

import (
	"fmt"
	"path/filepath"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// LedgersIndexResult is what LedgersIndex found.
type LedgersIndexResult struct {
	// Path is the ledgers index checked.
	Path string
	// Records were read; Existing of them are ledgers that exist, Fenced
	// fenced ones, PurgePending deleted (or written again) ledgers whose
	// old locations await a purge.
	Records, Existing, Fenced, PurgePending int
	// Problems lists each record that does not decode (key and why), and
	// what the engine's check found (tables, WALs, manifest), one per line.
	Problems []string
}

// LedgersIndex reads every record of a directory's ledgers index
// (<indexDir>/current/ledgers), read-only, decoding each, and checks its
// engine files (upstream's check-db-ledgers-index). fs nil means
// vfs.Default. It fails only when the index cannot be opened or read; the
// problems of a readable index are in the result.
func LedgersIndex(fs vfs.FS, indexDir string) (*LedgersIndexResult, error) {
	if fs == nil {
		fs = vfs.Default
	}
	res := &LedgersIndexResult{Path: filepath.Join(indexDir, "current", "ledgers")}
	if !lsm.Exists(fs, res.Path) {
		return nil, errors.Wrapf(ondisk.ErrLedgersIndexMissing, "bookie: the ledgers index %s is missing", res.Path)
	}
	db, err := lsm.Open(res.Path, &lsm.Options{FS: fs, ReadOnly: true, BlockCacheSize: 8 << 20})
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: opening the ledgers index %s", res.Path)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: reading the ledgers index %s", res.Path)
	}
	for ok := it.First(); ok; ok = it.Next() {
		res.Records++
		id, err := ondisk.DecodeLedgerKey(it.Key())
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("key %x: %v", it.Key(), err))
			continue
		}
		info, err := ondisk.DecodeLedgerInfo(it.Value())
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("ledger %d (key %x): %v", id, it.Key(), err))
			continue
		}
		if info.Exists {
			res.Existing++
		}
		if info.Fenced {
			res.Fenced++
		}
		if info.PurgePending {
			res.PurgePending++
		}
	}
	if err := errors.CombineErrors(it.Error(), it.Close()); err != nil {
		return nil, errors.Wrapf(err, "bookie: reading the ledgers index %s after %d records", res.Path, res.Records)
	}
	return res, nil
}
