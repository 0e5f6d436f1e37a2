package ondisk

import (
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// RequiredDir names the directory an offline tool works from, which it
// must be given; the other of the pair defaults to it.
type RequiredDir uint8

const (
	// LedgerDirRequired: the tool reads the entry logs (check, rebuild).
	LedgerDirRequired RequiredDir = iota
	// IndexDirRequired: the tool starts from the indexes (a migration from
	// BookKeeper's RocksDB databases and its roll back).
	IndexDirRequired
)

// FillDirs fills in an offline tool's directories as a bookie reads its
// configuration: of the ledger and the index directory, one not given is
// the other (a bookie without indexDirectories keeps its indexes in its
// ledger directories), and no file system is vfs.Default. The required one
// not given is an error wrapping entrylocation.ErrInvalidArgument that
// begins with tool ("bookie: check") and names it.
func FillDirs(tool string, required RequiredDir, ledgerDir, indexDir *string, fs *vfs.FS) error {
	switch {
	case required == LedgerDirRequired && *ledgerDir == "":
		return errors.Wrapf(entrylocation.ErrInvalidArgument, "%s: no ledger directory", tool)
	case required == IndexDirRequired && *indexDir == "":
		return errors.Wrapf(entrylocation.ErrInvalidArgument, "%s: no index directory", tool)
	}
	if *ledgerDir == "" {
		*ledgerDir = *indexDir
	}
	if *indexDir == "" {
		*indexDir = *ledgerDir
	}
	if *fs == nil {
		*fs = vfs.Default
	}
	return nil
}
