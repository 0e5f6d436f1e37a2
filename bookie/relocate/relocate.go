// Package relocate records new paths for the directories of a stopped
// storage (bookie-index relocate, upstream's `bookkeeper shell
// updatecookie`): a backup restored to another mount point, a renamed
// volume.
//
// The storage records its directory list, absolute, in current/LAYOUT of
// every directory (bookie/ondisk), and refuses to open when the configured
// list differs. Since format version 2 each copy also records its own
// place: the position of its pair and whether it is the pair's ledger or
// index directory. Directories proves, before it writes anything, that
// each configured directory is the one recorded at its place — its copy
// has the storage's instance id and names that place — and then records
// the configured paths in every copy, one generation later. A directory
// whose copy names another place (two directories swapped), or another
// instance (another bookie's), is refused naming both; so is a ledger
// directory without a copy, and a copy of format version 1, which does not
// say which directory it is. An index directory without a copy (a
// restored checkpoint) is accepted, as the storage accepts it at open.
package relocate

import (
	"path/filepath"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Options say which directories to relocate.
type Options struct {
	// LedgerDirs and IndexDirs are the configured directories, paired by
	// position (IndexDirs empty: the ledger directories); relative ones
	// are made absolute.
	LedgerDirs, IndexDirs []string
	// FS holds them. Default vfs.Default.
	FS vfs.FS
}

// Result is what Directories found and did.
type Result struct {
	// Recorded is the list the copies held; Configured the list now
	// recorded (equal when nothing moved).
	Recorded, Configured []ondisk.DirPair
	// Generation is the recorded generation after the relocation.
	Generation uint64
	// Written are the directories whose LAYOUT was written.
	Written []string
}

// Moved reports whether the recorded paths changed.
func (r *Result) Moved() bool {
	if len(r.Recorded) != len(r.Configured) {
		return true
	}
	for i := range r.Recorded {
		if r.Recorded[i] != r.Configured[i] {
			return true
		}
	}
	return false
}

// Directories proves that every configured directory is the one its
// place recorded and records the configured paths (see the package
// documentation). The storage must be stopped.
func Directories(o Options) (*Result, error) {
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	pairs, err := configuredPairs(o)
	if err != nil {
		return nil, err
	}
	places := ondisk.Identities(pairs)
	type found struct {
		dir string
		l   *ondisk.Layout
	}
	var copies []found
	var missing []string
	for _, p := range pairs {
		for _, dir := range p.LayoutDirs() {
			l, err := ondisk.ReadLayout(fs, dir)
			if err != nil {
				return nil, errors.Wrap(err, "relocate")
			}
			want := places[dir]
			switch {
			case l == nil && want.Role == ondisk.RoleIndex:
				missing = append(missing, dir) // a restored checkpoint: written below
				continue
			case l == nil:
				return nil, errors.Newf("relocate: %s has no %s: it is not a directory of this storage, or it was wiped; "+
					"relocate records only directories that prove their place", dir, ondisk.LayoutFileName)
			case l.Self.Role == ondisk.RoleUnknown:
				return nil, errors.Newf("relocate: %s holds a %s of format version 1, which does not record which directory it is: "+
					"start the storage once with its directories at their recorded paths %s (a symbolic link from each recorded path "+
					"to the directory's new place will do), which records each directory's place, then relocate",
					dir, ondisk.LayoutFileName, ondisk.FormatPairs(l.Dirs))
			}
			if len(copies) > 0 && l.Instance != copies[0].l.Instance {
				return nil, errors.Newf("relocate: %s belongs to another bookie instance (%x) than %s (%x): "+
					"a directory of another bookie is configured here", dir, l.Instance, copies[0].dir, copies[0].l.Instance)
			}
			if err := ondisk.CheckPlace(dir, l, want); err != nil {
				return nil, errors.Wrap(err, "relocate")
			}
			copies = append(copies, found{dir, l})
		}
	}
	rec := copies[0].l
	for _, c := range copies[1:] {
		if c.l.Generation > rec.Generation {
			rec = c.l
		}
	}
	if len(rec.Dirs) != len(pairs) {
		return nil, errors.Newf("relocate: %d directory pairs are configured, %d recorded (%s): relocate records new paths for the "+
			"recorded directories, it does not add or remove any (adding empty ones is allowStorageExpansion's)",
			len(pairs), len(rec.Dirs), ondisk.FormatPairs(rec.Dirs))
	}
	res := &Result{Recorded: rec.Dirs, Configured: pairs, Generation: rec.Generation}
	stale := len(missing) > 0
	for _, c := range copies {
		stale = stale || c.l.Generation != rec.Generation
	}
	if !res.Moved() && !stale {
		return res, nil
	}
	next := *rec
	next.Dirs = pairs
	if res.Moved() {
		next.Generation++
	}
	res.Generation = next.Generation
	// The ledger directories last: until they hold the new list, a start
	// with the old paths still finds its copies there.
	var order []string
	for _, p := range pairs {
		if dirs := p.LayoutDirs(); len(dirs) == 2 {
			order = append(order, dirs[1])
		}
	}
	for _, p := range pairs {
		order = append(order, p.LayoutDirs()[0])
	}
	for _, dir := range order {
		if err := ondisk.WriteLayout(fs, dir, &next); err != nil {
			return res, errors.Wrap(err, "relocate")
		}
		res.Written = append(res.Written, dir)
	}
	return res, nil
}

// configuredPairs returns the configured directory pairs, absolute.
func configuredPairs(o Options) ([]ondisk.DirPair, error) {
	if len(o.LedgerDirs) == 0 {
		return nil, errors.New("relocate: no ledger directories")
	}
	index := o.IndexDirs
	if len(index) == 0 {
		index = o.LedgerDirs
	}
	if len(index) != len(o.LedgerDirs) {
		return nil, errors.Newf("relocate: %d index directories for %d ledger directories", len(index), len(o.LedgerDirs))
	}
	pairs := make([]ondisk.DirPair, len(o.LedgerDirs))
	for i := range o.LedgerDirs {
		l, err := filepath.Abs(o.LedgerDirs[i])
		if err != nil {
			return nil, errors.Wrapf(err, "relocate: ledger directory %s", o.LedgerDirs[i])
		}
		x, err := filepath.Abs(index[i])
		if err != nil {
			return nil, errors.Wrapf(err, "relocate: index directory %s", index[i])
		}
		pairs[i] = ondisk.DirPair{Ledger: l, Index: x}
	}
	return pairs, nil
}
