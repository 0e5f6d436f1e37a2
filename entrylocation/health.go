package entrylocation

import "github.com/cockroachdb/errors"

// Health returns why the index cannot serve, or nil: it is closed, or its
// engine stopped after a write failure (lsm.DB.Err).
func (ix *Index) Health() error {
	ix.closeMu.RLock()
	defer ix.closeMu.RUnlock()
	if ix.closed {
		return errors.Wrapf(ErrClosed, "entrylocation: %s", ix.dir)
	}
	if err := ix.db.Err(); err != nil {
		return errors.Wrapf(err, "entrylocation: %s", ix.dir)
	}
	return nil
}
