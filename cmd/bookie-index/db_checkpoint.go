package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// dbCheckpoint writes a checkpoint of a closed database: DIR is locked as
// a writer would lock it (a running serve keeps it, and the command
// refuses), opened read-only (its unflushed WALs are copied), and its
// tables hard-linked into OUT. A running service checkpoints its indexes
// through the admin API instead (docs/operations.md, "Backup").
func dbCheckpoint(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db checkpoint", flag.ContinueOnError)
	pos, err := dbArgs(args, stderr, fs, 2)
	if err != nil {
		return err
	}
	lock, err := lsm.LockDir(nil, pos[0])
	if err != nil {
		return errors.Wrapf(err, "%s is in use (stop the process that has it open, or use the admin API's index checkpoint)", pos[0])
	}
	defer lock.Close()
	d, err := lsm.Open(pos[0], &lsm.Options{ReadOnly: true, BlockCacheSize: 1 << 20, Logger: toolLogger(stderr)})
	if err != nil {
		return err
	}
	defer d.Close()
	info, err := d.Checkpoint(pos[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: checkpoint of %s: %d tables (%d hard-linked, %d copied), %s, %d WALs copied, last seqnum %d\n",
		info.Dir, pos[0], info.Tables, info.Linked, info.Tables-info.Linked, formatBytes(info.Bytes), info.WALs, info.LastSeqNum)
	return nil
}
