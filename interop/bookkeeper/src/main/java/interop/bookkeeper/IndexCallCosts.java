package interop.bookkeeper;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.bookie.storage.ldb.EntryLocationIndex;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorageFactory;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorageRocksDB;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * Where the BookKeeper arm's time per lookup goes, on an index IndexBench
 * loaded (docs/benchmarks.md, "Where BookKeeper's time goes"): one thread
 * repeats each call on the same hot key or ledger (every block it touches
 * cached) and prints a JSON line per call with its wall and thread CPU
 * nanoseconds. The calls peel BookKeeper's lookups apart: a JNI call that
 * does nothing (getLatestSequenceNumber), RocksDB's Get through JNI alone,
 * BookKeeper's getLocation around it; the native objects a floor lookup
 * creates (Slice, ReadOptions, iterator) and closes, then with the seek and
 * the key and value copies, then BookKeeper's getLastEntryInLedger.
 *
 * <p>Flags: --dir (the arm's directory), --options-file (config-file
 * mode; else bookie-conf mode), --cache bytes, --millis per call (default
 * 2000, after as long a warm-up).
 */
public final class IndexCallCosts {
    private IndexCallCosts() {}

    private interface Call {
        long run() throws Exception;
    }

    public static void main(String[] argv) {
        Main.run(() -> {
            Args a = new Args(argv);
            File dir = new File(a.get("dir")).getAbsoluteFile();
            long cache = a.getLong("cache", 1L << 30);
            long millis = a.getLong("millis", 2000);
            ServerConfiguration conf = new ServerConfiguration();
            String opts = a.get("options-file", "");
            if (opts.isEmpty()) {
                conf.setEntryLocationRocksdbConf(new File(dir, "no-such-entry_location_rocksdb.conf").getPath());
                conf.setProperty("dbStorage_rocksDB_blockCacheSize", cache);
            } else {
                conf.setEntryLocationRocksdbConf(opts);
            }
            KeyValueStorageRocksDB[] kv = new KeyValueStorageRocksDB[1];
            KeyValueStorageFactory factory = (base, sub, type, c) -> kv[0] = new KeyValueStorageRocksDB(base, sub, type, c);
            EntryLocationIndex idx = new EntryLocationIndex(conf, factory, dir.getPath(), NullStatsLogger.INSTANCE);
            Field f = KeyValueStorageRocksDB.class.getDeclaredField("db");
            f.setAccessible(true);
            RocksDB db = (RocksDB) f.get(kv[0]);

            long ledger = 7;
            long entry = 123;
            byte[] key = new byte[16];
            putLong(key, 0, ledger);
            putLong(key, 8, entry);
            byte[] value = new byte[8];
            byte[] floorKey = new byte[16];
            putLong(floorKey, 0, ledger);
            putLong(floorKey, 8, Long.MAX_VALUE);
            if (idx.getLocation(ledger, entry) == 0) {
                throw new IllegalStateException("no entry " + ledger + ":" + entry + " in " + dir + ": load it with IndexBench");
            }

            List<String> names = new ArrayList<>();
            List<Call> calls = new ArrayList<>();
            names.add("jni_noop");
            calls.add(db::getLatestSequenceNumber);
            names.add("rocksdb_get");
            calls.add(() -> db.get(key, value));
            names.add("bookkeeper_getLocation");
            calls.add(() -> idx.getLocation(ledger, entry));
            names.add("iterator_objects");
            calls.add(() -> {
                try (Slice upper = new Slice(floorKey);
                        ReadOptions ro = new ReadOptions().setIterateUpperBound(upper);
                        RocksIterator it = db.newIterator(ro)) {
                    return 1;
                }
            });
            names.add("iterator_seekToLast_key_value");
            calls.add(() -> {
                try (Slice upper = new Slice(floorKey);
                        ReadOptions ro = new ReadOptions().setIterateUpperBound(upper);
                        RocksIterator it = db.newIterator(ro)) {
                    it.seekToLast();
                    return it.isValid() ? it.key().length + it.value().length : 0;
                }
            });
            names.add("bookkeeper_getLastEntryInLedger");
            calls.add(() -> idx.getLastEntryInLedger(ledger));

            ThreadMXBean tmx = ManagementFactory.getThreadMXBean();
            for (int i = 0; i < calls.size(); i++) {
                Call c = calls.get(i);
                repeat(c, millis); // warm-up: the JIT compiles the call
                long cpu0 = tmx.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                long n = repeat(c, millis);
                long wall = System.nanoTime() - t0;
                long cpu = tmx.getCurrentThreadCpuTime() - cpu0;
                System.out.println(new Json().obj().put("call", names.get(i)).put("calls", n)
                        .put("wall_ns_per_call", wall / (double) n).put("cpu_ns_per_call", cpu / (double) n)
                        .put("engine_version", "bookkeeper-4.18.2 rocksdbjni-" + RocksDB.rocksdbVersion()).end());
            }
            idx.close();
        });
    }

    private static long sink;

    private static long repeat(Call c, long millis) throws Exception {
        long end = System.nanoTime() + millis * 1_000_000L;
        long n = 0;
        long s = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                s += c.run();
            }
            n += 1000;
        }
        sink += s;
        return n;
    }

    private static void putLong(byte[] b, int off, long v) {
        for (int i = 7; i >= 0; i--) {
            b[off + i] = (byte) v;
            v >>>= 8;
        }
    }
}
