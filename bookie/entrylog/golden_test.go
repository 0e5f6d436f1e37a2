package entrylog

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestEntryLogFormat pins the entry log's header and record encodings with
// golden files: each case prints the bytes as an annotated hex dump, decoded
// here as docs/format.md gives it (big-endian), then what the package's
// decoder reads. Rewrite with -update and review the diff.
//
//	header id=N
//	record ledger=L entry=E     (the payload is the input, see golden.ParseBytes)
func TestEntryLogFormat(t *testing.T) {
	golden.Run(t, "testdata/entrylog_format", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "header":
			h := encodeHeader(c.Int(t, "id", 0))
			id, err := decodeHeader(h)
			return dumpHeader(h) + "\n" + fmt.Sprintf("decoded: log id %d, err %v", id, err)
		case "record":
			payload, err := golden.ParseBytes(strings.TrimSpace(c.Input))
			require.NoError(t, err)
			rec := appendRecord(nil, c.Int(t, "ledger", 0), c.Int(t, "entry", 0), payload)
			h, err := decodeRecordHeader(rec)
			if err == nil {
				err = checkRecord(rec[:RecordOverhead], &h, rec[RecordOverhead:])
			}
			return dumpRecord(golden.NewDump(rec)) + "\n" +
				fmt.Sprintf("decoded: ledger %d entry %d, %d-byte payload, err %v", h.ledgerID, h.entryID, h.payloadSize(), err)
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

// goldenHeaderSize is the header's size as docs/format.md gives it.
const goldenHeaderSize = 1024

func dumpHeader(h []byte) string {
	d := golden.NewDump(h)
	dumpHeaderFields(d)
	return d.String()
}

func dumpHeaderFields(d *golden.Dump) {
	d.Bytes(4, "magic %q", d.Peek(4))
	d.Uint(4, binary.BigEndian, "format version")
	d.Uint(8, binary.BigEndian, "log id")
	d.Uint(4, binary.BigEndian, "CRC-32C of the 16 bytes above")
	d.Bytes(goldenHeaderSize-20, "zeros to offset %d", goldenHeaderSize)
}

// dumpRecord dumps one record at d's offset.
func dumpRecord(d *golden.Dump) string {
	size := d.Uint(4, binary.BigEndian, "size (bytes after this field)")
	d.Note("location offset %d", d.Offset())
	d.Uint(8, binary.BigEndian, "ledger id")
	d.Uint(8, binary.BigEndian, "entry id")
	d.Uint(4, binary.BigEndian, "CRC-32C of size, ids and payload")
	d.Bytes(int(size)-20, "payload")
	return d.String()
}

// The committed version-1 entry logs, and what the generator wrote.
const v1Dir = "testdata/v1"

// writeV1Logs writes v1Dir: two logs (a small size limit rotates the first)
// of records of two ledgers, and lastId.
func writeV1Logs(t *testing.T) {
	require.NoError(t, os.RemoveAll(v1Dir))
	l, err := Open(v1Dir, &Options{LogSizeLimit: 1300})
	require.NoError(t, err)
	for e := int64(0); e < 6; e++ {
		for _, ledger := range []int64{3, 7} {
			_, err := l.AddEntry(ledger, e, fmt.Appendf(nil, "ledger %d entry %d %s", ledger, e, strings.Repeat("*", int(10*e))))
			require.NoError(t, err)
		}
	}
	_, err = l.AddEntry(7, 6, nil) // an empty payload
	require.NoError(t, err)
	require.NoError(t, l.Flush())
	require.NoError(t, l.Close())
}

// TestEntryLogV1 reads the committed version-1 entry logs with Scan (the
// rebuild's path) and with a Logger (ReadEntry, ReadAfter: the read path),
// and compares them with testdata/entrylog_v1. A reader change that breaks
// logs written by older builds fails it. The Logger opens a copy, so the
// test never writes to testdata. -regenerate rewrites the logs.
//
//	scan | dump <log> | read
func TestEntryLogV1(t *testing.T) {
	if golden.Regenerating() {
		writeV1Logs(t)
	}
	dir := t.TempDir()
	names, err := os.ReadDir(v1Dir)
	require.NoError(t, err)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(v1Dir, n.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n.Name()), data, 0o644))
	}
	golden.Run(t, "testdata/entrylog_v1", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "files":
			var lines []string
			for _, n := range names {
				info, err := n.Info()
				require.NoError(t, err)
				lines = append(lines, fmt.Sprintf("%s %d bytes", n.Name(), info.Size()))
			}
			last, err := os.ReadFile(filepath.Join(v1Dir, LastIDFileName))
			require.NoError(t, err)
			lines = append(lines, fmt.Sprintf("lastId holds %q", last))
			return strings.Join(lines, "\n")
		case "dump":
			data, err := os.ReadFile(filepath.Join(v1Dir, c.String(t, "log", "")))
			require.NoError(t, err)
			d := golden.NewDump(data)
			dumpHeaderFields(d)
			for d.Remaining() > 0 {
				d.Note("record")
				dumpRecord(d)
			}
			return d.String()
		case "scan":
			var lines []string
			for _, n := range names {
				if _, ok := ParseLogFileName(n.Name()); !ok {
					continue
				}
				res, err := Scan(nil, filepath.Join(v1Dir, n.Name()), func(rec *Record) error {
					lines = append(lines, fmt.Sprintf("  ledger %d entry %d at %s: %s", rec.LedgerID, rec.EntryID, FormatLocation(rec.Location), golden.Short(rec.Payload)))
					return nil
				})
				require.NoError(t, err)
				lines = append(lines, fmt.Sprintf("%s: log id %d, %d records, size %d, valid end %d, tail %v", n.Name(), res.LogID, res.Records, res.Size, res.ValidEnd, res.Tail))
			}
			return strings.Join(lines, "\n")
		case "read":
			// Every record by its location, then everything after the
			// first record of each log.
			l, err := Open(dir, nil)
			require.NoError(t, err)
			defer l.Close()
			var lines []string
			for _, loc := range c.Lines() {
				var ledger, entry, location int64
				_, err := fmt.Sscanf(loc, "%d %d %v", &ledger, &entry, &location)
				require.NoError(t, err, "%s: %q", c.Pos, loc)
				p, err := l.ReadEntry(ledger, entry, location)
				if err != nil {
					// The kind of error, not its text, is the contract.
					kind := "error"
					switch {
					case errors.Is(err, ErrBadLocation):
						kind = "bad location"
					case errors.Is(err, ErrCorruption):
						kind = "corruption"
					}
					lines = append(lines, fmt.Sprintf("ReadEntry(%s): %s", loc, kind))
					continue
				}
				lines = append(lines, fmt.Sprintf("ReadEntry(%s): %s", loc, golden.Short(p)))
				n := 0
				require.NoError(t, l.ReadAfter(location, func(*Record) bool { n++; return true }))
				lines = append(lines, fmt.Sprintf("  ReadAfter: %d records", n))
			}
			return strings.Join(lines, "\n")
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}
