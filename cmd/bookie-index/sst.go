package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// sstCommands are the subcommands of sst.
func sstCommands() []subcommand {
	return []subcommand{
		{"build", "--out FILE --ledgers N --entries M [--layout partitioned|full] [--common-prefix on|off] [--block-size B] [--compression none|lz4] [--bloom-bits N] [--restart-interval N] [--metadata-block-size B]",
			"write a table of N ledgers × M synthetic entry locations", sstBuild},
		{"props", "FILE [--json]", "the table's properties: entries, format, options, blocks, bytes by tier, key range", sstProps},
		{"scan", "FILE [--hex]", "every entry of the table, as LEDGER:ENTRY LOCATION (or hex)", sstScan},
		{"verify", "FILE", "read and check every block of the table", sstVerify},
		{"layout", "FILE", "the table's blocks: kind, offset, length", sstLayout},
	}
}

func runSST(args []string, stdout, stderr io.Writer) error {
	return runSubcommand("sst", "Builds, inspects and verifies one table file.", args, stdout, stderr, sstCommands())
}

func onOff(name, v string) (bool, error) {
	switch v {
	case "on", "true":
		return true, nil
	case "off", "false":
		return false, nil
	}
	return false, usageErrorf("--%s must be on or off, not %q", name, v)
}

// EntryLocationKey encodes (ledger, entry) as BookKeeper does: BE64‖BE64.
func entryLocationKey(dst []byte, ledger, entry uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst[:0], ledger)
	return binary.BigEndian.AppendUint64(dst, entry)
}

func sstBuild(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sst build", flag.ContinueOnError)
	out := fs.String("out", "", "table file to write (required)")
	ledgers := fs.Int("ledgers", 100, "number of ledgers")
	entries := fs.Int("entries", 1000, "entries per ledger")
	layout := fs.String("layout", "partitioned", "index and filter layout: partitioned or full")
	commonPrefix := fs.String("common-prefix", "on", "store each block's common key prefix once: on or off")
	blockSize := fs.Int("block-size", lsm.DefaultBlockSize, "data block size in bytes")
	compression := fs.String("compression", "lz4", "block compression: none or lz4")
	bloomBits := fs.Int("bloom-bits", lsm.DefaultBloomBitsPerKey, "Bloom filter bits per key (0 or negative: no filters)")
	restart := fs.Int("restart-interval", lsm.DefaultBlockRestartInterval, "entries between restart points in data blocks")
	metadataBlockSize := fs.Int("metadata-block-size", lsm.DefaultMetadataBlockSize, "index and filter partition size in bytes")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usageErrorf("--out FILE is required")
	}
	if *ledgers <= 0 || *entries <= 0 {
		return usageErrorf("--ledgers and --entries must be positive")
	}
	opts := lsm.TableOptions{BlockSize: *blockSize, RestartInterval: *restart, MetadataBlockSize: *metadataBlockSize, BloomBitsPerKey: *bloomBits}
	if *bloomBits <= 0 {
		opts.BloomBitsPerKey = -1
	}
	if opts.Layout, err = lsm.ParseTableLayout(*layout); err != nil {
		return usageErrorf("--layout: %v", err)
	}
	if opts.Compression, err = lsm.ParseCompression(*compression); err != nil {
		return usageErrorf("--compression: %v", err)
	}
	on, err := onOff("common-prefix", *commonPrefix)
	if err != nil {
		return err
	}
	opts.DisableCommonPrefix = !on
	if err := opts.EnsureDefaults().Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	start := time.Now()
	w, err := lsm.CreateTable(vfs.Default, *out, opts)
	if err != nil {
		return err
	}
	var key [16]byte
	var value [8]byte
	loc := newLocationSequence()
	for l := 0; l < *ledgers; l++ {
		for e := 0; e < *entries; e++ {
			binary.BigEndian.PutUint64(value[:], loc.next())
			if err := w.Set(entryLocationKey(key[:0], uint64(l), uint64(e)), value[:]); err != nil {
				return err
			}
		}
	}
	props, err := w.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d entries, %d data blocks, %d bytes in %s\n", *out, props.Entries, props.DataBlocks,
		props.DataStoredBytes, time.Since(start).Round(time.Millisecond))
	return nil
}

// locationSequence hands out increasing locations as an entry log would:
// logId<<32 | offset, offsets past the 1 KiB header, 100-byte entries,
// rolling to the next log at 1 GiB.
type locationSequence struct{ log, offset uint64 }

func newLocationSequence() *locationSequence { return &locationSequence{log: 1, offset: 1024} }

func (s *locationSequence) next() uint64 {
	if s.offset+100 > 1<<30 {
		s.log, s.offset = s.log+1, 1024
	}
	loc := s.log<<32 | (s.offset + 4)
	s.offset += 100
	return loc
}

// openTableArg parses the flags and opens the one table file named.
func openTableArg(name string, args []string, stderr io.Writer, fs *flag.FlagSet) (*lsm.Table, string, error) {
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, "", err
	}
	if len(pos) != 1 {
		return nil, "", usageErrorf("%s takes one table file", name)
	}
	if _, err := os.Stat(pos[0]); err != nil {
		return nil, "", errors.Newf("%s: no such file", pos[0])
	}
	t, err := lsm.OpenTable(vfs.Default, pos[0])
	return t, pos[0], err
}

// propsJSON is the --json shape of sst props.
type propsJSON struct {
	File                string    `json:"file"`
	FileBytes           uint64    `json:"file_bytes"`
	Entries             uint64    `json:"entries"`
	RangeDeletions      uint64    `json:"range_deletions"`
	FormatVersion       uint64    `json:"format_version"`
	Layout              string    `json:"layout"`
	Compression         string    `json:"compression"`
	CommonPrefix        bool      `json:"common_prefix"`
	BlockSize           uint64    `json:"block_size"`
	RestartInterval     uint64    `json:"restart_interval"`
	MetadataBlockSize   uint64    `json:"metadata_block_size"`
	BloomBitsPerKey     int64     `json:"bloom_bits_per_key"`
	DataBlocks          uint64    `json:"data_blocks"`
	IndexPartitions     uint64    `json:"index_partitions"`
	FilterPartitions    uint64    `json:"filter_partitions"`
	MaxFilterBlockBytes uint64    `json:"max_filter_block_bytes"`
	MaxIndexBlockBytes  uint64    `json:"max_index_block_bytes"`
	DataStoredBytes     uint64    `json:"data_stored_bytes"`
	BytesByTier         tierJSON  `json:"bytes_by_tier"`
	RawKeyBytes         uint64    `json:"raw_key_bytes"`
	RawValueBytes       uint64    `json:"raw_value_bytes"`
	SmallestKey         string    `json:"smallest_key,omitempty"`
	LargestKey          string    `json:"largest_key,omitempty"`
	SeqNums             [2]uint64 `json:"seqnums"`
	BytesPerEntry       float64   `json:"bytes_per_entry"`
}

type tierJSON struct {
	Data      uint64 `json:"data"`
	Index     uint64 `json:"index"`
	TopIndex  uint64 `json:"top_index"`
	Filter    uint64 `json:"filter"`
	TopFilter uint64 `json:"top_filter"`
}

func sstProps(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sst props", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	t, path, err := openTableArg("props", args, stderr, fs)
	if err != nil {
		return err
	}
	defer t.Close()
	p := t.Properties()
	j := propsJSON{
		File: path, FileBytes: t.FileSize(), Entries: p.Entries, RangeDeletions: p.RangeDeletions,
		FormatVersion: p.FormatVersion, Layout: p.Layout.String(), Compression: p.Compression.String(),
		CommonPrefix: p.CommonPrefix, BlockSize: p.BlockSize, RestartInterval: p.RestartInterval,
		MetadataBlockSize: p.MetadataBlockSize, BloomBitsPerKey: p.BloomBitsPerKey, DataBlocks: p.DataBlocks,
		IndexPartitions: p.IndexPartitions, FilterPartitions: p.FilterPartitions,
		MaxFilterBlockBytes: p.MaxFilterBlockSize, MaxIndexBlockBytes: p.MaxIndexBlockSize, DataStoredBytes: p.DataStoredBytes,
		BytesByTier: tierJSON{Data: p.DataBytes, Index: p.IndexBytes, TopIndex: p.TopIndexBytes, Filter: p.FilterBytes, TopFilter: p.TopFilterBytes},
		RawKeyBytes: p.RawKeyBytes, RawValueBytes: p.RawValueBytes, SeqNums: [2]uint64{p.SmallestSeqNum, p.LargestSeqNum},
	}
	if p.Entries > 0 {
		j.SmallestKey = hex.EncodeToString(p.Smallest.UserKey)
		j.LargestKey = hex.EncodeToString(p.Largest.UserKey)
		j.BytesPerEntry = math.Round(float64(t.FileSize())/float64(p.Entries)*1000) / 1000
	}
	if *asJSON {
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	fmt.Fprintf(stdout, "file                  %s (%d bytes, %.3f bytes/entry)\n", j.File, j.FileBytes, j.BytesPerEntry)
	fmt.Fprintf(stdout, "entries               %d (+%d range deletions), seqnums [%d, %d]\n", j.Entries, j.RangeDeletions, j.SeqNums[0], j.SeqNums[1])
	fmt.Fprintf(stdout, "format                version %d, layout %s, compression %s, common prefix %v\n", j.FormatVersion, j.Layout, j.Compression, j.CommonPrefix)
	fmt.Fprintf(stdout, "options               block %d, restart %d, metadata block %d, bloom bits/key %d\n", j.BlockSize, j.RestartInterval, j.MetadataBlockSize, j.BloomBitsPerKey)
	fmt.Fprintf(stdout, "blocks                %d data, %d index partitions, %d filter partitions\n", j.DataBlocks, j.IndexPartitions, j.FilterPartitions)
	fmt.Fprintf(stdout, "bytes by tier         data %d (stored %d), index %d, top index %d, filter %d, top filter %d\n",
		p.DataBytes, p.DataStoredBytes, p.IndexBytes, p.TopIndexBytes, p.FilterBytes, p.TopFilterBytes)
	fmt.Fprintf(stdout, "largest blocks        filter %d, index %d\n", j.MaxFilterBlockBytes, j.MaxIndexBlockBytes)
	if p.Entries > 0 {
		fmt.Fprintf(stdout, "key range             %s .. %s\n", j.SmallestKey, j.LargestKey)
	}
	return nil
}

// formatKey prints an entry-location key as ledger:entry and other keys
// quoted.
// formatKey prints an entry location key as LEDGER:ENTRY, another key
// quoted.
func formatKey(k []byte) string {
	if ledger, entry, err := entrylocation.DecodeKey(k); err == nil {
		return fmt.Sprintf("%d:%d", ledger, entry)
	}
	return fmt.Sprintf("%q", k)
}

// formatValue prints a location as a number, another value quoted.
func formatValue(v []byte) string {
	if loc, err := entrylocation.DecodeLocation(v); err == nil {
		return fmt.Sprintf("%d", loc)
	}
	return fmt.Sprintf("%q", v)
}

func sstScan(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sst scan", flag.ContinueOnError)
	asHex := fs.Bool("hex", false, "print keys and values in hex")
	t, _, err := openTableArg("scan", args, stderr, fs)
	if err != nil {
		return err
	}
	defer t.Close()
	w := bufio.NewWriterSize(stdout, 64<<10)
	err = t.Scan(func(e lsm.TableEntry) error {
		var k, v string
		if *asHex {
			k, v = hex.EncodeToString(e.Key), hex.EncodeToString(e.Value)
		} else {
			k, v = formatKey(e.Key), formatValue(e.Value)
		}
		if e.Deleted {
			v = "DEL"
		}
		_, err := fmt.Fprintf(w, "%s %s\n", k, v)
		return err
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func sstVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sst verify", flag.ContinueOnError)
	t, path, err := openTableArg("verify", args, stderr, fs)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.Verify(); err != nil {
		var be *lsm.TableBlockError
		if errors.As(err, &be) {
			return errors.Newf("%s: bad %s block at offset %d: %v", path, be.Kind, be.Offset, be.Err)
		}
		return err
	}
	p := t.Properties()
	fmt.Fprintf(stdout, "%s: OK (%d entries, %d data blocks, %d index partitions, %d filter partitions)\n",
		path, p.Entries, p.DataBlocks, p.IndexPartitions, p.FilterPartitions)
	return nil
}

func sstLayout(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sst layout", flag.ContinueOnError)
	t, _, err := openTableArg("layout", args, stderr, fs)
	if err != nil {
		return err
	}
	defer t.Close()
	blocks, err := t.Blocks()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "%-24s %12s %10s\n", "kind", "offset", "length")
	for _, b := range blocks {
		fmt.Fprintf(w, "%-24s %12d %10d\n", b.Kind, b.Offset, b.Length)
	}
	return w.Flush()
}
