package interop.bookkeeper;

import com.sun.management.OperatingSystemMXBean;
import java.io.File;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.bookkeeper.bookie.Bookie;
import org.apache.bookkeeper.bookie.storage.ldb.EntryLocationIndex;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorage;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorageFactory;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorageRocksDB;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.rocksdb.FlushOptions;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.PerfContext;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksDB;
import org.rocksdb.TableProperties;

/**
 * The BookKeeper arm of the benchmark (docs/benchmarks.md, "BookKeeper
 * arm"): BookKeeper's own EntryLocationIndex over its
 * KeyValueStorageRocksDB, driven with the workload of {@code bookie-index
 * bench}, printing the same JSON rows on stdout ("engine":"bookkeeper").
 *
 * <p>Phases, in this order: load (batch k holds entries [k·F, (k+1)·F) of
 * every ledger in key order, added with addLocation to one newBatch and
 * flushed, as DbLedgerStorage's checkpoint does; the locations are those
 * the bench hands out; then the memtable is flushed and the run waits for
 * RocksDB's compactions to settle), then per cache size, the index reopened
 * with that block cache: get (getLocation of random existing keys), floor
 * (getLastEntryInLedger of random ledgers), miss (getLocation of absent
 * entries of existing ledgers). Each read phase runs --threads threads for
 * a warm-up (which also lets the JIT compile the read path) and then the
 * measured time.
 *
 * <p>Options: without --options-file, bookie-conf mode (BookKeeper's
 * defaults through its dbStorage_rocksDB_* keys: 64 KiB blocks, 10-bit
 * Bloom filters, LZ4, format_version 5, xxHash, and in 4.18.2
 * dbStorage_rocksDB_partitionedIndexAndFiltersEnabled=true: partitioned
 * index and filters; --partitioned false sets it false: one full filter
 * and a one-level index per table); with it, the OPTIONS file as
 * entryLocationRocksdbConf, its block_cache (and target_file_size_base and
 * write_buffer_size) replaced per run, since config-file mode ignores the
 * dbStorage_rocksDB_* keys. The rows' layout is what the tables hold.
 *
 * <p>--disk-io true (the disk-bound mode's readers) adds the bytes the
 * process read from the disk per op (/proc/self/io) as
 * extra.disk_read_bytes_per_op.
 *
 * <p>Counters: per op from RocksDB's PerfContext (ENABLE_COUNT, each reader
 * thread its own): filter, index and data block reads, bytes read, block
 * cache hits. CPU per op is the process's CPU time (every thread: readers,
 * JIT, GC, RocksDB's) over the ops. RocksDB's handle is reached by
 * reflection for the settle, the perf context and the table properties
 * only; every measured operation is BookKeeper's own call.
 */
public final class IndexBench {
    private static final long LOCATIONS_PER_LOG = ((1L << 30) - 2052) / 1028 + 1;

    private final File dir;
    private final long ledgers;
    private final long entries;
    private final long flushEntries;
    private final int threads;
    private final long warmupNanos;
    private final long durationNanos;
    private final File optionsFile;
    private final long targetFileSize;
    private final long writeBuffer;
    private final int blockSize;
    private final int bloomBits;
    private final String compression;
    private final boolean perfContext;
    private final boolean diskIo;
    private final boolean partitioned;
    private final String options;
    private final String engineVersion;
    private String layout;

    private EntryLocationIndex idx;
    private KeyValueStorageRocksDB kv;
    private RocksDB db;

    private IndexBench(Args a) throws IOException {
        dir = new File(a.get("dir")).getAbsoluteFile();
        ledgers = a.getLong("ledgers", 1000);
        entries = a.getLong("entries", 50000);
        flushEntries = a.getLong("flush-entries", 1000);
        threads = (int) a.getLong("threads", 4);
        warmupNanos = a.getLong("warmup-ms", 5000) * 1_000_000L;
        durationNanos = a.getLong("duration-ms", 20000) * 1_000_000L;
        String opts = a.get("options-file", "");
        optionsFile = opts.isEmpty() ? null : new File(opts).getAbsoluteFile();
        targetFileSize = a.getLong("target-file-size", 64L << 20);
        writeBuffer = a.getLong("write-buffer", 64L << 20);
        blockSize = (int) a.getLong("block-size", 64 << 10);
        bloomBits = (int) a.getLong("bloom-bits", 10);
        compression = a.get("compression", "lz4");
        perfContext = !a.get("perf-context", "count").equals("off");
        diskIo = a.get("disk-io", "false").equals("true");
        String p = a.get("partitioned", "");
        if (!p.isEmpty() && !p.equals("true") && !p.equals("false")) {
            throw new IllegalArgumentException("--partitioned " + p + ": accepted true, false");
        }
        partitioned = !p.equals("false");
        if (ledgers <= 0 || entries <= 0 || flushEntries <= 0 || threads <= 0) {
            throw new IllegalArgumentException("--ledgers, --entries, --flush-entries and --threads must be positive");
        }
        if (!compression.equals("lz4") && !compression.equals("none")) {
            throw new IllegalArgumentException("--compression " + compression + ": accepted lz4, none");
        }
        if (optionsFile == null) {
            // BookKeeper 4.18.2's dbStorage_rocksDB_partitionedIndexAndFiltersEnabled, default true.
            layout = partitioned ? "partitioned" : "full";
            options = partitioned ? "bookie-conf" : "bookie-conf-full";
        } else {
            if (!optionsFile.isFile()) {
                throw new IllegalArgumentException("--options-file " + optionsFile + ": no such file");
            }
            if (!p.isEmpty()) {
                throw new IllegalArgumentException("--partitioned is a bookie-conf setting: the OPTIONS file says it");
            }
            String text = Files.readString(optionsFile.toPath(), StandardCharsets.UTF_8);
            layout = optionValue(text, "partition_filters").equals("true") ? "partitioned" : "full";
            // The mode's name, and the file's when it is not the repository's.
            options = optionsFile.getName().equals("entry_location_rocksdb.conf.default") ? "file" : "file:" + optionsFile.getName();
        }
        RocksDB.loadLibrary();
        engineVersion = "bookkeeper-4.18.2 rocksdbjni-" + RocksDB.rocksdbVersion();
    }

    public static void main(String[] argv) {
        Main.run(() -> {
            Args a = new Args(argv);
            IndexBench b = new IndexBench(a);
            List<String> phases = Arrays.asList(a.get("phases", "load,get,floor").split(","));
            for (String p : phases) {
                if (!List.of("load", "get", "floor", "miss").contains(p)) {
                    throw new IllegalArgumentException("phase " + p + ": the BookKeeper arm runs load, get, floor, miss");
                }
            }
            List<Long> caches = new ArrayList<>();
            for (String s : a.get("cache", String.valueOf(64L << 20)).split(",")) {
                caches.add(Long.parseLong(s.trim()));
            }
            b.run(phases, caches);
        });
    }

    private void run(List<String> phases, List<Long> caches) throws Exception {
        if (phases.contains("load")) {
            File locations = new File(dir, "locations");
            if (locations.exists()) {
                throw new IllegalStateException(locations + " exists: the load needs an empty directory");
            }
        } else if (!new File(dir, "locations").isDirectory()) {
            throw new IllegalStateException("no index in " + dir + " (run the load first)");
        }
        Files.createDirectories(dir.toPath());
        progress("%s, %s layout, %d ledgers x %d entries, %d threads%s", engineVersion, layout, ledgers, entries,
                threads, optionsFile == null ? ", bookie-conf mode" : ", OPTIONS file " + optionsFile);
        open(caches.get(0));
        if (phases.contains("load")) {
            load();
        }
        for (long cache : caches) {
            close();
            open(cache);
            for (String phase : List.of("get", "floor", "miss")) {
                if (!phases.contains(phase)) {
                    continue;
                }
                Measured m = measure(phase);
                emit(opRow(phase, cache, m));
                if (phase.equals("get") && m.found != m.ops) {
                    throw new IllegalStateException(String.format(
                            "a get of an existing key found nothing: found fraction %.6f at cache %d", (double) m.found / Math.max(m.ops, 1), cache));
                }
            }
        }
        close();
    }

    // ---- opening the index as a bookie does

    private void open(long cacheBytes) throws Exception {
        ServerConfiguration conf = new ServerConfiguration();
        if (optionsFile == null) {
            // A name no file has: bookie-conf mode.
            conf.setEntryLocationRocksdbConf(new File(dir, "no-such-entry_location_rocksdb.conf").getPath());
            conf.setProperty("dbStorage_rocksDB_blockCacheSize", cacheBytes);
            conf.setProperty("dbStorage_rocksDB_writeBufferSizeMB", Math.max(1, writeBuffer >> 20));
            conf.setProperty("dbStorage_rocksDB_sstSizeInMB", Math.max(1, Math.round(targetFileSize / (double) (1 << 20))));
            conf.setProperty("dbStorage_rocksDB_blockSize", blockSize);
            conf.setProperty("dbStorage_rocksDB_bloomFilterBitsPerKey", bloomBits);
            conf.setProperty("dbStorage_rocksDB_lz4CompressionEnabled", compression.equals("lz4"));
            conf.setProperty("dbStorage_rocksDB_partitionedIndexAndFiltersEnabled", partitioned);
        } else {
            conf.setEntryLocationRocksdbConf(writeOptionsFile(cacheBytes).getPath());
        }
        KeyValueStorageFactory factory = (base, sub, type, c) -> {
            kv = new KeyValueStorageRocksDB(base, sub, type, c);
            return kv;
        };
        idx = new EntryLocationIndex(conf, factory, dir.getPath(), NullStatsLogger.INSTANCE);
        Field f = KeyValueStorageRocksDB.class.getDeclaredField("db");
        f.setAccessible(true);
        db = (RocksDB) f.get(kv);
        layout = tableLayout();
    }

    /**
     * The layout the tables have: partitioned if any has index partitions
     * (the options ask for it, but the tables say what RocksDB wrote), the
     * layout the options ask for while there are none.
     */
    private String tableLayout() throws Exception {
        Map<String, TableProperties> tables = db.getPropertiesOfAllTables();
        if (tables.isEmpty()) {
            return layout;
        }
        for (TableProperties p : tables.values()) {
            if (p.getIndexPartitions() > 0) {
                return "partitioned";
            }
        }
        return "full";
    }

    private void close() throws IOException {
        if (idx != null) {
            idx.close();
            idx = null;
            kv = null;
            db = null;
        }
    }

    /**
     * Writes the OPTIONS file of one open: the given file with block_cache
     * set to the run's cache size, and target_file_size_base and
     * write_buffer_size to the run's (the bench scales the table size with
     * the key count).
     */
    private File writeOptionsFile(long cacheBytes) throws IOException {
        String text = Files.readString(optionsFile.toPath(), StandardCharsets.UTF_8);
        text = setOption(text, "TableOptions/BlockBasedTable", "block_cache", String.valueOf(cacheBytes));
        text = setOption(text, "CFOptions", "target_file_size_base", String.valueOf(targetFileSize));
        text = setOption(text, "CFOptions", "write_buffer_size", String.valueOf(writeBuffer));
        File out = new File(dir, "entry_location_rocksdb-" + cacheBytes + ".conf");
        Files.writeString(out.toPath(), text, StandardCharsets.UTF_8);
        return out;
    }

    /** Replaces name=... (or adds it at the start of the section that begins with "[section"). */
    static String setOption(String text, String section, String name, String value) {
        Matcher m = Pattern.compile("(?m)^(\\s*" + Pattern.quote(name) + "\\s*=)[^#\\n]*").matcher(text);
        if (m.find()) {
            return text.substring(0, m.start()) + m.group(1) + value + " " + text.substring(m.end());
        }
        Matcher s = Pattern.compile("(?m)^\\[" + Pattern.quote(section) + "[^\\n]*\\n").matcher(text);
        if (!s.find()) {
            throw new IllegalArgumentException("the OPTIONS file has no [" + section + "...] section for " + name);
        }
        return text.substring(0, s.end()) + " " + name + "=" + value + "\n" + text.substring(s.end());
    }

    static String optionValue(String text, String name) {
        Matcher m = Pattern.compile("(?m)^\\s*" + Pattern.quote(name) + "\\s*=\\s*([^#\\s]*)").matcher(text);
        return m.find() ? m.group(1) : "";
    }

    // ---- load

    private void load() throws Exception {
        RssSampler rss = new RssSampler();
        long cpu0 = cpuNanos();
        long start = System.nanoTime();
        long batches = (entries + flushEntries - 1) / flushEntries;
        long i = 0;
        for (long k = 0; k < batches; k++) {
            long hi = Math.min((k + 1) * flushEntries, entries);
            try (KeyValueStorage.Batch batch = idx.newBatch()) {
                for (long l = 0; l < ledgers; l++) {
                    for (long e = k * flushEntries; e < hi; e++, i++) {
                        idx.addLocation(batch, l, e, location(i));
                    }
                }
                batch.flush();
            }
            progress("load: batch %d/%d, %.0f keys/s", k + 1, batches, hi * ledgers / seconds(System.nanoTime() - start));
        }
        long writeNanos = System.nanoTime() - start;
        long cpu1 = cpuNanos();
        progress("load: waiting for compactions to settle");
        long settleStart = System.nanoTime();
        settle();
        long settleNanos = System.nanoTime() - settleStart;
        long cpu2 = cpuNanos();
        layout = tableLayout();
        long keys = ledgers * entries;

        long tableBytes = 0;
        int[] perLevel = new int[7];
        for (LiveFileMetaData f : db.getLiveFilesMetaData()) {
            tableBytes += f.size();
            if (f.level() >= perLevel.length) {
                perLevel = Arrays.copyOf(perLevel, f.level() + 1);
            }
            perLevel[f.level()]++;
        }
        long data = 0, index = 0, topIndex = 0, filter = 0, maxFilter = 0;
        for (Map.Entry<String, TableProperties> t : db.getPropertiesOfAllTables().entrySet()) {
            TableProperties p = t.getValue();
            data += p.getDataSize();
            index += p.getIndexSize() - p.getTopLevelIndexSize();
            topIndex += p.getTopLevelIndexSize();
            filter += p.getFilterSize();
            if (!layout.equals("partitioned")) {
                maxFilter = Math.max(maxFilter, p.getFilterSize()); // one filter block per table
            }
        }
        Json j = new Json().obj()
                .put("engine", "bookkeeper").put("phase", "load").put("load_via", "write").put("layout", layout)
                .put("keys", keys)
                .put("write_keys_per_sec", keys / seconds(writeNanos))
                .put("total_keys_per_sec", keys / seconds(writeNanos + settleNanos))
                .put("write_seconds", seconds(writeNanos)).put("settle_seconds", seconds(settleNanos))
                .put("idle_seconds", 0.0)
                .put("write_cpu_seconds", seconds(cpu1 - cpu0)).put("settle_cpu_seconds", seconds(cpu2 - cpu1))
                .put("idle_cpu_seconds", 0.0)
                .put("table_bytes", tableBytes).put("bytes_per_key", tableBytes / (double) keys);
        j.key("tables_per_level").arr();
        for (int n : perLevel) {
            j.num(n);
        }
        j.endArr();
        j.key("bytes_by_tier").obj().put("data", data).put("index", index).put("top_index", topIndex)
                .put("filter", filter).put("top_filter", 0L).end();
        j.put("max_filter_block_bytes", maxFilter).put("peak_rss_bytes", rss.finish());
        emit(withVersion(j));
    }

    /** The i-th location the load hands out, as the bench's locationSequence does. */
    static long location(long i) {
        long log = 1 + i / LOCATIONS_PER_LOG;
        long j = i % LOCATIONS_PER_LOG;
        return log << 32 | (1024 + j * 1028 + 4);
    }

    /**
     * Flushes the memtable and waits until RocksDB runs no flush or
     * compaction and wants none, three polls in a row (50 ms apart).
     */
    private void settle() throws Exception {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
        }
        long deadline = System.nanoTime() + 3600L * 1_000_000_000L;
        int quiet = 0;
        while (quiet < 3) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("compactions did not settle within an hour");
            }
            Thread.sleep(50);
            long busy = db.getLongProperty("rocksdb.num-running-compactions")
                    + db.getLongProperty("rocksdb.num-running-flushes")
                    + db.getLongProperty("rocksdb.compaction-pending")
                    + db.getLongProperty("rocksdb.mem-table-flush-pending");
            quiet = busy == 0 ? quiet + 1 : 0;
        }
    }

    // ---- read phases

    private interface Op {
        boolean run(SplittableRandom rng) throws IOException;
    }

    private Op op(String phase) {
        switch (phase) {
            case "get":
                return rng -> idx.getLocation(rng.nextLong(ledgers), rng.nextLong(entries)) != 0;
            case "miss":
                return rng -> idx.getLocation(rng.nextLong(ledgers), entries + 1_000_000 + rng.nextLong(entries)) != 0;
            default:
                return rng -> {
                    try {
                        idx.getLastEntryInLedger(rng.nextLong(ledgers));
                        return true;
                    } catch (Bookie.NoEntryException e) {
                        return false;
                    }
                };
        }
    }

    /** What the threads of one run did: ops, finds and the perf context's counts. */
    private static final class Measured {
        long ops;
        long found;
        long blockReads;
        long filterReads;
        long indexReads;
        long dictReads;
        long bytesRead;
        long cacheHits;
        long cpuNanos;
        long gcMillis;
        double seconds;
        long peakRss;
        long diskReadBytes = -1;

        void add(Measured o) {
            ops += o.ops;
            found += o.found;
            blockReads += o.blockReads;
            filterReads += o.filterReads;
            indexReads += o.indexReads;
            dictReads += o.dictReads;
            bytesRead += o.bytesRead;
            cacheHits += o.cacheHits;
        }
    }

    private Measured measure(String phase) throws Exception {
        Op op = op(phase);
        progress("%s: warming up (%.1fs)", phase, warmupNanos / 1e9);
        runThreads(op, warmupNanos, 1);
        progress("%s: measuring (%.1fs)", phase, durationNanos / 1e9);
        RssSampler rss = new RssSampler();
        long cpu0 = cpuNanos();
        long gc0 = gcMillis();
        long io0 = diskIo ? diskReadBytes() : -1;
        long t0 = System.nanoTime();
        Measured m = runThreads(op, durationNanos, 1000);
        m.seconds = seconds(System.nanoTime() - t0);
        long io1 = diskIo ? diskReadBytes() : -1;
        if (io0 >= 0 && io1 >= 0) {
            m.diskReadBytes = io1 - io0;
        }
        m.cpuNanos = cpuNanos() - cpu0;
        m.gcMillis = gcMillis() - gc0;
        m.peakRss = rss.finish();
        return m;
    }

    /**
     * Runs op on the threads for the given time. Each thread counts its
     * own perf context (thread-local in RocksDB): level ENABLE_COUNT, reset
     * before its first op, read after its last.
     */
    private Measured runThreads(Op op, long nanos, long seed) throws Exception {
        Measured[] per = new Measured[threads];
        Thread[] ts = new Thread[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean stopFlag = new AtomicBoolean();
        for (int i = 0; i < threads; i++) {
            final int n = i;
            ts[i] = new Thread(() -> {
                Measured m = new Measured();
                SplittableRandom rng = new SplittableRandom(seed + n);
                PerfContext pc = null;
                if (perfContext) {
                    db.setPerfLevel(PerfLevel.ENABLE_COUNT);
                    pc = db.getPerfContext();
                    pc.reset();
                }
                try {
                    while (!stopFlag.get()) {
                        if (op.run(rng)) {
                            m.found++;
                        }
                        m.ops++;
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                    stopFlag.set(true);
                }
                if (pc != null) {
                    m.blockReads = pc.getBlockReadCount();
                    m.filterReads = pc.getFilterBlockReadCount();
                    m.indexReads = pc.getIndexBlockReadCount();
                    m.dictReads = pc.getCompressionDictBlockReadCount();
                    m.bytesRead = pc.getBlockReadByte();
                    m.cacheHits = pc.getBlockCacheHitCount();
                    db.setPerfLevel(PerfLevel.DISABLE);
                }
                per[n] = m;
            }, "reader-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        long end = System.nanoTime() + nanos;
        for (long left; (left = end - System.nanoTime()) > 0 && !stopFlag.get(); ) {
            Thread.sleep(Math.max(1, Math.min(100, left / 1_000_000)));
        }
        stopFlag.set(true);
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IOException("a reader failed", failure.get());
        }
        Measured total = new Measured();
        for (Measured m : per) {
            total.add(m);
        }
        return total;
    }

    private Json opRow(String phase, long cache, Measured m) {
        double n = Math.max(m.ops, 1);
        long dataReads = m.blockReads - m.filterReads - m.indexReads - m.dictReads;
        Json j = new Json().obj()
                .put("engine", "bookkeeper").put("phase", phase).put("layout", layout)
                .put("cache_bytes", cache).put("shard_bytes", cache / 64).put("threads", (long) threads)
                .put("ops", m.ops).put("ops_per_sec", m.ops / m.seconds).put("found_fraction", m.found / n)
                .put("filter_reads_per_op", m.filterReads / n).put("filter_skips_per_op", 0.0)
                .put("index_reads_per_op", m.indexReads / n).put("data_reads_per_op", dataReads / n)
                .put("bytes_read_per_op", m.bytesRead / n).put("cache_hits_per_op", m.cacheHits / n)
                .put("cpu_us_per_op", m.cpuNanos / 1e3 / n)
                .put("gc_cpu_fraction", m.cpuNanos > 0 ? m.gcMillis * 1e6 / m.cpuNanos : 0.0)
                .put("peak_rss_bytes", m.peakRss);
        if (m.diskReadBytes >= 0) {
            // A disk-bound reader: what the phase read from the disk itself.
            j.key("extra").obj().put("disk_read_bytes_per_op", m.diskReadBytes / n).end();
        }
        return withVersion(j);
    }

    private Json withVersion(Json j) {
        j.put("engine_version", engineVersion).put("options", options);
        return j.end();
    }

    // ---- process figures

    private static long cpuNanos() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static long gcMillis() {
        long t = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            t += Math.max(0, b.getCollectionTime());
        }
        return t;
    }

    /** The bytes this process has read from storage devices (/proc/self/io read_bytes), -1 if unknown. */
    private static long diskReadBytes() {
        try {
            for (String line : Files.readAllLines(new File("/proc/self/io").toPath())) {
                if (line.startsWith("read_bytes:")) {
                    return Long.parseLong(line.substring("read_bytes:".length()).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    /** Samples the resident set size (/proc/self/statm) every 100 ms and keeps the peak. */
    private static final class RssSampler {
        private volatile boolean stop;
        private long peak;
        private final Thread thread;

        RssSampler() {
            thread = new Thread(() -> {
                while (!stop) {
                    sample();
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "rss-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        private synchronized void sample() {
            try {
                String[] f = Files.readString(new File("/proc/self/statm").toPath()).trim().split("\\s+");
                peak = Math.max(peak, Long.parseLong(f[1]) * 4096);
            } catch (IOException | RuntimeException e) {
                // not Linux: no figure
            }
        }

        long finish() throws InterruptedException {
            stop = true;
            thread.interrupt();
            thread.join();
            sample();
            synchronized (this) {
                return peak;
            }
        }
    }

    private static synchronized void emit(Json row) {
        System.out.println(row);
        System.out.flush();
    }

    private static void progress(String format, Object... args) {
        System.err.println(String.format(format, args));
    }
}
