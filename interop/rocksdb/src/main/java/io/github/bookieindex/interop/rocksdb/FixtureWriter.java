package io.github.bookieindex.interop.rocksdb;

import java.io.IOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ChecksumType;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.IndexType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.StringAppendOperator;
import org.rocksdb.TableProperties;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Writes small RocksDB databases shaped like a bookie's two indexes, in the
 * table formats of the rocksdbjni version it runs on, and beside each one a
 * JSON file with what RocksDB reads back from it.
 *
 * <p>Usage: {@code FixtureWriter [--no-kvs] <outDir> [variant...]}. Each
 * variant is a directory {@code <outDir>/<name>} and {@code
 * <outDir>/<name>.json}: the RocksDB version, the options, the properties of
 * every live table as RocksDB reports them, the number of visible keys, the
 * SHA-256 of the visible keys and values in order (each as a 4-byte
 * big-endian length and its bytes) and, without --no-kvs, every key and value
 * in hex. With no variant names it writes every variant its version can.
 *
 * <p>An entry-location database ("loc-") holds 16-byte keys (ledger id,
 * entry id, big-endian) mapping to 8-byte locations (entry log id &lt;&lt; 32 |
 * offset, big-endian), as BookKeeper's EntryLocationIndex writes them; a
 * ledger-metadata database ("ledgers-") holds 8-byte ledger ids mapping to
 * LedgerData protobuf messages. Each has a table compacted to the bottom
 * level, a newer one in L0, overwrites, point deletions, range deletions (as
 * BookKeeper removes deleted ledgers) and writes left in the WAL only.
 */
public final class FixtureWriter {
  private FixtureWriter() {}

  /** One database to write: its name and the options that make it. */
  record Variant(String name, boolean locations, int formatVersion, ChecksumType checksum,
      CompressionType compression, boolean partitioned, boolean merges) {
    Variant(String name, boolean locations, int formatVersion, ChecksumType checksum,
        CompressionType compression, boolean partitioned) {
      this(name, locations, formatVersion, checksum, compression, partitioned, false);
    }
  }

  private static final ChecksumType[] CHECKSUMS = {
    ChecksumType.kCRC32c, ChecksumType.kxxHash, ChecksumType.kxxHash64, ChecksumType.kXXH3
  };

  static String checksumName(ChecksumType c) {
    switch (c) {
      case kCRC32c:
        return "crc32c";
      case kxxHash:
        return "xxhash";
      case kxxHash64:
        return "xxhash64";
      case kXXH3:
        return "xxh3";
      default:
        return "none";
    }
  }

  static String compressionName(CompressionType c) {
    switch (c) {
      case LZ4_COMPRESSION:
        return "lz4";
      case SNAPPY_COMPRESSION:
        return "snappy";
      default:
        return "none";
    }
  }

  /**
   * The variants a RocksDB version writes. On RocksDB 10 (the seeds'
   * version): every checksum at format_version 5, 6 and 7, with LZ4 (the
   * compression BookKeeper's bookie-conf mode sets on the entry-location
   * index) and without compression; a partitioned index; and ledger-metadata
   * databases with RocksDB's defaults; and a database with a merge record in
   * a table (which a reader that does not apply merge operators must
   * refuse). On RocksDB 9 (BookKeeper 4.18.2's own
   * rocksdbjni): BookKeeper's bookie-conf options exactly (format_version 5,
   * xxHash, LZ4; the ledger database with RocksDB's default compression),
   * and what an operator who dropped the pinned format version and checksum
   * from the configuration file gets (RocksDB 9's defaults, format_version 6
   * and XXH3).
   */
  static List<Variant> variants(int major) {
    List<Variant> out = new ArrayList<>();
    if (major >= 10) {
      for (int fv : new int[] {5, 6, 7}) {
        for (ChecksumType c : CHECKSUMS) {
          for (CompressionType z :
              new CompressionType[] {CompressionType.LZ4_COMPRESSION, CompressionType.NO_COMPRESSION}) {
            out.add(new Variant(String.format("loc-v%d-fv%d-%s-%s", major, fv, checksumName(c),
                compressionName(z)), true, fv, c, z, false));
          }
        }
      }
      out.add(new Variant("loc-v" + major + "-fv7-xxh3-lz4-partitioned", true, 7, ChecksumType.kXXH3,
          CompressionType.LZ4_COMPRESSION, true));
      out.add(new Variant("merge-v" + major + "-fv6-xxh3-lz4", true, 6, ChecksumType.kXXH3,
          CompressionType.LZ4_COMPRESSION, false, true));
      out.add(new Variant("ledgers-v" + major + "-fv6-xxh3-snappy", false, 6, ChecksumType.kXXH3,
          CompressionType.SNAPPY_COMPRESSION, false));
      out.add(new Variant("ledgers-v" + major + "-fv7-xxh3-snappy", false, 7, ChecksumType.kXXH3,
          CompressionType.SNAPPY_COMPRESSION, false));
    } else {
      out.add(new Variant("loc-v" + major + "-fv5-xxhash-lz4", true, 5, ChecksumType.kxxHash,
          CompressionType.LZ4_COMPRESSION, false));
      out.add(new Variant("loc-v" + major + "-fv6-xxh3-lz4", true, 6, ChecksumType.kXXH3,
          CompressionType.LZ4_COMPRESSION, false));
      out.add(new Variant("ledgers-v" + major + "-fv5-xxhash-snappy", false, 5, ChecksumType.kxxHash,
          CompressionType.SNAPPY_COMPRESSION, false));
      out.add(new Variant("ledgers-v" + major + "-fv6-xxh3-snappy", false, 6, ChecksumType.kXXH3,
          CompressionType.SNAPPY_COMPRESSION, false));
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    boolean kvs = true;
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      if (a.equals("--no-kvs")) {
        kvs = false;
      } else {
        rest.add(a);
      }
    }
    if (rest.isEmpty()) {
      System.err.println("usage: FixtureWriter [--no-kvs] <outDir> [variant...]");
      System.exit(2);
    }
    RocksDB.loadLibrary();
    int major = RocksDB.rocksdbVersion().getMajor();
    Path out = Path.of(rest.get(0));
    Files.createDirectories(out);
    List<String> only = rest.subList(1, rest.size());
    int n = 0;
    for (Variant v : variants(major)) {
      if (!only.isEmpty() && !only.contains(v.name())) {
        continue;
      }
      write(out, v, kvs);
      n++;
    }
    if (n == 0) {
      System.err.println("no variant of RocksDB " + RocksDB.rocksdbVersion() + " matches " + only);
      System.exit(1);
    }
  }

  static byte[] locationKey(long ledger, long entry) {
    return ByteBuffer.allocate(16).putLong(ledger).putLong(entry).array();
  }

  static byte[] location(long log, long offset) {
    return ByteBuffer.allocate(8).putLong(log << 32 | offset).array();
  }

  static byte[] ledgerKey(long ledger) {
    return ByteBuffer.allocate(8).putLong(ledger).array();
  }

  /**
   * A LedgerData message (exists = 1, fenced = 2, masterKey = 3, explicitLac
   * = 4) encoded as protobuf does, fields in order.
   */
  static byte[] ledgerData(boolean fenced, byte[] masterKey, byte[] lac) {
    ByteBuffer b = ByteBuffer.allocate(8 + masterKey.length + (lac == null ? 0 : lac.length + 2));
    b.put((byte) 0x08).put((byte) 1);
    b.put((byte) 0x10).put((byte) (fenced ? 1 : 0));
    b.put((byte) 0x1a).put((byte) masterKey.length).put(masterKey);
    if (lac != null) {
      b.put((byte) 0x22).put((byte) lac.length).put(lac);
    }
    byte[] out = new byte[b.position()];
    b.flip().get(out);
    return out;
  }

  static Options options(Variant v) {
    Options o = new Options();
    o.setCreateIfMissing(true);
    o.setInfoLogLevel(InfoLogLevel.ERROR_LEVEL);
    // Flushes and compactions happen where the writer asks for them, so
    // that every variant has the same shape of levels.
    o.setDisableAutoCompactions(true);
    o.setLevelCompactionDynamicLevelBytes(true);
    o.setCompressionType(v.compression());
    if (v.merges()) {
      o.setMergeOperator(new StringAppendOperator());
    }
    BlockBasedTableConfig t = new BlockBasedTableConfig();
    t.setFormatVersion(v.formatVersion());
    t.setChecksumType(v.checksum());
    if (v.locations()) {
      // BookKeeper's entry-location options, but with small blocks so that
      // a small table has many blocks (of many sizes, for the checksums).
      t.setBlockSize(1024);
      t.setFilterPolicy(new BloomFilter(10, false));
      t.setCacheIndexAndFilterBlocks(true);
    }
    if (v.partitioned()) {
      t.setIndexType(IndexType.kTwoLevelIndexSearch);
      t.setMetadataBlockSize(256);
    }
    o.setTableFormatConfig(t);
    return o;
  }

  static void write(Path out, Variant v, boolean withKvs) throws Exception {
    Path dir = out.resolve(v.name());
    if (Files.exists(dir)) {
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
        for (Path p : ds) {
          Files.delete(p);
        }
      }
      Files.delete(dir);
    }
    Random rng = new Random(v.name().hashCode());
    try (Options o = options(v);
        RocksDB db = RocksDB.open(o, dir.toString());
        WriteOptions wo = new WriteOptions();
        FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
      byte[] mergeKey = null;
      if (v.merges()) {
        writeLocations(db, wo, fo, rng);
        // One merge record, flushed into a table of its own.
        mergeKey = locationKey(LEDGERS[1], 5);
        db.merge(wo, mergeKey, location(13, 512));
        db.flush(fo);
      } else if (v.locations()) {
        writeLocations(db, wo, fo, rng);
      } else {
        writeLedgers(db, wo, fo, rng);
      }
      Map<String, TableProperties> tables = db.getPropertiesOfAllTables();
      writeExpected(out.resolve(v.name() + ".json"), v, db, tables, mergeKey, withKvs);
    }
    // RocksDB's info log is no part of the database.
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "LOG*")) {
      for (Path p : ds) {
        Files.delete(p);
      }
    }
  }

  /** Ledger ids: 0, small ones, and ones with every byte of the id in use. */
  static final long[] LEDGERS = {0, 1, 2, 3, 5, 8, 13, 21, 1L << 32, 0x0102030405060708L,
      Long.MAX_VALUE - 1, Long.MAX_VALUE};

  static void writeLocations(RocksDB db, WriteOptions wo, FlushOptions fo, Random rng)
      throws RocksDBException {
    // Ledgers' entries, in batches as the index's flush writes them; then
    // one table at the bottom level.
    for (int i = 0; i < 8; i++) {
      long ledger = LEDGERS[i];
      int entries = 20 + rng.nextInt(120);
      try (WriteBatch b = new WriteBatch()) {
        for (int e = 0; e < entries; e++) {
          b.put(locationKey(ledger, e), location(1 + i / 3, 1024 + (long) e * (100 + rng.nextInt(900))));
        }
        db.write(wo, b);
      }
    }
    db.flush(fo);
    db.compactRange();
    // Newer writes in L0: more ledgers, entries moved by a compaction of the
    // entry logs (overwrites), point deletions, and a deleted ledger removed
    // with a range deletion, as the index's removeOffsetFromDeletedLedgers
    // does.
    for (int i = 8; i < LEDGERS.length; i++) {
      try (WriteBatch b = new WriteBatch()) {
        for (int e = 0; e < 30 + rng.nextInt(60); e++) {
          b.put(locationKey(LEDGERS[i], e), location(7, 2048 + e * 64L));
        }
        db.write(wo, b);
      }
    }
    try (WriteBatch b = new WriteBatch()) {
      for (int e = 0; e < 15; e++) {
        b.put(locationKey(LEDGERS[1], e * 2), location(9, 4096 + e * 128L));
      }
      b.delete(locationKey(LEDGERS[2], 3));
      b.delete(locationKey(LEDGERS[2], 4));
      b.deleteRange(locationKey(LEDGERS[3], 0), locationKey(LEDGERS[3], Long.MAX_VALUE));
      db.write(wo, b);
    }
    db.flush(fo);
    // Writes only in the WAL: the bookie stopped before a flush.
    try (WriteBatch b = new WriteBatch()) {
      for (int e = 0; e < 10; e++) {
        b.put(locationKey(LEDGERS[0], 1000 + e), location(11, 8192 + e * 32L));
      }
      b.delete(locationKey(LEDGERS[4], 0));
      b.deleteRange(locationKey(LEDGERS[5], 0), locationKey(LEDGERS[5], Long.MAX_VALUE));
      db.write(wo, b);
    }
  }

  static void writeLedgers(RocksDB db, WriteOptions wo, FlushOptions fo, Random rng)
      throws RocksDBException {
    byte[] masterKey = "bookie-master-key".getBytes(StandardCharsets.UTF_8);
    // The ledgers of the entry-location databases, but for two (whose
    // locations a migration purges), then many more.
    for (int i = 0; i < LEDGERS.length; i++) {
      if (i != 6 && i != 9) {
        db.put(wo, ledgerKey(LEDGERS[i]), ledgerData(i % 2 == 0, masterKey, null));
      }
    }
    for (int i = 0; i < 200; i++) {
      byte[] lac = i % 7 == 0 ? new byte[] {(byte) i, 1, 2, 3} : null;
      db.put(wo, ledgerKey(i * 3L), ledgerData(i % 5 == 0, masterKey, lac));
    }
    db.flush(fo);
    db.compactRange();
    for (int i = 0; i < 200; i += 11) {
      db.put(wo, ledgerKey(i * 3L), ledgerData(true, masterKey, null));
    }
    for (int i = 1; i < 200; i += 13) {
      db.delete(wo, ledgerKey(i * 3L));
    }
    db.flush(fo);
    db.put(wo, ledgerKey(Long.MAX_VALUE), ledgerData(false, masterKey, null));
    db.delete(wo, ledgerKey(6));
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder(2 * b.length);
    for (byte x : b) {
      s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
    }
    return s.toString();
  }

  /** A JSON string (or null). */
  static String json(String v) {
    if (v == null) {
      return "null";
    }
    StringBuilder s = new StringBuilder("\"");
    for (char c : v.toCharArray()) {
      if (c == '"' || c == '\\') {
        s.append('\\').append(c);
      } else if (c < 0x20) {
        s.append(String.format("\\u%04x", (int) c));
      } else {
        s.append(c);
      }
    }
    return s.append('"').toString();
  }

  static void writeExpected(Path path, Variant v, RocksDB db, Map<String, TableProperties> tables,
      byte[] mergeKey, boolean withKvs) throws IOException, NoSuchAlgorithmException {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    StringBuilder kvs = new StringBuilder();
    long count = 0;
    try (RocksIterator it = db.newIterator()) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        byte[] k = it.key();
        byte[] val = it.value();
        sha.update(ByteBuffer.allocate(4).putInt(k.length).array());
        sha.update(k);
        sha.update(ByteBuffer.allocate(4).putInt(val.length).array());
        sha.update(val);
        if (withKvs) {
          kvs.append(count == 0 ? "\n    " : ",\n    ");
          kvs.append("[\"").append(hex(k)).append("\", \"").append(hex(val)).append("\"]");
        }
        count++;
      }
    }
    StringBuilder s = new StringBuilder();
    s.append("{\n");
    s.append("  \"rocksdb\": \"").append(RocksDB.rocksdbVersion()).append("\",\n");
    s.append("  \"format_version\": ").append(v.formatVersion()).append(",\n");
    s.append("  \"checksum\": \"").append(v.checksum().name()).append("\",\n");
    s.append("  \"compression\": \"").append(v.compression().name()).append("\",\n");
    s.append("  \"partitioned_index\": ").append(v.partitioned()).append(",\n");
    if (mergeKey != null) {
      s.append("  \"merge_key\": \"").append(hex(mergeKey)).append("\",\n");
    }
    s.append("  \"tables\": [");
    int i = 0;
    for (Map.Entry<String, TableProperties> e : new TreeMap<>(tables).entrySet()) {
      TableProperties p = e.getValue();
      s.append(i++ == 0 ? "\n    " : ",\n    ");
      s.append("{\"file\": \"").append(Path.of(e.getKey()).getFileName()).append("\"");
      s.append(", \"format_version\": ").append(p.getFormatVersion());
      s.append(", \"compression_name\": ").append(json(p.getCompressionName()));
      s.append(", \"merge_operator\": ").append(json(p.getMergeOperatorName()));
      s.append(", \"entries\": ").append(p.getNumEntries());
      s.append(", \"range_deletions\": ").append(p.getNumRangeDeletions());
      s.append(", \"data_blocks\": ").append(p.getNumDataBlocks());
      s.append(", \"index_partitions\": ").append(p.getIndexPartitions()).append("}");
    }
    s.append("\n  ],\n");
    s.append("  \"keys\": ").append(count).append(",\n");
    s.append("  \"sha256\": \"").append(hex(sha.digest())).append("\"");
    if (withKvs) {
      s.append(",\n  \"kvs\": [").append(kvs).append("\n  ]");
    }
    s.append("\n}\n");
    try (Writer w = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
      w.write(s.toString());
    }
  }
}
