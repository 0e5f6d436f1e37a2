package interop.bookkeeper;

import java.io.BufferedWriter;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.bookkeeper.bookie.EntryLocation;
import org.apache.bookkeeper.bookie.storage.ldb.EntryLocationIndex;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorage;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorageFactory;
import org.apache.bookkeeper.bookie.storage.ldb.KeyValueStorageRocksDB;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.stats.NullStatsLogger;

/**
 * A differential trace of BookKeeper's EntryLocationIndex over its
 * KeyValueStorageRocksDB (bookie-conf mode): one seeded random sequence of
 * operations, each written as a JSON line with its arguments and
 * BookKeeper's answer ("ret") or the class of the exception it threw
 * ("exc"). The Go test replays the trace against package entrylocation.
 *
 * <p>Operations: add (addLocation), batch (newBatch, addLocation on the
 * batch, flush, close), batch2 (the same with a second flush after a single
 * add in between), update (updateLocations), get (getLocation), last
 * (getLastEntryInLedger), delete, purge (removeOffsetFromDeletedLedgers),
 * compact, reopen (close and a new EntryLocationIndex on the same
 * directory). Ledger ids include 0, 2^63-1 and negative ones; entry ids 0,
 * 2^63-1, 2^63-2 and negative ones; locations are positive, with a few 0
 * and negative ones.
 */
public final class IndexTrace {
    private static final long MAX = Long.MAX_VALUE;
    private static final long[] LEDGERS = {0, 1, 2, 3, 4, 5, 6, 7, MAX - 1, MAX};

    private final SplittableRandom rng;
    private final ServerConfiguration conf;
    private final String dir;
    private final KeyValueStorageFactory factory =
            (base, sub, type, c) -> new KeyValueStorageRocksDB(base, sub, type, c);
    private EntryLocationIndex idx;
    private long nextLoc = 1;
    private final BufferedWriter out;

    private IndexTrace(long seed, File dir, BufferedWriter out) throws Exception {
        this.rng = new SplittableRandom(seed);
        this.dir = dir.getPath();
        this.out = out;
        conf = new ServerConfiguration();
        File none = new File(dir, "no-such-rocksdb.conf");
        conf.setEntryLocationRocksdbConf(none.getPath());
        conf.setProperty("dbStorage_rocksDB_blockCacheSize", 8L << 20);
        // Small memtables, so that the index's RocksDB flushes and compacts
        // tables during the trace.
        conf.setProperty("dbStorage_rocksDB_writeBufferSizeMB", 1);
        idx = open();
    }

    private EntryLocationIndex open() throws Exception {
        return new EntryLocationIndex(conf, factory, dir, NullStatsLogger.INSTANCE);
    }

    public static void main(String[] argv) {
        Main.run(() -> {
            Args args = new Args(argv);
            long seed = args.getLong("seed", 1);
            long ops = args.getLong("ops", 3000);
            File dir = new File(args.get("dir")).getAbsoluteFile();
            Bookies.makeCurrent(dir);
            File trace = new File(args.get("out"));
            try (BufferedWriter w = Files.newBufferedWriter(trace.toPath(), StandardCharsets.UTF_8)) {
                IndexTrace t = new IndexTrace(seed, dir, w);
                Bookies.writeTrace(w, "EntryLocationIndex", seed, ops, t::step);
                t.idx.close();
            }
        });
    }

    private long ledger() {
        int p = rng.nextInt(100);
        if (p < 2) {
            return p == 0 ? -1 : Long.MIN_VALUE;
        }
        return LEDGERS[rng.nextInt(LEDGERS.length)];
    }

    private long entry() {
        int p = rng.nextInt(40);
        return switch (p) {
            case 0 -> 0;
            case 1 -> MAX;
            case 2 -> MAX - 1;
            case 3 -> -1;
            case 4 -> rng.nextBoolean() ? -2 : Long.MIN_VALUE;
            default -> rng.nextLong(0, 30);
        };
    }

    private long location() {
        int p = rng.nextInt(200);
        if (p == 0) {
            return 0;
        } else if (p == 1) {
            return -nextLoc;
        }
        return nextLoc++;
    }

    private void step() throws Exception {
        int p = rng.nextInt(100);
        Json j = new Json().obj();
        try {
            if (p < 14) {
                long l = ledger();
                long e = entry();
                long loc = location();
                j.put("op", "add").put("l", l).put("e", e).put("loc", loc);
                idx.addLocation(l, e, loc);
            } else if (p < 26) {
                j.put("op", "batch");
                List<long[]> adds = triples(1 + rng.nextInt(12));
                putTriples(j, "adds", adds);
                try (KeyValueStorage.Batch b = idx.newBatch()) {
                    for (long[] a : adds) {
                        idx.addLocation(b, a[0], a[1], a[2]);
                    }
                    b.flush();
                }
            } else if (p < 28) {
                // A batch flushed twice, with a single add in between to a
                // key the batch holds.
                j.put("op", "batch2");
                List<long[]> adds = triples(1 + rng.nextInt(6));
                long[] mid = {adds.get(0)[0], adds.get(0)[1], location()};
                putTriples(j, "adds", adds);
                j.key("mid").arr().num(mid[0]).num(mid[1]).num(mid[2]).endArr();
                try (KeyValueStorage.Batch b = idx.newBatch()) {
                    for (long[] a : adds) {
                        idx.addLocation(b, a[0], a[1], a[2]);
                    }
                    b.flush();
                    idx.addLocation(mid[0], mid[1], mid[2]);
                    b.flush();
                }
            } else if (p < 34) {
                j.put("op", "update");
                List<long[]> locs = triples(rng.nextInt(10));
                putTriples(j, "locs", locs);
                List<EntryLocation> list = new ArrayList<>();
                for (long[] a : locs) {
                    list.add(new EntryLocation(a[0], a[1], a[2]));
                }
                idx.updateLocations(list);
            } else if (p < 62) {
                long l = ledger();
                long e = entry();
                j.put("op", "get").put("l", l).put("e", e);
                j.put("ret", idx.getLocation(l, e));
            } else if (p < 82) {
                long l = ledger();
                j.put("op", "last").put("l", l);
                j.put("ret", idx.getLastEntryInLedger(l));
            } else if (p < 88) {
                long l = ledger();
                j.put("op", "delete").put("l", l);
                idx.delete(l);
            } else if (p < 93) {
                j.put("op", "purge");
                idx.removeOffsetFromDeletedLedgers();
            } else if (p < 95) {
                j.put("op", "compact");
                idx.compact();
            } else if (p < 97) {
                j.put("op", "reopen");
                idx.close();
                idx = open();
            } else {
                // A run of lookups over one ledger's every id of interest.
                long l = ledger();
                j.put("op", "scan").put("l", l);
                j.key("ret").arr();
                for (long e : new long[] {0, 1, 2, 5, 10, 29, MAX - 1, MAX, -1, -2, Long.MIN_VALUE}) {
                    j.arr().num(e).num(idx.getLocation(l, e)).endArr();
                }
                j.endArr();
            }
        } catch (Exception ex) {
            j.put("exc", ex.getClass().getName());
        }
        j.end();
        out.write(j.toString());
        out.newLine();
    }

    private List<long[]> triples(int n) {
        List<long[]> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(new long[] {ledger(), entry(), location()});
        }
        return list;
    }

    private static void putTriples(Json j, String name, List<long[]> list) {
        j.key(name).arr();
        for (long[] a : list) {
            j.arr().num(a[0]).num(a[1]).num(a[2]).endArr();
        }
        j.endArr();
    }
}
