package interop.bookkeeper;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.bookkeeper.bookie.Bookie;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.bookie.storage.ldb.SingleDirectoryDbLedgerStorage;
import org.apache.bookkeeper.common.util.MathUtils;
import org.apache.bookkeeper.conf.ServerConfiguration;

/**
 * Writes real bookie directories through BookKeeper's own DbLedgerStorage
 * (bookie-conf mode, two ledger directories) and a description of their
 * content (expected.json), from a seed.
 *
 * <p>Scenarios ({@code --scenario}):
 * <ul>
 * <li>{@code clean}: many ledgers, entries of varied sizes (some ledgers
 * striped, as a bookie of a wider ensemble stores them), master keys
 * (one empty), fenced ledgers, explicit LACs, checkpoints, ledgers deleted
 * and purged, entry logs rotated by a small
 * logSizeLimit, a garbage collection with compactions that removes and
 * compacts logs, more writes after it, and a clean shutdown (everything
 * checkpointed). Ledger ids are never written again after a deletion (a
 * metadata store never reuses one): upstream's compaction would copy the
 * old life's entries of a ledger id that exists again.</li>
 * <li>{@code separate-index}: the same with separate index directories,
 * and a compaction of the entry location indexes.</li>
 * <li>{@code crash}: the clean scenario's first part, then a ledger
 * deleted but not purged, another whose location index was purged but
 * not its ledgers index (the process died between the two steps), entries
 * added after the last checkpoint, and the process killed
 * (Runtime.halt): those entries are lost.</li>
 * </ul>
 *
 * <p>Then BookKeeper opens the directories again and reads everything
 * back; any difference from the description fails the program, so the
 * description says what BookKeeper itself reads. After a crash the program
 * cannot: {@code --verify DIR} does it, on a copy (opening writes to the
 * directories).
 *
 * <p>One subtlety of upstream the model follows: a checkpoint of a
 * directory whose write cache is empty returns before it writes the
 * ledgers index, so fence, master key and explicit LAC changes reach the
 * disk only with the next checkpoint that has entries to write in that
 * directory (the purge of deleted ledgers runs either way).
 */
public final class WriteBookie {
    private final SplittableRandom rng;
    private final Expected exp = new Expected();
    private final int dirs;
    /**
     * Whether the garbage collection must move entries (true unless
     * --gc-must-compact false: with one log per ledger, or logs larger
     * than what the run writes, it only removes logs).
     */
    private boolean gcMustCompact = true;
    private DbLedgerStorage storage;

    /** The in-memory state of each ledger (what BookKeeper answers while running). */
    private final Map<Long, Expected.Ledger> mem = new HashMap<>();
    /** Per directory: ledgers with entries in the write cache, and their entries. */
    private final List<Map<Long, Map<Long, byte[]>>> cached = new ArrayList<>();
    /** Ledgers deleted since the last checkpoint (purged by the next one). */
    private final Set<Long> deletedPending = new HashSet<>();
    /** Open ledgers: the next entry id and the stride of its entries. */
    private final Map<Long, long[]> open = new HashMap<>();
    private long bytesWritten;
    private int checkpoints;

    private WriteBookie(long seed, int dirs) {
        this.rng = new SplittableRandom(seed);
        this.dirs = dirs;
        for (int i = 0; i < dirs; i++) {
            cached.add(new HashMap<>());
        }
    }

    public static void main(String[] argv) {
        Main.run(() -> run(new Args(argv)));
    }

    private static void run(Args args) throws Exception {
        String verify = args.get("verify", "");
        if (!verify.isEmpty()) {
            verifyDir(new File(verify).getAbsoluteFile());
            return;
        }
        String hold = args.get("hold", "");
        if (!hold.isEmpty()) {
            holdDir(new File(hold).getAbsoluteFile());
            return;
        }
        String scenario = args.get("scenario");
        long seed = args.getLong("seed", 1);
        int scale = (int) args.getLong("ledgers", 24);
        File out = new File(args.get("out")).getAbsoluteFile();
        long logSizeLimit = args.getLong("log-size-limit", 64 << 10);
        int numDirs = (int) args.getLong("dirs", 2);
        boolean separate = scenario.equals("separate-index") || args.get("separate-index", "false").equals("true");
        Map<String, String> extra = options(args, out);

        List<String> ledgerNames = new ArrayList<>();
        List<String> indexNames = new ArrayList<>();
        List<File> ledgerDirs = new ArrayList<>();
        List<File> indexDirs = new ArrayList<>();
        for (int i = 0; i < numDirs; i++) {
            ledgerNames.add("ledger" + i);
            indexNames.add(separate ? "index" + i : "ledger" + i);
            ledgerDirs.add(new File(out, ledgerNames.get(i)));
            indexDirs.add(new File(out, indexNames.get(i)));
        }
        ServerConfiguration conf = Bookies.conf(ledgerDirs, separate ? indexDirs : null, logSizeLimit, extra, out);

        WriteBookie w = new WriteBookie(seed, numDirs);
        w.gcMustCompact = args.get("gc-must-compact", "true").equals("true");
        w.storage = Bookies.open(conf);
        Json facts = new Json().obj();
        switch (scenario) {
            case "clean" -> w.runClean(scale, facts, false);
            case "separate-index" -> w.runClean(scale, facts, true);
            case "crash" -> w.runCrash(scale, facts);
            default -> throw new IllegalArgumentException("unknown scenario " + scenario);
        }
        facts.put("checkpoints", w.checkpoints);
        facts.put("entryBytesWritten", w.bytesWritten);
        facts.end();
        if (scenario.equals("crash")) {
            // The description first: the process dies next.
            w.exp.write(out.toPath().resolve("expected.json"), scenario, seed, ledgerNames, indexNames,
                    logSizeLimit, extra, facts);
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }
        w.storage.shutdown();
        w.exp.write(out.toPath().resolve("expected.json"), scenario, seed, ledgerNames, indexNames,
                logSizeLimit, extra, facts);

        // BookKeeper reads its directories back: the description must be
        // what it answers.
        verifyDir(out);
    }

    /**
     * The upstream configuration keys a run sets beyond the directories
     * and logSizeLimit, as a bk_server.conf holds them: {@code --set
     * k=v,k=v} (dbStorage_rocksDB_*, entryLogPerLedgerEnabled,
     * dbStorage_directIOEntryLogger, ...), and {@code --rocksdb-conf FILE}
     * (config-file mode: the file, a RocksDB OPTIONS file, is copied into
     * the output directory and named by entryLocationRocksdbConf and
     * ledgerMetadataRocksdbConf, relative to it; {@code
     * --ledgers-rocksdb-conf FILE} gives the ledgers database another).
     */
    static Map<String, String> options(Args args, File out) throws Exception {
        Map<String, String> extra = new TreeMap<>();
        String set = args.get("set", "");
        if (!set.isEmpty()) {
            for (String kv : set.split(",")) {
                int eq = kv.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("--set wants key=value,...; got " + kv);
                }
                extra.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
            }
        }
        String rocksConf = args.get("rocksdb-conf", "");
        if (!rocksConf.isEmpty()) {
            Files.createDirectories(out.toPath());
            Files.copy(Path.of(rocksConf), out.toPath().resolve("entry_location_rocksdb.conf"));
            extra.put("entryLocationRocksdbConf", "entry_location_rocksdb.conf");
            String ledgersConf = args.get("ledgers-rocksdb-conf", rocksConf);
            Files.copy(Path.of(ledgersConf), out.toPath().resolve("ledger_metadata_rocksdb.conf"));
            extra.put("ledgerMetadataRocksdbConf", "ledger_metadata_rocksdb.conf");
        }
        return extra;
    }

    /** The configuration of the directories described by dir/expected.json. */
    static ServerConfiguration describedConf(File dir, JsonNode root) throws Exception {
        List<File> ledgerDirs = new ArrayList<>();
        List<File> indexDirs = new ArrayList<>();
        for (JsonNode d : root.get("ledgerDirs")) {
            ledgerDirs.add(new File(dir, d.asText()));
        }
        for (JsonNode d : root.get("indexDirs")) {
            indexDirs.add(new File(dir, d.asText()));
        }
        Map<String, String> extra = new TreeMap<>();
        JsonNode c = root.get("conf");
        if (c != null) {
            c.fields().forEachRemaining(f -> extra.put(f.getKey(), f.getValue().asText()));
        }
        boolean separate = !indexDirs.equals(ledgerDirs);
        return Bookies.conf(ledgerDirs, separate ? indexDirs : null, root.get("logSizeLimit").asLong(), extra, dir);
    }

    /**
     * Opens the directories described by dir/expected.json with
     * BookKeeper's DbLedgerStorage and keeps them open (RocksDB holding
     * its LOCK files) until standard input ends: a running bookie, for a
     * test of what other programs do meanwhile. It prints "holding" on
     * standard output once they are open.
     */
    static void holdDir(File dir) throws Exception {
        JsonNode root = new ObjectMapper().readTree(Files.readString(dir.toPath().resolve("expected.json")));
        DbLedgerStorage s = Bookies.open(describedConf(dir, root));
        System.out.println("holding");
        System.out.flush();
        while (System.in.read() >= 0) {
            // until EOF
        }
        s.shutdown();
    }

    /**
     * Opens the directories described by dir/expected.json with
     * BookKeeper's DbLedgerStorage and checks that it reads back exactly
     * the description. Opening writes to the directories (RocksDB replays
     * its logs, the entry logger starts a log): after a crash, run it on a
     * copy.
     */
    static void verifyDir(File dir) throws Exception {
        JsonNode root = new ObjectMapper().readTree(Files.readString(dir.toPath().resolve("expected.json")));
        DbLedgerStorage s = Bookies.open(describedConf(dir, root));
        try {
            verify(s, root);
        } finally {
            s.shutdown();
        }
    }

    private int dirOf(long ledgerId) {
        return MathUtils.signSafeMod(ledgerId, dirs);
    }

    // --- The workload -----------------------------------------------------

    private void runClean(int numLedgers, Json facts, boolean compactIndex) throws Exception {
        List<Long> ids = ledgerIds(numLedgers);
        firstPart(ids, facts);

        // More writes after the GC, to the ledgers still open, then some
        // metadata changes followed by entries in the same directories (so
        // that a checkpoint writes them), and a last checkpoint by the
        // shutdown.
        writeEntries(rng.nextInt(4 * numLedgers, 8 * numLedgers));
        for (long id : new ArrayList<>(open.keySet())) {
            if (rng.nextInt(6) == 0) {
                fence(id);
            }
        }
        writeEntries(40);
        if (compactIndex) {
            storage.entryLocationCompact();
            Bookies.awaitCleanup(storage);
            facts.put("entryLocationCompacted", true);
        }
        // The shutdown's checkpoint.
        checkpointModel();
    }

    private void runCrash(int numLedgers, Json facts) throws Exception {
        List<Long> ids = ledgerIds(numLedgers);
        firstPart(ids, facts);
        writeEntries(60);
        checkpoint();

        // A ledger of each directory with entries on disk.
        long notPurged = -1;
        long halfPurged = -1;
        int halfPurgedDir = Math.min(1, dirs - 1);
        for (Expected.Ledger l : mem.values()) {
            if (l.status != Expected.Status.LIVE || l.entries.isEmpty() || !exp.ledgers.get(l.id).inLedgersIndex) {
                continue;
            }
            if (dirOf(l.id) == 0 && notPurged < 0) {
                notPurged = l.id;
            } else if (dirOf(l.id) == halfPurgedDir && halfPurged < 0) {
                halfPurged = l.id;
            }
        }
        if (notPurged < 0 || halfPurged < 0) {
            throw new IllegalStateException("no ledger to delete in each directory");
        }
        // Deleted, and the first step of the purge done: the location
        // index forgets its entries, the ledgers index keeps its record.
        storage.deleteLedger(halfPurged);
        SingleDirectoryDbLedgerStorage d1 = storage.getLedgerStorageList().get(halfPurgedDir);
        d1.getEntryLocationIndex().removeOffsetFromDeletedLedgers();
        Expected.Ledger hp = exp.ledgers.get(halfPurged);
        hp.status = Expected.Status.HALF_PURGED;
        hp.entries.clear();
        // Deleted in memory only (after that purge, which would take it
        // too in a single directory).
        storage.deleteLedger(notPurged);
        exp.ledgers.get(notPurged).status = Expected.Status.DELETED_NOT_PURGED;
        // Entries no checkpoint writes: lost with the process.
        int lost = 0;
        for (long id : new ArrayList<>(open.keySet())) {
            if (id == notPurged || id == halfPurged) {
                continue;
            }
            long[] st = open.get(id);
            byte[] e = entryBytes(id, st[0], 64 + rng.nextInt(200));
            ByteBuf b = Unpooled.wrappedBuffer(e);
            storage.addEntry(b);
            ReferenceCountUtil.release(b);
            st[0] += st[1];
            lost++;
        }
        facts.put("deletedNotPurged", notPurged);
        facts.put("halfPurged", halfPurged);
        facts.put("lostEntries", lost);
    }

    /** The part every scenario shares: writes, deletes, purges, a GC. */
    private void firstPart(List<Long> ids, Json facts) throws Exception {
        for (long id : ids) {
            createLedger(id);
        }
        int rounds = 6;
        for (int r = 0; r < rounds; r++) {
            writeEntries(rng.nextInt(4 * ids.size(), 9 * ids.size()));
            // Fence and close some ledgers; explicit LACs on others.
            for (long id : new ArrayList<>(open.keySet())) {
                int p = rng.nextInt(20);
                if (p == 0) {
                    fence(id);
                    open.remove(id);
                } else if (p == 1) {
                    explicitLac(id);
                } else if (p == 2) {
                    open.remove(id); // closed without fencing
                }
            }
            writeEntries(20); // so that each directory's checkpoint writes the changes
            checkpoint();
            if (r == 2 || r == 4) {
                // Delete a few ledgers; the next checkpoint purges them.
                List<Long> live = liveLedgers();
                for (int i = 0; i < 3 && !live.isEmpty(); i++) {
                    delete(live.remove(rng.nextInt(live.size())));
                }
                checkpoint();
                purgeModel();
            }
        }
        // Delete more ledgers, purge them, then collect garbage: logs that
        // hold only deleted ledgers go, logs below the major threshold are
        // compacted into new ones.
        List<Long> live = liveLedgers();
        for (int i = 0; i < Math.max(2, live.size() / 4) && !live.isEmpty(); i++) {
            delete(live.remove(rng.nextInt(live.size())));
        }
        writeEntries(20);
        checkpoint();
        purgeModel();
        Map<String, Long> before = locations();
        Bookies.forceGC(storage);
        Map<String, Long> after = locations();
        int moved = 0;
        for (Map.Entry<String, Long> e : before.entrySet()) {
            if (!e.getValue().equals(after.get(e.getKey()))) {
                moved++;
            }
        }
        if (moved == 0 && gcMustCompact) {
            throw new IllegalStateException("the garbage collection compacted no entry log");
        }
        facts.put("garbageCollected", true);
        facts.put("entriesMovedByCompaction", moved);
    }

    /** The location of every entry on disk, from BookKeeper's index. */
    private Map<String, Long> locations() throws Exception {
        Map<String, Long> locs = new HashMap<>();
        for (Expected.Ledger l : exp.ledgers.values()) {
            for (long e : l.entries.keySet()) {
                locs.put(l.id + ":" + e, storage.getLocation(l.id, e));
            }
        }
        return locs;
    }

    private List<Long> ledgerIds(int n) {
        TreeSet<Long> ids = new TreeSet<>();
        ids.add(0L);
        ids.add(Long.MAX_VALUE);
        ids.add((1L << 40) + 3);
        while (ids.size() < n) {
            long id = switch (rng.nextInt(4)) {
                case 0 -> rng.nextLong(1, 64);
                case 1 -> rng.nextLong(64, 1_000_000);
                case 2 -> (1L << 32) + rng.nextLong(0, 1000);
                default -> rng.nextLong(1L << 40, Long.MAX_VALUE);
            };
            ids.add(id);
        }
        List<Long> list = new ArrayList<>(ids);
        // A random order of creation.
        for (int i = list.size() - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            Long t = list.get(i);
            list.set(i, list.get(j));
            list.set(j, t);
        }
        return list;
    }

    private List<Long> liveLedgers() {
        List<Long> live = new ArrayList<>();
        for (Expected.Ledger l : mem.values()) {
            if (l.status == Expected.Status.LIVE) {
                live.add(l.id);
            }
        }
        live.sort(null);
        return live;
    }

    private void createLedger(long id) throws Exception {
        byte[] key;
        if (id == (1L << 40) + 3) {
            key = new byte[0]; // a ledger without a password
        } else {
            key = new byte[20];
            rng.nextBytes(key);
        }
        storage.setMasterKey(id, key);
        Expected.Ledger m = new Expected.Ledger(id);
        m.masterKey = key;
        mem.put(id, m);
        // Not in the ledgers index on disk until a checkpoint writes it.
        exp.ledger(id).reset(Expected.Status.LIVE);
        // Most ledgers store every entry; some every other or every third,
        // as a bookie of a wider ensemble does.
        long stride = switch (rng.nextInt(6)) {
            case 0 -> 2;
            case 1 -> 3;
            default -> 1;
        };
        open.put(id, new long[] {rng.nextInt(3) == 0 ? rng.nextInt((int) stride) : 0, stride});
    }

    private int payloadSize() {
        int p = rng.nextInt(1000);
        if (p < 750) {
            return rng.nextInt(0, 200);
        } else if (p < 970) {
            return rng.nextInt(200, 2000);
        } else if (p < 998) {
            return rng.nextInt(2000, 20_000);
        }
        return rng.nextInt(70_000, 100_000); // larger than a log: alone in one
    }

    private byte[] entryBytes(long ledgerId, long entryId, int payload) {
        byte[] b = new byte[24 + payload];
        ByteBuffer bb = ByteBuffer.wrap(b);
        bb.putLong(ledgerId).putLong(entryId).putLong(entryId - 1);
        byte[] rest = new byte[payload];
        rng.nextBytes(rest);
        // Compressible in part, as real payloads often are.
        for (int i = 0; i < rest.length / 2; i++) {
            rest[i] = (byte) ('a' + (i % 23));
        }
        bb.put(rest);
        return b;
    }

    /** Adds n entries spread over the open ledgers, each ledger's in order. */
    private void writeEntries(int n) throws Exception {
        List<Long> ids = new ArrayList<>(open.keySet());
        ids.sort(null);
        if (ids.isEmpty()) {
            return;
        }
        for (int i = 0; i < n; i++) {
            long id = ids.get(rng.nextInt(ids.size()));
            long[] st = open.get(id);
            byte[] e = entryBytes(id, st[0], payloadSize());
            ByteBuf b = Unpooled.wrappedBuffer(e);
            storage.addEntry(b);
            ReferenceCountUtil.release(b);
            mem.get(id).entries.put(st[0], e);
            cached.get(dirOf(id)).computeIfAbsent(id, k -> new HashMap<>()).put(st[0], e);
            st[0] += st[1];
            bytesWritten += e.length;
        }
    }

    private void fence(long id) throws Exception {
        if (!storage.setFenced(id)) {
            throw new IllegalStateException("ledger " + id + " was fenced already");
        }
        mem.get(id).fenced = true;
    }

    private void explicitLac(long id) throws Exception {
        byte[] lac = new byte[24];
        ByteBuffer.wrap(lac).putLong(id).putLong(mem.get(id).lastEntry());
        byte[] digest = new byte[8];
        rng.nextBytes(digest);
        System.arraycopy(digest, 0, lac, 16, 8);
        ByteBuf b = Unpooled.wrappedBuffer(lac);
        storage.setExplicitLac(id, b);
        mem.get(id).explicitLac = lac;
    }

    private void delete(long id) throws Exception {
        storage.deleteLedger(id);
        open.remove(id);
        Expected.Ledger m = mem.get(id);
        m.status = Expected.Status.PURGED;
        cached.get(dirOf(id)).remove(id);
        deletedPending.add(id);
    }

    /**
     * A checkpoint of every directory, and the purge it queues: waited for,
     * so that the purge of ledgers deleted after this point waits for the
     * next checkpoint, as the model says.
     */
    private void checkpoint() throws Exception {
        storage.flush();
        Bookies.awaitCleanup(storage);
        checkpointModel();
    }

    /**
     * What a checkpoint writes, per directory: nothing if the write cache
     * is empty; otherwise the cached entries and every ledger's metadata as
     * it is in memory.
     */
    private void checkpointModel() {
        checkpoints++;
        for (int d = 0; d < dirs; d++) {
            Map<Long, Map<Long, byte[]>> c = cached.get(d);
            boolean empty = c.values().stream().allMatch(Map::isEmpty);
            if (empty) {
                continue;
            }
            for (Map.Entry<Long, Map<Long, byte[]>> le : c.entrySet()) {
                exp.ledger(le.getKey()).entries.putAll(le.getValue());
            }
            c.clear();
            for (Expected.Ledger m : mem.values()) {
                if (dirOf(m.id) != d || m.status == Expected.Status.PURGED) {
                    continue;
                }
                Expected.Ledger e = exp.ledger(m.id);
                e.inLedgersIndex = true;
                e.fenced = m.fenced;
                e.masterKey = m.masterKey;
                e.explicitLac = m.explicitLac;
            }
        }
    }

    /** The purge every checkpoint queues: the deleted ledgers leave both indexes. */
    private void purgeModel() {
        for (long id : deletedPending) {
            exp.ledger(id).reset(Expected.Status.PURGED);
        }
        deletedPending.clear();
    }

    // --- Reading back -----------------------------------------------------

    private static byte[] unhex(JsonNode n) {
        return n == null || n.isNull() ? null : HexFormat.of().parseHex(n.asText());
    }

    private static void verify(DbLedgerStorage s, JsonNode root) throws Exception {
        int entries = 0;
        int ledgers = 0;
        for (JsonNode l : root.get("ledgers")) {
            ledgers++;
            long id = l.get("id").asLong();
            boolean inIndex = l.get("inLedgersIndex").asBoolean();
            String what = "ledger " + id + " (" + l.get("status").asText() + ")";
            check(s.ledgerExists(id) == inIndex, what + ": ledgerExists " + !inIndex);
            if (inIndex) {
                check(s.isFenced(id) == l.get("fenced").asBoolean(), what + ": fenced");
                check(Arrays.equals(s.readMasterKey(id), unhex(l.get("masterKey"))), what + ": master key");
                ByteBuf lac = s.getExplicitLac(id);
                byte[] got = lac == null ? null : Bookies.bytes(lac);
                check(Arrays.equals(got, unhex(l.get("explicitLac"))), what + ": explicit LAC");
            }
            long lastEntry = l.get("lastEntry").asLong();
            if (lastEntry < 0) {
                try {
                    ByteBuf b = s.getLastEntry(id);
                    ReferenceCountUtil.release(b);
                    throw new IllegalStateException(what + ": has a last entry, expected none");
                } catch (Bookie.NoEntryException | Bookie.NoLedgerException ok) {
                    // expected
                }
            } else {
                ByteBuf last = s.getLastEntry(id);
                check(last.getLong(8) == lastEntry, what + ": last entry " + last.getLong(8));
                ReferenceCountUtil.release(last);
            }
            for (JsonNode e : l.get("entries")) {
                long eid = e.get("id").asLong();
                ByteBuf b = s.getEntry(id, eid);
                check(Bookies.sha256(Bookies.bytes(b)).equals(e.get("sha256").asText()), what + ": entry " + eid);
                ReferenceCountUtil.release(b);
                entries++;
            }
            // The entry after the last is absent.
            try {
                ByteBuf b = s.getEntry(id, lastEntry + 1);
                ReferenceCountUtil.release(b);
                throw new IllegalStateException(what + ": entry " + (lastEntry + 1) + " exists");
            } catch (Bookie.NoEntryException | Bookie.NoLedgerException ok) {
                // expected
            }
        }
        System.err.printf("verified %d ledgers, %d entries%n", ledgers, entries);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("BookKeeper reads back something else: " + what);
        }
    }
}
