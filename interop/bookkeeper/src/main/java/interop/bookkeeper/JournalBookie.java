package interop.bookkeeper;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.bookie.BookieImpl;
import org.apache.bookkeeper.bookie.CheckpointSource;
import org.apache.bookkeeper.bookie.CheckpointSourceList;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.discover.BookieServiceInfo;
import org.apache.bookkeeper.meta.NullMetadataBookieDriver;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.proto.BookkeeperInternalCallbacks.WriteCallback;
import org.apache.bookkeeper.stats.NullStatsLogger;

/**
 * A bookie that dies with entries in its journal that its storage does not
 * hold: BookKeeper's own BookieImpl (its Journal and a DbLedgerStorage over
 * two ledger directories, no metadata store) takes adds as it does from
 * clients, acknowledging each once the journal has synced it; a checkpoint
 * (what the bookie's SyncThread does every flushInterval: the storage's
 * checkpoint, then the journal's log mark written to the ledger
 * directories) stores the first part; the second part (more entries, a new
 * ledger, a fence and an explicit LAC) is only in the journal when the
 * process is killed (Runtime.halt), with a few adds still in flight.
 *
 * <p>expected.json says which entries were acknowledged (a restart must
 * find every one, replaying the journal from the log mark), which of them
 * a checkpoint stored, and which adds were in flight (each may or may not
 * be durable). {@code --verify DIR} starts BookKeeper's bookie on DIR (a
 * copy: the replay writes to it), its journals the directories
 * expected.json names (journalDirs, under DIR), which replays them, and
 * checks that it reads back every acknowledged entry and the ledgers'
 * state. The interop tests also verify so a journal that bookie-index's
 * serve wrote, beside fresh ledger directories: BookKeeper's replay of
 * our journal.
 */
public final class JournalBookie {
    private static final int DIRS = 2;

    static final class Ledger {
        final long id;
        byte[] masterKey;
        boolean fenced;
        boolean fenceCheckpointed;
        byte[] explicitLac;
        /** Whether a checkpoint stored the explicit LAC, and the ledger's record. */
        boolean explicitLacCheckpointed;
        boolean inLedgersIndex;
        /** Entries acknowledged: bytes, and whether a checkpoint stored them. */
        final TreeMap<Long, byte[]> acked = new TreeMap<>();
        final TreeMap<Long, Boolean> checkpointed = new TreeMap<>();
        final TreeMap<Long, byte[]> inFlight = new TreeMap<>();
        long next;

        Ledger(long id) {
            this.id = id;
        }
    }

    private final SplittableRandom rng;
    private final Map<Long, Ledger> ledgers = new TreeMap<>();
    private BookieImpl bookie;
    private List<String> journalNames;
    /** The upstream keys set beyond the directories ({@code --set}). */
    private Map<String, String> conf;
    /** journalFormatVersionToWrite: below 6, explicit LACs are not journaled. */
    private int formatVersion;

    private JournalBookie(long seed) {
        rng = new SplittableRandom(seed);
    }

    /**
     * The bookie's configuration: two ledger directories, the journal
     * directories journalNames (journalDirectories: with more than one,
     * BookKeeper spreads the ledgers over them and keeps a lastMark.i per
     * journal), and the upstream keys of extra ({@code --set}: the
     * journal's format version, alignment, file size and so on).
     */
    static ServerConfiguration conf(File out, List<String> journalNames, Map<String, String> extra) throws Exception {
        List<File> ledgerDirs = List.of(new File(out, "ledger0"), new File(out, "ledger1"));
        ServerConfiguration conf = Bookies.conf(ledgerDirs, null, 64 << 10);
        List<File> journals = new ArrayList<>();
        for (String name : journalNames) {
            journals.add(new File(out, name));
            Bookies.makeCurrent(journals.get(journals.size() - 1));
        }
        conf.setJournalDirsName(Bookies.names(journals));
        // No checkpoint but the ones this program asks for.
        conf.setFlushInterval((int) TimeUnit.DAYS.toMillis(1));
        // Journal files are preallocated (zeros) in steps of this size:
        // 1 MB rather than the default 16 keeps the committed copy small.
        conf.setProperty("journalPreAllocSizeMB", 1);
        for (Map.Entry<String, String> e : extra.entrySet()) {
            conf.setProperty(e.getKey(), e.getValue());
        }
        return conf;
    }

    /** The journal directories' names: journal, journal1, journal2, ... */
    static List<String> journalNames(int n) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add(i == 0 ? "journal" : "journal" + i);
        }
        return names;
    }

    static BookieImpl start(ServerConfiguration conf) throws Exception {
        NullMetadataBookieDriver driver = new NullMetadataBookieDriver();
        LedgerDirsManager ldm = Bookies.ledgerDirs(conf);
        DbLedgerStorage storage = new DbLedgerStorage();
        storage.initialize(conf, null, ldm, ldm, NullStatsLogger.INSTANCE, UnpooledByteBufAllocator.DEFAULT);
        BookieImpl bookie = new BookieImpl(conf, driver.createRegistrationManager(), storage, Bookies.checker(conf),
                ldm, ldm, NullStatsLogger.INSTANCE, UnpooledByteBufAllocator.DEFAULT, BookieServiceInfo.NO_INFO);
        bookie.start();
        return bookie;
    }

    public static void main(String[] argv) {
        Main.run(() -> {
            run(new Args(argv));
        });
    }

    private static void run(Args args) throws Exception {
        String verify = args.get("verify", "");
        if (!verify.isEmpty()) {
            verify(new File(verify).getAbsoluteFile());
            return;
        }
        long seed = args.getLong("seed", 1);
        File out = new File(args.get("out")).getAbsoluteFile();
        JournalBookie j = new JournalBookie(seed);
        j.journalNames = journalNames((int) args.getLong("journals", 1));
        j.conf = WriteBookie.options(args, out);
        ServerConfiguration conf = conf(out, j.journalNames, j.conf);
        j.formatVersion = conf.getJournalFormatVersionToWrite();
        j.bookie = start(conf);
        j.run(out.toPath(), seed, (int) args.getLong("ledgers", 8));
    }

    private void run(Path out, long seed, int numLedgers) throws Exception {
        // First part: ledgers, entries, a fence and an explicit LAC, all
        // acknowledged, then a checkpoint.
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < numLedgers; i++) {
            long id = i == 0 ? 0 : rng.nextLong(1, 1L << 20);
            if (ledgers.containsKey(id)) {
                i--;
                continue;
            }
            ids.add(id);
            Ledger l = new Ledger(id);
            l.masterKey = new byte[20];
            rng.nextBytes(l.masterKey);
            ledgers.put(id, l);
        }
        addAcked(ids, 30 * numLedgers);
        fence(ids.get(1));
        explicitLac(ids.get(2));
        List<Long> open = new ArrayList<>(ids);
        open.remove(ids.get(1));
        addAcked(open, 4 * numLedgers); // entries after the metadata changes, in both directories
        checkpoint();

        // Second part, only in the journal: more entries, a new ledger, a
        // fence, an explicit LAC.
        addAcked(ids.subList(2, ids.size()), 20 * numLedgers);
        long fresh = (1L << 33) + rng.nextLong(1, 1000);
        Ledger nl = new Ledger(fresh);
        nl.masterKey = new byte[20];
        rng.nextBytes(nl.masterKey);
        ledgers.put(fresh, nl);
        List<Long> more = new ArrayList<>(ids.subList(3, ids.size()));
        more.add(fresh);
        addAcked(more, 10 * numLedgers);
        fence(ids.get(3));
        more.remove(ids.get(3));
        explicitLac(ids.get(4));
        // Adds in flight when the process dies: not waited for.
        for (long id : more) {
            Ledger l = ledgers.get(id);
            byte[] e = entry(l, l.next);
            l.inFlight.put(l.next, e);
            l.next++;
            bookie.addEntry(Unpooled.wrappedBuffer(e), false, (rc, lid, eid, addr, ctx) -> { }, null, l.masterKey);
        }
        write(out.resolve("expected.json"), seed);
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    private byte[] entry(Ledger l, long entryId) {
        int payload = rng.nextInt(100) < 90 ? rng.nextInt(0, 400) : rng.nextInt(400, 6000);
        byte[] b = new byte[24 + payload];
        ByteBuffer bb = ByteBuffer.wrap(b);
        bb.putLong(l.id).putLong(entryId).putLong(entryId - 1);
        byte[] rest = new byte[payload];
        rng.nextBytes(rest);
        bb.put(rest);
        return b;
    }

    /** Adds n entries over the ledgers and waits for every acknowledgement. */
    private void addAcked(List<Long> ids, int n) throws Exception {
        CountDownLatch done = new CountDownLatch(n);
        Map<String, Integer> failed = new ConcurrentHashMap<>();
        List<Object[]> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Ledger l = ledgers.get(ids.get(rng.nextInt(ids.size())));
            byte[] e = entry(l, l.next);
            sent.add(new Object[] {l, l.next, e});
            l.next++;
            WriteCallback cb = (int rc, long ledgerId, long entryId, BookieId addr, Object ctx) -> {
                if (rc != 0) {
                    failed.put(ledgerId + ":" + entryId, rc);
                }
                done.countDown();
            };
            bookie.addEntry(Unpooled.wrappedBuffer(e), false, cb, null, l.masterKey);
        }
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("adds not acknowledged in 60 s");
        }
        if (!failed.isEmpty()) {
            throw new IllegalStateException("adds failed: " + failed);
        }
        for (Object[] s : sent) {
            Ledger l = (Ledger) s[0];
            l.acked.put((Long) s[1], (byte[]) s[2]);
            l.checkpointed.put((Long) s[1], false);
        }
    }

    private void fence(long id) throws Exception {
        Ledger l = ledgers.get(id);
        if (!bookie.fenceLedger(id, l.masterKey).get(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("ledger " + id + " was fenced already");
        }
        l.fenced = true;
    }

    private void explicitLac(long id) throws Exception {
        Ledger l = ledgers.get(id);
        byte[] lac = new byte[24];
        ByteBuffer.wrap(lac).putLong(id).putLong(l.acked.lastKey());
        byte[] digest = new byte[8];
        rng.nextBytes(digest);
        System.arraycopy(digest, 0, lac, 16, 8);
        CountDownLatch done = new CountDownLatch(1);
        int[] rc = {-1};
        bookie.setExplicitLac(Unpooled.wrappedBuffer(lac), (r, lid, eid, addr, ctx) -> {
            rc[0] = r;
            done.countDown();
        }, null, l.masterKey);
        if (!done.await(60, TimeUnit.SECONDS) || rc[0] != 0) {
            throw new IllegalStateException("explicit LAC of ledger " + id + " not acknowledged: rc " + rc[0]);
        }
        l.explicitLac = lac;
    }

    /** What the bookie's SyncThread does: the storage's checkpoint, then the journals' log mark. */
    private void checkpoint() throws Exception {
        CheckpointSource source = new CheckpointSourceList(bookie.getJournals());
        CheckpointSource.Checkpoint cp = source.newCheckpoint();
        bookie.getLedgerStorage().checkpoint(cp);
        source.checkpointComplete(cp, true);
        // Every directory's write cache holds entries here, so each
        // checkpoint writes its ledgers index too.
        for (Ledger l : ledgers.values()) {
            for (Map.Entry<Long, Boolean> e : l.checkpointed.entrySet()) {
                e.setValue(true);
            }
            if (!l.checkpointed.isEmpty()) {
                l.inLedgersIndex = true;
                l.fenceCheckpointed = l.fenced;
                l.explicitLacCheckpointed = l.explicitLac != null;
            }
        }
    }

    private void write(Path path, long seed) throws Exception {
        Json j = new Json().obj();
        j.put("writer", "interop/bookkeeper JournalBookie");
        j.put("scenario", "journal");
        j.put("seed", seed);
        j.key("ledgerDirs").arr().str("ledger0").str("ledger1").endArr();
        j.putStrings("journalDirs", journalNames);
        j.putStringMap("conf", conf);
        j.key("ledgers").arr();
        for (Ledger l : ledgers.values()) {
            j.nl().obj();
            j.put("id", l.id);
            j.putHex("masterKey", l.masterKey);
            j.put("fenced", l.fenced);
            j.put("fenceCheckpointed", l.fenceCheckpointed);
            // Before format version 6 BookKeeper's journal leaves explicit
            // LACs out: one set since the last checkpoint dies with the
            // process.
            boolean lacDurable = formatVersion >= 6 || l.explicitLacCheckpointed;
            j.putHex("explicitLac", lacDurable ? l.explicitLac : null);
            j.put("explicitLacCheckpointed", l.explicitLacCheckpointed);
            j.put("inLedgersIndex", l.inLedgersIndex);
            j.put("lastAcked", l.acked.isEmpty() ? -1 : l.acked.lastKey());
            j.key("entries").arr();
            for (Map.Entry<Long, byte[]> e : l.acked.entrySet()) {
                Expected.entry(j, e.getKey(), e.getValue()).put("checkpointed", l.checkpointed.get(e.getKey())).end();
            }
            j.endArr();
            Expected.putEntries(j, "inFlight", l.inFlight);
            j.end();
        }
        j.nl().endArr();
        j.end();
        Bookies.write(path, j.toString() + "\n");
    }

    /**
     * Starts BookKeeper's bookie on dir (replaying its journal) and checks
     * every acknowledged entry and each ledger's state against expected.json.
     */
    private static void verify(File dir) throws Exception {
        JsonNode root = new ObjectMapper().readTree(Files.readString(dir.toPath().resolve("expected.json")));
        List<String> names = new ArrayList<>();
        root.get("journalDirs").forEach(n -> names.add(n.asText()));
        Map<String, String> extra = new TreeMap<>();
        JsonNode c = root.get("conf");
        if (c != null) {
            c.fields().forEachRemaining(f -> extra.put(f.getKey(), f.getValue().asText()));
        }
        ServerConfiguration conf = conf(dir, names, extra);
        BookieImpl bookie = start(conf);
        int entries = 0;
        int ledgers = 0;
        try {
            DbLedgerStorage s = (DbLedgerStorage) bookie.getLedgerStorage();
            for (JsonNode l : root.get("ledgers")) {
                long id = l.get("id").asLong();
                ledgers++;
                check(s.ledgerExists(id), "ledger " + id + " exists");
                check(Arrays.equals(s.readMasterKey(id), unhex(l.get("masterKey"))), "ledger " + id + " master key");
                check(s.isFenced(id) == l.get("fenced").asBoolean(), "ledger " + id + " fenced");
                ByteBuf lac = s.getExplicitLac(id);
                check(Arrays.equals(lac == null ? null : Bookies.bytes(lac), unhex(l.get("explicitLac"))),
                        "ledger " + id + " explicit LAC");
                for (JsonNode e : l.get("entries")) {
                    long eid = e.get("id").asLong();
                    ByteBuf b = bookie.readEntry(id, eid);
                    check(Bookies.sha256(Bookies.bytes(b)).equals(e.get("sha256").asText()),
                            "ledger " + id + " entry " + eid);
                    ReferenceCountUtil.release(b);
                    entries++;
                }
            }
        } finally {
            bookie.shutdown();
        }
        System.err.printf("journal replayed: verified %d ledgers, %d acknowledged entries%n", ledgers, entries);
    }

    private static byte[] unhex(JsonNode n) {
        return n == null || n.isNull() ? null : HexFormat.of().parseHex(n.asText());
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("after the journal replay, BookKeeper reads something else: " + what);
        }
    }
}
