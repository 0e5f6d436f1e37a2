package interop.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.bookie.BookieImpl;
import org.apache.bookkeeper.bookie.CheckpointSource;
import org.apache.bookkeeper.bookie.Checkpointer;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.bookie.storage.ldb.SingleDirectoryDbLedgerStorage;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.util.DiskChecker;

/**
 * How the programs configure and open BookKeeper's DbLedgerStorage without
 * a bookie or ZooKeeper, as upstream's own storage tests do
 * (LocationsIndexRebuildTest): a ServerConfiguration, LedgerDirsManagers
 * over the directories, DbLedgerStorage.initialize with no ledger manager
 * (so its garbage collector never deletes ledgers on its own), the default
 * checkpoint source and no checkpointer.
 */
final class Bookies {
    private Bookies() {}

    /**
     * A configuration in bookie-conf mode: no RocksDB OPTIONS file exists
     * under the configured names, so the dbStorage_rocksDB_* keys (here
     * their defaults) configure RocksDB.
     */
    static ServerConfiguration conf(List<File> ledgerDirs, List<File> indexDirs, long logSizeLimit) throws IOException {
        return conf(ledgerDirs, indexDirs, logSizeLimit, Map.of(), null);
    }

    /**
     * The same, then the upstream keys of extra as a bk_server.conf sets
     * them; the value of a *RocksdbConf key is a path relative to root.
     */
    static ServerConfiguration conf(List<File> ledgerDirs, List<File> indexDirs, long logSizeLimit,
                                    Map<String, String> extra, File root) throws IOException {
        ServerConfiguration conf = new ServerConfiguration();
        conf.setLedgerStorageClass(DbLedgerStorage.class.getName());
        conf.setLedgerDirNames(names(ledgerDirs));
        if (indexDirs != null) {
            conf.setIndexDirName(names(indexDirs));
        }
        for (File d : ledgerDirs) {
            makeCurrent(d);
        }
        if (indexDirs != null) {
            for (File d : indexDirs) {
                makeCurrent(d);
            }
        }
        conf.setEntryLogSizeLimit(logSizeLimit);
        // Names no file has: bookie-conf mode for every RocksDB database.
        File none = new File(ledgerDirs.get(0).getParentFile(), "no-such-rocksdb.conf");
        conf.setEntryLocationRocksdbConf(none.getPath());
        conf.setLedgerMetadataRocksdbConf(none.getPath());
        conf.setDefaultRocksDBConf(none.getPath());
        conf.setProperty(DbLedgerStorage.WRITE_CACHE_MAX_SIZE_MB, 16);
        conf.setProperty(DbLedgerStorage.READ_AHEAD_CACHE_MAX_SIZE_MB, 16);
        conf.setProperty("dbStorage_rocksDB_blockCacheSize", 8L << 20);
        // The garbage collector runs only when forced.
        conf.setGcWaitTime(TimeUnit.DAYS.toMillis(1));
        conf.setMinorCompactionInterval(TimeUnit.DAYS.toSeconds(2));
        conf.setMajorCompactionInterval(TimeUnit.DAYS.toSeconds(3));
        conf.setMajorCompactionThreshold(0.8);
        conf.setMinorCompactionThreshold(0.2);
        conf.setDiskUsageThreshold(0.999f);
        conf.setDiskUsageWarnThreshold(0.998f);
        conf.setBookieId("interop-bookie");
        conf.setAllowLoopback(true);
        for (Map.Entry<String, String> e : extra.entrySet()) {
            String v = e.getValue();
            if (e.getKey().endsWith("RocksdbConf") || e.getKey().equals("defaultRocksdbConf")) {
                v = new File(root, v).getPath();
            }
            conf.setProperty(e.getKey(), v);
        }
        return conf;
    }

    static String[] names(List<File> dirs) {
        return dirs.stream().map(File::getPath).toArray(String[]::new);
    }

    static void makeCurrent(File dir) throws IOException {
        BookieImpl.checkDirectoryStructure(BookieImpl.getCurrentDirectory(dir));
    }

    static LedgerDirsManager ledgerDirs(ServerConfiguration conf) throws IOException {
        return new LedgerDirsManager(conf, conf.getLedgerDirs(), checker(conf));
    }

    static LedgerDirsManager indexDirs(ServerConfiguration conf, LedgerDirsManager ledgerDirs) throws IOException {
        File[] idx = conf.getIndexDirs();
        if (idx == null || idx.length == 0) {
            return ledgerDirs;
        }
        return new LedgerDirsManager(conf, idx, checker(conf));
    }

    static DiskChecker checker(ServerConfiguration conf) {
        return new DiskChecker(conf.getDiskUsageThreshold(), conf.getDiskUsageWarnThreshold());
    }

    /** Opens a DbLedgerStorage as upstream's storage tests do. */
    static DbLedgerStorage open(ServerConfiguration conf) throws IOException {
        LedgerDirsManager ldm = ledgerDirs(conf);
        LedgerDirsManager idm = indexDirs(conf, ldm);
        DbLedgerStorage storage = new DbLedgerStorage();
        storage.initialize(conf, null, ldm, idm, NullStatsLogger.INSTANCE, UnpooledByteBufAllocator.DEFAULT);
        storage.setCheckpointSource(CheckpointSource.DEFAULT);
        storage.setCheckpointer(Checkpointer.NULL);
        return storage;
    }

    /**
     * Waits for the deletions a checkpoint queued on each directory's
     * cleanup executor (removeOffsetFromDeletedLedgers, then the ledgers
     * index's removeDeletedLedgers): the executor is single-threaded, so a
     * task submitted after them runs once they are done.
     */
    static void awaitCleanup(DbLedgerStorage storage) throws Exception {
        for (SingleDirectoryDbLedgerStorage s : storage.getLedgerStorageList()) {
            Field f = SingleDirectoryDbLedgerStorage.class.getDeclaredField("cleanupExecutor");
            f.setAccessible(true);
            ExecutorService ex = (ExecutorService) f.get(s);
            ex.submit(() -> { }).get(60, TimeUnit.SECONDS);
        }
    }

    /** Forces a garbage collection with compactions on every directory and waits for it. */
    static void forceGC(DbLedgerStorage storage) throws InterruptedException {
        storage.forceGC(true, true);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        for (SingleDirectoryDbLedgerStorage s : storage.getLedgerStorageList()) {
            while (s.isInForceGC()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("garbage collection did not finish in 120 s");
                }
                Thread.sleep(10);
            }
        }
    }

    /**
     * A BookKeeper entry as a client sends it: ledger id, entry id, last add
     * confirmed, then the payload (what follows the ids is opaque to the
     * storage).
     */
    static ByteBuf entry(long ledgerId, long entryId, long lac, byte[] payload) {
        ByteBuf b = Unpooled.buffer(24 + payload.length);
        b.writeLong(ledgerId);
        b.writeLong(entryId);
        b.writeLong(lac);
        b.writeBytes(payload);
        return b;
    }

    static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One operation of a trace, which writes its line. */
    interface TraceStep {
        void step() throws Exception;
    }

    /**
     * Writes a trace of ops operations of traced (a class of BookKeeper's)
     * to out: a header line naming it, BookKeeper's version, the seed and
     * ops, then each step's line.
     */
    static void writeTrace(BufferedWriter out, String traced, long seed, long ops, TraceStep step) throws Exception {
        Json h = new Json().obj().put("trace", traced).put("bookkeeper", "4.18.2")
                .put("seed", seed).put("ops", ops).end();
        out.write(h.toString());
        out.newLine();
        for (long i = 0; i < ops; i++) {
            step.step();
        }
    }

    static void write(Path p, String s) throws IOException {
        Files.createDirectories(p.toAbsolutePath().getParent());
        Files.writeString(p, s, StandardCharsets.UTF_8);
    }
}
