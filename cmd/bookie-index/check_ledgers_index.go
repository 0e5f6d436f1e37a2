package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/cockroachdb/errors"
)

// runCheckLedgersIndex reads every record of every directory's ledgers
// index, offline (upstream's check-db-ledgers-index), and exits 1 listing
// each problem.
func runCheckLedgersIndex(args []string, stdout, stderr io.Writer) error {
	c, err := loadConfigCommand("check-ledgers-index", "Reads every record of the ledgers index of every ledger directory of the\n"+
		"configuration, read-only, decoding each, and checks its tables, WALs and manifest\n"+
		"(upstream's check-db-ledgers-index); offline: stop 'bookie-index serve' first.\n"+
		"Exits 1 listing every problem.", args, stderr)
	if err != nil {
		return err
	}
	paths := make([]string, len(c.IndexDirectories))
	for i, indexDir := range c.IndexDirectories {
		paths[i] = filepath.Join(indexDir, "current", "ledgers")
	}
	withProblems := 0
	failed := eachDirectory(context.Background(), "check-ledgers-index", paths, stderr, func(i int, prefix string) error {
		res, err := checkLedgersIndexDir(c.IndexDirectories[i], paths[i], stderr)
		if err != nil {
			return err
		}
		summary := fmt.Sprintf("%d records: %d ledgers exist, %d fenced, %d awaiting a purge", res.Records, res.Existing, res.Fenced, res.PurgePending)
		if len(res.Problems) == 0 {
			fmt.Fprintf(stdout, "%s: OK, %s\n", prefix, summary)
			return nil
		}
		withProblems++
		fmt.Fprintf(stdout, "%s: %d problem(s), %s\n", prefix, len(res.Problems), summary)
		for _, p := range res.Problems {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		return nil
	})
	if failed += withProblems; failed > 0 {
		return errors.Newf("%d of %d ledgers indexes failed the check", failed, len(c.IndexDirectories))
	}
	return nil
}

func checkLedgersIndexDir(indexDir, path string, stderr io.Writer) (*check.LedgersIndexResult, error) {
	unlock, err := lockForReading(path, stderr)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return check.LedgersIndex(nil, indexDir)
}
