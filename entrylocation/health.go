package entrylocation

import (
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// Health returns why the index cannot serve, or nil: it is closed, or its
// engine stopped after a write failure that needs a restart (a sticky
// lsm.DB.BackgroundError). A full disk the engine is retrying
// (lsm.ErrNoSpace) is not one: reads go on and writes resume with space.
func (ix *Index) Health() error {
	ix.closeMu.RLock()
	defer ix.closeMu.RUnlock()
	if ix.closed.Load() {
		return errors.Wrapf(ErrClosed, "entrylocation: %s", ix.dir)
	}
	if err := stickyError(ix.db); err != nil {
		return errors.Wrapf(err, "entrylocation: %s", ix.dir)
	}
	return nil
}

// stickyError returns the DB's background error unless it is a full disk
// the engine is retrying.
func stickyError(db *lsm.DB) error {
	if err := db.BackgroundError(); err != nil && !errors.Is(err, lsm.ErrNoSpace) {
		return err
	}
	return nil
}
