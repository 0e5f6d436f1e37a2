// gen makes the small RocksDB databases under lsm/rocksdb/testdata with the
// table options BookKeeper's entry-location index uses (see README.md). It is
// run by hand against the system's librocksdb; CI never builds it.
//
// Usage: gen <variant> <dir>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <cstdint>
#include <random>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace rocksdb;

static void check(const Status& s, const char* what) {
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    exit(1);
  }
}

static void be64(std::string* dst, uint64_t v) {
  for (int i = 7; i >= 0; i--) dst->push_back(static_cast<char>(v >> (8 * i)));
}

// key is BookKeeper's entry-location key: ledgerId, entryId, big-endian.
static std::string key(uint64_t ledger, uint64_t entry) {
  std::string k;
  be64(&k, ledger);
  be64(&k, entry);
  return k;
}

// location is entryLogId << 32 | offset, big-endian.
static std::string location(uint64_t log, uint64_t offset) {
  std::string v;
  be64(&v, log << 32 | offset);
  return v;
}

static void putLedger(DB* db, uint64_t ledger, uint64_t entries, uint64_t log) {
  WriteBatch b;
  for (uint64_t e = 0; e < entries; e++) {
    b.Put(key(ledger, e), location(log, 1024 + e * 100 + ledger));
  }
  check(db->Write(WriteOptions(), &b), "write");
}

// newestL0 returns the newest L0 file's name.
static std::string newestL0(DB* db) {
  ColumnFamilyMetaData md;
  db->GetColumnFamilyMetaData(&md);
  std::string name;
  uint64_t best = 0;
  for (const auto& f : md.levels[0].files) {
    if (f.largest_seqno >= best) {
      best = f.largest_seqno;
      name = f.name;
    }
  }
  return name;
}

// ledgerData is upstream's LedgerData protobuf (DbLedgerStorageDataFormats
// .proto: exists = 1, fenced = 2, masterKey = 3, explicitLac = 4, limbo = 5),
// encoded as Java's protobuf does, fields in order.
static std::string ledgerData(bool fenced, const std::string& masterKey, const std::string* lac, bool limbo) {
  std::string v;
  v += '\x08';
  v += '\x01';
  v += '\x10';
  v += fenced ? '\x01' : '\x00';
  v += '\x1a';
  v += static_cast<char>(masterKey.size());
  v += masterKey;
  if (lac != nullptr) {
    v += '\x22';
    v += static_cast<char>(lac->size());
    v += *lac;
  }
  if (limbo) {
    v += '\x28';
    v += '\x01';
  }
  return v;
}

static std::string ledgerKey(uint64_t ledger) {
  std::string k;
  be64(&k, ledger);
  return k;
}

// newDBOptions starts the options of every database here: a new one (never
// an existing directory's), with table options t (copied) and compression c.
static Options newDBOptions(const BlockBasedTableOptions& t, CompressionType c) {
  Options o;
  o.create_if_missing = true;
  o.error_if_exists = true;
  o.compression = c;
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  return o;
}

// ledgersDB writes a ledger-metadata database (current/ledgers) with the
// options BookKeeper gives it in bookie-conf mode: RocksDB's defaults (so
// Snappy, 4 KiB blocks, no filter) but format_version 5 and kxxHash.
static int ledgersDB(const std::string& dir) {
  BlockBasedTableOptions t;
  t.format_version = 5;
  t.checksum = kxxHash;
  Options o = newDBOptions(t, Options().compression);  // RocksDB's default
  o.avoid_flush_during_shutdown = true;
  DB* db;
  check(DB::Open(o, dir, &db), "open");
  auto put = [&](uint64_t l, bool fenced, bool limbo, bool withLac) {
    std::string lac = "lac-" + std::to_string(l) + std::string(20, 'x');
    std::string mk = "master-key-" + std::to_string(l);
    check(db->Put(WriteOptions(), ledgerKey(l), ledgerData(fenced, mk, withLac ? &lac : nullptr, limbo)), "put");
  };
  for (uint64_t l = 1; l <= 300; l++) put(l, l % 3 == 0, false, l % 5 == 0);
  check(db->Flush(FlushOptions()), "flush");
  CompactRangeOptions cro;
  check(db->CompactRange(cro, nullptr, nullptr), "compact");
  for (uint64_t l = 1; l <= 300; l += 7) put(l, true, l % 2 == 0, false);  // fenced later
  for (uint64_t l = 10; l <= 300; l += 10) check(db->Delete(WriteOptions(), ledgerKey(l)), "delete");
  check(db->Flush(FlushOptions()), "flush");
  // WAL tail: new ledgers, a deletion, a fencing.
  for (uint64_t l = 301; l <= 320; l++) put(l, false, false, false);
  check(db->Delete(WriteOptions(), ledgerKey(11)), "delete wal");
  put(12, true, false, true);
  check(db->Close(), "close");
  delete db;
  return 0;
}

static void waitIdle(DB* db);

// measureDB writes 1,000 ledgers of 1,000 entries with BookKeeper's exact
// entry-location options (64 KiB blocks), in checkpoint-sized batches, for
// the throughput measurement in docs/design.md; not a committed fixture.
static int measureDB(BlockBasedTableOptions t, const std::string& dir) {
  t.block_size = 65536;
  Options o = newDBOptions(t, kLZ4Compression);
  o.write_buffer_size = 4 << 20;  // several tables and levels from 24 MB of keys
  o.max_write_buffer_number = 4;
  o.level0_file_num_compaction_trigger = 4;
  o.max_bytes_for_level_base = 16 << 20;
  o.target_file_size_base = 4 << 20;
  o.level_compaction_dynamic_level_bytes = true;
  DB* db;
  check(DB::Open(o, dir, &db), "open");
  std::mt19937_64 rng(5);
  for (uint64_t e = 0; e < 1000; e++) {
    WriteBatch b;
    for (uint64_t l = 1; l <= 1000; l++) b.Put(key(l, e), location(1 + e / 100, rng() % (1 << 30)));
    check(db->Write(WriteOptions(), &b), "write");
  }
  check(db->Flush(FlushOptions()), "flush");
  waitIdle(db);
  check(db->Close(), "close");
  delete db;
  return 0;
}

// waitIdle waits until no flush or compaction is pending or running.
static void waitIdle(DB* db) {
  for (;;) {
    uint64_t pending = 0, running = 0, flushing = 0, flushPending = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    db->GetIntProperty("rocksdb.num-running-flushes", &flushing);
    db->GetIntProperty("rocksdb.mem-table-flush-pending", &flushPending);
    if (pending + running + flushing + flushPending == 0) return;
    usleep(10000);
  }
}

// randomDB writes seeded random puts, deletes and range deletions with
// BookKeeper's table options but small files and levels (not dynamic, so
// that several fill), with automatic
// compactions on, so that range tombstones are split across files and
// levels and sequence numbers are zeroed at the bottom; its last writes stay
// in the WAL.
static int randomDB(BlockBasedTableOptions t, const std::string& dir) {
  Options o = newDBOptions(t, kLZ4Compression);
  o.write_buffer_size = 32 << 10;
  o.num_levels = 7;
  o.level0_file_num_compaction_trigger = 2;
  o.max_bytes_for_level_base = 32 << 10;
  o.max_bytes_for_level_multiplier = 2;
  o.target_file_size_base = 8 << 10;
  o.level_compaction_dynamic_level_bytes = false;  // fill L1, L2, ... in turn
  o.avoid_flush_during_shutdown = true;
  DB* db;
  check(DB::Open(o, dir, &db), "open");
  std::mt19937_64 rng(17);
  auto r = [&](uint64_t n) { return rng() % n; };
  const int ops = 12000, tail = 300;
  for (int i = 0; i < ops + tail; i++) {
    if (i == ops) {
      // Everything so far in tables, settled; the rest stays in the WAL.
      check(db->Flush(FlushOptions()), "flush");
      waitIdle(db);
    }
    uint64_t ledger = 1 + r(30), entry = r(200);
    uint64_t p = r(1000);
    Status s;
    if (p < 850) {
      s = db->Put(WriteOptions(), key(ledger, entry), location(1 + r(9), r(1 << 20)));
    } else if (p < 950) {
      s = db->Delete(WriteOptions(), key(ledger, entry));
    } else if (p < 998) {
      uint64_t end = entry + 1 + r(20);
      s = db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), key(ledger, entry), key(ledger, end));
    } else {
      // A whole ledger, as BookKeeper deletes one.
      s = db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), key(ledger, 0), key(ledger, INT64_MAX));
    }
    check(s, "op");
  }
  check(db->Close(), "close");
  delete db;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen <variant> <dir>\n");
    return 2;
  }
  std::string variant = argv[1];
  std::string dir = argv[2];

  BlockBasedTableOptions t;
  t.block_size = 4096;  // small, so that a few thousand keys fill several blocks
  t.checksum = kxxHash;
  t.format_version = 5;
  t.filter_policy.reset(NewBloomFilterPolicy(10, false));
  t.cache_index_and_filter_blocks = true;
  CompressionType compression = kLZ4Compression;
  bool recycle = false;

  if (variant == "bk-fv2") {
    t.format_version = 2;  // BookKeeper's default before 4.17 (#4480)
  } else if (variant == "bk-fv5") {
  } else if (variant == "measure-1m") {
    return measureDB(t, dir);
  } else if (variant == "ledgers-fv5") {
    return ledgersDB(dir);
  } else if (variant == "random-fv5") {
    return randomDB(t, dir);
  } else if (variant == "bk-fv5-partitioned") {
    t.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
    t.partition_filters = true;
    t.pin_top_level_index_and_filter = true;
    t.metadata_block_size = 256;  // several index and filter partitions
  } else if (variant == "snappy-crc32c-fv4") {
    compression = kSnappyCompression;
    t.checksum = kCRC32c;
    t.format_version = 4;
    t.index_block_restart_interval = 4;  // delta-encoded handles between restarts
  } else if (variant == "none-xxhash64-fv3") {
    recycle = true;  // WAL records with the 11-byte recyclable header
    compression = kNoCompression;
    t.checksum = kxxHash64;
    t.format_version = 3;
  } else {
    fprintf(stderr, "unknown variant %s\n", variant.c_str());
    return 2;
  }

  Options o = newDBOptions(t, compression);
  o.write_buffer_size = 64 << 20;
  o.max_write_buffer_number = 4;
  o.num_levels = 7;
  o.level0_file_num_compaction_trigger = 4;
  o.max_bytes_for_level_base = 256 << 20;
  o.target_file_size_base = 64 << 20;
  o.level_compaction_dynamic_level_bytes = true;
  o.max_open_files = -1;
  o.disable_auto_compactions = true;  // the levels below are placed by hand
  o.avoid_flush_during_shutdown = true;  // leave the WAL tail unflushed
  if (recycle) {
    o.recycle_log_file_num = 2;
    // RocksDB sanitizes recycling away under any other recovery mode.
    o.wal_recovery_mode = WALRecoveryMode::kSkipAnyCorruptedRecords;
  }

  DB* db;
  check(DB::Open(o, dir, &db), "open");

  // 1. Twenty ledgers, flushed and compacted to the last level.
  for (uint64_t l = 1; l <= 20; l++) putLedger(db, l, 150, 1);
  check(db->Flush(FlushOptions()), "flush 1");
  CompactRangeOptions cro;
  cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  check(db->CompactRange(cro, nullptr, nullptr), "compact 1");

  // 2. Overwrites, point deletes and a range deletion (ledger 3 deleted as
  // BookKeeper does it: [(3, 0), (3, Long.MAX_VALUE))), flushed to L5.
  for (uint64_t e = 0; e < 150; e += 3) {
    check(db->Put(WriteOptions(), key(5, e), location(2, 9000 + e)), "put 2");
  }
  for (uint64_t e = 0; e < 50; e++) check(db->Delete(WriteOptions(), key(7, e)), "delete 2");
  check(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), key(3, 0),
                        key(3, INT64_MAX)),
        "delete range 2");
  for (uint64_t l = 21; l <= 25; l++) putLedger(db, l, 100, 2);
  check(db->Flush(FlushOptions()), "flush 2");
  CompactionOptions co;
  co.compression = compression;  // CompactFiles defaults to Snappy
  check(db->CompactFiles(co, {newestL0(db)}, 5), "compact files to L5");

  // 3. Two L0 files: a single delete, more deletes and overwrites.
  putLedger(db, 26, 80, 3);
  check(db->SingleDelete(WriteOptions(), key(26, 10)), "single delete 3");
  check(db->Delete(WriteOptions(), key(1, 0)), "delete 3");
  check(db->Put(WriteOptions(), key(5, 1), location(3, 1)), "put 3");
  check(db->Flush(FlushOptions()), "flush 3");
  putLedger(db, 27, 60, 4);
  check(db->Put(WriteOptions(), key(5, 1), location(4, 2)), "put 4");
  check(db->Put(WriteOptions(), key(1, 0), location(4, 3)), "put 4 resurrect");
  check(db->Flush(FlushOptions()), "flush 4");

  // 4. A WAL tail that is never flushed: a new ledger, a range deletion of
  // ledger 10 (in a table below), a delete and an overwrite of L0 data.
  putLedger(db, 28, 40, 5);
  check(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), key(10, 0),
                        key(10, INT64_MAX)),
        "delete range wal");
  check(db->Delete(WriteOptions(), key(27, 5)), "delete wal");
  check(db->Put(WriteOptions(), key(26, 1), location(5, 4)), "put wal");
  check(db->Put(WriteOptions(), key(10, 3), location(5, 5)), "put after range wal");

  check(db->Close(), "close");
  delete db;
  return 0;
}
