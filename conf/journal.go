package conf

import (
	"path/filepath"
	"strconv"
	"time"

	"github.com/bookie-index/bookie-index/journal"
)

// DefaultJournalDirectory is the name of the journal directory when
// neither journalDirectories nor journalDirectory is set: beside the first
// ledger directory (ours: data/journal with the default data/ledgers;
// upstream's default is /tmp/bk-txn).
const DefaultJournalDirectory = "journal"

// journalKeySpecs are the journal's keys (upstream's Journal), in
// bk_server.conf order. They fill Config.Journal, the journal's own
// journal.Options; the directories are resolved by Load
// (journalDirectories, else journalDirectory, else
// DefaultJournalDirectory beside the first ledger directory).
// journal.Options spells a boolean whose
// upstream default is true as its negation, and "none" (a group wait of
// 0, no backups) as a negative value, since its zero means the default.
func journalKeySpecs() []keySpec {
	j := func(c *Config) *journal.Options { return &c.Journal }
	return []keySpec{
		negatedBoolKey("journalSyncData", "true", func(c *Config) *bool { return &j(c).NoSyncData }),
		negatedBoolKey("journalWriteData", "true", func(c *Config) *bool { return &j(c).NoWriteData }),
		negativeForZero(durationKey("journalMaxGroupWaitMSec", "2", time.Millisecond, func(c *Config) *time.Duration { return &j(c).MaxGroupWait }),
			func(c *Config) *time.Duration { return &j(c).MaxGroupWait }),
		intKey("journalBufferedWritesThreshold", "524288", 1, 1<<40, func(c *Config) *int64 { return &j(c).BufferedWritesThreshold }),
		intKey("journalBufferedEntriesThreshold", "0", 0, 1<<31-1, func(c *Config) *int { return &j(c).BufferedEntriesThreshold }),
		boolKey("journalFlushWhenQueueEmpty", "false", func(c *Config) *bool { return &j(c).FlushWhenQueueEmpty }),
		negatedBoolKey("journalAdaptiveGroupWrites", "true", func(c *Config) *bool { return &j(c).NoAdaptiveGroupWrites }),
		sizeKey("journalMaxSizeMB", "2048", 1<<20, 1, maxMB, func(c *Config) *int64 { return &j(c).MaxFileSize }),
		sizeKey("journalPreAllocSizeMB", "16", 1<<20, 1, maxMB, func(c *Config) *int64 { return &j(c).PreAllocSize }),
		sizeKey("journalWriteBufferSizeKB", "64", 1<<10, 1, 1<<20, func(c *Config) *int { return &j(c).WriteBufferSize }),
		intKey("journalAlignmentSize", "512", 1, 1<<30, func(c *Config) *int { return &j(c).AlignmentSize }),
		negativeForZero(intKey("journalMaxBackups", "5", 0, 1<<31-1, func(c *Config) *int { return &j(c).MaxBackupJournals }),
			func(c *Config) *int { return &j(c).MaxBackupJournals }),
		intKey("journalFormatVersionToWrite", "6", journal.MinWriteVersion, journal.MaxVersion, func(c *Config) *int { return &j(c).FormatVersionToWrite }),
		durationKey("journalPageCacheFlushIntervalMSec", "1000", time.Millisecond, func(c *Config) *time.Duration { return &j(c).PageCacheFlushInterval }),
	}
}

// negatedBoolKey is a boolean key stored negated in its field.
func negatedBoolKey(name, def string, field func(*Config) *bool) keySpec {
	var plain bool
	k := boolKey(name, def, func(*Config) *bool { return &plain })
	decode := k.decode
	k.decode = func(c *Config, value string) error {
		if err := decode(c, value); err != nil {
			return err
		}
		*field(c) = !plain
		return nil
	}
	k.encode = func(c *Config) string { return strconv.FormatBool(!*field(c)) }
	return k
}

// negativeForZero is the key k of field: a value of 0, which means "none"
// in the file, is stored as -1 (journal.Options' "none"; its zero is the
// default), and written back as 0.
func negativeForZero[T ~int | ~int64](k keySpec, field func(*Config) *T) keySpec {
	decode, encode := k.decode, k.encode
	k.decode = func(c *Config, value string) error {
		if err := decode(c, value); err != nil {
			return err
		}
		if p := field(c); *p == 0 {
			*p = -1
		}
		return nil
	}
	k.encode = func(c *Config) string {
		if *field(c) < 0 {
			return "0"
		}
		return encode(c)
	}
	return k
}

// sizeKey is an integer key in [min, max] units of unit bytes, stored in
// bytes.
func sizeKey[T ~int | ~int64](name, def string, unit, min, max int64, field func(*Config) *T) keySpec {
	var n int64
	k := intKey(name, def, min, max, func(*Config) *int64 { return &n })
	decode := k.decode
	k.decode = func(c *Config, value string) error {
		if err := decode(c, value); err != nil {
			return err
		}
		*field(c) = T(n * unit)
		return nil
	}
	k.encode = func(c *Config) string { return strconv.FormatInt(int64(*field(c))/unit, 10) }
	return k
}

// resolveJournalDirectories sets Journal.JournalDirectories: upstream's
// getJournalDirNames (journalDirectories, else journalDirectory), else
// DefaultJournalDirectory beside the first ledger directory, so that the
// journal goes where the data goes (data/journal by default).
func (c *Config) resolveJournalDirectories() {
	switch {
	case len(c.JournalDirectories) > 0:
		c.Journal.JournalDirectories = append([]string(nil), c.JournalDirectories...)
	case c.JournalDirectory != "":
		c.Journal.JournalDirectories = []string{filepath.Clean(c.JournalDirectory)}
	case len(c.LedgerDirectories) > 0:
		c.Journal.JournalDirectories = []string{filepath.Join(filepath.Dir(c.LedgerDirectories[0]), DefaultJournalDirectory)}
	default:
		c.Journal.JournalDirectories = []string{filepath.Join("data", DefaultJournalDirectory)}
	}
}

// validateJournal checks the journal's keys: upstream's rules
// (ServerConfiguration.validate: journalAlignmentSize a multiple of 512,
// at most journalPreAllocSizeMB) and ours (journal directories none twice
// and none a ledger or index directory).
func (c *Config) validateJournal(p *problems) {
	o := &c.Journal
	if o.AlignmentSize < 512 || o.AlignmentSize%512 != 0 {
		p.addf("journalAlignmentSize: %d is not a multiple of 512 (upstream: \"Invalid journal alignment size\")", o.AlignmentSize)
	} else if int64(o.AlignmentSize) > o.PreAllocSize {
		p.addf("journalAlignmentSize: %d is more than journalPreAllocSizeMB (%d MiB) (upstream: \"Invalid preallocation size\")", o.AlignmentSize, o.PreAllocSize>>20)
	}
	if o.PageCacheFlushInterval <= 0 {
		p.addf("journalPageCacheFlushIntervalMSec: %d ms must be positive", o.PageCacheFlushInterval.Milliseconds())
	}
	others := map[string]string{}
	for _, k := range []struct {
		kind string
		dirs []string
	}{{"a ledger directory", c.LedgerDirectories}, {"an index directory", c.IndexDirectories}} {
		for _, d := range k.dirs {
			if _, ok := others[filepath.Clean(d)]; !ok {
				others[filepath.Clean(d)] = k.kind
			}
		}
	}
	seen := map[string]bool{}
	for _, d := range o.JournalDirectories {
		clean := filepath.Clean(d)
		if seen[clean] {
			p.addf("journalDirectories: %q is listed twice; each journal needs its own directory", d)
		}
		seen[clean] = true
		if kind, ok := others[clean]; ok {
			p.addf("journalDirectories: %q is also %s; give the journal a directory of its own (ideally on a disk of its own: every add waits for its fsync)", d, kind)
		}
	}
}
