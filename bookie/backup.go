package bookie

import (
	"fmt"
	"path/filepath"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// IndexCheckpoint says where CheckpointIndexes wrote one directory's
// indexes.
type IndexCheckpoint struct {
	// IndexDir is the directory's <index directory>/current.
	IndexDir string
	// Dir is the checkpoint of it: <out>/<i>/current, holding locations/
	// and ledgers/.
	Dir       string
	Locations lsm.CheckpointInfo
	Ledgers   lsm.CheckpointInfo
}

// CheckpointIndexes writes a consistent copy of every directory's entry
// location and ledgers indexes under out, while the storage runs: the i-th
// index directory's go to out/<i>/current/locations and
// out/<i>/current/ledgers, so that out/<i> can be put in place of the
// index directory (docs/operations.md, "Backup and restore"). out may
// exist; out/<i>/current/locations and .../ledgers must not.
//
// Each directory first checkpoints (its write cache is indexed, its
// ledgers index flushed), then, holding the checkpoint lock so that no
// checkpoint or purge writes either index meanwhile, checkpoints both
// indexes with lsm's Checkpoint (tables hard-linked). The copy names only
// entry-log bytes that were synced before it was taken; entry logs are
// never rewritten, so a copy of them taken afterwards holds every byte it
// names. A failure stops at the directory that failed, naming it.
func (s *Storage) CheckpointIndexes(out string) ([]IndexCheckpoint, error) {
	var res []IndexCheckpoint
	for i, d := range s.dirs {
		c, err := d.checkpointIndexes(filepath.Join(out, fmt.Sprint(i), "current"))
		if err != nil {
			return res, errors.Wrapf(err, "bookie: checkpointing the indexes of %s", d.indexDir)
		}
		res = append(res, c)
	}
	return res, nil
}

func (d *DirStorage) checkpointIndexes(out string) (IndexCheckpoint, error) {
	c := IndexCheckpoint{IndexDir: d.indexDir, Dir: out}
	if err := d.enter("CheckpointIndexes"); err != nil {
		return c, err
	}
	defer d.exit()
	if err := d.checkpoint(); err != nil {
		return c, err
	}
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	var err error
	if c.Locations, err = d.locations.DB().Checkpoint(filepath.Join(out, "locations")); err != nil {
		return c, err
	}
	c.Ledgers, err = d.ledgers.db.Checkpoint(filepath.Join(out, "ledgers"))
	return c, err
}
