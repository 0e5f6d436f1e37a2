package interop.bookkeeper;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The expected content of the directories a program wrote, as BookKeeper
 * itself reads them back: per ledger whether the ledgers index holds it,
 * fenced, master key, explicit LAC, the last entry and every entry the
 * location index names, with its bytes' SHA-256 (the whole entry as the
 * client sent it: ledger id, entry id, then the rest).
 */
final class Expected {
    /** What happened to a ledger, for the reader of the description. */
    enum Status {
        /** Written and not deleted. */
        LIVE("live"),
        /** Deleted, and both indexes purged (nothing of it is in the indexes). */
        PURGED("purged"),
        /**
         * Deleted in memory only: the process died before the purge, so on
         * disk it is a live ledger (BookKeeper's garbage collector deletes
         * it again after a restart, from the metadata store).
         */
        DELETED_NOT_PURGED("deleted-not-purged"),
        /**
         * Deleted, and the process died between the two steps of the purge:
         * the location index no longer holds its entries, the ledgers index
         * still holds its record.
         */
        HALF_PURGED("half-purged");

        final String name;

        Status(String name) {
            this.name = name;
        }
    }

    static final class Ledger {
        final long id;
        Status status = Status.LIVE;
        boolean inLedgersIndex = true;
        boolean fenced;
        byte[] masterKey;
        byte[] explicitLac;
        /** Entries the location index names, by entry id: the whole entry. */
        final TreeMap<Long, byte[]> entries = new TreeMap<>();

        Ledger(long id) {
            this.id = id;
        }

        long lastEntry() {
            return entries.isEmpty() ? -1 : entries.lastKey();
        }

        /**
         * Starts the ledger over with status s and nothing recorded: no
         * entries, no master key, fence or explicit LAC, and no record in
         * the ledgers index on disk.
         */
        void reset(Status s) {
            status = s;
            inLedgersIndex = false;
            fenced = false;
            masterKey = null;
            explicitLac = null;
            entries.clear();
        }
    }

    final Map<Long, Ledger> ledgers = new TreeMap<>();

    Ledger ledger(long id) {
        return ledgers.computeIfAbsent(id, Ledger::new);
    }

    /**
     * Opens an entry's object as a description holds it: its id, size and
     * the SHA-256 of its bytes (the caller may add to it, and ends it).
     */
    static Json entry(Json j, long id, byte[] entry) {
        return j.obj().put("id", id).put("size", entry.length).put("sha256", Bookies.sha256(entry));
    }

    /** Adds entries, by entry id, as the array key of entry objects. */
    static void putEntries(Json j, String key, Map<Long, byte[]> entries) {
        j.key(key).arr();
        for (Map.Entry<Long, byte[]> e : entries.entrySet()) {
            entry(j, e.getKey(), e.getValue()).end();
        }
        j.endArr();
    }

    /** Writes the description: the scenario's parameters and every ledger. */
    void write(Path path, String scenario, long seed, List<String> ledgerDirs, List<String> indexDirs,
               long logSizeLimit, Map<String, String> conf, Json extra) throws IOException {
        Json j = new Json().obj();
        j.put("writer", "interop/bookkeeper WriteBookie");
        j.put("bookkeeper", org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage.class.getPackage()
                .getImplementationVersion() == null ? "4.18.2" : org.apache.bookkeeper.bookie.storage.ldb
                .DbLedgerStorage.class.getPackage().getImplementationVersion());
        j.put("scenario", scenario);
        j.put("seed", seed);
        j.put("logSizeLimit", logSizeLimit);
        j.putStrings("ledgerDirs", ledgerDirs);
        j.putStrings("indexDirs", indexDirs);
        j.putStringMap("conf", conf);
        if (extra != null) {
            j.key("scenarioFacts");
            j.raw(extra.toString());
        }
        j.key("ledgers").arr();
        for (Ledger l : ledgers.values()) {
            j.nl().obj();
            j.put("id", l.id);
            j.put("status", l.status.name);
            j.put("inLedgersIndex", l.inLedgersIndex);
            j.put("exists", l.inLedgersIndex);
            j.put("fenced", l.fenced);
            j.putHex("masterKey", l.masterKey);
            j.putHex("explicitLac", l.explicitLac);
            j.put("lastEntry", l.lastEntry());
            j.put("entryCount", l.entries.size());
            putEntries(j, "entries", l.entries);
            j.end();
        }
        j.nl().endArr();
        j.end();
        Bookies.write(path, j.toString() + "\n");
    }
}
