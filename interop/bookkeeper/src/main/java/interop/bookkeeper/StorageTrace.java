package interop.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import java.io.BufferedWriter;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.conf.ServerConfiguration;

/**
 * A differential trace of BookKeeper's DbLedgerStorage (two ledger
 * directories, bookie-conf mode): one seeded random sequence of operations
 * as a bookie issues them, each written as a JSON line with its arguments
 * and BookKeeper's answer ("ret"; for an entry its size and SHA-256) or the
 * class of the exception it threw ("exc", with its cause's after a colon).
 * The Go test replays it against package bookie's Storage.
 *
 * <p>Ledgers follow a bookie's protocol: a ledger is created by
 * setMasterKey before its first entry; entries are added in order (with
 * gaps, as a striped ensemble leaves, and repeated adds of the same
 * bytes), LAC = entry id - 1; a fenced ledger takes no more entries; a
 * deleted ledger id is never written again. Reads, fencing, keys and LACs
 * also go to ledgers that do not exist or were deleted.
 *
 * <p>Operations: key (setMasterKey), add (addEntry), get (getEntry, -1
 * included), lac (getLastAddConfirmed), fence (setFenced), fenced
 * (isFenced), readkey (readMasterKey), setlac / getlac (explicit LAC),
 * delete (deleteLedger), flush (flush, then the purge it queues), exists
 * (ledgerExists), list (getActiveLedgersInRange, sorted), reopen
 * (shutdown, then a new storage on the same directories).
 */
public final class StorageTrace {
    private static final long MAX = Long.MAX_VALUE;

    private final SplittableRandom rng;
    private final ServerConfiguration conf;
    private final BufferedWriter out;
    private DbLedgerStorage storage;

    /** The ids ledgers may take, in creation order; ids never come back. */
    private final List<Long> fresh = new ArrayList<>();
    private final Set<Long> live = new TreeSet<>();
    private final Set<Long> fenced = new HashSet<>();
    private final Set<Long> deleted = new TreeSet<>();
    private final Map<Long, byte[]> keys = new HashMap<>();
    /** Per ledger: the next entry id, and the entries written (for repeats). */
    private final Map<Long, Long> next = new HashMap<>();
    private final Map<Long, Map<Long, byte[]>> written = new HashMap<>();

    private StorageTrace(long seed, File dir, BufferedWriter out) throws Exception {
        this.rng = new SplittableRandom(seed);
        this.out = out;
        List<File> ledgerDirs = List.of(new File(dir, "ledger0"), new File(dir, "ledger1"));
        conf = Bookies.conf(ledgerDirs, null, 64 << 10);
        storage = Bookies.open(conf);
        for (long id = 0; id < 100; id++) {
            fresh.add(id);
        }
        fresh.add(MAX - 1);
        fresh.add(MAX);
        fresh.add(1L << 40);
        // A random order of creation.
        for (int i = fresh.size() - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            Long t = fresh.get(i);
            fresh.set(i, fresh.get(j));
            fresh.set(j, t);
        }
    }

    public static void main(String[] argv) {
        Main.run(() -> {
            Args args = new Args(argv);
            long seed = args.getLong("seed", 1);
            long ops = args.getLong("ops", 2000);
            File dir = new File(args.get("dir")).getAbsoluteFile();
            File trace = new File(args.get("out"));
            try (BufferedWriter w = Files.newBufferedWriter(trace.toPath(), StandardCharsets.UTF_8)) {
                StorageTrace t = new StorageTrace(seed, dir, w);
                Bookies.writeTrace(w, "DbLedgerStorage", seed, ops, t::step);
                t.storage.shutdown();
            }
        });
    }

    /** Starts an operation op on any ledger (anyLedger) in j, and returns the ledger. */
    private long onAnyLedger(Json j, String op) {
        long l = anyLedger();
        j.put("op", op).put("l", l);
        return l;
    }

    /** Any ledger id: live, deleted, or never created. */
    private long anyLedger() {
        int p = rng.nextInt(10);
        if (p < 6 && !live.isEmpty()) {
            return pick(live);
        } else if (p < 8 && !deleted.isEmpty()) {
            return pick(deleted);
        } else if (!fresh.isEmpty()) {
            return fresh.get(rng.nextInt(fresh.size()));
        }
        return pick(live.isEmpty() ? deleted : live);
    }

    private long pick(Set<Long> set) {
        int i = rng.nextInt(set.size());
        for (long v : set) {
            if (i-- == 0) {
                return v;
            }
        }
        throw new IllegalStateException();
    }

    private byte[] key() {
        int p = rng.nextInt(10);
        if (p == 0) {
            return new byte[0];
        } else if (p == 1) {
            return new byte[20];
        }
        byte[] k = new byte[20];
        rng.nextBytes(k);
        return k;
    }

    private void step() throws Exception {
        int p = rng.nextInt(100);
        Json j = new Json().obj();
        try {
            if (p < 6 && !fresh.isEmpty()) {
                // A new ledger.
                long l = fresh.remove(0);
                byte[] k = key();
                j.put("op", "key").put("l", l).putHex("key", k);
                storage.setMasterKey(l, k);
                live.add(l);
                keys.put(l, k);
                next.put(l, rng.nextInt(3) == 0 ? (long) rng.nextInt(5) : 0L);
                written.put(l, new HashMap<>());
            } else if (p < 9) {
                // setMasterKey on any ledger: its key, another, empty, zeros.
                long l = anyLedger();
                byte[] k = keys.containsKey(l) && rng.nextBoolean() ? keys.get(l) : key();
                j.put("op", "key").put("l", l).putHex("key", k);
                storage.setMasterKey(l, k);
                if (!live.contains(l) && !deleted.contains(l)) {
                    // It created the ledger.
                    fresh.remove(l);
                    live.add(l);
                    keys.put(l, k);
                    next.put(l, 0L);
                    written.put(l, new HashMap<>());
                }
            } else if (p < 42 && !writable().isEmpty()) {
                add(j, pick(writable()));
            } else if (p < 58) {
                long l = anyLedger();
                long e = entryToRead(l);
                j.put("op", "get").put("l", l).put("e", e);
                get(j, l, e);
            } else if (p < 63) {
                long l = onAnyLedger(j, "lac");
                j.put("ret", storage.getLastAddConfirmed(l));
            } else if (p < 65) {
                long l = onAnyLedger(j, "fence");
                j.put("ret", storage.setFenced(l));
                fenced.add(l);
            } else if (p < 70) {
                long l = onAnyLedger(j, "fenced");
                j.put("ret", storage.isFenced(l));
            } else if (p < 73) {
                long l = onAnyLedger(j, "readkey");
                j.putHex("ret", storage.readMasterKey(l));
            } else if (p < 76) {
                long l = rng.nextInt(8) == 0 ? anyLedger() : (live.isEmpty() ? anyLedger() : pick(live));
                byte[] lac = new byte[24];
                ByteBuffer.wrap(lac).putLong(l).putLong(next.getOrDefault(l, 0L) - 1).putLong(rng.nextLong());
                j.put("op", "setlac").put("l", l).putHex("lac", lac);
                storage.setExplicitLac(l, Unpooled.wrappedBuffer(lac));
            } else if (p < 80) {
                long l = onAnyLedger(j, "getlac");
                ByteBuf b = storage.getExplicitLac(l);
                j.putHex("ret", b == null ? null : Bookies.bytes(b));
            } else if (p < 83 && !live.isEmpty()) {
                long l = rng.nextInt(6) == 0 ? anyLedger() : pick(live);
                j.put("op", "delete").put("l", l);
                storage.deleteLedger(l);
                if (live.remove(l)) {
                    deleted.add(l);
                }
                fresh.remove(l);
                deleted.add(l);
            } else if (p < 87) {
                j.put("op", "flush");
                storage.flush();
                Bookies.awaitCleanup(storage);
            } else if (p < 94) {
                long l = onAnyLedger(j, "exists");
                j.put("ret", storage.ledgerExists(l));
            } else if (p < 99) {
                long first = rng.nextInt(3) == 0 ? 0 : rng.nextLong(0, 100);
                long last = switch (rng.nextInt(4)) {
                    case 0 -> MAX;
                    case 1 -> MAX - 1;
                    default -> first + rng.nextLong(0, 40);
                };
                j.put("op", "list").put("first", first).put("last", last);
                TreeSet<Long> ids = new TreeSet<>();
                for (long id : storage.getActiveLedgersInRange(first, last)) {
                    ids.add(id);
                }
                j.key("ret").arr();
                for (long id : ids) {
                    j.num(id);
                }
                j.endArr();
            } else {
                j.put("op", "reopen");
                storage.shutdown();
                storage = Bookies.open(conf);
            }
        } catch (Exception ex) {
            String exc = ex.getClass().getName();
            if (ex.getCause() != null) {
                exc += ":" + ex.getCause().getClass().getSimpleName();
            }
            j.put("exc", exc);
        }
        j.end();
        out.write(j.toString());
        out.newLine();
    }

    /** Live ledgers that are not fenced: the ones a client still writes. */
    private Set<Long> writable() {
        Set<Long> w = new TreeSet<>(live);
        w.removeAll(fenced);
        return w;
    }

    private long entryToRead(long l) {
        long n = next.getOrDefault(l, 3L);
        return switch (rng.nextInt(6)) {
            case 0 -> -1;
            case 1 -> n; // the next, absent
            case 2 -> n + 5;
            default -> n == 0 ? 0 : rng.nextLong(0, n);
        };
    }

    private void add(Json j, long l) throws Exception {
        Map<Long, byte[]> w = written.get(l);
        long e;
        byte[] bytes;
        if (!w.isEmpty() && rng.nextInt(15) == 0) {
            // The same entry again, as a client's retry sends it.
            List<Long> ids = new ArrayList<>(w.keySet());
            e = ids.get(rng.nextInt(ids.size()));
            bytes = w.get(e);
        } else {
            e = next.get(l);
            next.put(l, e + (rng.nextInt(5) == 0 ? 2 : 1));
            int size = rng.nextInt(50) == 0 ? rng.nextInt(1000, 3000) : rng.nextInt(0, 200);
            bytes = new byte[24 + size];
            ByteBuffer bb = ByteBuffer.wrap(bytes);
            bb.putLong(l).putLong(e).putLong(e - 1);
            byte[] rest = new byte[size];
            rng.nextBytes(rest);
            bb.put(rest);
            w.put(e, bytes);
        }
        j.put("op", "add").put("l", l).put("e", e).put("size", bytes.length).put("sha256", Bookies.sha256(bytes));
        // The bytes themselves: the replay adds them to the other storage.
        j.putHex("bytes", bytes);
        ByteBuf b = Unpooled.wrappedBuffer(bytes);
        try {
            j.put("ret", storage.addEntry(b));
        } finally {
            ReferenceCountUtil.release(b);
        }
    }

    private void get(Json j, long l, long e) throws Exception {
        ByteBuf b = storage.getEntry(l, e);
        try {
            byte[] bytes = Bookies.bytes(b);
            j.key("ret").obj().put("size", bytes.length).put("sha256", Bookies.sha256(bytes))
                    .put("id", bytes.length >= 16 ? ByteBuffer.wrap(bytes).getLong(8) : -1).end();
        } finally {
            ReferenceCountUtil.release(b);
        }
    }
}
