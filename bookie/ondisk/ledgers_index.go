package ondisk

import (
	"log/slog"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// LedgersEngineOptions returns the engine options of a ledgers index:
// custom if set, else small ones (the index holds a record per ledger).
// logger fills the options' own when they have none; the caller sets the
// FS.
func LedgersEngineOptions(custom *lsm.Options, logger *slog.Logger) lsm.Options {
	o := lsm.Options{
		WriteBufferSize:      4 << 20,
		TargetFileSizeBase:   4 << 20,
		MaxBytesForLevelBase: 16 << 20,
		BlockCacheSize:       8 << 20,
		BlockSize:            4 << 10,
		MaxBackgroundJobs:    1,
	}
	if custom != nil {
		o = *custom
	}
	if o.Logger == nil {
		o.Logger = logger
	}
	return o
}

// ScanLedgers calls fn with every record of the ledgers index db, which
// is at path, in ledger id order. A record that does not decode stops the
// scan with an error matching lsm.ErrCorruption that names the index and
// the key.
func ScanLedgers(db *lsm.DB, path string, fn func(id int64, info LedgerInfo)) error {
	it, err := db.NewIter(nil)
	if err != nil {
		return errors.Wrapf(err, "bookie: reading the ledgers index %s", path)
	}
	for ok := it.First(); ok; ok = it.Next() {
		id, info, err := DecodeLedgerRecord(it.Key(), it.Value())
		if err != nil {
			_ = it.Close()
			return errors.Wrapf(lsm.ErrCorruption, "bookie: ledgers index %s: key %x: %v", path, it.Key(), err)
		}
		fn(id, info)
	}
	if err := errors.CombineErrors(it.Error(), it.Close()); err != nil {
		return errors.Wrapf(err, "bookie: reading the ledgers index %s", path)
	}
	return nil
}
