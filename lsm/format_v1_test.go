package lsm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/batch"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// v1DBDir is a database directory written by format version 1: CURRENT, a
// MANIFEST, tables at L0 and the bottom level, and a WAL holding writes no
// table holds. It is committed; TestDBV1 must read it the same forever.
const v1DBDir = "testdata/db-v1"

func v1Key(ledger, entry uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, ledger), entry)
}

func v1Location(log, offset uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, log<<32|offset)
}

// writeV1DB writes v1DBDir: ledgers 1-3 compacted to the bottom level,
// then a flushed L0 table with ledger 4, a point delete and a range delete
// of ledger 2, then synced writes to ledger 5, a delete and a batch that
// spans log blocks, left in the WAL (Close does not flush).
func writeV1DB(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, nil)
	require.NoError(t, err)
	apply := func(fill func(b *Batch)) {
		var b Batch
		fill(&b)
		require.NoError(t, d.Apply(&b, Sync))
	}
	apply(func(b *Batch) {
		for l := uint64(1); l <= 3; l++ {
			for e := uint64(0); e < 20; e++ {
				b.Set(v1Key(l, e), v1Location(l, 1028+100*e))
			}
		}
	})
	require.NoError(t, d.Flush())
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	apply(func(b *Batch) {
		for e := uint64(0); e < 10; e++ {
			b.Set(v1Key(4, e), v1Location(4, 1028+60*e))
		}
		b.Delete(v1Key(1, 5))
		b.DeleteRange(v1Key(2, 0), v1Key(3, 0))
	})
	require.NoError(t, d.Flush())
	apply(func(b *Batch) {
		for e := uint64(0); e < 5; e++ {
			b.Set(v1Key(5, e), v1Location(5, 1028+40*e))
		}
	})
	apply(func(b *Batch) { b.Delete(v1Key(4, 0)) })
	// A batch larger than a 32 KiB log block: first, middle and last chunks.
	apply(func(b *Batch) {
		big := make([]byte, 70000)
		for i := range big {
			big[i] = byte(i % 251)
		}
		b.Set(v1Key(6, 0), big)
	})
	require.NoError(t, d.Close())

	require.NoError(t, os.RemoveAll(v1DBDir))
	require.NoError(t, os.MkdirAll(v1DBDir, 0o755))
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, n := range names {
		if n.Name() == "LOCK" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(v1DBDir, n.Name()), data, 0o644))
	}
}

// TestDBV1 opens the committed version-1 database and compares what it
// finds with testdata/db_v1: the MANIFEST's edits and the WAL's batches
// (read with the record, manifest and batch decoders), and the DB's tables
// and contents opened read-only in place (the test checks that testdata is
// left byte for byte as it was) and opened for writing on a copy (the WAL
// replayed and flushed). A reader change that breaks databases written by
// older builds fails it. -regenerate rewrites the directory.
//
//	files | manifest | wal | read-only | recover
func TestDBV1(t *testing.T) {
	if golden.Regenerating() {
		writeV1DB(t)
	}
	before := v1DirDigest(t)
	defer func() { require.Equal(t, before, v1DirDigest(t), "the test modified %s", v1DBDir) }()
	golden.Run(t, "testdata/db_v1", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "files":
			return before
		case "manifest":
			current, err := os.ReadFile(filepath.Join(v1DBDir, "CURRENT"))
			require.NoError(t, err)
			out := fmt.Sprintf("CURRENT: %q\n", current)
			return out + eachRecord(t, filepath.Join(v1DBDir, strings.TrimSpace(string(current))), describeV1Edit)
		case "wal":
			var out []string
			for _, name := range v1Files(t) {
				if kind, _, ok := manifest.ParseFileName(name); ok && kind == manifest.FileKindLog {
					out = append(out, name+":", eachRecord(t, filepath.Join(v1DBDir, name), describeV1Batch))
				}
			}
			return strings.Join(out, "\n")
		case "read-only":
			d, err := Open(v1DBDir, &Options{ReadOnly: true})
			require.NoError(t, err)
			defer func() { require.NoError(t, d.Close()) }()
			return describeV1DB(t, d)
		case "recover":
			dir := t.TempDir()
			for _, name := range v1Files(t) {
				data, err := os.ReadFile(filepath.Join(v1DBDir, name))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
			}
			d, err := Open(dir, nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, d.Close()) }()
			return describeV1DB(t, d)
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

func v1Files(t *testing.T) []string {
	entries, err := os.ReadDir(v1DBDir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// v1DirDigest lists the fixture's files with their sizes and SHA-256.
func v1DirDigest(t *testing.T) string {
	var lines []string
	for _, name := range v1Files(t) {
		data, err := os.ReadFile(filepath.Join(v1DBDir, name))
		require.NoError(t, err)
		lines = append(lines, fmt.Sprintf("%-16s %6d bytes  sha256 %x", name, len(data), sha256.Sum256(data)))
	}
	return strings.Join(lines, "\n")
}

// eachRecord describes every record of the record log at path.
func eachRecord(t *testing.T, path string, describe func(rec []byte) string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	r := record.NewReader(bytes.NewReader(data))
	var lines []string
	for i := 0; ; i++ {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			lines = append(lines, "error: "+err.Error())
			break
		}
		lines = append(lines, fmt.Sprintf("record %d (%d bytes):%s", i, len(rec), describe(rec)))
	}
	if r.TornTail() {
		lines = append(lines, "torn tail")
	}
	return strings.Join(lines, "\n")
}

func describeV1Key(k base.InternalKey) string {
	if k.Trailer == manifest.RangeDeleteSentinel {
		return fmt.Sprintf("%x#sentinel", k.UserKey)
	}
	return fmt.Sprintf("%x#%s.%d", k.UserKey, k.Kind(), k.SeqNum())
}

func describeV1Edit(rec []byte) string {
	var e manifest.VersionEdit
	if err := e.Decode(rec); err != nil {
		return " error: " + err.Error()
	}
	var parts []string
	if e.LogNumber != 0 {
		parts = append(parts, fmt.Sprintf("log number %d", e.LogNumber))
	}
	if e.NextFileNum != 0 {
		parts = append(parts, fmt.Sprintf("next file number %d", e.NextFileNum))
	}
	if e.LastSeqNum != 0 {
		parts = append(parts, fmt.Sprintf("last seqnum %d", e.LastSeqNum))
	}
	for _, cp := range e.CompactPointers {
		parts = append(parts, fmt.Sprintf("compact pointer L%d %s", cp.Level, describeV1Key(cp.Key)))
	}
	for _, dt := range e.DeletedTables {
		parts = append(parts, fmt.Sprintf("deleted L%d %06d", dt.Level, dt.FileNum))
	}
	for _, nt := range e.NewTables {
		m := nt.Meta
		parts = append(parts, fmt.Sprintf("new L%d %06d size %d [%s, %s] seqnums [%d, %d] entries %d range deletions %d",
			nt.Level, m.FileNum, m.Size, describeV1Key(m.Smallest), describeV1Key(m.Largest), m.SmallestSeqNum, m.LargestSeqNum, m.Entries, m.RangeDeletions))
	}
	return "\n  " + strings.Join(parts, "\n  ")
}

func describeV1Batch(rec []byte) string {
	r, err := batch.Decode(rec)
	if err != nil {
		return " error: " + err.Error()
	}
	lines := []string{fmt.Sprintf(" batch at seqnum %d, %d ops", r.SeqNum(), r.Count())}
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			lines = append(lines, "error: "+err.Error())
		}
		if !ok || err != nil {
			break
		}
		if kind == base.KindDelete {
			lines = append(lines, fmt.Sprintf("%s %x", kind, key))
		} else {
			lines = append(lines, fmt.Sprintf("%s %x %s", kind, key, golden.Short(value)))
		}
	}
	return strings.Join(lines, "\n  ")
}

// describeV1DB lists the DB's tables, checks them, and lists its contents.
func describeV1DB(t *testing.T, d *DB) string {
	var lines []string
	tables, err := d.Tables()
	require.NoError(t, err)
	for _, tb := range tables {
		lines = append(lines, fmt.Sprintf("L%d %06d: %d entries, %d range deletions, [%x, %x], seqnums [%d, %d]",
			tb.Level, tb.FileNum, tb.Entries, tb.RangeDeletions, tb.Smallest, tb.Largest, tb.SmallestSeqNum, tb.LargestSeqNum))
	}
	if err := d.Check(); err != nil {
		lines = append(lines, "check: "+err.Error())
	} else {
		lines = append(lines, "check: ok")
	}
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		lines = append(lines, fmt.Sprintf("%x %s", it.Key(), golden.Short(it.Value())))
		n++
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	lines = append(lines, fmt.Sprintf("%d keys", n))
	for _, k := range [][]byte{v1Key(1, 5), v1Key(2, 7), v1Key(4, 0), v1Key(5, 4), v1Key(6, 0)} {
		v, err := d.Get(k)
		if errors.Is(err, ErrNotFound) {
			lines = append(lines, fmt.Sprintf("get %x: not found", k))
		} else if err != nil {
			lines = append(lines, fmt.Sprintf("get %x: %v", k, err))
		} else {
			lines = append(lines, fmt.Sprintf("get %x: %s", k, golden.Short(v)))
		}
	}
	return strings.Join(lines, "\n")
}
