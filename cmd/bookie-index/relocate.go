package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/bookie/relocate"
)

// runRelocate records the configured paths of a stopped storage whose
// directories moved (upstream's bookkeeper shell updatecookie), after
// proving that each is the directory recorded at its place
// (bookie/relocate).
func runRelocate(args []string, stdout, stderr io.Writer) error {
	c, err := loadConfigCommand("relocate", "Records the configured directory paths of a stopped storage whose directories moved\n"+
		"(a backup restored to another mount point, a renamed volume): every directory's\n"+
		"current/LAYOUT must prove it is the directory recorded at its place (the same\n"+
		"bookie instance, the same pair and role), or nothing is written. Offline: stop\n"+
		"'bookie-index serve' first. Adding or removing directories is\n"+
		"allowStorageExpansion's, not relocate's.", args, stderr)
	if err != nil {
		return err
	}
	// Hold every index's lock: a running serve holds them.
	for _, dir := range c.IndexDirectories {
		for _, db := range []string{"locations", "ledgers"} {
			unlock, err := lockForReading(filepath.Join(dir, "current", db), stderr)
			if err != nil {
				return err
			}
			defer unlock()
		}
	}
	res, err := relocate.Directories(relocate.Options{LedgerDirs: c.LedgerDirectories, IndexDirs: c.IndexDirectories})
	if err != nil {
		return err
	}
	switch {
	case res.Moved():
		fmt.Fprintf(stdout, "relocate: %s recorded, was %s (generation %d, %d %s copies written)\n",
			ondisk.FormatPairs(res.Configured), ondisk.FormatPairs(res.Recorded), res.Generation, len(res.Written), ondisk.LayoutFileName)
	case len(res.Written) > 0:
		fmt.Fprintf(stdout, "relocate: the directories are where they were recorded, %s; %d stale %s copies rewritten\n",
			ondisk.FormatPairs(res.Configured), len(res.Written), ondisk.LayoutFileName)
	default:
		fmt.Fprintf(stdout, "relocate: the directories are where they were recorded, %s; nothing to do\n", ondisk.FormatPairs(res.Configured))
	}
	return nil
}
