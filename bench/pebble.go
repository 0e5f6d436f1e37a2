package main

import (
	"encoding/binary"
	"math"
	"os"
	"time"

	"github.com/bookie-index/bookie-index/benchmark"
	"github.com/cockroachdb/errors"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// PebbleEngine runs the benchmark on Pebble v2 with the closest
// equivalents of BookKeeper's entry-location RocksDB options:
//
//	BookKeeper (RocksDB)                         Pebble
//	compression=LZ4                              Snappy (Pebble has no LZ4)
//	block_size=64 KiB (--block-size)             Levels[*].BlockSize
//	bloom 10 bits/key, whole-key, all levels     Levels[*].FilterPolicy = bloom.FilterPolicy(10)
//	target_file_size_base=64 MiB, multiplier 1   TargetFileSizes[*] = 64 MiB (scaled to the key count)
//	write_buffer_size=64 MiB                     MemTableSize
//	max_write_buffer_number=4                    MemTableStopWritesThreshold=4
//	level0_file_num_compaction_trigger=4         L0CompactionThreshold=4
//	level0_stop_writes_trigger=36                L0StopWritesThreshold=36
//	max_bytes_for_level_base=256 MiB             LBaseMaxBytes
//	block_cache=N (64 shards)                    pebble.NewCache(N) (4 × GOMAXPROCS shards; not settable)
//	kTwoLevelIndexSearch + partition_filters     IndexBlockSize=4 KiB: two-level index, one filter per table
//	kBinarySearch, full filter                   IndexBlockSize=MaxInt32: one-level index, one filter per table
//	synced writes                                Batch.Commit(pebble.Sync)
//
// Read-triggered compactions, which RocksDB does not have, are turned off
// so that the read phases measure the LSM that the load left behind.
type PebbleEngine struct {
	cfg   *benchmark.Config
	db    *pebble.DB
	cache *pebble.Cache
	fs    *countingFS
	// attr hands the global read counters out to the readers of the
	// current open; a new one per Open keeps stale readers apart.
	attr *deltaAttributor
}

// NewPebbleEngine returns the Pebble arm of the benchmark.
func NewPebbleEngine(cfg *benchmark.Config) *PebbleEngine { return &PebbleEngine{cfg: cfg} }

// Name implements benchmark.Engine.
func (e *PebbleEngine) Name() string { return "pebble" }

// Pebble's equivalents of the options the rest of the workload fixes.
const (
	pebbleL0CompactionThreshold = 4
	pebbleL0StopWrites          = 36
	pebbleMemTableStopWrites    = 4
	pebbleLBaseMaxBytes         = 256 << 20
	// pebblePartitionSize is RocksDB's metadata_block_size, which
	// BookKeeper leaves at 4 KiB: the size of the second-level index blocks.
	pebblePartitionSize = 4096
)

// Options returns the Pebble options the benchmark's flags ask for. The
// caller sets Cache and FS.
func (e *PebbleEngine) Options() (*pebble.Options, error) {
	cfg := e.cfg
	var profile *sstable.CompressionProfile
	switch cfg.Compression {
	case "lz4":
		// Pebble has no LZ4. Snappy is the same kind of codec (byte-oriented
		// LZ77, no entropy coding) with similar speed and ratio.
		profile = sstable.SnappyCompression
	case "none":
		profile = sstable.NoCompression
	default:
		return nil, errors.Newf("pebble: compression %q has no Pebble equivalent", cfg.Compression)
	}
	var indexBlockSize int
	switch cfg.Layout {
	case "partitioned":
		// Pebble has no partitioned filters: the closest is a two-level
		// index with 4 KiB index blocks and one filter block per table.
		indexBlockSize = pebblePartitionSize
	case "full":
		indexBlockSize = math.MaxInt32 // never split: a one-level index
	default:
		return nil, errors.Newf("pebble: layout %q: accepted partitioned, full", cfg.Layout)
	}
	if cfg.BlockSize <= 0 {
		return nil, errors.Newf("pebble: block size %d must be positive", cfg.BlockSize)
	}
	var filter pebble.FilterPolicy = pebble.NoFilterPolicy
	if cfg.BloomBits > 0 {
		filter = bloom.FilterPolicy(cfg.BloomBits)
	}
	o := &pebble.Options{
		FormatMajorVersion:          pebble.FormatNewest,
		MemTableSize:                uint64(cfg.EffectiveWriteBuffer()),
		MemTableStopWritesThreshold: pebbleMemTableStopWrites,
		L0CompactionThreshold:       pebbleL0CompactionThreshold,
		L0StopWritesThreshold:       pebbleL0StopWrites,
		LBaseMaxBytes:               pebbleLBaseMaxBytes,
		Logger:                      quietLogger{},
	}
	o.Experimental.ReadSamplingMultiplier = -1
	target := cfg.EffectiveTargetFileSize()
	for i := range o.Levels {
		// RocksDB's target_file_size_multiplier is 1: every level gets
		// tables of the base size (Pebble doubles per level by default).
		o.TargetFileSizes[i] = target
		l := &o.Levels[i]
		l.BlockSize = cfg.BlockSize
		l.IndexBlockSize = indexBlockSize
		l.FilterPolicy = filter
		l.FilterType = pebble.TableFilter
		l.Compression = func() *sstable.CompressionProfile { return profile }
	}
	return o, nil
}

// Open implements benchmark.Engine.
func (e *PebbleEngine) Open(dir string, cacheBytes int64) error {
	if e.db != nil {
		return errors.New("pebble: already open")
	}
	o, err := e.Options()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrap(err, "pebble")
	}
	cache := pebble.NewCache(cacheBytes)
	fs := newCountingFS(vfs.Default)
	o.Cache = cache
	o.FS = fs
	db, err := pebble.Open(dir, o)
	if err != nil {
		cache.Unref()
		return errors.Wrapf(err, "pebble: open %s", dir)
	}
	e.db, e.cache, e.fs = db, cache, fs
	e.attr = newDeltaAttributor(func() readCounters {
		m := cache.Metrics()
		return readCounters{blockReads: m.Misses, cacheHits: m.Hits, bytesRead: fs.tableBytesRead()}
	})
	return nil
}

// appendKey appends BE64(ledger) ‖ BE64(entry), the entry-location key.
func appendKey(dst []byte, ledger, entryID int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(ledger))
	return binary.BigEndian.AppendUint64(dst, uint64(entryID))
}

// batchRecordBytes is a Set's size in a batch: kind, two varint lengths,
// a 16-byte key and an 8-byte value.
const batchRecordBytes = 1 + 1 + 16 + 1 + 8

// WriteBatch implements benchmark.Engine.
func (e *PebbleEngine) WriteBatch(entries []benchmark.Entry) error {
	b := e.db.NewBatchWithSize(len(entries)*batchRecordBytes + 64)
	defer b.Close()
	var key [16]byte
	var val [8]byte
	for _, en := range entries {
		binary.BigEndian.PutUint64(val[:], uint64(en.Location))
		if err := b.Set(appendKey(key[:0], en.Ledger, en.EntryID), val[:], nil); err != nil {
			return errors.Wrap(err, "pebble: batch")
		}
	}
	return errors.Wrap(b.Commit(pebble.Sync), "pebble: commit")
}

// settlePoll is how often Settle looks at the compaction state;
// settleIdlePolls the consecutive quiet looks it wants when every level's
// score is zero, settleStuckIdle how long it accepts a quiet LSM whose
// score says a compaction is due but which the picker does not start;
// settleTimeout when it gives up.
const (
	settlePoll      = 50 * time.Millisecond
	settleIdlePolls = 3
	settleStuckIdle = 2 * time.Second
	settleTimeout   = time.Hour
)

// Settle implements benchmark.Engine: it flushes the memtable and waits
// until no flush or compaction runs, none has started since the last look,
// the table statistics that drive delete-only compactions are collected,
// and no level's compaction score asks for more.
func (e *PebbleEngine) Settle() error {
	if err := e.db.Flush(); err != nil {
		return errors.Wrap(err, "pebble: flush")
	}
	deadline := time.Now().Add(settleTimeout)
	lastCount := int64(-1)
	idlePolls := 0
	var idleSince time.Time
	for {
		m := e.db.Metrics()
		idle := m.Flush.NumInProgress == 0 && m.Compact.NumInProgress == 0 && m.Compact.Count == lastCount &&
			m.Table.InitialStatsCollectionComplete && m.Table.PendingStatsCollectionCount == 0
		lastCount = m.Compact.Count
		scoresZero := true
		for _, l := range m.Levels {
			if l.Score > 0 {
				scoresZero = false
			}
		}
		if idle {
			if idlePolls == 0 {
				idleSince = time.Now()
			}
			idlePolls++
		} else {
			idlePolls = 0
		}
		switch {
		case idle && scoresZero && idlePolls >= settleIdlePolls:
			return nil
		case idle && time.Since(idleSince) >= settleStuckIdle:
			return nil
		case time.Now().After(deadline):
			return errors.Newf("pebble: compactions did not settle within %s", settleTimeout)
		}
		time.Sleep(settlePoll)
	}
}

// LoadStats implements benchmark.LoadStatser (Pebble counts no write
// stalls in its metrics).
func (e *PebbleEngine) LoadStats() map[string]float64 {
	m := e.db.Metrics()
	t := m.Total()
	return map[string]float64{
		"flushes": float64(m.Flush.Count), "flush_bytes": float64(t.TableBytesFlushed),
		"compactions": float64(m.Compact.Count), "compaction_bytes_written": float64(t.TableBytesCompacted),
		"trivial_moves": float64(m.Compact.MoveCount),
	}
}

// Storage implements benchmark.Engine. Table counts and bytes come from
// the DB's metrics, the tiers from each table's properties: data is the
// on-disk (compressed) data block bytes, index the uncompressed index
// blocks (the second-level blocks in the two-level layout), top index the
// uncompressed top-level index, filter the one filter block per table;
// Pebble has no top-level filter.
func (e *PebbleEngine) Storage() (benchmark.Storage, error) {
	var s benchmark.Storage
	m := e.db.Metrics()
	for _, l := range m.Levels {
		s.TablesPerLevel = append(s.TablesPerLevel, int(l.TablesCount))
		s.TableBytes += l.TablesSize
	}
	levels, err := e.db.SSTables(pebble.WithProperties())
	if err != nil {
		return benchmark.Storage{}, errors.Wrap(err, "pebble: table properties")
	}
	for _, tables := range levels {
		for _, t := range tables {
			p := t.Properties
			if p == nil {
				continue
			}
			s.BytesByTier.Data += int64(p.DataSize)
			s.BytesByTier.Index += int64(p.IndexSize - p.TopLevelIndexSize)
			s.BytesByTier.TopIndex += int64(p.TopLevelIndexSize)
			s.BytesByTier.Filter += int64(p.FilterSize)
			s.MaxFilterBlockBytes = max(s.MaxFilterBlockBytes, int64(p.FilterSize))
		}
	}
	return s, nil
}

// DeleteLedgers implements benchmark.Engine: one range deletion per ledger
// over [(L,0), (L,MaxInt64)) in one synced batch, as BookKeeper's
// removeOffsetFromDeletedLedgers does, then a flush so that the space comes
// back within the phase.
func (e *PebbleEngine) DeleteLedgers(ledgers []int64) error {
	b := e.db.NewBatch()
	defer b.Close()
	var lo, hi [16]byte
	for _, l := range ledgers {
		if err := b.DeleteRange(appendKey(lo[:0], l, 0), appendKey(hi[:0], l, math.MaxInt64), nil); err != nil {
			return errors.Wrapf(err, "pebble: delete ledger %d", l)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return errors.Wrap(err, "pebble: commit deletions")
	}
	return errors.Wrap(e.db.Flush(), "pebble: flush")
}

// Close implements benchmark.Engine.
func (e *PebbleEngine) Close() error {
	if e.db == nil {
		return nil
	}
	err := e.db.Close()
	e.cache.Unref()
	e.db, e.cache, e.fs, e.attr = nil, nil, nil, nil
	return errors.Wrap(err, "pebble: close")
}

// NewReader implements benchmark.Engine.
func (e *PebbleEngine) NewReader() benchmark.Reader {
	return &pebbleReader{db: e.db, attr: e.attr}
}

// pebbleReader does one goroutine's lookups. Pebble has no per-operation
// read statistics, so Stats attributes the growth of the global block cache
// and file counters to the reader that asks (see deltaAttributor): summed
// over the readers of a phase, the deltas are the phase's totals.
type pebbleReader struct {
	db     *pebble.DB
	attr   *deltaAttributor
	own    readCounters
	key    [16]byte
	lo, hi [16]byte
}

// Get implements benchmark.Reader.
func (r *pebbleReader) Get(ledger, entryID int64) (bool, error) {
	_, closer, err := r.db.Get(appendKey(r.key[:0], ledger, entryID))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, errors.Wrap(err, "pebble: get")
	}
	return true, errors.Wrap(closer.Close(), "pebble: get")
}

// Floor implements benchmark.Reader: the last key in [(L,0), (L,MaxInt64)).
func (r *pebbleReader) Floor(ledger int64) (bool, error) {
	it, err := r.db.NewIter(&pebble.IterOptions{
		LowerBound: appendKey(r.lo[:0], ledger, 0),
		UpperBound: appendKey(r.hi[:0], ledger, math.MaxInt64),
	})
	if err != nil {
		return false, errors.Wrap(err, "pebble: iterator")
	}
	found := it.Last()
	if err := it.Close(); err != nil {
		return false, errors.Wrap(err, "pebble: floor")
	}
	return found, nil
}

// Stats implements benchmark.Reader. Block cache misses are reported as
// data block reads (each miss reads one block from a table file; Pebble
// does not say whether it was a filter, index or data block), hits as cache
// hits, and the bytes read from table files as bytes read.
func (r *pebbleReader) Stats() benchmark.OpStats {
	r.own = r.own.add(r.attr.take())
	return benchmark.OpStats{DataReads: r.own.blockReads, BytesRead: r.own.bytesRead, CacheHits: r.own.cacheHits}
}

// quietLogger drops Pebble's informational lines, which would interleave
// with the report, and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}

func (quietLogger) Errorf(format string, args ...interface{}) {
	pebble.DefaultLogger.Errorf(format, args...)
}

func (quietLogger) Fatalf(format string, args ...interface{}) {
	pebble.DefaultLogger.Fatalf(format, args...)
}
