package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// dumpArgs parses the arguments of a dump (DIR and flags) and takes DIR's
// lock for reading: a live process's files change under the dump.
func dumpArgs(args []string, stderr io.Writer, fs *flag.FlagSet) ([]string, func(), error) {
	pos, err := dbArgs(args, stderr, fs, 1)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := lockForReading(pos[0], stderr)
	if err != nil {
		return nil, nil, err
	}
	return pos, unlock, nil
}

// dbManifest prints every edit of the manifest CURRENT names, one line per
// edit and one per table it adds or removes.
func dbManifest(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db manifest", flag.ContinueOnError)
	asHex := fs.Bool("hex", false, "print keys in hex")
	pos, unlock, err := dumpArgs(args, stderr, fs)
	if err != nil {
		return err
	}
	defer unlock()
	w := bufio.NewWriter(stdout)
	end, err := lsm.DumpManifest(vfs.Default, pos[0], func(e lsm.ManifestEdit) error {
		var counters []string
		if e.LogNumber != 0 {
			counters = append(counters, fmt.Sprintf("log number %d", e.LogNumber))
		}
		if e.NextFileNum != 0 {
			counters = append(counters, fmt.Sprintf("next file %d", e.NextFileNum))
		}
		if e.LastSeqNum != 0 {
			counters = append(counters, fmt.Sprintf("last seqnum %d", e.LastSeqNum))
		}
		if len(counters) == 0 {
			counters = append(counters, "counters unchanged")
		}
		fmt.Fprintf(w, "edit %d at offset %d: %s; %d new tables, %d deleted\n", e.Index, e.Offset,
			strings.Join(counters, ", "), len(e.NewTables), len(e.DeletedTables))
		for _, cp := range e.CompactPointers {
			fmt.Fprintf(w, "  compact pointer L%d %s\n", cp.Level, formatKeyIn(cp.Key, *asHex))
		}
		for _, t := range e.DeletedTables {
			fmt.Fprintf(w, "  - L%d %06d.sst\n", t.Level, t.FileNum)
		}
		for _, t := range e.NewTables {
			fmt.Fprintf(w, "  + L%d %s %d bytes, %d entries (%d range deletions), keys %s .. %s, seqnums %d..%d\n", t.Level,
				filepath.Base(t.Path), t.Size, t.Entries, t.RangeDeletions, formatKeyIn(t.Smallest, *asHex), formatKeyIn(t.Largest, *asHex),
				t.SmallestSeqNum, t.LargestSeqNum)
		}
		return nil
	})
	return finishDump(w, stdout, end, err)
}

// finishDump flushes a dump's lines and, if it read to its end, says how
// it ended; err is the dump's error.
func finishDump(w *bufio.Writer, stdout io.Writer, end lsm.DumpEnd, err error) error {
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	printDumpEnd(stdout, end)
	return nil
}

// printDumpEnd says where a log's records end and what follows.
func printDumpEnd(w io.Writer, end lsm.DumpEnd) {
	if end.TornTail != "" {
		fmt.Fprintf(w, "%s: %d bytes, records end at %d: %s\n", end.Path, end.Size, end.ValidLength, end.TornTail)
		return
	}
	fmt.Fprintf(w, "%s: %d bytes, records end at %d\n", end.Path, end.Size, end.ValidLength)
}

// dbWAL prints every batch of every WAL of the directory, oldest first.
func dbWAL(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db wal", flag.ContinueOnError)
	asHex := fs.Bool("hex", false, "print keys and values in hex")
	ops := fs.Bool("ops", true, "print each operation (false: one line per batch)")
	pos, unlock, err := dumpArgs(args, stderr, fs)
	if err != nil {
		return err
	}
	defer unlock()
	paths, err := lsm.WALFiles(vfs.Default, pos[0])
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fmt.Fprintf(stdout, "%s: no WAL\n", pos[0])
		return nil
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	for _, path := range paths {
		fmt.Fprintf(w, "%s\n", path)
		end, err := lsm.DumpWAL(vfs.Default, path, func(b lsm.WALBatch) error {
			fmt.Fprintf(w, "  batch at offset %d: seqnum %d, %d operations\n", b.Offset, b.SeqNum, len(b.Ops))
			if !*ops {
				return nil
			}
			for i, op := range b.Ops {
				switch {
				case op.Kind == "RANGEDEL":
					fmt.Fprintf(w, "    %d %s [%s, %s)\n", b.SeqNum+uint64(i), op.Kind, formatKeyIn(op.Key, *asHex), formatKeyIn(op.Value, *asHex))
				case op.Kind == "SET" && *asHex:
					fmt.Fprintf(w, "    %d %s %s %s\n", b.SeqNum+uint64(i), op.Kind, hex.EncodeToString(op.Key), hex.EncodeToString(op.Value))
				case op.Kind == "SET":
					fmt.Fprintf(w, "    %d %s %s %s\n", b.SeqNum+uint64(i), op.Kind, formatKey(op.Key), formatValue(op.Value))
				default:
					fmt.Fprintf(w, "    %d %s %s\n", b.SeqNum+uint64(i), op.Kind, formatKeyIn(op.Key, *asHex))
				}
			}
			return nil
		})
		if err := finishDump(w, stdout, end, err); err != nil {
			return err
		}
	}
	return nil
}

// ledgerJSON is one line of db ledgers --json.
type ledgerJSON struct {
	Ledger       int64  `json:"ledger"`
	Exists       bool   `json:"exists"`
	Fenced       bool   `json:"fenced"`
	PurgePending bool   `json:"purge_pending"`
	Floor        int64  `json:"floor"`
	MasterKey    string `json:"master_key"`             // hex
	ExplicitLAC  string `json:"explicit_lac,omitempty"` // hex
	HasLAC       bool   `json:"has_explicit_lac"`
}

// dbLedgers prints the ledgers index decoded, one ledger a line.
func dbLedgers(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db ledgers", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per ledger")
	d, pos, err := openDBArg(args, stderr, fs, 1)
	if err != nil {
		return err
	}
	defer d.Close()
	it, err := d.NewIter(nil)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		id, info, err := ondisk.DecodeLedgerRecord(it.Key(), it.Value())
		if err != nil {
			_ = it.Close()
			_ = w.Flush()
			return errors.Wrapf(err, "%s: key %x (is this a ledgers index?)", pos[0], it.Key())
		}
		n++
		j := ledgerJSON{Ledger: id, Exists: info.Exists, Fenced: info.Fenced, PurgePending: info.PurgePending, Floor: info.Floor,
			MasterKey: hex.EncodeToString(info.MasterKey), HasLAC: info.ExplicitLAC != nil, ExplicitLAC: hex.EncodeToString(info.ExplicitLAC)}
		if *asJSON {
			b, err := json.Marshal(j)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		lac := "none"
		if j.HasLAC {
			lac = fmt.Sprintf("%d bytes %s", len(info.ExplicitLAC), j.ExplicitLAC)
		}
		mk := "none"
		if len(info.MasterKey) > 0 {
			mk = j.MasterKey
		}
		fmt.Fprintf(w, "ledger %d: exists %v, fenced %v, purge pending %v, floor %d, master key %s, explicit LAC %s\n",
			id, j.Exists, j.Fenced, j.PurgePending, j.Floor, mk, lac)
	}
	if err := it.Close(); err != nil {
		_ = w.Flush()
		return err
	}
	if !*asJSON {
		fmt.Fprintf(w, "%s: %d ledgers\n", pos[0], n)
	}
	return w.Flush()
}
