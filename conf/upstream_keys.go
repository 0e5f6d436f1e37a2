package conf

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// upstreamKeysFile holds the keys of BookKeeper's bk_server.conf (its
// conf/bk_server.conf, every key it lists, set or commented out), one a
// line. A bk_server.conf shared with a bookie holds many of them; those
// bookie-index does not use are recognized (one summary line at start,
// not a warning each), and any other key that is close to one of ours gets
// a did-you-mean warning.
//
//go:embed upstream_keys.txt
var upstreamKeysFile string

// upstreamKeys returns the keys of upstreamKeysFile, in its (sorted)
// order: its lines but blank ones and # comments.
var upstreamKeys = sync.OnceValue(func() []string {
	var keys []string
	for _, line := range strings.Split(upstreamKeysFile, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			keys = append(keys, line)
		}
	}
	return keys
})

// unusedKey is a key a source set that Load does not use.
type unusedKey struct {
	key, value, source string
	// env: from the environment, where BK_* variables that name no key
	// are common (the scripts' BK_HOME, BK_USER).
	env bool
}

// ignoredKey is an upstream key of the ledger storage or of its admin
// server that bookie-index does not honour. Set to anything but upstream's
// default (def; empty: any value set), it gets a warning saying why.
type ignoredKey struct {
	def, why string
}

// ignoredKeys are the upstream keys that would change what the storage
// does and that bookie-index does not honour. The rest of upstream's keys
// configure the other parts of a bookie (metadata store, client
// protocol, the other ledger storages) and are only listed at start.
// (The journal's keys are honoured: journal.go.)
func ignoredKeys() map[string]ignoredKey {
	return map[string]ignoredKey{
		"entryLogPerLedgerEnabled": {"false", "the ledgers of a directory share its entry logs; one entry log per ledger is not implemented"},
		"useTransactionalCompaction": {"false", "entry-log compaction has one mode: live entries are copied into the log being written, " +
			"their locations move in the index, then the old log is removed (docs/operations.md, \"Entry-log garbage collection\")"},
		"persistBookieStatusEnabled":              {"false", "the read-only state is not persisted: a restart starts writable (forceReadOnlyBookie=true starts read-only)"},
		"allowMultipleDirsUnderSameDiskPartition": {"true", "directories on one disk partition are not detected; list one directory per disk"},
		"minUsableSizeForHighPriorityWrites":      {"", "a read-only storage refuses every add, recovery's high-priority ones included"},
		"sanityCheckMetricsEnabled":               {"false", "there is no bookie_SERVER_SANITY gauge: upstream's sanity check writes and reads a ledger through a bookie client"},
		"journalQueueSize":                        {"10000", "the journal's queue is bounded by bytes: 16 MiB of records not yet written per journal (an add waits for room)"},
		"journalMaxMemorySizeMb":                  {"", "the journal's queue is bounded by 16 MiB of records not yet written per journal (an add waits for room)"},
		"journalChannelProvider":                  {"org.apache.bookkeeper.bookie.DefaultFileChannelProvider", "journal files are written through the operating system's file API; there is no other channel"},
		"ledgerStorageClass": {dbLedgerStorageClass, "bookie-index is a DbLedgerStorage: a bookie that ran another ledger storage " +
			"(interleaved or sorted) keeps index files it cannot read"},
	}
}

// dbLedgerStorageClass is the ledger storage bookie-index is.
const dbLedgerStorageClass = "org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage"

// isUpstreamKey reports whether key is one of upstream's bk_server.conf.
func isUpstreamKey(key string) bool {
	_, found := slices.BinarySearch(upstreamKeys(), key)
	return found
}

// keyNotes describes the keys the sources set that Load does not use.
// Warnings: an upstream key that would change what the storage does, set
// to anything but its default (ignoredKeys, with why); a key neither ours
// nor upstream's (a typo would otherwise leave a setting at its default
// without a word), with the known key closest to it. Summary lines (INFO):
// the upstream keys of the other parts of a bookie, and environment
// variables BK_* that name no key and are close to none.
func keyNotes(unused []unusedKey) (summary []string, warnings []string) {
	ignored := ignoredKeys()
	var recognized, otherEnv []string
	// A key set by several sources (or twice in the file) is described by
	// the value that wins: the last one, in the order Load reads them
	// (file lines, the environment, the overrides). An override of an
	// ignored key is then warned about even when the file sets it to its
	// default.
	last := make(map[string]int, len(unused))
	for i, u := range unused {
		last[u.key] = i
	}
	for i, u := range unused {
		if last[u.key] != i {
			continue
		}
		if k, ok := ignored[u.key]; ok {
			if v := strings.TrimSpace(u.value); v != "" && !sameValue(v, k.def) {
				warnings = append(warnings, fmt.Sprintf("%s: %s=%s has no effect in bookie-index: %s", u.source, u.key, v, k.why))
			} else {
				recognized = append(recognized, u.key)
			}
			continue
		}
		if isUpstreamKey(u.key) {
			recognized = append(recognized, u.key)
			continue
		}
		near := nearestKnownKey(u.key)
		switch {
		case near == "" && u.env:
			otherEnv = append(otherEnv, EnvPrefix+u.key)
		case near == "":
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q (neither bookie-index's nor BookKeeper's), ignored", u.source, u.key))
		case slices.Contains(Keys(), near):
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q, ignored; did you mean %q?", u.source, u.key, near))
		default:
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q, ignored; did you mean %q (a BookKeeper key that bookie-index does not use)?", u.source, u.key, near))
		}
	}
	sort.Strings(recognized)
	sort.Strings(otherEnv)
	if len(recognized) > 0 {
		summary = append(summary, fmt.Sprintf("%s of the rest of a bookie, not used by bookie-index: %s",
			plural(len(recognized), "BookKeeper key", "BookKeeper keys"), strings.Join(recognized, ", ")))
	}
	if len(otherEnv) > 0 {
		summary = append(summary, fmt.Sprintf("%s %s* naming no key, ignored: %s",
			plural(len(otherEnv), "environment variable", "environment variables"), EnvPrefix, strings.Join(otherEnv, ", ")))
	}
	return summary, warnings
}

// plural returns n with the noun's singular or plural form.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sameValue reports whether a value set is the default def: booleans in
// any of their spellings, other values as written.
func sameValue(value, def string) bool {
	if a, ok := parsePropertyBool(value); ok {
		b, ok := parsePropertyBool(def)
		return ok && a == b
	}
	return value == def
}

// nearestKnownKey returns the key, ours or upstream's, closest to key if
// it is close enough to be a mistake for it, or "".
func nearestKnownKey(key string) string {
	return nearestKey(key, append(Keys(), upstreamKeys()...))
}

// nearestKey returns the key of known closest to key, if it is close
// enough to be a typo (an edit distance of at most a third of its length,
// and 3) or a longer or shorter spelling of it (one contains the other,
// entryLogSizeLimit for logSizeLimit), or "". Ties go to the first.
func nearestKey(key string, known []string) string {
	lower := strings.ToLower(key)
	best, bestDist := "", -1
	for _, k := range known {
		kl := strings.ToLower(k)
		d := editDistance(kl, lower)
		isClose := d <= min(len(key)/3, 3)
		if !isClose && min(len(kl), len(lower)) >= 6 && (strings.Contains(kl, lower) || strings.Contains(lower, kl)) {
			isClose = true
		}
		if isClose && (bestDist < 0 || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}
