package interop.bookkeeper;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.bookie.BookieImpl;
import org.apache.bookkeeper.bookie.Journal;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.bookie.LogMark;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.tools.cli.commands.bookie.ReadJournalCommand;
import org.apache.bookkeeper.util.EntryFormatter;
import org.apache.bookkeeper.util.LedgerIdFormatter;

/**
 * Reads journal directories with BookKeeper's own journal reader, as its
 * {@code readjournal} shell command and its bookie's replay do: a
 * {@link Journal} per journal directory (its "current" subdirectory), its
 * files listed by {@link Journal#listJournalIds}, its last log mark read by
 * the journal itself from the ledger directories' lastMark files
 * ({@code Journal.LastLogMark}, a {@link LogMark}), and each file scanned
 * with {@link Journal#scanJournal} (skipInvalidRecord off, the bookie's
 * default). Each record is decoded as
 * BookieImpl's replay decodes it, refusing a meta-entry its file's version
 * cannot hold as the replay does.
 *
 * <p>{@code --cases FILE}: a JSON array of cases, each {@code {"name",
 * "journalDirs": [...], "ledgerDirs": [...], "from": "start"|"mark"}}
 * ("start": every file from its first record; "mark": as the bookie's
 * replay, from the last log mark). Nothing is written to the directories
 * (a scan opens existing files only). Standard output gets one JSON object
 * a line, per journal:
 *
 * <pre>
 * {"case","journal","dir","ids":[...],"lastMark":{"fileId","offset"}}
 * {"case","journal","fileId","version","offset","length","ledgerId","entryId","kind","payloadLength","payloadSha256"}  per record
 * {"case","journal","fileId","from","end","version","records"[,"error"],"readjournal"}                            per file
 * </pre>
 *
 * <p>readjournal is what upstream's readjournal command (the shell's, on
 * the file) ends with: "ok", or the exception that stopped it.
 *
 * <p>A file whose scan fails (where upstream's replay would fail and its
 * bookie not start) gets "error" and "end" -1 after the records read
 * before the failure; the program goes on with the next file.
 *
 * <p>kind is "entry" (payload: the bytes after the two ids),
 * "master-key" (the key), "fence" (none), "explicit-lac" (the LAC bytes),
 * "force-ledger" (upstream never writes one) or "unknown-meta" (another
 * negative entry id, which the replay skips; payload: the bytes after the
 * ids). length is the record's length field; version is the file's format
 * version as the scanner reports it (-1 for a file without records).
 */
public final class ReadJournal {
    // BookieImpl's meta-entry ids; the explicit LAC's is package-private
    // upstream.
    private static final long MASTER_KEY = BookieImpl.METAENTRY_ID_LEDGER_KEY;
    private static final long FENCE = BookieImpl.METAENTRY_ID_FENCE_KEY;
    private static final long FORCE_LEDGER = BookieImpl.METAENTRY_ID_FORCE_LEDGER;
    private static final long EXPLICIT_LAC = -0x8000;
    // The versions that introduced them (JournalChannel.V3, V4, V6; the
    // class is package-private upstream).
    private static final int V3 = 3;
    private static final int V4 = 4;
    private static final int V6 = 6;

    private ReadJournal() {}

    public static void main(String[] argv) {
        Main.run(() -> run(new Args(argv)));
    }

    private static void run(Args args) throws Exception {
        JsonNode cases = new ObjectMapper().readTree(Files.readString(Path.of(args.get("cases"))));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        for (JsonNode c : cases) {
            scanCase(c, out);
        }
        out.flush();
    }

    private static String[] strings(JsonNode arr) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : arr) {
            out.add(n.asText());
        }
        return out.toArray(new String[0]);
    }

    private static void scanCase(JsonNode c, PrintStream out) throws Exception {
        String name = c.get("name").asText();
        String[] journalDirs = strings(c.get("journalDirs"));
        String[] ledgerDirs = strings(c.get("ledgerDirs"));
        boolean fromMark = c.path("from").asText("start").equals("mark");

        ServerConfiguration conf = new ServerConfiguration();
        conf.setJournalDirsName(journalDirs);
        conf.setLedgerDirNames(ledgerDirs);
        conf.setDiskUsageThreshold(0.999f);
        conf.setDiskUsageWarnThreshold(0.998f);
        // The lastMark file name (lastMark or lastMark.<i>) follows the
        // number of journal directories, as upstream's bookie names it.
        LedgerDirsManager ldm = new LedgerDirsManager(conf, conf.getLedgerDirs(), Bookies.checker(conf));
        for (int i = 0; i < journalDirs.length; i++) {
            Journal journal = new Journal(i, BookieImpl.getCurrentDirectory(new File(journalDirs[i])), conf, ldm);
            List<Long> ids = Journal.listJournalIds(journal.getJournalDirectory(), null);
            LogMark mark = journal.getLastLogMark().getCurMark();
            Json h = new Json().obj().put("case", name).put("journal", i)
                    .put("dir", journal.getJournalDirectory().getPath());
            h.key("ids").arr();
            for (long id : ids) {
                h.num(id);
            }
            h.endArr();
            h.key("lastMark").obj().put("fileId", mark.getLogFileId()).put("offset", mark.getLogFileOffset()).end();
            out.println(h.end());

            for (long id : ids) {
                long from = 0;
                if (fromMark) {
                    if (id < mark.getLogFileId()) {
                        continue;
                    }
                    if (id == mark.getLogFileId()) {
                        from = mark.getLogFileOffset();
                    }
                }
                int journalIndex = i;
                int[] seen = {-1, 0}; // the version, the records
                long end = -1;
                String error = null;
                try {
                    end = journal.scanJournal(id, from, (version, offset, rec) -> {
                        seen[0] = version;
                        seen[1]++;
                        out.println(record(name, journalIndex, id, version, offset, rec));
                    }, false);
                } catch (IOException | RuntimeException e) {
                    // Where upstream's replay fails (its bookie does not
                    // start): a negative length that is not padding, a
                    // meta-entry its version cannot hold or that does not
                    // decode (a buffer underflow).
                    error = e.toString();
                }
                Json f = new Json().obj().put("case", name).put("journal", i).put("fileId", id)
                        .put("from", from).put("end", end).put("version", seen[0]).put("records", seen[1]);
                if (error != null) {
                    f.put("error", error);
                }
                f.put("readjournal", readjournal(conf, journalDirs.length, journal.getJournalDirectory(), id));
                out.println(f.end());
            }
        }
    }

    /**
     * Runs upstream's readjournal command (the shell's {@code readjournal
     * <id>.txn}, without printing message bodies) on a file: "ok", or the
     * exception it ends with. Its output goes to the log, at INFO (not
     * shown).
     */
    private static String readjournal(ServerConfiguration conf, int journals, File currentDir, long id) {
        ReadJournalCommand.ReadJournalFlags flags = new ReadJournalCommand.ReadJournalFlags()
                .fileName(new File(currentDir, Long.toHexString(id) + ".txn").getPath());
        if (journals > 1) {
            flags.dir(currentDir.getPath());
        }
        try {
            ReadJournalCommand cmd = new ReadJournalCommand(LedgerIdFormatter.LONG_LEDGERID_FORMATTER,
                    EntryFormatter.STRING_FORMATTER);
            return cmd.apply(conf, flags) ? "ok" : "refused";
        } catch (RuntimeException e) {
            return e.toString();
        }
    }

    /** Decodes a record as BookieImpl.readJournal does. */
    private static Json record(String name, int journal, long fileId, int version, long offset, ByteBuffer rec)
            throws IOException {
        int length = rec.remaining();
        long ledgerId = rec.getLong();
        long entryId = rec.getLong();
        String kind;
        byte[] payload;
        if (entryId == MASTER_KEY) {
            if (version < V3) {
                throw new IOException("a master key in a version " + version + " journal (upstream refuses it)");
            }
            kind = "master-key";
            payload = new byte[rec.getInt()];
            rec.get(payload);
        } else if (entryId == FENCE) {
            if (version < V4) {
                throw new IOException("a fence in a version " + version + " journal (upstream refuses it)");
            }
            kind = "fence";
            payload = new byte[0];
        } else if (entryId == EXPLICIT_LAC) {
            if (version < V6) {
                throw new IOException("an explicit LAC in a version " + version + " journal (upstream refuses it)");
            }
            kind = "explicit-lac";
            payload = new byte[rec.getInt()];
            rec.get(payload);
        } else {
            kind = entryId == FORCE_LEDGER ? "force-ledger" : entryId < 0 ? "unknown-meta" : "entry";
            payload = new byte[rec.remaining()];
            rec.get(payload);
        }
        return new Json().obj().put("case", name).put("journal", journal).put("fileId", fileId)
                .put("version", version).put("offset", offset).put("length", length)
                .put("ledgerId", ledgerId).put("entryId", entryId).put("kind", kind)
                .put("payloadLength", payload.length).put("payloadSha256", Bookies.sha256(payload)).end();
    }
}
